"""`triton-ocr serve` and `triton-ocr demo` as a user runs them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from triton_ocr.runtime.flags import free_ports
from triton_ocr.tools.evaluation.metrics import normalize

CLI = str(Path(sys.executable).parent / "triton-ocr")


def test_serve_becomes_ready_and_stops_cleanly_on_sigterm(repository, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cwd")
    output = tmp_path_factory.mktemp("log") / "serve.out"
    http, grpc, metrics = free_ports(3)
    ports = ["--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics)]
    with open(output, "w") as sink:
        process = subprocess.Popen(
            [CLI, "serve", "--repository", str(repository), *ports],
            cwd=cwd,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while "ready: http://127.0.0.1" not in output.read_text():  # serve says it is ready
            assert process.poll() is None, output.read_text()
            assert time.monotonic() < deadline, "not ready in 120 s"
            time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/v2/health/ready") as response:
            assert response.status == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert output.read_text().rstrip().endswith("stopped")
    assert list(cwd.iterdir()) == []  # nothing written to the working directory


def test_demo_prints_the_sample_text(repository, tmp_path):
    from triton_ocr.tools.samples import render

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
