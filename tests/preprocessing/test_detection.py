import dataclasses

import numpy as np
import pytest

from triton_ocr.preprocessing.detection import detection_input, detection_size
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


PPOCR = DetectorInput(min_side_len=736, max_side_len=2000)


def test_detection_input_is_the_page_resized_as_bgr_uint8():
    image = np.zeros((300, 500, 3), np.uint8)
    image[..., 0] = 255  # blue in BGR
    image[:150, :, 2] = 99
    out = detection_input(image, PPOCR)
    assert out.shape == (1, 736, 1216, 3) and out.dtype == np.uint8 and out.flags.c_contiguous
    assert (out[0, ..., 0] == 255).all() and (out[0, ..., 1] == 0).all()
    assert out[0, 10, 10, 2] == 99 and out[0, -10, 10, 2] == 0  # not flipped or turned


def test_detection_input_follows_the_size_settings():
    small = dataclasses.replace(PPOCR, min_side_len=32, max_side_len=320)
    out = detection_input(np.zeros((300, 500, 3), np.uint8), small)
    assert out.shape == (1, 192, 320, 3)
