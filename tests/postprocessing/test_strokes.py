"""How each line's type is set (postprocessing/strokes.py): how heavy, how far apart its letters,
how far they lean, on lines drawn in DejaVu's faces."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw

from triton_ocr.postprocessing import strokes
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


def measured(patch: np.ndarray) -> tuple[float, float, float]:
    """The stroke width, letter gap and slant of a patch that is one line."""
    h, w = patch.shape
    quad = np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float32)
    strokes, gaps, slants = line_type(patch, quad)
    return float(strokes[0]), float(gaps[0]), float(slants[0])


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
    widths, gaps, slants = line_type(page, quads)
    assert widths[0] == pytest.approx(stroke_width(line), rel=0.05)
    assert widths[1] == widths[2] == gaps[1] == gaps[2] == slants[1] == slants[2] == 0


@pytest.mark.parametrize("face", ["DejaVuSerif.ttf", "DejaVuSans-Bold.ttf"])
@pytest.mark.parametrize("size", [16, 24, 32])
def test_letter_spaced_type_stands_several_times_further_apart(face, size):
    """A head set letter-spaced ("C H A P I T R E", a space after each letter) against the same
    words set solid, in capitals and in lower case: its gap is a fifth of its height or more,
    the solid ones' an eighth or less, whatever the size."""
    for words in ("CHAPITRE SECOND", "chapitre second"):
        _, solid, _ = measured(drawn(face, size, text=words))
        _, spaced, _ = measured(drawn(face, size, text=" ".join(words)))
        assert solid <= 0.125 and spaced >= 0.2, (words, solid, spaced)


ITALIC = {"DejaVuSerif.ttf": "DejaVuSerif-Italic.ttf", "DejaVuSans.ttf": "DejaVuSans-Oblique.ttf"}


@pytest.mark.parametrize("face", sorted(ITALIC))
@pytest.mark.parametrize("size", [16, 24, 40])
@pytest.mark.parametrize("text", [TEXT, "De la beauté des défauts des Parties extérieures"])
def test_italic_type_leans_and_upright_type_does_not(face, size, text):
    """An italic or oblique face's strokes (DejaVu's lean 11-12 degrees) measure a fifth of
    their height further right than the upright face's or more, and the upright face's lean
    hardly at all, short lines and long ones (whose start alone is measured) alike."""
    upright = measured(drawn(face, size, text=text))[2]
    italic = measured(drawn(ITALIC[face], size, text=text))[2]
    assert abs(upright) <= 0.1 + 1e-6 and italic - upright >= 0.2 - 1e-6, (upright, italic)


@pytest.mark.parametrize("degrees", [-4, 3])
def test_a_tilted_line_is_measured_upright_without_its_neighbours(degrees):
    """A line photographed tilted leans as its baseline does, and its box holds the lines above
    and below it: measured within its quad, turned upright, the upright face still hardly
    leans and the italic one leans as much further as when level."""
    leans = {}
    for face in ("DejaVuSerif.ttf", "DejaVuSerif-Italic.ttf"):
        line = drawn(face, 24, text=TEXT + " and the next")
        h, w = line.shape
        page = np.full((400, 700), 255, np.uint8)
        for row in (100, 100 + h, 100 + 2 * h):  # the line between two others, no gap
            page[row : row + h, 50 : 50 + w] = np.minimum(page[row : row + h, 50 : 50 + w], line)
        turn = cv2.getRotationMatrix2D((50 + w / 2, 100 + 1.5 * h), degrees, 1.0)
        page = cv2.warpAffine(page, turn, (700, 400), borderValue=255)
        corners = [[50, 100 + h], [50 + w, 100 + h], [50 + w, 100 + 2 * h], [50, 100 + 2 * h]]
        quad = cv2.transform(np.array([corners], np.float32), turn)
        leans[face] = float(line_type(page, quad)[2][0])
    upright, italic = leans.values()
    assert abs(upright) <= 0.1 + 1e-6 and italic - upright >= 0.2 - 1e-6, leans


def test_lines_counted_a_chunk_at_a_time_lean_as_counted_all_together(monkeypatch):
    """A dense page's lines are counted CHUNK at a time (memory); the chunks' boundaries change
    no line's lean."""
    faces = ["DejaVuSerif.ttf", "DejaVuSerif-Italic.ttf", "DejaVuSans.ttf"]
    faces.append("DejaVuSans-Oblique.ttf")
    lines = [drawn(faces[k % 4], 16 + 4 * (k % 3), text=TEXT) for k in range(7)]
    page = np.full((60 * len(lines), 400), 255, np.uint8)
    quads = []
    for k, line in enumerate(lines):
        h, w = line.shape
        page[60 * k : 60 * k + h, :w] = line
        quads.append([[0, 60 * k], [w, 60 * k], [w, 60 * k + h], [0, 60 * k + h]])
    quads = np.array(quads, np.float32)
    together = line_type(page, quads)[2]
    monkeypatch.setattr(strokes, "CHUNK", 3)
    assert line_type(page, quads)[2].tolist() == together.tolist()
    assert len(set(together.tolist())) > 1, together  # upright and italic lines told apart
