"""The overlay: the page's size, its lines and words outlined, their text legible on labels."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from triton_ocr.client import Page, TextLine, Word, overlay
from triton_ocr.client.overlay import draw_overlay

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


def test_the_overlay_is_the_page_beside_the_text_read_where_it_was_found():
    image = page_image()
    drawn = draw_overlay(image, PAGE)
    assert drawn.size == (800, 200) and drawn.mode == "RGB"
    out = pixels(drawn)
    # the lines' edges: blue (where no word's edge is over them); the words' edges: orange
    for x, y in [(125, 110), (125, 80), (250, 165), (349, 165), (300, 180)]:
        r, g, b = out[y, x]
        assert b > 200 and r < 100, (x, y, out[y, x])
    for x, y in [(50, 95), (120, 95), (130, 95), (200, 95), (85, 110)]:
        r, g, b = out[y, x]
        assert r > 200 and b < 100, (x, y, out[y, x])
    # the page itself is not covered: its black text is still black inside the line
    assert out[80:110, 50:200].sum(axis=2).min() < 150
    # the right panel: dark text inside each line's polygon, white elsewhere
    panel = out[:, 400:]
    for x0, y0, x1, y1 in [(50, 80, 200, 110), (250, 150, 350, 180)]:
        inside = panel[y0 + 3 : y1 - 2, x0 + 3 : x1 - 2].sum(axis=2)
        assert (inside < 200).sum() > 20, (x0, y0)
    assert (panel[5:60, 10:390] > 250).all() and (panel[120:140, 10:240] > 250).all()
    assert image.mode == "L"  # the input is untouched


def test_the_text_is_narrowed_to_its_polygon_and_turned_with_it():
    long = line("a rather long line of text", 20, 20, 120, 60)
    turned = TextLine("turned", ((250.0, 100.0), (350.0, 50.0), (368.0, 86.0), (268.0, 136.0)), 0.9)
    panel = pixels(draw_overlay(page_image(), Page(0, 400, 200, (long, turned))))[:, 400:]
    dark = np.argwhere(panel[:, :200].sum(axis=2) < 300)
    assert dark[:, 1].min() >= 18 and dark[:, 1].max() <= 122  # inside the polygon's width
    dark = np.argwhere(panel[:, 200:].sum(axis=2) < 300)
    slope = np.polyfit(dark[:, 1], dark[:, 0], 1)[0]
    assert slope < -0.2  # rising to the right, as the polygon does


def test_an_image_of_another_size_has_the_polygons_scaled():
    drawn = draw_overlay(page_image().resize((800, 400)), PAGE)
    assert drawn.size == (1600, 400)
    r, g, b = pixels(drawn)[330, 500]  # a line's left edge, at twice the page's pixels
    assert b > 200 and r < 100


def test_exif_orientation_is_applied_first():
    image = page_image().rotate(90, expand=True)  # stored on its side, 200 x 400
    exif = Image.Exif()
    exif[0x0112] = 8  # rotate 90 degrees clockwise to view
    stored = Image.open(save(image, exif))
    drawn = draw_overlay(stored, PAGE)
    assert drawn.size == (800, 200)


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
    assert draw_overlay(page_image(), page).size == (800, 200)
    bitmap = ImageFont.load_default_imagefont()  # Latin-1 only (Pillow without FreeType)
    monkeypatch.setattr(overlay, "font_of", lambda size, path=None: bitmap)
    assert draw_overlay(page_image(), page).size == (800, 200)


def test_a_page_without_lines_is_the_page_beside_a_white_panel():
    drawn = pixels(draw_overlay(page_image(), Page(0, 400, 200, ())))
    assert drawn.shape == (200, 800, 3)
    assert (drawn[:, :400] == pixels(page_image())).all()
    assert (drawn[:, 402:] == 255).all()


def test_the_text_is_drawn_with_a_wide_font_when_the_system_has_one(monkeypatch):
    """CJK text needs a font with its glyphs: the first of WIDE_FONTS found, or one given."""
    from triton_ocr.tools.samples import FONTS

    dejavu = FONTS / "DejaVuSans.ttf"
    page = Page(0, 400, 200, (line("Hello world", 50, 80, 200, 110),))
    pillows = pixels(draw_overlay(page_image(), page))
    given = pixels(draw_overlay(page_image(), page, dejavu))
    assert (pillows != given).any()  # another face
    monkeypatch.setattr(overlay, "WIDE_FONTS", ("/nowhere/font.ttc", str(dejavu)))
    overlay.wide_font.cache_clear()
    try:
        assert overlay.wide_font() == str(dejavu)
        assert (pixels(draw_overlay(page_image(), page)) == given).all()
    finally:
        overlay.wide_font.cache_clear()
