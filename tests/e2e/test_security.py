"""Locked down by default: admin APIs need the key, inference stays open, nothing leaks."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from tests.conftest import REPOSITORY
from triton_ocr.client import OcrClient
from triton_ocr.serving.flags import ADMIN_HEADER
from triton_ocr.tools.samples import Placed, render

from .conftest import ADMIN_KEY, Endpoints, server_pid

GRPC_ADMIN_HEADER = f"triton-grpc-protocol-{ADMIN_HEADER}"  # Triton prefixes gRPC keys so
# (method, path) of restricted HTTP APIs
RESTRICTED_HTTP = [
    ("POST", "/v2/repository/index"),
    ("POST", "/v2/repository/models/no_such_model/unload"),
    ("GET", "/v2/systemsharedmemory/status"),
    ("GET", "/v2/cudasharedmemory/status"),
    ("GET", "/v2/trace/setting"),
    ("GET", "/v2/logging"),
]
OPEN_HTTP = [
    ("GET", "/v2/health/ready"),
    ("GET", "/v2"),
    ("GET", "/v2/models/ocr"),
    ("GET", "/v2/models/ocr/config"),
    ("GET", "/v2/models/ocr/stats"),
]


def http_status(server: Endpoints, method: str, path: str, key: str | None = None) -> int:
    headers = {ADMIN_HEADER: key} if key else {}
    body = b"{}" if method == "POST" else None
    request = urllib.request.Request(
        f"http://{server.http}{path}", data=body, method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize(("method", "path"), RESTRICTED_HTTP)
def test_restricted_http_apis_need_the_key(server, method, path):
    assert http_status(server, method, path) == 403
    assert http_status(server, method, path, key="wrong") == 403
    with_key = http_status(server, method, path, key=ADMIN_KEY)
    # with the key the API answers (unloading a model that does not exist is then refused by
    # the model repository, no longer by the restriction)
    assert with_key != 403 if path.endswith("/unload") else with_key == 200


@pytest.mark.parametrize(("method", "path"), OPEN_HTTP)
def test_inference_health_and_metadata_stay_open(server, method, path):
    assert http_status(server, method, path) == 200


def test_restricted_grpc_protocols_need_the_key(server):
    client = grpcclient.InferenceServerClient(server.grpc)
    calls = [
        lambda **kw: client.get_model_repository_index(**kw),
        lambda **kw: client.get_system_shared_memory_status(**kw),
        lambda **kw: client.get_trace_settings(**kw),
        lambda **kw: client.get_log_settings(**kw),
    ]
    for call in calls:
        with pytest.raises(InferenceServerException, match="restricted"):
            call()
        with pytest.raises(InferenceServerException, match="restricted"):
            call(headers={GRPC_ADMIN_HEADER: "wrong"})
        call(headers={GRPC_ADMIN_HEADER: ADMIN_KEY})  # answers
    with pytest.raises(InferenceServerException, match="restricted"):
        client.unload_model("ocr")
    assert client.is_server_ready() and client.get_model_metadata("ocr").name == "ocr"
    client.close()


def snapshot(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in folder.rglob("*")}


def test_no_files_and_no_request_content_in_logs(server):
    """Inference writes nothing to the repository or the server's working directory, and the
    server log (default verbosity) holds neither the decoded text nor a request's bytes."""
    line = "Confidential invoice Quimby"  # words: the log's timestamps hold any short number
    image = render((Placed(line, (40, 40), 40),), (760, 140)).png
    cwd = Path(os.readlink(f"/proc/{server_pid(server)}/cwd"))
    before = snapshot(REPOSITORY), snapshot(cwd)
    with OcrClient(server.grpc, "grpc") as client:
        read = [x.text for x in client.read(image)] + [x.text for x in client.read_many([image])[0]]
        with pytest.raises(InferenceServerException, match="cannot read PDF"):
            client.read_many([b"%PDF-1.4 a broken document Confidential"])
    assert any("Quimby" in text for text in read)
    assert (snapshot(REPOSITORY), snapshot(cwd)) == before
    log = server.log.read_text(errors="replace")
    assert "Quimby" not in log and "Confidential" not in log
