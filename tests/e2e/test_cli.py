"""`triton-ocr serve` and `triton-ocr demo` as a user runs them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .conftest import free_ports
from .text_match import normalize

CLI = str(Path(sys.executable).parent / "triton-ocr")


def test_serve_becomes_ready_and_stops_cleanly_on_sigterm(repository, tmp_path):
    http, grpc, metrics = free_ports(3)
    ports = ["--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics)]
    process = subprocess.Popen(
        [CLI, "serve", "--repository", str(repository), *ports],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http}/v2/health/ready") as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "not ready in 120 s"
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    output = process.stdout.read()
    assert "ready: http://127.0.0.1" in output and "stopped" in output
    assert list(tmp_path.iterdir()) == []  # nothing written to the working directory


def test_demo_prints_the_sample_text(repository, tmp_path):
    from triton_ocr.samples import render

    http, grpc, metrics = free_ports(3)
    out = subprocess.run(
        [CLI, "demo", "--repository", str(repository), "--http-port", str(http)]
        + ["--grpc-port", str(grpc), "--metrics-port", str(metrics)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    read = out.split("the service read:")[1]
    for text in render().texts:
        assert normalize(text) in normalize(read)
    assert list(tmp_path.iterdir()) == []
