"""The east-str export is deterministic, and refuses a model that does not fit its config."""

from __future__ import annotations

import hashlib

from tests.conftest import copy_configs
from triton_ocr.config.repository import Repository
from triton_ocr.contract import TEXT_ORIENTATION
from triton_ocr.export import east

from .conftest import cli_export
from .standins import build_east_graph

PACK = "east-str"
MODELS = ("text_detection", "text_recognition", TEXT_ORIENTATION)


def digests(repository) -> dict[str, str]:
    return {
        model: hashlib.sha256(
            Repository(repository, PACK).model_file(model).read_bytes()
        ).hexdigest()
        for model in MODELS
    }


def test_the_same_files_export_to_the_same_bytes(east_str_repository, standin_files, tmp_path):
    again = copy_configs(tmp_path / "repository")
    result = cli_export(again, *standin_files)
    assert result.returncode == 0, result.stderr[-3000:]
    assert digests(again) == digests(east_str_repository)


def test_a_score_map_of_the_wrong_rank_is_refused(east_str_repository, standin_files, tmp_path):
    """The failure seen in the field: a 5-D score map. The export stops, names the tensor, the
    rank the config expects and the one the file has, and leaves the served file alone."""
    broken = build_east_graph(tmp_path / "frozen_east_text_detection.pb", score_rank=5)
    before = digests(east_str_repository)
    result = cli_export(east_str_repository, broken, standin_files[1])
    assert result.returncode == 1
    message = result.stderr.strip().splitlines()
    assert message[-2] == (
        "error: the exported model does not fit its config, so it was not written:"
    ), result.stderr[-3000:]
    assert message[-1] == (
        f"  text_detection (east-str, east.onnx): output '{east.SCORES}' has rank 5 "
        "[1, -1, -1, -1, 1] in the file; the config expects rank 4 [-1, -1, -1, 1]"
    )
    assert digests(east_str_repository) == before
    assert not list(east_str_repository.glob("*/1/*.partial"))


def test_the_standin_ends_the_way_east_does(standin_files):
    """Score: 1x1 conv + bias + sigmoid; geometry: the concat of the edge and angle heads."""
    import tensorflow as tf

    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(standin_files[0].read_bytes())
    nodes = {node.name: node for node in graph.node}

    def source(name: str) -> str:
        return nodes[name].input[0].split(":")[0]

    score = east.SCORES.split(":")[0]
    assert nodes[score].op == "Sigmoid"
    assert [nodes[source(score)].op, nodes[source(source(score))].op] == ["BiasAdd", "Conv2D"]
    kernel = nodes[nodes[source(source(score))].input[1]].attr["value"].tensor
    assert [d.size for d in kernel.tensor_shape.dim][:2] == [1, 1]
    concat = nodes[east.GEOMETRY.split(":")[0]]
    assert concat.op == "ConcatV2"
    heads = {n for n in nodes if n.startswith("feature_fusion/Conv_")}
    assert {"feature_fusion/Conv_8/Sigmoid", "feature_fusion/Conv_9/Sigmoid"} <= heads
