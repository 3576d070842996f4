"""Append a best-path head to a CTC recognizer: per time step, the best class and its probability.

The server's greedy CTC decode needs only these two [N, T] tensors, not the [N, T, C]
probabilities (C = 6625 for PP-OCR: ~100 MB per image through shared memory). The original
probability output stays first, for callers that want it.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from triton_ocr.contract import BEST_CLASS, BEST_SCORE


def opset_version(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def append_best_path_head(model: onnx.ModelProto) -> onnx.ModelProto:
    """Add ArgMax and ReduceMax over the class axis of the model's first output."""
    graph = model.graph
    if any(o.name in (BEST_CLASS, BEST_SCORE) for o in graph.output):
        return model
    probabilities = graph.output[0].name
    argmax = helper.make_node(
        "ArgMax", [probabilities], [BEST_CLASS], axis=2, keepdims=0, name="best_path_argmax"
    )
    if opset_version(model) >= 18:  # axes moved from attribute to input in opset 18
        axes = helper.make_tensor("best_path_axes", TensorProto.INT64, [1], [2])
        graph.initializer.append(axes)
        reducemax = helper.make_node(
            "ReduceMax", [probabilities, axes.name], [BEST_SCORE], keepdims=0, name="best_path_max"
        )
    else:
        reducemax = helper.make_node(
            "ReduceMax", [probabilities], [BEST_SCORE], axes=[2], keepdims=0, name="best_path_max"
        )
    graph.node.extend([argmax, reducemax])
    # [N, T] as the probabilities declare them: a fixed step count stays fixed (Triton's C++
    # ONNX Runtime backend compares output dims with the config one for one)
    batch, steps = (
        d.dim_value if d.HasField("dim_value") else (d.dim_param or name)
        for d, name in zip(
            graph.output[0].type.tensor_type.shape.dim[:2], ("batch", "steps"), strict=True
        )
    )
    graph.output.extend(
        [
            helper.make_tensor_value_info(BEST_CLASS, TensorProto.INT64, [batch, steps]),
            helper.make_tensor_value_info(BEST_SCORE, TensorProto.FLOAT, [batch, steps]),
        ]
    )
    onnx.checker.check_model(model)
    return model
