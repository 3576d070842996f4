"""ArgMax, as OpenVINO's CPU plugin runs it best.

OpenVINO reads ONNX's ArgMax as a TopK of k 1, and its CPU TopK is slow over a long axis, such
as the recognizer's best-path head (ArgMax over 18,710 classes a time step,
export/recognizer_head.py). The same index, the first place of the axis's maximum, comes from
reductions OpenVINO runs fast: the maximum, where the axis equals it, the least such place
(docs/benchmarks.md, "Only the work an image needs"). ONNX Runtime's own ArgMax is fast, so
the file keeps it and only the OpenVINO engine rewrites its graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def first_max_indices(model: Any) -> int:
    """Replace the indices of every TopK of k 1 that keeps the maximum in an `openvino.Model`
    (ArgMax as OpenVINO reads it) by the least index where the axis equals its maximum, in
    place; the TopK goes when nothing else reads it. Returns how many were replaced."""
    import openvino.opset13 as ops

    replaced = 0
    for node in model.get_ordered_ops():
        if node.get_type_name() != "TopK":
            continue
        attributes = node.get_attributes()
        k = node.input(1).get_source_output().get_node()
        if (
            attributes["mode"] != "max"
            or k.get_type_name() != "Constant"
            or k.get_data().size != 1
            or int(k.get_data().item()) != 1
        ):
            continue
        values = node.input(0).get_source_output()
        shape = values.get_partial_shape()
        if shape.rank.is_dynamic:
            continue
        rank = shape.rank.get_length()
        axis = attributes["axis"] % rank
        length = shape[axis]
        if length.is_dynamic:
            continue
        # the places along the axis, shaped to broadcast against the values
        places = np.arange(length.get_length(), dtype=np.int32).reshape(
            [-1] + [1] * (rank - 1 - axis)
        )
        axes = ops.constant(np.array([axis], np.int64))
        top = ops.reduce_max(values, axes, keep_dims=True)
        # not found (a NaN maximum) reads as the last place, an index the caller can still use
        where = ops.select(ops.equal(values, top), places, np.int32(places.size - 1))
        first = ops.reduce_min(where, axes, keep_dims=True)
        index_type = node.output(1).get_element_type()
        node.output(1).replace(ops.convert(first, index_type).output(0))
        replaced += 1
    return replaced
