"""The detector's normalisation written into its graph (export/detector_input.py): the network
sees, to the bit, what the old float32 preprocessing gave it, for every pack's normalisation."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from triton_ocr.config.packs import DETECTOR_IMAGE, PACK_LIST, Normalisation
from triton_ocr.export.detector_input import takes_page_image


def network_input_as_output(layout: str) -> onnx.ModelProto:
    """A 'network' that returns its own input, so the test sees what it was given."""
    shape = ["n", 3, "h", "w"] if layout == "NCHW" else ["n", "h", "w", 3]
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["seen"])],
        "network",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("seen", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def plain(page: np.ndarray, n: Normalisation) -> np.ndarray:
    """The formula as the float32 preprocessing computed it: channel order, scale, mean, std."""
    image = page[0][..., ::-1] if n.channel_order == "RGB" else page[0]
    out = image.astype(np.float32) * np.float32(n.scale)
    out = (out - np.float32(n.mean)) / np.float32(n.std)
    return (out.transpose(2, 0, 1) if n.layout == "NCHW" else out)[None]


@pytest.mark.parametrize("pack", PACK_LIST, ids=lambda p: p.name)
def test_the_network_sees_the_normalised_page_to_the_bit(pack):
    n = pack.normalisation
    model = takes_page_image(network_input_as_output(n.layout), n)
    assert [i.name for i in model.graph.input] == [DETECTOR_IMAGE.name]
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.UINT8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    page = np.random.default_rng(0).integers(0, 256, (1, 37, 53, 3), dtype=np.uint8)
    page[0, 0, 0] = (255, 0, 10)  # channel order shows
    (seen,) = session.run(None, {DETECTOR_IMAGE.name: page})
    assert seen.dtype == np.float32 and np.array_equal(seen, plain(page, n))


def test_a_detector_with_two_inputs_is_refused():
    model = network_input_as_output("NCHW")
    model.graph.input.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1]))
    with pytest.raises(ValueError, match="one input"):
        takes_page_image(model, PACK_LIST[0].normalisation)


def test_a_normalisation_is_checked_where_declared():
    with pytest.raises(ValueError, match="layout"):
        Normalisation("BGR", "CHWN", 1.0, (0.0,) * 3, (1.0,) * 3)
    with pytest.raises(ValueError, match="3 values"):
        Normalisation("BGR", "NCHW", 1.0, (0.0,), (1.0,) * 3)
