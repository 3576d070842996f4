"""End to end against the real Triton server: rendered images, contract, protocols, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from tests.conftest import ROOT
from tests.samples import render_blank
from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.samples import render

from .conftest import Endpoints

SAMPLE = render()


def client_for(server: Endpoints, protocol: str) -> OcrClient:
    return OcrClient(server.http if protocol == "http" else server.grpc, protocol)


def iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_rendered_text_comes_back_in_reading_order_on_the_text(server, protocol):
    with client_for(server, protocol) as client:
        lines = client.read(SAMPLE.png)
    assert [normalize(line.text) for line in lines] == [normalize(t) for t in SAMPLE.texts]
    for line, ink in zip(lines, SAMPLE.ink_boxes, strict=True):
        xs, ys = zip(*line.polygon, strict=True)
        assert iou((min(xs), min(ys), max(xs), max(ys)), ink) > 0.5, (line.text, ink)
        assert 0.5 <= line.score <= 1.0


def test_rotated_line_polygon_follows_the_text(server):
    with client_for(server, "grpc") as client:
        lines = client.read(SAMPLE.png)
    rotated = next(line for line in lines if normalize(line.text) == "rotatedlineoftext")
    (x0, y0), (x1, y1) = rotated.polygon[0], rotated.polygon[1]
    angle = np.degrees(np.arctan2(-(y1 - y0), x1 - x0))  # counter-clockwise, like the render
    assert abs(angle - SAMPLE.lines[-1].angle) < 3


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_blank_and_noise_images_return_empty_outputs(server, protocol):
    noise = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    import cv2

    noise_png = cv2.imencode(".png", noise)[1].tobytes()
    module = httpclient if protocol == "http" else grpcclient
    client = module.InferenceServerClient(server.http if protocol == "http" else server.grpc)
    for image in (render_blank(), noise_png):
        data = np.frombuffer(image, np.uint8)[None]
        tensor = module.InferInput(contract.INPUT_IMAGE, list(data.shape), "UINT8")
        tensor.set_data_from_numpy(data)
        result = client.infer(contract.ENSEMBLE_MODEL, [tensor])
        assert result.as_numpy(contract.OUTPUT_TEXT).shape == (1, 0)
        assert result.as_numpy(contract.OUTPUT_POLYGONS).shape == (1, 0, 4, 2)
        assert result.as_numpy(contract.OUTPUT_SCORES).shape == (1, 0)


def test_http_json_and_binary_agree(server):
    client = httpclient.InferenceServerClient(server.http)
    data = np.frombuffer(SAMPLE.png, np.uint8)[None]
    results = {}
    for binary in (True, False):
        tensor = httpclient.InferInput(contract.INPUT_IMAGE, list(data.shape), "UINT8")
        tensor.set_data_from_numpy(data, binary_data=binary)
        outputs = [httpclient.InferRequestedOutput(n, binary_data=binary) for n in contract.OUTPUTS]
        result = client.infer(contract.ENSEMBLE_MODEL, [tensor], outputs=outputs)
        results[binary] = [result.as_numpy(n) for n in contract.OUTPUTS]
    as_text = [[t.decode() if isinstance(t, bytes) else t for t in row] for row in results[True][0]]
    assert as_text == results[False][0].tolist()  # JSON carries strings, binary carries bytes
    assert np.allclose(results[True][1], results[False][1])
    assert np.allclose(results[True][2], results[False][2], atol=1e-6)


def test_plain_json_request_as_in_the_api_docs(server):
    """docs/api.md's curl example: a JSON body with the bytes as a list of numbers."""
    body = {
        "inputs": [
            {
                "name": "input_image",
                "shape": [1, len(SAMPLE.png)],
                "datatype": "UINT8",
                "data": list(SAMPLE.png),
            }
        ]
    }
    request = urllib.request.Request(
        f"http://{server.http}/v2/models/ensemble_model/infer",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
        answer = json.load(response)
    outputs = {o["name"]: o for o in answer["outputs"]}
    texts = outputs["recognized_text"]["data"]
    assert [normalize(t) for t in texts] == [normalize(t) for t in SAMPLE.texts]
    assert outputs["text_polygons"]["shape"] == [1, len(texts), 4, 2]


def test_guide_part5_client_runs_unchanged(server, tmp_path, request):
    shared = ROOT.parent / "shared" / "eval" / "images" / "scene" / "triton_img1.jpg"
    if shared.is_file():
        image, expected = shared, ["stop", "bostonmarket"]  # the guide's own photo
    else:
        image = tmp_path / "img1.png"
        image.write_bytes(SAMPLE.png)
        expected = [normalize(t) for t in SAMPLE.texts]
    script = Path(__file__).parent / "guide_part5_client.py"
    out = subprocess.run(
        [sys.executable, str(script), server.grpc, str(image)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=tmp_path,
    ).stdout
    print(out)
    printed = normalize(out)
    for text in expected:
        assert text in printed


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_client_script_prints_lines_and_json(server, tmp_path, protocol):
    image = tmp_path / "sample.png"
    image.write_bytes(SAMPLE.png)
    url = server.http if protocol == "http" else server.grpc
    base = [sys.executable, str(ROOT / "client" / "client.py"), str(image), "--url", url]
    run = dict(capture_output=True, text=True, check=True, timeout=120, cwd=tmp_path)
    plain = subprocess.run([*base, "--protocol", protocol], **run).stdout.splitlines()
    # one row per line, a blank one between blocks (the sample's lines stand apart: 4 blocks)
    assert [normalize(t) for t in plain if t] == [normalize(t) for t in SAMPLE.texts]
    assert plain.count("") == 3
    record = json.loads(subprocess.run([*base, "--protocol", protocol, "--json"], **run).stdout)
    (page,) = record["pages"]
    assert (page["page"], page["width"], page["height"]) == (1, *SAMPLE.size)
    assert [normalize(x["text"]) for x in page["lines"]] == [normalize(t) for t in SAMPLE.texts]
    assert all(len(x["polygon"]) == 4 and 0 < x["score"] <= 1 for x in page["lines"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.png"]  # nothing else written


def test_client_script_reads_a_forced_line_as_one_text(server, tmp_path):
    """--line: the whole image is one line (a tall crop that the automatic rule leaves alone)."""
    from triton_ocr.tools.samples import Placed, render

    crop = render((Placed("HOTEL PACIFIC 42", (10, 40), 40),), size=(420, 130))
    image = tmp_path / "crop.png"
    image.write_bytes(crop.png)
    base = [sys.executable, str(ROOT / "client" / "client.py"), str(image), "--url", server.http]
    run = dict(capture_output=True, text=True, check=True, timeout=120, cwd=tmp_path)
    forced = json.loads(subprocess.run([*base, "--line", "--json"], **run).stdout)
    forced = forced["pages"][0]["lines"]
    assert [normalize(x["text"]) for x in forced] == ["hotelpacific42"]
    assert forced[0]["polygon"] == [[0, 0], [420, 0], [420, 130], [0, 130]]  # the whole image


def test_triton_ocr_read_subcommand(server, tmp_path):
    image = tmp_path / "sample.png"
    image.write_bytes(SAMPLE.png)
    cli = Path(sys.executable).parent / "triton-ocr"
    out = subprocess.run(
        [str(cli), "read", str(image), "--url", server.http],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert [normalize(t) for t in out.splitlines() if t] == [normalize(t) for t in SAMPLE.texts]


def test_read_takes_folders_and_stdin_with_requests_in_flight(server, tmp_path):
    scans = tmp_path / "scans" / "inner"
    scans.mkdir(parents=True)
    (scans / "a.png").write_bytes(SAMPLE.png)
    (scans / "b.png").write_bytes(b"not an image at all")  # refused; the others are still read
    (scans / "notes.txt").write_text("skipped: not an image suffix")
    listed = tmp_path / "c.png"
    listed.write_bytes(SAMPLE.png)
    cli = Path(sys.executable).parent / "triton-ocr"
    done = subprocess.run(
        [str(cli), "read", str(tmp_path / "scans"), "-", "--url", server.http]
        + ["--concurrency", "2", "--json"],
        input=f"{listed}\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 1  # one file failed
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["file"] for r in records] == [str(scans / "a.png"), str(listed)]  # input order
    for record in records:
        assert [normalize(x["text"]) for x in record["pages"][0]["lines"]] == [
            normalize(t) for t in SAMPLE.texts
        ]
    errors = done.stderr.splitlines()
    assert errors[0].startswith(f"error: {scans / 'b.png'}: ")
    assert errors[-1].startswith(f"3 files, 2 pages, {2 * len(SAMPLE.texts)} lines, 1 failed, ")
