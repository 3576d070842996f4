"""The export's check of a model file against its config (export/verify.py), on small ONNX files
made here that stand in for the PP-OCR detector: one that fits, and one for each way a file can
disagree with config.pbtxt."""

from __future__ import annotations

import re
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.conftest import REPOSITORY, copy_configs
from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.config.repository import Repository
from triton_ocr.export.verify import ExportCheckError, check_model, install, partial_path

DETECTOR = "text_detection"
# the default pack's tensor names
INPUT, (OUTPUT,) = Repository(REPOSITORY).detector_tensors()


def detector(
    *,
    input_type: int = TensorProto.UINT8,
    output_name: str = OUTPUT,
    channels: int = 1,
    extra_axis: bool = False,
    declared: list | None = None,
) -> onnx.ModelProto:
    """the page [N, H, W, 3] -> mean over channels, repeated `channels` times -> sigmoid:
    [N, c, H, W] (with `extra_axis`, [1, N, c, H, W]); `declared` overrides the output shape the
    file states."""
    nodes = [
        helper.make_node("Cast", [INPUT], ["x32"], to=TensorProto.FLOAT),
        helper.make_node("Transpose", ["x32"], ["nchw"], perm=[0, 3, 1, 2]),
        helper.make_node("ReduceMean", ["nchw"], ["mean"], axes=[1], keepdims=1),
        helper.make_node("Concat", ["mean"] * channels, ["means"], axis=1),
        helper.make_node("Sigmoid", ["means"], ["score"]),
    ]
    initializers = []
    shape = ["n", channels, "h", "w"]
    if extra_axis:
        initializers.append(helper.make_tensor("axis0", TensorProto.INT64, [1], [0]))
        nodes.append(helper.make_node("Unsqueeze", ["score", "axis0"], [output_name]))
        shape = [1, *shape]
    else:
        nodes.append(helper.make_node("Identity", ["score"], [output_name]))
    graph = helper.make_graph(
        nodes,
        "detector",
        [helper.make_tensor_value_info(INPUT, input_type, ["n", "h", "w", 3])],
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, declared or shape)],
        initializers,
    )
    # IR 8: what every onnxruntime the locks hold reads (onnx itself writes its newest)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture()
def repository(tmp_path: Path) -> Path:
    """The project's configs (no model files), as an export target."""
    return copy_configs(tmp_path / "repository")


def problems_of(model: onnx.ModelProto, repository: Path) -> list[str]:
    path = repository / "candidate.onnx"
    onnx.save_model(model, path)
    return check_model(path, repository, DETECTOR, DEFAULT_PACK)


def test_a_file_that_fits_has_no_problems(repository):
    assert problems_of(detector(), repository) == []


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            detector(extra_axis=True),
            f"output '{OUTPUT}' has rank 5 [1, -1, 1, -1, -1] in the file; the config expects "
            "rank 4 [-1, 1, -1, -1]",
        ),
        (detector(output_name="scores"), f"output '{OUTPUT}' is not in the file"),
        (
            detector(input_type=TensorProto.DOUBLE),
            f"input '{INPUT}' is TYPE_FP64 in the file, TYPE_UINT8 in the config",
        ),
        (
            detector(channels=2),
            f"output '{OUTPUT}' has shape [-1, 2, -1, -1] in the file; the config expects "
            "[-1, 1, -1, -1]",
        ),
        # the file claims the right shape but computes another: ONNX Runtime's shape
        # inference, which Triton's backend sees too, tells
        (
            detector(extra_axis=True, declared=["n", 1, "h", "w"]),
            f"output '{OUTPUT}' has rank 5 [1, -1, 1, -1, -1] in the file; the config expects "
            "rank 4 [-1, 1, -1, -1]",
        ),
    ],
    ids=["rank", "name", "dtype", "fixed-dim", "false-declaration"],
)
def test_each_disagreement_is_named(repository, model, expected):
    problems = problems_of(model, repository)
    pattern = ".*".join(re.escape(part) for part in expected.split("*"))  # * stands for sizes
    assert problems and any(re.search(pattern, p) for p in problems), problems
    prefix = f"{DETECTOR} ({DEFAULT_PACK}, candidate.onnx): "
    assert all(p.startswith(prefix) for p in problems)


def test_the_next_model_in_the_ensemble_is_checked_too(repository):
    """detection_postprocessing reads the score map: a shape the config allows but the
    reader does not is refused, naming the reader."""
    config = repository / DETECTOR / "config.pbtxt"
    config.write_text(config.read_text().replace("dims: [ -1, 1, -1, -1 ]", "dims: [ -1, -1, -1 ]"))
    reader = repository / "detection_postprocessing" / "config.pbtxt"
    assert "probability_map" in reader.read_text()
    model = detector(extra_axis=False)
    model.graph.node[-1].op_type = "Squeeze"  # [N, 1, H, W] -> [N, H, W]: what the config says
    model.graph.output[0].type.tensor_type.shape.dim.pop(1)
    problems = problems_of(model, repository)
    assert any("detection_postprocessing's input 'probability_map' expects" in p for p in problems)


def test_install_moves_a_file_that_fits_and_deletes_one_that_does_not(repository):
    target = Repository(repository).model_file(DETECTOR)
    partial = partial_path(repository, DETECTOR, DEFAULT_PACK)
    onnx.save_model(detector(), partial)
    assert install(partial, repository, DETECTOR, DEFAULT_PACK) == target
    assert target.is_file() and not partial.exists()
    before = target.read_bytes()

    onnx.save_model(detector(extra_axis=True), partial)
    with pytest.raises(ExportCheckError, match="does not fit its config, so it was not written"):
        install(partial, repository, DETECTOR, DEFAULT_PACK)
    assert not partial.exists() and target.read_bytes() == before
