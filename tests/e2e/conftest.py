"""Session fixtures: export the default pack and run the REAL Triton server on free loopback
ports.

If the server cannot start, every end-to-end test errors (never skips).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPOSITORY
from tests.documents import make_pdf, text_page
from triton_ocr.export.ppocr import export_ppocr
from triton_ocr.serving.flags import ServerOptions, free_ports
from triton_ocr.serving.server import running_server
from triton_ocr.tools.samples import render

ADMIN_KEY = "e2e-admin-key"  # the test server's key for the restricted APIs


@dataclass(frozen=True)
class Endpoints:
    http: str  # host:port
    grpc: str
    metrics: str
    log: Path


@pytest.fixture(scope="session")
def repository() -> Path:
    export_ppocr(REPOSITORY)
    return REPOSITORY


@pytest.fixture(scope="session")
def server(repository: Path, tmp_path_factory: pytest.TempPathFactory) -> Endpoints:
    http, grpc, metrics = free_ports(3)
    log = tmp_path_factory.mktemp("triton") / "server.log"
    opts = ServerOptions(repository, "127.0.0.1", http, grpc, metrics, admin_key=ADMIN_KEY)
    with running_server(opts, log_file=log):
        yield Endpoints(f"127.0.0.1:{http}", f"127.0.0.1:{grpc}", f"127.0.0.1:{metrics}", log)


def server_pid(server: Endpoints) -> int:
    """The pid of the tritonserver process listening on the test server's HTTP port."""
    port = server.http.rsplit(":", 1)[1]
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command[0].endswith(b"tritonserver") and f"--http-port={port}".encode() in command:
            return int(proc.name)
    raise AssertionError("the test server's process was not found")


@pytest.fixture(scope="session")
def demo() -> bytes:
    """The demo's rendered sample (PNG), whose lines are tools.samples.DEMO_LINES."""
    return render().png


@pytest.fixture(scope="session")
def two_pages() -> bytes:
    """A 2-page PDF of one known line per page."""
    return make_pdf([text_page("first page words"), text_page("second page here")])


@contextmanager
def serving_pack(repository: Path, pack: str, log_folder: Path) -> Iterator[str]:
    """Export `pack` as its command does (`triton-ocr export PACK`) and serve it on free
    loopback ports; yields its gRPC address."""
    cli = str(Path(sys.executable).parent / "triton-ocr")
    subprocess.run([cli, "export", pack, "--repository", str(repository)], check=True, timeout=600)
    http, grpc, metrics = free_ports(3)
    options = ServerOptions(repository, "127.0.0.1", http, grpc, metrics, pack=pack)
    with running_server(options, log_file=log_folder / "server.log"):
        yield f"127.0.0.1:{grpc}"
