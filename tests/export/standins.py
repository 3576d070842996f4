"""Stand-ins for the guide's two weight files (the real ones cannot be downloaded here).

EAST: a frozen TensorFlow graph with EAST's real input/output tensor names, NHWC layout and
stride 4. Its "weights" are chosen so that dark areas score high and every cell predicts a box of
fixed size around itself, which makes the server find boxes on dark text and so exercises the
whole pipeline; a random convolution keeps it a real network.
STR: the None-ResNet-None-CTC network with random weights, saved as the published checkpoint is
(DataParallel `module.` keys, storages tagged as CUDA).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from triton_ocr.export import east

# every cell predicts a box reaching this far to the top, right, bottom, left; angle 0
GEOMETRY = (6.0, 10.0, 6.0, 10.0, 0.0)


def build_east_graph(path: Path, seed: int = 0) -> Path:
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    graph = tf.Graph()
    with graph.as_default():
        images = tf.compat.v1.placeholder(tf.float32, [None, None, None, 3], name="input_images")
        # a random 3x3 conv, stride 2 twice: the real network's output stride of 4
        kernel = tf.constant(rng.normal(0, 0.05, (3, 3, 3, 8)).astype(np.float32))
        features = tf.nn.conv2d(images, kernel, strides=2, padding="SAME")
        features = tf.nn.conv2d(
            features,
            tf.constant(rng.normal(0, 0.05, (3, 3, 8, 8)).astype(np.float32)),
            strides=2,
            padding="SAME",
        )
        brightness = tf.nn.avg_pool2d(tf.reduce_mean(images, axis=3, keepdims=True), 4, 4, "SAME")
        noise = tf.reduce_mean(features, axis=3, keepdims=True) * 0.01
        with tf.name_scope("feature_fusion"):
            with tf.name_scope("Conv_7"):
                tf.sigmoid(-(brightness + noise) / 8.0, name="Sigmoid")
            ones = tf.ones_like(brightness)
            tf.concat([ones * v for v in GEOMETRY], axis=3, name="concat_3")
    graph_def = graph.as_graph_def()
    names = {node.name for node in graph_def.node}
    assert east.SCORES.split(":")[0] in names and east.GEOMETRY.split(":")[0] in names
    path.write_bytes(graph_def.SerializeToString())
    return path


@contextlib.contextmanager
def storages_tagged_as(location: str):
    """Make torch.save record every storage on `location` (as a checkpoint saved on a GPU)."""
    import torch.serialization as serialization

    entry = (-1, lambda _obj: location, lambda _obj, _loc: None)
    serialization._package_registry.insert(0, entry)
    try:
        yield
    finally:
        serialization._package_registry.remove(entry)


def save_str_checkpoint(path: Path, seed: int = 0) -> Path:
    import torch

    from triton_ocr.export.str_model import CHECKPOINT_PREFIX, NoneResNetNoneCTC

    torch.manual_seed(seed)
    model = NoneResNetNoneCTC()
    state = {CHECKPOINT_PREFIX + k: v for k, v in model.state_dict().items()}
    with storages_tagged_as("cuda:0"):
        torch.save(state, path)
    return path
