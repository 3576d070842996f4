"""Stand-ins for the guide's two weight files (the real ones cannot be downloaded here).

EAST: a frozen TensorFlow graph built the way the real network ends (argman/EAST's model.py),
with its tensor names, NHWC layout and output stride 4: strided conv + batch-norm + ReLU
features, one feature-merging stage (bilinear unpooling, concat, 1x1 and 3x3 convs), then the
three 1x1 heads: `feature_fusion/Conv_7` + sigmoid for the score map; `Conv_8` + sigmoid times
the text scale (512) for the four edge distances and `Conv_9` + sigmoid, minus 0.5, times pi/2
for the angle, concatenated as `feature_fusion/concat_3`. So the export runs the conversion path
the real file takes. The weights are random except where they make the server's job testable:
a stride-4 averaging conv feeds the image's brightness to the score head, which scores dark
areas high, and the geometry heads predict a box of fixed size around every cell.
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
TEXT_SCALE = 512.0  # EAST's geometry head: sigmoid * text scale


def build_east_graph(path: Path, seed: int = 0, score_rank: int = 4) -> Path:
    """Write the stand-in graph; `score_rank=5` gives a broken one whose score map has an extra
    leading axis (what the export must refuse)."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)

    def weights(*shape: int, scale: float = 0.1) -> tf.Tensor:
        return tf.constant(rng.normal(0, scale, shape).astype(np.float32))

    def conv(x: tf.Tensor, size: int, channels: int, stride: int = 1, name: str | None = None):
        kernel = weights(size, size, int(x.shape[-1]), channels)
        return tf.nn.conv2d(x, kernel, strides=stride, padding="SAME", name=name)

    def conv_bn_relu(x: tf.Tensor, size: int, channels: int, stride: int = 1) -> tf.Tensor:
        y, _, _ = tf.compat.v1.nn.fused_batch_norm(
            conv(x, size, channels, stride),
            scale=tf.ones([channels]),
            offset=weights(channels),
            mean=weights(channels),
            variance=tf.ones([channels]),
            is_training=False,
        )
        return tf.nn.relu(y)

    def head(x: tf.Tensor, scope: str, kernel: np.ndarray, bias: np.ndarray) -> tf.Tensor:
        with tf.name_scope(scope):
            y = tf.nn.conv2d(x, tf.constant(kernel), strides=1, padding="SAME", name="Conv2D")
            y = tf.nn.bias_add(y, tf.constant(bias), name="BiasAdd")
            if score_rank == 5 and scope == "Conv_7":
                return tf.expand_dims(tf.sigmoid(y, name="Probability"), 0, name="Sigmoid")
            return tf.sigmoid(y, name="Sigmoid")

    graph = tf.Graph()
    with graph.as_default():
        images = tf.compat.v1.placeholder(tf.float32, [None, None, None, 3], name="input_images")
        stride2 = conv_bn_relu(images, 3, 8, stride=2)
        stride4 = conv_bn_relu(stride2, 3, 16, stride=2)
        stride8 = conv_bn_relu(stride4, 3, 16, stride=2)
        # feature merging as in EAST: unpool (bilinear x2), concat, 1x1 conv, 3x3 conv
        shape = tf.shape(stride8)
        unpooled = tf.compat.v1.image.resize_bilinear(stride8, [shape[1] * 2, shape[2] * 2])
        merged = conv_bn_relu(conv_bn_relu(tf.concat([unpooled, stride4], axis=-1), 1, 16), 3, 16)
        # mean pixel value over each 4x4 cell (the images arrive mean-subtracted: dark < 0)
        brightness = tf.nn.conv2d(images, tf.fill([4, 4, 3, 1], 1 / 48), 4, "SAME")
        features = tf.concat([merged, brightness], axis=-1)
        channels = int(features.shape[-1])

        def kernel(outputs: int, on_brightness: float) -> np.ndarray:
            k = rng.normal(0, 1e-3, (1, 1, channels, outputs)).astype(np.float32)
            k[..., -1, :] = on_brightness
            return k

        def zero_kernel(outputs: int) -> np.ndarray:
            return np.zeros((1, 1, channels, outputs), dtype=np.float32)

        distances = np.asarray(GEOMETRY[:4], dtype=np.float32) / TEXT_SCALE
        with tf.name_scope("feature_fusion"):
            head(features, "Conv_7", kernel(1, -1 / 8), np.zeros(1, np.float32))
            edges = head(features, "Conv_8", zero_kernel(4), np.log(distances / (1 - distances)))
            angle = head(features, "Conv_9", zero_kernel(1), np.zeros(1, np.float32))
            geometry = edges * TEXT_SCALE
            angle = (angle - 0.5) * np.pi / 2
            tf.concat([geometry, angle], axis=-1, name="concat_3")
    graph_def = graph.as_graph_def()
    names = {node.name for node in graph_def.node}
    assert east.SCORES.split(":")[0] in names and east.GEOMETRY.split(":")[0] in names
    path.write_bytes(graph_def.SerializeToString(deterministic=True))
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
