"""A model whose stub process dies comes back: the server's supervisor reloads it (Triton 2.51's
Python backend alone leaves the instance answering "not healthy" for good)."""

from __future__ import annotations

import os
import signal
import time

from triton_ocr.client import OcrClient
from triton_ocr.serving.processes import stubs
from triton_ocr.serving.supervisor import running
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.samples import render

from .conftest import server_pid

SAMPLE = render()


def test_a_killed_stub_is_replaced_and_reads_succeed_again(server):
    pid = server_pid(server)
    (victim,) = [s for s in stubs(pid) if s.instance == "detection_postprocessing_0_0"]
    os.kill(victim.pid, signal.SIGKILL)
    killed = time.monotonic()
    with OcrClient(server.grpc, "grpc", timeout=60, retries=8, backoff=0.5) as client:
        lines = client.read(SAMPLE.png)  # retried through the reload
        first_read = time.monotonic() - killed
        again = client.read_many([SAMPLE.png])[0]
    assert [normalize(x.text) for x in lines] == [normalize(t) for t in SAMPLE.texts]
    assert [x.text for x in again] == [x.text for x in lines]
    replaced = [s for s in stubs(pid) if s.instance == victim.instance and s.pid != victim.pid]
    assert replaced and running(replaced[0].pid)
    assert first_read < 30, f"reads came back after {first_read:.1f} s"
    assert "reloading the model" in server.log.read_text()
