"""The east-str pack, exported from the stand-ins with the CLI, served by the real Triton.

The stand-in recognizer has random weights, so texts are noise: these tests assert the
contract's structure, not content. The copy of the repository lowers the text score filter so
that noise texts come through and the whole path (boxes, crops, recognizer, CTC) is exercised.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from tests.samples import render_blank
from triton_ocr.client import OcrClient
from triton_ocr.serving.flags import ServerOptions, free_ports
from triton_ocr.serving.server import running_server
from triton_ocr.tools.samples import render

GUIDE_CLIENT = Path(__file__).parents[1] / "e2e" / "guide_part5_client.py"


@pytest.fixture(scope="module")
def server(east_str_repository, tmp_path_factory):
    config = east_str_repository / "grouped_recognition" / "configs" / "east-str.pbtxt"
    text = config.read_text()
    config.write_text(re.sub(r'("text_score" value: \{ string_value: )"[0-9.]+"', r'\1"0"', text))
    http, grpc, metrics = free_ports(3)
    log = tmp_path_factory.mktemp("triton") / "server.log"
    opts = ServerOptions(east_str_repository, "127.0.0.1", http, grpc, metrics, pack="east-str")
    with running_server(opts, log_file=log):
        yield f"127.0.0.1:{http}", f"127.0.0.1:{grpc}"


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_answers_with_the_documented_outputs(server, protocol):
    sample = render()
    with OcrClient(server[0] if protocol == "http" else server[1], protocol) as client:
        lines = client.read(sample.png)
    assert lines, "the stand-in detector scores dark text high: boxes are expected"
    width, height = sample.size
    for line in lines:
        assert re.fullmatch("[0-9a-z]*", line.text)  # the 37-class alphabet
        assert 0.0 <= line.score <= 1.0
        xs, ys = zip(*line.polygon, strict=True)
        assert 0 <= min(xs) <= max(xs) <= width - 1 and 0 <= min(ys) <= max(ys) <= height - 1
    tops = [min(y for _, y in line.polygon) for line in lines]
    assert tops[0] <= tops[-1] + 1  # reading order starts at the top


def test_blank_image_gives_empty_outputs(server):
    client = grpcclient.InferenceServerClient(server[1])
    data = np.frombuffer(render_blank(), np.uint8)[None]
    tensor = grpcclient.InferInput("input_image", list(data.shape), "UINT8")
    tensor.set_data_from_numpy(data)
    result = client.infer("ensemble_model", [tensor])
    assert result.as_numpy("recognized_text").shape == (1, 0)
    assert result.as_numpy("text_polygons").shape == (1, 0, 4, 2)
    assert result.as_numpy("text_scores").shape == (1, 0)


def test_guide_part5_client_runs_unchanged(server, tmp_path):
    image = tmp_path / "img1.png"
    image.write_bytes(render().png)
    out = subprocess.run(
        [sys.executable, str(GUIDE_CLIENT), server[1], str(image)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert out.startswith("[[")  # a [1, N] array of strings, printed
