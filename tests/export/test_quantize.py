"""INT8 convolutions from committed ranges (export/quantize.py), on a small network made here:
the ranges measured once are all export needs, and it writes the same bytes from them."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from triton_ocr.export.quantize import with_int8_convolutions
from triton_ocr.tools.calibrate import Batches


def two_convolutions() -> onnx.ModelProto:
    """x [N, 3, 8, W] -> conv 3x3 -> relu -> conv 1x1 -> y [N, 2, 8, W], opset 11 as the
    wheels' recognizers."""
    rng = np.random.default_rng(0)
    first = numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w1")
    second = numpy_helper.from_array(rng.normal(size=(2, 4, 1, 1)).astype(np.float32), "w2")
    bias = numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "b1")
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["y"], name="conv2"),
    ]
    graph = helper.make_graph(
        nodes,
        "two",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2, 8, "w"])],
        [first, second, bias],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)


def feeds(count: int, seed: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        {"x": rng.uniform(-1, 1, size=(2, 3, 8, 16 + 8 * i)).astype(np.float32)}
        for i in range(count)
    ]


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(["y"], {"x": x})[0]


def test_the_ranges_alone_give_the_same_file(tmp_path):
    ranges = tmp_path / "ranges.json"
    measured = with_int8_convolutions(two_convolutions(), ranges, Batches(feeds(6, 1)))
    assert ranges.is_file()
    again = with_int8_convolutions(two_convolutions(), ranges)
    assert again.SerializeToString() == measured.SerializeToString()
    # other batches measure other ranges: the file follows the ranges, not the run
    other = with_int8_convolutions(
        two_convolutions(), tmp_path / "other.json", Batches(feeds(6, 2))
    )
    assert other.SerializeToString() != measured.SerializeToString()


def test_each_convolution_reads_int8_inputs_and_weights_and_writes_float(tmp_path):
    model = with_int8_convolutions(two_convolutions(), tmp_path / "r.json", Batches(feeds(6, 1)))
    made_by = {out: node.op_type for node in model.graph.node for out in node.output}
    convolutions = [node for node in model.graph.node if node.op_type == "Conv"]
    assert len(convolutions) == 2
    for conv in convolutions:
        assert [made_by.get(name) for name in conv.input[:2]] == ["DequantizeLinear"] * 2
        assert conv.input[2:] == [] or made_by.get(conv.input[2]) is None  # bias stays float
        readers = [n.op_type for n in model.graph.node if conv.output[0] in n.input]
        assert "QuantizeLinear" not in readers
    assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) >= 13
    x = feeds(1, 3)[0]["x"]
    exact, int8 = run(two_convolutions(), x), run(model, x)
    assert np.abs(int8 - exact).max() < 0.05 * np.abs(exact).max()


def test_without_ranges_or_batches_it_says_what_to_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="triton-ocr calibrate"):
        with_int8_convolutions(two_convolutions(), tmp_path / "none.json")
