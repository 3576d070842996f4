"""Whatever users upload: a table of bad (and merely unusual) input, sent over HTTP and gRPC to
both entry points of the real server, plus protocol misuse. Each bad input gets INVALID_ARG
with a message naming the problem; good requests beside them still succeed; the server stays
ready. Raw tritonclient calls, so the server's checks are tested, not the client's."""

from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from tests.conftest import ROOT
from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.contract import ENTRY_POINTS
from triton_ocr.preprocessing.decode import ImageDecodeError
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.reliability.payloads import (
    LINE,
    MAX_IMAGE_BYTES,
    READS,
    Case,
    connect,
    image_cases,
    image_tensor,
    infer_raw,
)

from .conftest import Endpoints

CASES = image_cases()
INVALID = ("400", "StatusCode.INVALID_ARGUMENT")


def raw(server: Endpoints, protocol: str):
    """(tritonclient module, client) without the client library's checks."""
    return connect(protocol, server.http if protocol == "http" else server.grpc)


def read_raw(client, module, model: str, data: bytes) -> list[str]:
    return [normalize(line.text) for line in infer_raw(client, module, model, data)]


def test_the_table_is_as_wide_as_promised():
    protocol_kinds = len(MISUSE)
    assert len(CASES) + protocol_kinds >= 40
    assert len({c.name for c in CASES}) == len(CASES)


def test_the_size_limit_in_the_table_is_the_servers(server):
    with OcrClient(server.grpc, "grpc") as client:
        assert client.limits().max_image_bytes == MAX_IMAGE_BYTES


def error_of(case: Case, model: str) -> str | None:
    """The refusal `model` must answer `case` with (None: it reads the file)."""
    if model == contract.ENSEMBLE_MODEL and case.ensemble_error is not None:
        return case.ensemble_error
    return case.error


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("model", ENTRY_POINTS)
@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_image_payloads(server, protocol, model, case: Case):
    module, client = raw(server, protocol)
    error = error_of(case, model)
    try:
        if error is None:
            found = read_raw(client, module, model, case.data)
            if case.reads:
                assert all(word in "".join(found) for word in case.reads), (case.name, found)
            else:
                assert found == [], (case.name, found)
            return
        with pytest.raises(InferenceServerException) as refused:
            read_raw(client, module, model, case.data)
        assert str(refused.value.status()) in INVALID, (case.name, refused.value)
        assert re.search(error, str(refused.value)), (case.name, str(refused.value))
        if model == "ocr":
            assert "image 0:" in str(refused.value)  # which image of the request
    finally:
        client.close()


def ensemble_request(module, shape, dtype="UINT8", name=contract.INPUT_IMAGE, fill=None):
    array = np.zeros(shape, np.uint8 if dtype == "UINT8" else np.float32)
    if fill is not None:
        array = np.frombuffer(fill, np.uint8).reshape(shape).copy()
    tensor = module.InferInput(name, list(array.shape), dtype)
    tensor.set_data_from_numpy(array)
    return [tensor]


def ocr_request(module, items, dtype="BYTES", shape=None):
    """`ocr`'s input as sent: the items as one request, [1, n] (or reshaped to `shape`)."""
    array = np.array(items, dtype=np.object_ if dtype == "BYTES" else np.uint8)
    array = array.reshape((1, -1) if shape is None else shape)
    tensor = module.InferInput(contract.OCR_INPUT_IMAGES, list(array.shape), dtype)
    tensor.set_data_from_numpy(array)
    return [tensor]


def png() -> bytes:
    return next(c.data for c in CASES if c.name == "PNG")


