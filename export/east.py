"""OpenCV's EAST text detector: frozen TensorFlow graph -> ONNX with tf2onnx, deterministically.

The graph `frozen_east_text_detection.pb` takes NHWC RGB images (mean-subtracted, sides
multiples of 32) and returns, at a quarter of the input resolution, a score map [N, H/4, W/4, 1]
and an RBOX geometry map [N, H/4, W/4, 5] (4 edge distances + angle). Tensor names are kept, so
the Triton config names them as the guide does.

Why the conversion runs in a child interpreter: tf2onnx 1.17 keeps graph nodes, and node names,
in sets and rewrites them in set order. A node hashes by identity (its memory address) and a
string by a per-process random seed, so its transpose optimizer pushes transposes through the
graph in a different order in every run: the same file gave different ONNX bytes each time, and
about one conversion in 30 (measured on the stand-in graph) came out wrong, its score map 5-D
([1, N, H/4, W/4, 1]) because the reshape optimizer then merged away the Squeeze that undid an
Unsqueeze. The child fixes both orders (PYTHONHASHSEED=0, nodes hashed by name), so one input
file always converts to the same bytes; the export's config check (verify.py) stands behind it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

INPUT = "input_images:0"
SCORES = "feature_fusion/Conv_7/Sigmoid:0"
GEOMETRY = "feature_fusion/concat_3:0"
HASH_SEED = "0"


def export_east(frozen_graph: Path, target: Path, opset: int = 17) -> Path:
    """Convert the frozen graph to one ONNX file at `target` (in a child interpreter)."""
    result = subprocess.run(
        [sys.executable, "-m", __name__, str(frozen_graph), str(target), str(opset)],
        env={**os.environ, "PYTHONHASHSEED": HASH_SEED, "TF_CPP_MIN_LOG_LEVEL": "2"},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or [f"exit code {result.returncode}"]
        raise ValueError(f"converting {frozen_graph} failed: {lines[-1]}")
    return target


def stable_node_hash() -> None:
    """Hash tf2onnx's graph nodes by name (unique in a graph, fixed for a node's life) instead
    of by identity, so sets of nodes iterate in the same order in every run."""
    from tf2onnx import graph

    graph.Node.__hash__ = lambda node: hash(node.name)


def convert(frozen_graph: Path, target: Path, opset: int) -> Path:
    """The conversion itself; only ever run with a fixed PYTHONHASHSEED (see export_east)."""
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
        raise RuntimeError("convert() needs PYTHONHASHSEED=0 at start-up; call export_east()")
    import onnx
    import tensorflow as tf
    import tf2onnx

    stable_node_hash()
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
    onnx.save_model(proto, target)
    return target


if __name__ == "__main__":
    graph_path, target_path, opset_text = sys.argv[1:]
    try:
        convert(Path(graph_path), Path(target_path), int(opset_text))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
