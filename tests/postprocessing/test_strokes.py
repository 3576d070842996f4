"""How heavy each line's type is (postprocessing/strokes.py), on lines drawn in DejaVu's faces."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from triton_ocr.postprocessing.strokes import stroke_width, stroke_widths
from triton_ocr.tools.samples import font

TEXT = "Results of the year"


def drawn(face: str, size: int = 20, ink: int = 20, paper: int = 255) -> np.ndarray:
    """A grey patch with TEXT in `face`, `ink` on `paper`."""
    f = font(size, face)
    left, top, right, bottom = f.getbbox(TEXT)
    image = Image.new("L", (right + 8, bottom + 8), paper)
    ImageDraw.Draw(image).text((4 - left, 4), TEXT, font=f, fill=ink)
    return np.asarray(image)


@pytest.mark.parametrize("face", ["DejaVuSerif", "DejaVuSans", "DejaVuSansCondensed"])
@pytest.mark.parametrize("size", [16, 24, 32])
def test_bold_strokes_are_wider_than_the_regular_faces(face, size):
    regular = stroke_width(drawn(f"{face}.ttf", size))
    bold = stroke_width(drawn(f"{face}-Bold.ttf", size))
    assert regular > 0 and bold >= 1.3 * regular, (regular, bold)


def test_the_width_follows_the_size_not_the_ink_level():
    dark = stroke_width(drawn("DejaVuSerif.ttf", 24))
    light = stroke_width(drawn("DejaVuSerif.ttf", 24, ink=140, paper=230))  # a light scan
    large = stroke_width(drawn("DejaVuSerif.ttf", 48))
    assert light == pytest.approx(dark, rel=0.15)
    assert large >= 1.6 * dark


def test_each_quad_is_measured_on_the_page_and_a_box_off_it_or_blank_has_none():
    line = drawn("DejaVuSans-Bold.ttf", 24)
    page = np.full((200, 400, 3), 255, np.uint8)
    page[50 : 50 + line.shape[0], 30 : 30 + line.shape[1]] = line[..., None]
    h, w = line.shape
    quads = np.array(
        [
            [[30, 50], [30 + w, 50], [30 + w, 50 + h], [30, 50 + h]],  # the line
            [[10, 150], [300, 150], [300, 190], [10, 190]],  # blank paper
            [[390, 10], [460, 10], [460, 40], [390, 40]],  # mostly off the page
        ],
        np.float32,
    )
    widths = stroke_widths(page, quads)
    assert widths[0] == pytest.approx(stroke_width(line), rel=0.05)
    assert widths[1] == 0 and widths[2] == 0
