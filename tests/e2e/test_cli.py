"""`triton-ocr serve` and `triton-ocr demo` as a user runs them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from triton_ocr.serving.flags import free_ports
from triton_ocr.tools.evaluation.metrics import normalize

CLI = str(Path(sys.executable).parent / "triton-ocr")


def test_serve_becomes_ready_and_stops_cleanly_on_sigterm(repository, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cwd")
    output = tmp_path_factory.mktemp("log") / "serve.out"
    http, grpc, metrics, rest = free_ports(4)
    ports = ["--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics)]
    ports += ["--rest-port", str(rest)]
    with open(output, "w") as sink:
        process = subprocess.Popen(
            [CLI, "serve", "--repository", str(repository), "--cores", "3", *ports],
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
        assert f"REST gateway: http://127.0.0.1:{rest}" in output.read_text()
        # the layout it serves, said at start: 3 cores, 3 recognizer instances of one thread
        assert "layout for 3 cores: text_detection 1x3, text_recognition 3x1" in output.read_text()
        while True:  # the gateway beside it answers, and reads through Triton
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{rest}/readyz") as response:
                    assert response.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, "the REST gateway is not ready"
                time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert output.read_text().rstrip().endswith("stopped")
    with pytest.raises(OSError):  # the gateway stopped with it
        urllib.request.urlopen(f"http://127.0.0.1:{rest}/healthz", timeout=5)
    assert list(cwd.iterdir()) == []  # nothing written to the working directory


def test_demo_prints_the_sample_text(repository, tmp_path):
    from triton_ocr.tools.samples import render

    http, grpc, metrics, rest_port = free_ports(4)
    out = subprocess.run(
        [CLI, "demo", "--repository", str(repository), "--http-port", str(http), "--grpc-port"]
        + [str(grpc), "--metrics-port", str(metrics), "--rest-port", str(rest_port)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    read, rest = out.split("the service read:")[1].split("the REST gateway read the same")
    from triton_ocr.tools.demo import SAMPLE_PATH

    curl = f"$ curl -sS -F file=@{SAMPLE_PATH} 'http://127.0.0.1:{rest_port}/v1/ocr?format=text'"
    assert curl in rest and SAMPLE_PATH.read_bytes() == render().png
    for text in render().texts:
        assert normalize(text) in normalize(read)
        assert normalize(text) in normalize(rest)
    assert list(tmp_path.iterdir()) == []
