import dataclasses

import numpy as np
import pytest

from triton_ocr.preprocessing.detection import detection_input, detection_size, normalize
from triton_ocr.settings import DetectorInput


@pytest.mark.parametrize(
    ("hw", "expected"),
    [
        ((736, 736), (736, 736)),  # already at the minimum side: unchanged
        ((100, 200), (736, 1472)),  # small images are scaled up to the short-side minimum
        ((1000, 4000), (512, 1984)),  # long side capped at 2000, rounded to a multiple of 32
        ((3000, 1500), (1984, 992)),
        ((5, 5000), (32, 1984)),  # never below one multiple
    ],
)
def test_detection_size(hw, expected):
    assert detection_size(*hw, min_side=736, max_side=2000) == expected


def test_detection_size_keeps_aspect_and_multiples():
    for h, w in [(480, 640), (1234, 987), (33, 2100), (2500, 2500)]:
        rh, rw = detection_size(h, w, 736, 2000)
        assert rh % 32 == 0 and rw % 32 == 0
        assert abs(rw / rh - w / h) / (w / h) < 0.1 or min(rh, rw) == 32


def test_detection_size_rejects_empty():
    with pytest.raises(ValueError):
        detection_size(0, 10, 736, 2000)


PPOCR = DetectorInput(
    min_side_len=736,
    max_side_len=2000,
    channel_order="BGR",
    layout="NCHW",
    scale=1 / 255,
    mean=(0.5, 0.5, 0.5),
    std=(0.5, 0.5, 0.5),
)
EAST = dataclasses.replace(
    PPOCR,
    channel_order="RGB",
    layout="NHWC",
    scale=1.0,
    mean=(123.68, 116.78, 103.94),
    std=(1, 1, 1),
)


def test_normalize_values():
    image = np.zeros((2, 3, 3), np.uint8)
    image[..., 0] = 255
    out = normalize(image, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), scale=1 / 255)
    assert out.shape == (2, 3, 3) and out.dtype == np.float32
    assert np.allclose(out[..., 0], 1.0) and np.allclose(out[..., 1:], -1.0)


def test_normalize_in_place_equals_the_plain_formula_to_the_bit():
    image = np.random.default_rng(0).integers(0, 256, (37, 53, 3), dtype=np.uint8)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    plain = (image.astype(np.float32) * np.float32(1 / 255) - np.float32(mean)) / np.float32(std)
    assert np.array_equal(normalize(image, mean, std, 1 / 255), plain)
    chw = normalize(image, mean, std, 1 / 255, channels_first=True)
    assert chw.flags.c_contiguous and np.array_equal(chw, plain.transpose(2, 0, 1))


def test_detection_input_nchw_bgr():
    image = np.zeros((300, 500, 3), np.uint8)
    image[..., 0] = 255  # blue in BGR
    out = detection_input(image, PPOCR)
    assert out.shape == (1, 3, 736, 1216) and out.flags.c_contiguous
    assert np.allclose(out[0, 0], 1.0) and np.allclose(out[0, 2], -1.0)


def test_detection_input_nhwc_rgb_mean_subtraction():
    image = np.zeros((300, 500, 3), np.uint8)
    image[..., 2] = 200  # red in BGR
    out = detection_input(image, EAST)
    assert out.shape == (1, 736, 1216, 3)
    assert np.allclose(out[0, ..., 0], 200 - 123.68, atol=1e-3)  # red first after BGR -> RGB
    assert np.allclose(out[0, ..., 2], -103.94, atol=1e-3)


def test_invalid_layout_is_a_load_time_error():
    with pytest.raises(ValueError, match="layout"):
        dataclasses.replace(PPOCR, layout="CHWN")
