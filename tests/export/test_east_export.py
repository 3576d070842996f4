"""EAST: the project's tf2onnx export on a stand-in graph with EAST's real tensor names."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tests.conftest import REPOSITORY
from triton_ocr.config.packs import pack_named
from triton_ocr.config.repository import Repository
from triton_ocr.export.detector_input import takes_page_image
from triton_ocr.export.east import GEOMETRY, INPUT, SCORES, export_east


@pytest.fixture(scope="module")
def east_onnx(tmp_path_factory, standin_files):
    return export_east(standin_files[0], tmp_path_factory.mktemp("east") / "east.onnx")


def test_names_match_the_config(east_onnx):
    """The converted graph's outputs are the config's; its input is the one the page input is
    written in front of (export/detector_input.py), which the config names."""
    session = ort.InferenceSession(str(east_onnx), providers=["CPUExecutionProvider"])
    config = Repository(REPOSITORY, "east-str").config("text_detection")
    assert [i.name for i in session.get_inputs()] == [INPUT]
    served = takes_page_image(onnx.load_model(east_onnx), pack_named("east-str").normalisation)
    assert [i.name for i in served.graph.input] == [t.name for t in config.input]
    assert [o.name for o in session.get_outputs()] == [SCORES, GEOMETRY]
    assert [t.name for t in config.output] == [SCORES, GEOMETRY]


def test_axes_are_dynamic_except_channels(east_onnx):
    session = ort.InferenceSession(str(east_onnx), providers=["CPUExecutionProvider"])
    (image,) = session.get_inputs()
    scores, geometry = session.get_outputs()
    assert image.shape[3] == 3 and all(isinstance(d, str) for d in image.shape[:3])
    assert scores.shape[3] == 1 and geometry.shape[3] == 5
    assert all(isinstance(d, str) for d in (*scores.shape[:3], *geometry.shape[:3]))


@pytest.mark.parametrize("shape", [(1, 64, 96), (2, 128, 32), (1, 320, 480)])
def test_outputs_are_at_a_quarter_resolution(east_onnx, shape):
    session = ort.InferenceSession(str(east_onnx), providers=["CPUExecutionProvider"])
    images = np.random.default_rng(0).normal(0, 50, (*shape, 3)).astype(np.float32)
    scores, geometry = session.run(None, {INPUT: images})
    n, h, w = shape
    assert scores.shape == (n, h // 4, w // 4, 1) and geometry.shape == (n, h // 4, w // 4, 5)
    assert scores.min() >= 0.0 and scores.max() <= 1.0


def test_a_graph_without_east_tensors_is_refused(tmp_path):
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.placeholder(tf.float32, [None, 3], name="something_else")
    pb = tmp_path / "other.pb"
    pb.write_bytes(graph.as_graph_def().SerializeToString())
    with pytest.raises(ValueError, match="not the EAST graph"):
        export_east(pb, tmp_path / "x.onnx")
