"""The INT8 pack, ppocr-v6-int8 (the default pack's networks, the recognizer's convolutions at
INT8 from committed ranges), exported with the CLI (which checks the file's checksum) and served
by the real Triton with `--pack ppocr-v6-int8` beside the default pack's files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import serving_pack
from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.config.repository import AlphabetSource, Repository

from .test_spaces import PAGE, grid_misses, texts_of_both_entry_points

PACK = "ppocr-v6-int8"


@pytest.fixture(scope="module")
def int8_server(repository, tmp_path_factory):
    logs = tmp_path_factory.mktemp("triton-int8")
    with serving_pack(repository, PACK, logs) as grpc:
        yield grpc, logs / "server.log"


def test_only_the_recognizer_is_its_own_file_and_its_convolutions_are_int8(repository, int8_server):
    int8, default = Repository(repository, PACK), Repository(repository)
    assert int8.model_file(contract.TEXT_DETECTION) == default.model_file(contract.TEXT_DETECTION)
    recognizer = int8.model_file(contract.TEXT_RECOGNITION)
    assert recognizer != default.model_file(contract.TEXT_RECOGNITION)
    graph = onnx.load(recognizer).graph
    made_by = {out: node.op_type for node in graph.node for out in node.output}
    convolutions = [node for node in graph.node if node.op_type == "Conv"]
    assert convolutions
    assert all(made_by.get(conv.input[1]) == "DequantizeLinear" for conv in convolutions)
    source = AlphabetSource("character", True)
    assert int8.alphabet(source) == default.alphabet(source)


def test_the_recognizer_runs_on_openvino_on_any_cpu(int8_server):
    _, log = int8_server
    started = [line for line in log.read_text().splitlines() if "text_recognition: " in line]
    assert started and all("openvino" in line for line in started), started


def test_both_entry_points_read_the_lines_with_their_spaces(int8_server):
    grpc, _ = int8_server
    assert texts_of_both_entry_points(grpc, PAGE.png) == (PAGE.texts, PAGE.texts)


def test_every_grid_line_reads_exactly(int8_server):
    """The issue's bar for an INT8 network: the rendered grid still 240/240."""
    grpc, _ = int8_server
    with OcrClient(grpc, "grpc") as client:
        misses = grid_misses(client)
    assert not misses, "\n".join(misses)


def test_eval_names_the_pack_the_server_serves(int8_server):
    """A report labelled with another pack's name (and its RapidOCR) would mislead: eval asks."""
    grpc, _ = int8_server
    cli = str(Path(sys.executable).parent / "triton-ocr")
    split = str(ROOT / "tests" / "data" / "crops")
    refused = subprocess.run([cli, "eval", split, "--url", grpc], capture_output=True, text=True)
    assert refused.returncode == 2
    assert f"serves {PACK}: pass --pack {PACK}" in refused.stderr
