"""OpenCV's EAST text detector: frozen TensorFlow graph -> ONNX with tf2onnx.

The graph `frozen_east_text_detection.pb` takes NHWC RGB images (mean-subtracted, sides
multiples of 32) and returns, at a quarter of the input resolution, a score map [N, H/4, W/4, 1]
and an RBOX geometry map [N, H/4, W/4, 5] (4 edge distances + angle). Tensor names are kept, so
the Triton config names them as the guide does.
"""

from __future__ import annotations

from pathlib import Path

INPUT = "input_images:0"
SCORES = "feature_fusion/Conv_7/Sigmoid:0"
GEOMETRY = "feature_fusion/concat_3:0"


def export_east(frozen_graph: Path, target: Path, opset: int = 17) -> Path:
    """Convert the frozen graph to one ONNX file at `target` (written atomically)."""
    import onnx
    import tensorflow as tf
    import tf2onnx

    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(Path(frozen_graph).read_bytes())
    names = {node.name for node in graph_def.node}
    missing = [t for t in (INPUT, SCORES, GEOMETRY) if t.rsplit(":", 1)[0] not in names]
    if missing:
        raise ValueError(f"{frozen_graph} is not the EAST graph: no tensors {missing}")
    proto, _ = tf2onnx.convert.from_graph_def(
        graph_def, input_names=[INPUT], output_names=[SCORES, GEOMETRY], opset=opset
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    onnx.save_model(proto, partial)
    partial.replace(target)
    return target
