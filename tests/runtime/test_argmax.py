"""ArgMax on OpenVINO, rewritten into reductions (runtime/backends/argmax.py): the same first
index of the maximum as ONNX's ArgMax, ties included, on every axis it is asked for."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.runtime.test_engines import CONFIGS
from triton_ocr.runtime.backends.argmax import first_max_indices
from triton_ocr.runtime.backends.engines import open_engine


@pytest.fixture(scope="module")
def argmax_model(tmp_path_factory):
    """p [n, t, 7] -> ArgMax over the classes (as the recognizer's head) and over the steps,
    keeping the axis, and ReduceMax beside the first."""
    graph = helper.make_graph(
        [
            helper.make_node("ArgMax", ["p"], ["best_class"], axis=2, keepdims=0),
            helper.make_node("ReduceMax", ["p"], ["best_score"], axes=[2], keepdims=0),
            helper.make_node("ArgMax", ["p"], ["best_step"], axis=1, keepdims=1),
        ],
        "head",
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, ["n", 5, 7])],
        [
            helper.make_tensor_value_info("best_class", TensorProto.INT64, ["n", 5]),
            helper.make_tensor_value_info("best_score", TensorProto.FLOAT, ["n", 5]),
            helper.make_tensor_value_info("best_step", TensorProto.INT64, ["n", 1, 7]),
        ],
    )
    path = tmp_path_factory.mktemp("model") / "argmax.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), path)
    return path


def test_every_argmax_becomes_reductions(argmax_model):
    import openvino as ov

    model = ov.Core().read_model(str(argmax_model))
    assert "TopK" in {op.get_type_name() for op in model.get_ordered_ops()}
    assert first_max_indices(model) == 2
    assert "TopK" not in {op.get_type_name() for op in model.get_ordered_ops()}


@pytest.mark.parametrize("name", CONFIGS)
def test_the_first_maximum_is_found_on_every_runtime(argmax_model, name):
    rng = np.random.default_rng(7)
    p = rng.integers(0, 4, size=(3, 5, 7)).astype(np.float32)  # small integers: many ties
    p[0, 0] = 2.0  # a whole row tied: ArgMax answers the first place
    engine = open_engine(CONFIGS[name], argmax_model)
    best_class, best_score, best_step = engine.run(
        ["best_class", "best_score", "best_step"], {"p": p}
    )
    assert best_class.dtype == np.int64 and best_step.dtype == np.int64
    np.testing.assert_array_equal(best_class, p.argmax(axis=2))
    np.testing.assert_array_equal(best_score, p.max(axis=2))
    np.testing.assert_array_equal(best_step, p.argmax(axis=1)[:, None, :])
    assert best_class[0, 0] == 0
