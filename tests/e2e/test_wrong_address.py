"""Every entry point given the other protocol's port of the real server, or an address where
nothing listens, stops within 5 s with one line saying what it found and what to pass: the read
command (and the client.py script it is), the gateway, OcrClient and AsyncOcrClient. (The
OCRmyPDF plugin's case is in test_ocrmypdf.py.)"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from triton_ocr.client import AsyncOcrClient, OcrClient, WrongAddress
from triton_ocr.serving.flags import free_ports

CLI = str(Path(sys.executable).parent / "triton-ocr")


def run_quickly(command: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=cwd)
    return done, time.monotonic() - started


def one_line_error(done: subprocess.CompletedProcess, code: int) -> str:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("command", "protocol", "port", "says"),
    [
        ([CLI, "read"], "http", "grpc", "not HTTP/1.1: pass --protocol grpc, or the server's"),
        ([CLI, "read"], "grpc", "http", "not gRPC (HTTP/2): pass --protocol http, or the server's"),
        ([sys.executable, str(ROOT / "client" / "client.py")], "http", "grpc", "--protocol grpc"),
    ],
)
def test_read_at_the_other_protocols_port(server, demo, tmp_path, command, protocol, port, says):
    image = tmp_path / "demo.png"
    image.write_bytes(demo)
    url = getattr(server, port)
    done, seconds = run_quickly(
        [*command, str(image), "--url", url, "--protocol", protocol], tmp_path
    )
    line = one_line_error(done, 2)
    assert f"error: {url} speaks" in line and says in line
    assert seconds < 5


def test_read_where_nothing_listens(demo, tmp_path):
    image = tmp_path / "demo.png"
    image.write_bytes(demo)
    (port,) = free_ports(1)
    done, seconds = run_quickly([CLI, "read", str(image), "--url", f"127.0.0.1:{port}"], tmp_path)
    assert "nothing listens at" in one_line_error(done, 2) and seconds < 5


def test_the_gateway_at_tritons_http_port(server, tmp_path):
    (port,) = free_ports(1)
    command = [CLI, "gateway", "--triton-url", server.http, "--port", str(port)]
    done, seconds = run_quickly(command, tmp_path)
    line = one_line_error(done, 2)
    assert line.startswith(f"error: --triton-url: {server.http} speaks HTTP/1.1, not gRPC")
    assert seconds < 5


@pytest.mark.parametrize(("protocol", "port"), [("http", "grpc"), ("grpc", "http")])
def test_the_clients_at_the_other_protocols_port(server, demo, protocol, port):
    url = getattr(server, port)
    started = time.monotonic()
    with OcrClient(url, protocol) as client, pytest.raises(WrongAddress, match="pass protocol="):
        client.read_document(demo)
    assert time.monotonic() - started < 5

    async def read() -> None:
        async with AsyncOcrClient(url, protocol) as client:
            await client.read_documents([demo])

    with pytest.raises(WrongAddress, match=f'{url} speaks .*: pass protocol="{port}"'):
        asyncio.run(read())
    with OcrClient(getattr(server, protocol), protocol) as client:  # its own port: read
        assert client.read_document(demo).pages[0].lines
