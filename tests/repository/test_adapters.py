"""The model.py adapters' request handling, with a stand-in for the stub's module: each request
gets its own answer, a bad one an error with the right code (INVALID_ARG for bad input,
UNAVAILABLE for a model that did not answer in time, INTERNAL for the rest), never the others'."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import time

import numpy as np
import pytest

from tests.conftest import REPOSITORY
from tests.repository import fake_pb_utils
from triton_ocr.config.repository import Repository
from triton_ocr.errors import InvalidRequest
from triton_ocr.runtime.timeouts import ModelTimeout, ModelUnavailable
from triton_ocr.tools.samples import render


def config_dict(model: str) -> dict:
    """The default pack's config as the Python backend receives it (JSON field names)."""
    return Repository(REPOSITORY).config_dict(model)


@pytest.fixture
def adapter(monkeypatch):
    """triton_ocr.runtime.adapter imported against the stand-in (and forgotten afterwards)."""
    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", fake_pb_utils)
    monkeypatch.delitem(sys.modules, "triton_ocr.runtime.adapter", raising=False)
    module = importlib.import_module("triton_ocr.runtime.adapter")
    yield module
    sys.modules.pop("triton_ocr.runtime.adapter", None)


def load_model(name: str, adapter):
    """repository/<name>/1/model.py's TritonPythonModel, initialized from the default config."""
    spec = importlib.util.spec_from_file_location(
        f"adapter_{name}", REPOSITORY / name / "1" / "model.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.TritonPythonModel()
    model.initialize(
        {"model_config": json.dumps(config_dict(name)), "model_repository": str(REPOSITORY / name)}
    )
    return model


def error_of(response) -> tuple[str, str] | None:
    error = response.error()
    return None if error is None else (error.code(), error.message())


def test_each_failure_is_its_own_requests_error(adapter):
    def handle(request):
        kind = request.parameters()
        if "bad" in kind:
            raise InvalidRequest("the image is bad")
        if "internal" in kind:
            raise ValueError(f"cannot use {kind}")  # a message quoting the request
        if "slow" in kind:
            raise ModelTimeout("text_recognition gave no answer within 30 s")
        if "bug" in kind:
            raise KeyError("oops")
        return adapter.respond(["out"], [np.zeros(1)])

    kinds = ("ok", "bad", "slow", "bug", "internal", "ok")
    requests = [fake_pb_utils.Request({}, {kind: "secret"}) for kind in kinds]
    fake_pb_utils.Logger.lines.clear()
    responses = adapter.execute_each(requests, handle)
    assert [error_of(r) for r in responses] == [
        None,
        ("INVALID_ARG", "the image is bad"),
        ("UNAVAILABLE", "text_recognition gave no answer within 30 s"),
        ("INTERNAL", "KeyError: 'oops'"),
        ("INTERNAL", 'ValueError: cannot use {"internal": "secret"}'),  # a ValueError is ours
        None,
    ]
    # each internal failure logged, by type and place, without what the request held
    assert len(fake_pb_utils.Logger.lines) == 2
    assert "internal error ValueError" in fake_pb_utils.Logger.lines[1]
    assert "in handle" in fake_pb_utils.Logger.lines[1]
    assert not any("secret" in line for line in fake_pb_utils.Logger.lines)


def test_detection_preprocessing_answers_each_request(adapter):
    model = load_model("detection_preprocessing", adapter)
    # the page classifier is a BLS call (the end-to-end tests make it): off here
    model.page = dataclasses.replace(model.page, page_orientation="off")
    (name,) = [t["name"] for t in config_dict("detection_preprocessing")["input"]]
    image = np.frombuffer(render().png, np.uint8)[None]
    garbage = np.frombuffer(b"GIF89a not really", np.uint8)[None]
    responses = model.execute(
        [
            fake_pb_utils.Request({name: image}),
            fake_pb_utils.Request({name: garbage}),
            fake_pb_utils.Request({name: image}, {"text_score": "0.1"}),
        ]
    )
    assert error_of(responses[0]) is None
    detector_input, page, rotation, token = (t.as_numpy() for t in responses[0].output_tensors)
    assert detector_input.ndim == 4 and page.shape == (560, 1000, 3) and rotation.tolist() == [0]
    assert token.tolist() == [model.gate.token]  # handed down to the last step
    code, message = error_of(responses[1])
    assert code == "INVALID_ARG" and "decode" in message
    code, message = error_of(responses[2])
    assert code == "INVALID_ARG" and "text_score" in message and "`ocr`" in message
    assert model.gate.in_flight() == 1  # the refused ones stopped counting


def wait_until(condition, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)
    return condition()


def test_the_ensemble_admits_up_to_its_bound_and_its_last_step_frees_a_place(adapter):
    first = load_model("detection_preprocessing", adapter)
    first.page = dataclasses.replace(first.page, page_orientation="off")
    assert first.gate.limit == Repository(REPOSITORY).admission().max_in_flight
    first.gate.limit = 2
    (name,) = [t["name"] for t in config_dict("detection_preprocessing")["input"]]
    image = np.frombuffer(render().png, np.uint8)[None]
    responses = first.execute([fake_pb_utils.Request({name: image}) for _ in range(3)])
    assert [error_of(r) is None for r in responses] == [True, True, False]
    code, message = error_of(responses[2])
    assert code == "UNAVAILABLE" and "overloaded" in message and "at once (2)" in message
    assert first.shed.value == 1 and first.shed.labels == {"model": "ensemble_model"}

    last = load_model("grouped_recognition", adapter)
    names = [t["name"] for t in config_dict("grouped_recognition")["input"]]
    token = responses[0].output_tensors[-1].as_numpy()
    no_crops = [np.zeros((0, 3, 48, 320), np.float32), np.zeros(0, np.int32), np.zeros(0, np.int32)]
    inputs = [*no_crops, np.zeros((0, 4, 2), np.float32), np.zeros(1, np.int32), token]
    (answer,) = last.execute([fake_pb_utils.Request(dict(zip(names, inputs, strict=True)))])
    assert error_of(answer) is None
    assert wait_until(lambda: first.gate.in_flight() == 1)  # told over the gate's socket
    (again,) = first.execute([fake_pb_utils.Request({name: image})])
    assert error_of(again) is None


def test_bls_errors_name_the_called_model(adapter):
    failed = fake_pb_utils.InferenceResponse(error=fake_pb_utils.TritonError("stub died"))
    with pytest.raises(fake_pb_utils.TritonModelException, match="text_detection: stub died"):
        adapter.bls_outputs("text_detection", failed, ["map"])
    restarting = fake_pb_utils.TritonError("Stub process 'text_detection_0_0' is not healthy.")
    with pytest.raises(ModelUnavailable, match="text_detection: Stub process"):
        adapter.bls_outputs("text_detection", fake_pb_utils.InferenceResponse(error=restarting), [])
    empty = fake_pb_utils.InferenceResponse([])
    with pytest.raises(fake_pb_utils.TritonModelException, match=r"without outputs \['map'\]"):
        adapter.bls_outputs("text_detection", empty, ["map"])


def test_detection_postprocessing_hands_on_rows_boxes_and_widths(adapter):
    model = load_model("detection_postprocessing", adapter)
    names = [t["name"] for t in config_dict("detection_postprocessing")["input"]]
    *maps, image_name, rotation_name = names
    upright = np.zeros(1, np.int32)
    image = np.full((400, 512, 3), 255, np.uint8)  # too large to be taken for a crop
    probability = np.zeros((1, 1, 400, 512), np.float32)
    probability[..., 20:44, 30:200] = 1.0  # one text line
    small = np.full((60, 90, 3), 255, np.uint8)  # a crop's size, nothing found in it
    requests = [
        (probability, image),
        (np.zeros_like(probability), image),
        (np.zeros((1, 1, 60, 90), np.float32), small),
    ]
    responses = model.execute(
        [
            fake_pb_utils.Request({maps[0]: found, image_name: page, rotation_name: upright})
            for found, page in requests
        ]
    )
    batch, boxes, padded, widths, rival = (t.as_numpy() for t in responses[0].output_tensors)
    assert boxes.shape == (1, 4, 2) and padded.tolist() == [max(320, int(widths[0]))]
    assert batch.shape[:3] == (1, 3, 48) and batch.shape[3] == padded[0]
    assert rival.tolist() == [0]
    batch, boxes, padded, widths, rival = (t.as_numpy() for t in responses[1].output_tensors)
    assert boxes.shape == (0, 4, 2) and padded.size == 0 and batch.shape[0] == 1  # a blank row
    assert rival.tolist() == [0]
    batch, boxes, padded, widths, rival = (t.as_numpy() for t in responses[2].output_tensors)
    np.testing.assert_array_equal(boxes[0], [[0, 0], [90, 0], [90, 60], [0, 60]])
    assert rival.tolist() == [1] and batch.shape[0] == 1  # the whole image, as the rival
