"""The overlay: the page's size, its lines and words outlined, their text legible on labels."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from triton_ocr.client import Page, TextLine, Word, overlay
from triton_ocr.client.overlay import draw_overlay, place

from .outputs import box


def line(text, x0, y0, x1, y1, words=()):
    return TextLine(text, tuple(tuple(p) for p in box(x0, y0, x1, y1)), 0.9, words)


def page_image(size=(400, 200)) -> Image.Image:
    image = Image.new("L", size, 255)  # not RGB: the overlay is
    ImageDraw.Draw(image).text((52, 82), "Hello world", fill=0, font=ImageFont.load_default(24))
    return image


WORDS = (
    Word("Hello", tuple(tuple(p) for p in box(50, 80, 120, 110)), 0.9),
    Word("world", tuple(tuple(p) for p in box(130, 80, 200, 110)), 0.8),
)
PAGE = Page(
    0,
    400,
    200,
    (line("Hello world", 50, 80, 200, 110, WORDS), line("no words", 250, 150, 350, 180)),
)


def pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB")).astype(int)


def test_the_overlay_has_the_pages_size_and_marks_the_polygons():
    image = page_image()
    drawn = draw_overlay(image, PAGE)
    assert drawn.size == image.size and drawn.mode == "RGB"
    out = pixels(drawn)
    # the lines' edges: blue (where no word's edge is over them); the words' edges: orange
    for x, y in [(125, 110), (125, 80), (250, 165), (349, 165), (300, 180)]:
        r, g, b = out[y, x]
        assert b > 200 and r < 100, (x, y, out[y, x])
    for x, y in [(50, 95), (120, 95), (130, 95), (200, 95), (85, 110)]:
        r, g, b = out[y, x]
        assert r > 200 and b < 100, (x, y, out[y, x])
    # the label: on the line's top-left corner, above it, with dark text on a light ground
    label = out[60:79, 50:200]
    assert (label.sum(axis=2) < 200).any() and (label.sum(axis=2) > 600).any()
    # far from the line, only faded a little
    assert (out[190, 390] > 240).all() and (out[5, 390] > 240).all()
    assert image.mode == "L"  # the input is untouched


def test_an_image_of_another_size_has_the_polygons_scaled():
    drawn = draw_overlay(page_image().resize((800, 400)), PAGE)
    assert drawn.size == (800, 400)
    r, g, b = pixels(drawn)[330, 500]  # a line's left edge, at twice the page's pixels
    assert b > 200 and r < 100


def test_exif_orientation_is_applied_first():
    image = page_image().rotate(90, expand=True)  # stored on its side, 200 x 400
    exif = Image.Exif()
    exif[0x0112] = 8  # rotate 90 degrees clockwise to view
    stored = Image.open(save(image, exif))
    drawn = draw_overlay(stored, PAGE)
    assert drawn.size == (400, 200)


def save(image, exif):
    from io import BytesIO

    out = BytesIO()
    image.save(out, format="PNG", exif=exif)
    out.seek(0)
    return out


@pytest.mark.parametrize(
    "text", ["漢字とテキスト", "emoji \U0001f600", "nul\x00byte", "\u202eright-to-left", "", " "]
)
def test_text_the_font_cannot_draw_does_not_break_it(text, monkeypatch):
    page = Page(0, 400, 200, (line(text, 10, 10, 300, 40), line("plain", 10, 100, 90, 130)))
    assert draw_overlay(page_image(), page).size == (400, 200)
    bitmap = ImageFont.load_default_imagefont()  # Latin-1 only (Pillow without FreeType)
    monkeypatch.setattr(overlay, "font_of", lambda size, path=None: bitmap)
    assert draw_overlay(page_image(), page).size == (400, 200)


def test_a_page_without_lines_is_the_faded_page():
    drawn = draw_overlay(page_image(), Page(0, 400, 200, ()))
    assert drawn.size == (400, 200)
    assert pixels(drawn).min() > 60  # black text faded, nothing drawn


def test_labels_go_above_else_where_they_cover_no_other_label():
    size = (400, 200)
    assert place(size, (50, 80, 200, 110), (100, 20), []) == (50, 60, 150, 80)
    assert place(size, (50, 5, 200, 30), (100, 20), []) == (50, 0, 150, 20)  # top: kept inside
    taken = [(50, 60, 150, 80)]
    assert place(size, (50, 80, 200, 110), (100, 20), taken) == (50, 80, 150, 100)  # over
    assert place(size, (350, 80, 400, 110), (100, 20), []) == (300, 60, 400, 80)  # right edge
