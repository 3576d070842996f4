"""An ONNX file's metadata and output shapes read without a runtime (config/onnx_file.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from triton_ocr.config.onnx_file import read_onnx_file


def recognizer_file(path, classes: int, characters: str):
    weights = numpy_helper.from_array(np.ones((3, classes), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["probabilities"])],
        "recognizer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["n", classes]),
            helper.make_tensor_value_info("x_again", TensorProto.FLOAT, [2, "t", 7]),
        ],
        initializer=[weights],
    )
    model = helper.make_model(graph)
    helper.set_model_props(model, {"character": characters, "other": "x"})
    onnx.save_model(model, path)
    return path


def test_metadata_and_output_shapes_as_onnx_reads_them(tmp_path):
    path = recognizer_file(tmp_path / "rec.onnx", 4, "a\nb\u3000")
    found = read_onnx_file(path)
    assert found.metadata == {"character": "a\nb\u3000", "other": "x"}
    assert found.outputs == ((None, 4), (2, None, 7))


def test_a_file_that_is_not_onnx_is_named(tmp_path):
    bad = tmp_path / "rec.onnx"
    bad.write_bytes(b"\xff\xff\xff not a model")
    with pytest.raises(ValueError, match="rec.onnx is not an ONNX model"):
        read_onnx_file(bad)