# name -> (model, inputs(module), request parameters, requested outputs, message regex)
MISUSE = {
    "wrong dtype (FP32 image)": (
        "ensemble_model",
        lambda m: ensemble_request(m, (1, 16), "FP32"),
        None,
        None,
        "data-type is 'FP32', but model 'ensemble_model' expects 'UINT8'",
    ),
    "wrong rank (no batch dimension)": (
        "ensemble_model",
        lambda m: ensemble_request(m, (16,)),
        None,
        None,
        "batch-size must be <= 1",
    ),
    "batch of 0": (
        "ensemble_model",
        lambda m: ensemble_request(m, (0, 16)),
        None,
        None,
        "byte size mismatch|batch",
    ),
    "batch beyond max_batch_size": (
        "ensemble_model",
        lambda m: ensemble_request(m, (2, 16)),
        None,
        None,
        "batch-size must be <= 1",
    ),
    "wrong input name": (
        "ensemble_model",
        lambda m: ensemble_request(m, (1, 16), name="image"),
        None,
        None,
        "unexpected inference input 'image'",
    ),
    "unknown output requested": (
        "ensemble_model",
        lambda m: [image_tensor(m, "ensemble_model", png())],
        None,
        ["texts"],
        "unexpected inference output 'texts'",
    ),
    "request parameter on ensemble_model": (
        "ensemble_model",
        lambda m: [image_tensor(m, "ensemble_model", png())],
        {"text_score": 0.9},
        None,
        r"ensemble_model takes no request parameters \(got \['text_score'\]\)",
    ),
    "wrong dtype (UINT8 for ocr's BYTES)": (
        "ocr",
        lambda m: ocr_request(m, [1, 2, 3], "UINT8"),
        None,
        None,
        "data-type is 'UINT8', but model 'ocr' expects 'BYTES'",
    ),
    "wrong rank (ocr images [1, 1, 1])": (
        "ocr",
        lambda m: ocr_request(m, [png()], shape=(1, 1, 1)),
        None,
        None,
        "unexpected shape for input 'images'",
    ),
    "no images": ("ocr", lambda m: ocr_request(m, []), None, None, "holds no images"),
    "too many images": (
        "ocr",
        lambda m: ocr_request(m, [png()] * 17),
        None,
        None,
        "holds 17 images; at most 16 per request",
    ),
    "a bad image among good ones": (
        "ocr",
        lambda m: ocr_request(m, [png(), b"%PDF-1.4", png()]),
        None,
        None,
        "image 1: cannot read PDF: data format error",
    ),
    "unknown request parameter": (
        "ocr",
        lambda m: ocr_request(m, [png()]),
        {"colour": "red"},
        None,
        r"unknown request parameters \['colour'\]",
    ),
    "wrong parameter type (string for a float)": (
        "ocr",
        lambda m: ocr_request(m, [png()]),
        {"text_score": "high"},
        None,
        "parameter 'text_score': cannot read 'high' as float",
    ),
    "wrong parameter type (bool for a number)": (
        "ocr",
        lambda m: ocr_request(m, [png()]),
        {"min_box_size": True},
        None,
        "parameter 'min_box_size': cannot read 'True' as float",
    ),
    "parameter out of range": (
        "ocr",
        lambda m: ocr_request(m, [png()]),
        {"orientation_threshold": 2.0},
        None,
        r"orientation_threshold=2.0 is out of range: it must be between 0.5 and 1$",
    ),
    **{
        f"parameter out of range ({name}={value})": (
            "ocr",
            lambda m: ocr_request(m, [png()]),
            {name: value},
            None,
            rf"request parameter {name}=\S+ is out of range: it must be between {low} and ",
        )
        for name, value, low in (
            ("unclip_ratio", 1e9, "0.5"),
            ("thresh", -1, "0.01"),
            ("box_thresh", 7, "0"),
            ("min_box_size", -100, "0"),
            ("text_score", "NaN", "0"),
            ("unclip_ratio", "inf", "0.5"),
        )
    },
    "parameter raising a server limit": (
        "ocr",
        lambda m: ocr_request(m, [png()]),
        {"max_side_len": 9999},
        None,
        r"max_side_len=9999 is out of range: it must be between 32 and 2000 \(the server's",
    ),
    "parameter with an unknown choice": (
        "ocr",
        lambda m: ocr_request(m, [png()]),
        {"single_line": "sometimes"},
        None,
        "single_line",
    ),
}


@pytest.mark.parametrize("name", sorted(MISUSE))
@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_protocol_misuse(server, protocol, name):
    model, inputs, parameters, outputs, message = MISUSE[name]
    module, client = raw(server, protocol)
    requested = [module.InferRequestedOutput(o) for o in outputs] if outputs else None
    try:
        with pytest.raises(InferenceServerException) as error:
            client.infer(model, inputs(module), outputs=requested, parameters=parameters)
        assert str(error.value.status()) in INVALID, (name, error.value)
        assert re.search(message, str(error.value)), (name, str(error.value))
        assert client.is_server_ready()
    finally:
        client.close()


