"""The `ocr` BLS entry point: several images per request, request parameters, errors."""

from __future__ import annotations

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from tests.conftest import ROOT
from tests.samples import english_grid, receipt, render_blank
from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.preprocessing.header import ImageDecodeError
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.samples import Placed, render

SAMPLE = render()
SECOND = render(
    (Placed("second image", (40, 40), 48), Placed("with two lines", (40, 140), 40)), (640, 240)
)
PHOTO = ROOT.parent / "shared" / "eval" / "images" / "scene" / "triton_img1.jpg"


def texts(lines) -> list[str]:
    return [normalize(line.text) for line in lines]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_several_images_with_an_empty_one_in_the_middle(server, protocol):
    second = SECOND.png
    with OcrClient(server.http if protocol == "http" else server.grpc, protocol) as client:
        per_image = client.read_many([SAMPLE.png, render_blank(), second])
        alone = [client.read(SAMPLE.png), client.read(second)]
    assert len(per_image) == 3
    assert texts(per_image[0]) == [normalize(t) for t in SAMPLE.texts]
    assert per_image[1] == []
    assert texts(per_image[2]) == [normalize(t) for t in SECOND.texts]
    # the same boxes as the one-image ensemble answers, image by image
    for many, one in zip((per_image[0], per_image[2]), alone, strict=True):
        assert texts(many) == texts(one)
        assert np.allclose(
            [line.polygon for line in many], [line.polygon for line in one], atol=0.5
        )


def test_only_empty_images(server):
    with OcrClient(server.grpc, "grpc") as client:
        assert client.read_many([render_blank(), render_blank((32, 32))]) == [[], []]


def test_request_parameters_change_the_result(server):
    with OcrClient(server.grpc, "grpc") as client:
        (default,) = client.read_many([SAMPLE.png])
        (strict,) = client.read_many([SAMPLE.png], text_score=0.99)
        (small,) = client.read_many([SAMPLE.png], max_side_len=320, min_side_len=32)
    assert len(default) == 4
    assert 0 < len(strict) < len(default)  # weaker texts dropped
    assert all(line.score >= 0.99 for line in strict)
    assert small != default  # a coarser detector input: different boxes


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"bogus": 1}, "unknown request parameters ['bogus']"),
        ({"text_score": "high"}, "cannot read 'high' as float"),
        (
            {"max_side_len": 100000},
            r"max_side_len=100000 is out of range: it must be between 32 and 2000",
        ),
        ({"score_thresh": 0.5}, "does not apply to this model pack"),
    ],
)
def test_bad_request_parameters_are_invalid_arguments(server, parameters, message):
    with OcrClient(server.grpc, "grpc") as client, pytest.raises(InferenceServerException) as error:
        client.read_many([SAMPLE.png], **parameters)
    assert message in str(error.value)
    assert "INVALID_ARGUMENT" in str(error.value.status())


def test_a_bad_image_names_its_index(server):
    """The client's header pre-check names it before sending (the server's own check, which
    names it alike, is in test_bad_input's table)."""
    with OcrClient(server.http) as client, pytest.raises(ImageDecodeError) as error:
        client.read_many([SAMPLE.png, b"not an image"])
    assert "image 1: cannot decode image (12 bytes): text, not an image" in str(error.value)


def test_no_images_is_an_invalid_argument(server):
    client = grpcclient.InferenceServerClient(server.grpc)
    tensor = grpcclient.InferInput(contract.OCR_INPUT_IMAGES, [1, 0], "BYTES")
    tensor.set_data_from_numpy(np.array([], dtype=np.object_).reshape(1, 0))
    with pytest.raises(InferenceServerException, match="no images"):
        client.infer(contract.OCR_MODEL, [tensor])


def test_real_photo_through_ocr(server):
    if not PHOTO.is_file():
        pytest.skip(f"{PHOTO} is absent (only CI and dev machines have ../shared)")
    with OcrClient(server.grpc, "grpc") as client:
        (lines,) = client.read_many([PHOTO])
    assert {"stop", "bostonmarket"} <= set(texts(lines))


def assert_identical_answers(server, images: list[bytes]) -> None:
    """Both entry points chain the same stage functions with the same settings and recognition
    groups: the same texts, polygons and scores, to the bit."""
    with OcrClient(server.grpc, "grpc") as client:
        for index, data in enumerate(images):
            (many,) = client.read_many([data])
            one = client.read(data)
            assert [x.text for x in many] == [x.text for x in one], index
            assert [x.polygon for x in many] == [x.polygon for x in one], index
            assert [x.score for x in many] == [x.score for x in one], index


def test_ocr_and_ensemble_model_give_identical_results_on_rendered_images(server):
    import cv2

    pages = english_grid()[::6] + [receipt("DejaVuSansMono.ttf", 20)]
    images = [SAMPLE.png, SECOND.png, render_blank(), *(page.png for page in pages)]
    images += [turned_over(SAMPLE.png), turned(SECOND.png, cv2.ROTATE_90_CLOCKWISE)]
    assert_identical_answers(server, images)


def test_ocr_and_ensemble_model_give_identical_results_on_the_eval_images(server, shared_eval):
    import json

    manifest = json.loads((shared_eval / "manifest.json").read_text())
    assert_identical_answers(server, [(shared_eval / e["file"]).read_bytes() for e in manifest])


def turned(png: bytes, rotation: int) -> bytes:
    import cv2

    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    return cv2.imencode(".png", cv2.rotate(image, rotation))[1].tobytes()


def turned_over(png: bytes) -> bytes:
    import cv2

    return turned(png, cv2.ROTATE_180)


@pytest.mark.parametrize("model", ["ocr", "ensemble_model"])
def test_upside_down_text_reads_like_upright_text(server, model):
    """An upside-down page is set upright (page orientation) and upside-down crops turned back
    (the line classifier) before recognition; without either it reads as something else."""
    turned = turned_over(SAMPLE.png)
    with OcrClient(server.grpc, "grpc") as client:
        lines = client.read(turned) if model == "ensemble_model" else client.read_many([turned])[0]
        (lines_alone,) = client.read_many([turned], page_orientation="off")
        (unturned,) = client.read_many(
            [turned], classify_orientation="false", page_orientation="off"
        )
    assert sorted(texts(lines)) == sorted(normalize(t) for t in SAMPLE.texts)
    assert sorted(texts(lines_alone)) == sorted(normalize(t) for t in SAMPLE.texts)
    assert not set(texts(unturned)) & {normalize(t) for t in SAMPLE.texts}


@pytest.mark.parametrize("clockwise", [True, False])
def test_a_vertical_line_reads_whichever_way_it_was_turned(server, clockwise):
    """Tall crops are turned a quarter; the classifier settles which way up they read."""
    import cv2

    line = render((Placed("vertical line of text", (40, 40), 48),), (720, 140))
    rotation = cv2.ROTATE_90_CLOCKWISE if clockwise else cv2.ROTATE_90_COUNTERCLOCKWISE
    data = turned(line.png, rotation)
    with OcrClient(server.grpc, "grpc") as client:
        assert texts(client.read(data)) == ["verticallineoftext"]
        assert texts(client.read_many([data])[0]) == ["verticallineoftext"]
