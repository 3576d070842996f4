"""How each line's type is set (postprocessing/strokes.py): how heavy, how far apart its letters,
on lines drawn in DejaVu's faces."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from triton_ocr.postprocessing.strokes import line_type
from triton_ocr.tools.samples import font

TEXT = "Results of the year"


def drawn(
    face: str, size: int = 20, ink: int = 20, paper: int = 255, text: str = TEXT
) -> np.ndarray:
    """A grey patch with `text` in `face`, `ink` on `paper`."""
    f = font(size, face)
    left, top, right, bottom = f.getbbox(text)
    image = Image.new("L", (right + 8, bottom + 8), paper)
    ImageDraw.Draw(image).text((4 - left, 4), text, font=f, fill=ink)
    return np.asarray(image)


def measured(patch: np.ndarray) -> tuple[float, float]:
    """The stroke width and letter gap of a patch that is one line."""
    h, w = patch.shape
    quad = np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float32)
    strokes, gaps = line_type(patch, quad)
    return float(strokes[0]), float(gaps[0])


def stroke_width(patch: np.ndarray) -> float:
    return measured(patch)[0]


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
    widths, gaps = line_type(page, quads)
    assert widths[0] == pytest.approx(stroke_width(line), rel=0.05)
    assert widths[1] == widths[2] == gaps[1] == gaps[2] == 0


@pytest.mark.parametrize("face", ["DejaVuSerif.ttf", "DejaVuSans-Bold.ttf"])
@pytest.mark.parametrize("size", [16, 24, 32])
def test_letter_spaced_type_stands_several_times_further_apart(face, size):
    """A head set letter-spaced ("C H A P I T R E", a space after each letter) against the same
    words set solid, in capitals and in lower case: its gap is a fifth of its height or more,
    the solid ones' an eighth or less, whatever the size."""
    for words in ("CHAPITRE SECOND", "chapitre second"):
        _, solid = measured(drawn(face, size, text=words))
        _, spaced = measured(drawn(face, size, text=" ".join(words)))
        assert solid <= 0.125 and spaced >= 0.2, (words, solid, spaced)