def test_good_requests_beside_bad_ones_succeed(server):
    """Good and bad requests in flight together, both entry points and protocols: every good
    one reads the line, every bad one gets its own error, and the server stays ready."""
    bad = [c for c in CASES if c.error and len(c.data) < (1 << 20)]
    jobs = [
        (protocol, model, case)
        for protocol in ("http", "grpc")
        for model in ENTRY_POINTS
        for case in [None, *bad[:6], None, *bad[6:12], None]
    ]

    def run(job):
        protocol, model, case = job
        module, client = raw(server, protocol)
        try:
            data = png() if case is None else case.data
            try:
                return job, read_raw(client, module, model, data)
            except InferenceServerException as exc:
                return job, exc
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, jobs))
    for (protocol, model, case), outcome in results:
        if case is None:
            read = "".join(outcome) if isinstance(outcome, list) else str(outcome)
            assert all(word in read for word in READS), (protocol, model, read)
        else:
            assert isinstance(outcome, InferenceServerException), (case.name, outcome)
            assert re.search(error_of(case, model), str(outcome)), (case.name, str(outcome))
    with OcrClient(server.http) as client:
        assert client._client.is_server_ready()


def inference_count(server: Endpoints) -> int:
    client = httpclient.InferenceServerClient(server.http)
    stats = client.get_inference_statistics(contract.ENSEMBLE_MODEL)["model_stats"][0]
    client.close()
    return int(stats["inference_stats"]["success"]["count"]) + int(
        stats["inference_stats"]["fail"]["count"]
    )


@pytest.mark.parametrize(
    "name", ["empty payload", "GIF", "decompression bomb (30000x30000 PNG)", "truncated JPEG"]
)
def test_the_client_refuses_before_sending(server, name):
    """The same header checks run in the client: nothing travels for a file the server
    would refuse."""
    case = next(c for c in CASES if c.name == name)
    before = inference_count(server)
    with OcrClient(server.grpc, "grpc") as client, pytest.raises(ImageDecodeError) as error:
        client.read(case.data)
    assert re.search(case.error, str(error.value))
    with OcrClient(server.grpc, "grpc") as client, pytest.raises(ImageDecodeError, match="image 1"):
        client.read_many([png(), case.data])
    assert inference_count(server) == before


def test_unicode_file_names_at_the_cli(server, tmp_path):
    image = tmp_path / "Ünïcödé 名前 (1) — scan.png"
    image.write_bytes(png())
    cli = Path(sys.executable).parent / "triton-ocr"
    commands = [
        [sys.executable, str(ROOT / "client" / "client.py"), str(image), "--url", server.http],
        [str(cli), "read", str(image), "--url", server.http],
    ]
    for command in commands:
        out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
        assert normalize(LINE) in normalize(out.stdout), out
    missing = subprocess.run(
        [*commands[0][:2], str(tmp_path / "nöt thére.png"), "--url", server.http],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "500"},  # the usage error box must not wrap the name
    )
    assert missing.returncode != 0 and "nöt thére.png" in missing.stderr
    refused = tmp_path / "données.gif"
    refused.write_bytes(next(c.data for c in CASES if c.name == "GIF"))
    out = subprocess.run(
        [*commands[0][:2], str(refused), "--url", server.http],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "unsupported image format GIF" in out.stderr
    assert "Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [image.name, refused.name]
    )  # nothing else written


def test_every_parameter_at_the_ends_of_its_range_is_answered(server):
    """Inside its range a parameter never fails a request: each at its lowest and highest value
    (the ones that apply to the default pack), on the real server."""
    from triton_ocr.config.repository import Repository
    from triton_ocr.config.requests import REQUEST_PARAMETERS, server_value

    settings = Repository(ROOT / "repository").pipeline_settings(alphabet=["", "a"])
    with OcrClient(server.grpc, "grpc") as client:
        for name, allowed in REQUEST_PARAMETERS.items():
            try:
                value = server_value(settings, name)
            except KeyError:
                continue  # east-str's detector parameters
            ends = allowed.choices or (allowed.low, allowed.high_for(settings))
            for end in ends:
                end = type(value)(end)
                if name == "min_side_len":  # kept <= the server's max_side_len
                    end = min(end, settings.detector_input.max_side_len)
                pages = client.read_documents([png()], **{name: end})
                assert len(pages) == 1, (name, end)
