"""The None-ResNet-None-CTC re-implementation: checkpoint compatibility and ONNX export."""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
import torch

from tests.conftest import REPOSITORY
from triton_ocr.config.repository import Repository
from triton_ocr.export.str_model import (
    ALPHABET,
    CHECKPOINT_PREFIX,
    NoneResNetNoneCTC,
    WithSoftmax,
    export_onnx,
    load_checkpoint,
)


def test_state_dict_matches_the_published_checkpoint(shared_eval):
    manifest = json.loads(
        (shared_eval.parent / "fixtures" / "str_state_dict_manifest.json").read_text()
    )
    assert manifest["checkpoint_key_prefix"] == CHECKPOINT_PREFIX
    ours = {name: list(t.shape) for name, t in NoneResNetNoneCTC().state_dict().items()}
    assert ours == manifest["tensors"]  # every name and shape, nothing more, nothing less


def test_output_is_26_steps_of_37_classes():
    out = NoneResNetNoneCTC().eval()(torch.zeros(2, 1, 32, 100))
    assert out.shape == (2, 26, len(ALPHABET) + 1)


def test_gpu_saved_dataparallel_checkpoint_loads_on_cpu(standin_files):
    _, checkpoint = standin_files
    with pytest.raises(RuntimeError, match="CUDA"):  # what a plain torch.load does here
        torch.load(checkpoint, weights_only=True)
    raw = torch.load(checkpoint, map_location="cpu", weights_only=True)
    assert all(key.startswith(CHECKPOINT_PREFIX) for key in raw)
    model = load_checkpoint(checkpoint)
    first = "FeatureExtraction.ConvNet.conv0_1.weight"
    assert torch.equal(model.state_dict()[first], raw[CHECKPOINT_PREFIX + first])


@pytest.fixture(scope="module")
def exported(tmp_path_factory, standin_files):
    model = load_checkpoint(standin_files[1])
    path = export_onnx(model, tmp_path_factory.mktemp("str") / "str.onnx")
    return model, path


def test_export_is_one_self_contained_file(exported):
    _, path = exported
    assert sorted(p.name for p in path.parent.iterdir()) == ["str.onnx"]
    assert path.stat().st_size > 100e6  # the ~45M weights are inside


@pytest.mark.parametrize("batch", [1, 4])
def test_onnxruntime_matches_torch(exported, batch):
    model, path = exported
    images = torch.rand(batch, 1, 32, 100) * 2 - 1
    expected = WithSoftmax(model)(images).detach().numpy()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    actual, best_class, best_score = session.run(None, {"input": images.numpy()})
    assert actual.shape == (batch, 26, 37)
    np.testing.assert_allclose(actual, expected, atol=1e-4)
    # the appended best-path head: what the server's CTC decode reads
    np.testing.assert_array_equal(best_class, actual.argmax(axis=2))
    np.testing.assert_allclose(best_score, actual.max(axis=2), atol=1e-6)


def test_names_axes_and_alphabet_match_the_config(exported):
    _, path = exported
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    config = Repository(REPOSITORY, "east-str").config("text_recognition")
    (onnx_input,) = session.get_inputs()
    assert [onnx_input.name] == [t.name for t in config.input]
    assert [o.name for o in session.get_outputs()] == [t.name for t in config.output]
    assert isinstance(onnx_input.shape[0], str) and onnx_input.shape[1:] == [1, 32, 100]
    probabilities = session.get_outputs()[0]
    # the config batches (max_batch_size > 0): its dims leave out the batch dimension
    assert config.max_batch_size > 0 and list(config.output[0].dims) == probabilities.shape[1:]
    assert session.get_modelmeta().custom_metadata_map["character"].split("\n") == list(ALPHABET)
