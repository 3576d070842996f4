"""`triton-ocr drain`, the Kubernetes preStop hook, on a server of its own: the entry points stop
taking requests, the supervisor leaves them unloaded, and the server then stops at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tritonclient.utils import InferenceServerException

from triton_ocr.client import OcrClient
from triton_ocr.contract import ENTRY_POINTS
from triton_ocr.serving.flags import ADMIN_HEADER, ADMIN_KEY_ENV, ServerOptions, free_ports
from triton_ocr.serving.server import running_server, stop
from triton_ocr.serving.supervisor import admin_post
from triton_ocr.tools.samples import render

from .conftest import ADMIN_KEY

CLI = Path(sys.executable).parent / "triton-ocr"


def states(http: str) -> dict[str, str]:
    index = json.loads(admin_post(http, ADMIN_HEADER, ADMIN_KEY, "/v2/repository/index", 10))
    return {entry["name"]: entry.get("state", "") for entry in index}


def test_drain_unloads_the_entry_points_for_good_and_the_stop_is_quick(repository, tmp_path):
    http_port, grpc_port, metrics_port = free_ports(3)
    opts = ServerOptions(
        repository, "127.0.0.1", http_port, grpc_port, metrics_port, admin_key=ADMIN_KEY
    )
    http = f"127.0.0.1:{http_port}"
    sample = render()
    with running_server(opts, log_file=tmp_path / "server.log") as process:
        with OcrClient(http) as client:
            assert client.read(sample.png)  # serving before the drain
        env = {**os.environ, ADMIN_KEY_ENV: ADMIN_KEY}
        done = subprocess.run(
            [str(CLI), "drain", "--http-port", str(http_port), "--delay", "0.5"],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert all(f"{name}: UNAVAILABLE" in done.stderr for name in ENTRY_POINTS), done.stderr
        time.sleep(3)  # the supervisor polls twice a second: it must not bring them back
        found = states(http)
        assert all(found[name] == "UNAVAILABLE" for name in ENTRY_POINTS), found
        assert found["text_detection"] == "READY"  # the steps stay, for requests inside
        refused = pytest.raises(InferenceServerException, match="no available versions")
        with OcrClient(http, retries=0) as client, refused:
            client.read(sample.png)
        started = time.monotonic()
        stop(process)
        assert time.monotonic() - started < 15  # nothing left in flight
    assert "reloading the model" not in (tmp_path / "server.log").read_text()


def test_drain_needs_the_admin_key():
    env = {k: v for k, v in os.environ.items() if k != ADMIN_KEY_ENV}
    done = subprocess.run(
        [str(CLI), "drain", "--delay", "0"], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 2 and ADMIN_KEY_ENV in done.stderr
