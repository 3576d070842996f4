"""A detector that takes the resized page itself: its normalisation written into its graph.

The served detector's input is the page as preprocessing resized it, BGR uint8 [1, H, W, 3].
Nodes in front of the network's own input turn it into what the network was trained on (the
pack's `Normalisation`): channel order, layout, then (pixel * scale - mean) / std as float32, the
same operations in the same order as numpy did them in preprocessing before, so the network sees
the same values to the bit. The tensor that crosses shared memory and BLS is a quarter of the
float32 one's size (docs/benchmarks.md, "Where the memory goes").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from triton_ocr.config.packs import DETECTOR_IMAGE, Normalisation

PREFIX = "page_to_network"  # names of the added nodes and constants start with this


def takes_page_image(model: onnx.ModelProto, normalisation: Normalisation) -> onnx.ModelProto:
    """`model` (one image input, float32, the network's layout) with the page-image input
    `DETECTOR_IMAGE` in front of it; the original input becomes an inner tensor."""
    graph = model.graph
    if len(graph.input) != 1:
        raise ValueError(f"a detector has one input, this one {len(graph.input)}")
    original = graph.input[0]
    n = normalisation
    nchw = n.layout == "NCHW"
    shape = (1, 3, 1, 1) if nchw else (1, 1, 1, 3)

    def constant(name: str, values: Sequence[float]) -> str:
        graph.initializer.append(
            numpy_helper.from_array(np.asarray(values, np.float32).reshape(shape), name)
        )
        return name

    nodes: list[onnx.NodeProto] = []
    tensor = DETECTOR_IMAGE.name

    def step(op: str, inputs: list[str], **attributes: Any) -> None:
        nonlocal tensor
        out = f"{PREFIX}/{op.lower()}_{len(nodes)}"
        nodes.append(helper.make_node(op, [tensor, *inputs], [out], name=out, **attributes))
        tensor = out

    if n.channel_order == "RGB":
        graph.initializer.append(
            numpy_helper.from_array(np.array([2, 1, 0], np.int64), f"{PREFIX}/rgb")
        )
        step("Gather", [f"{PREFIX}/rgb"], axis=3)
    if nchw:
        step("Transpose", [], perm=[0, 3, 1, 2])
    step("Cast", [], to=TensorProto.FLOAT)
    if n.scale != 1:
        step("Mul", [constant(f"{PREFIX}/scale", [n.scale] * 3)])
    step("Sub", [constant(f"{PREFIX}/mean", n.mean)])
    if any(s != 1 for s in n.std):
        step("Div", [constant(f"{PREFIX}/std", n.std)])
    # the last step writes the network's own input tensor
    nodes[-1].output[0] = original.name
    for node in reversed(nodes):
        graph.node.insert(0, node)
    graph.input.remove(original)
    graph.input.insert(
        0,
        helper.make_tensor_value_info(
            DETECTOR_IMAGE.name, TensorProto.UINT8, ["batch", "height", "width", 3]
        ),
    )
    onnx.checker.check_model(model)
    return model
