"""A page with what was read, for a person to judge a result at a glance.

Two panels side by side, as PaddleOCR and RapidOCR draw their results: on the left the page with
each line's polygon outlined (its words', when read, in a second colour); on the right, on white,
each line's recognized text written inside the same polygon, as large as the polygon allows and
turned with it. Nothing covers the page, so a misread word is found by looking across. Pillow
only.
"""

from __future__ import annotations

import math
from contextlib import suppress
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, ImageOps

from .results import Page

LINE_COLOUR = (0, 102, 255)  # blue: a line's polygon
WORD_COLOUR = (255, 128, 0)  # orange: a word's polygon
LINE_FILL = (0, 102, 255, 28)  # a faint tint over each line, so its extent shows
GUIDE_COLOUR = (170, 190, 230)  # the polygons again on the text panel, light
TEXT_COLOUR = (0, 0, 0)
FONT_SCALE = 0.8  # text height / line height, narrowed further when the text is too wide
MIN_FONT, MAX_FONT = 6, 160  # pixels
# Fonts with CJK and Latin glyphs where systems usually keep them (Debian/Ubuntu fonts-noto-cjk,
# fonts-wqy-microhei; Fedora; macOS; Windows): the first one found draws the text unless a font
# is given. Not Droid Sans Fallback (Ghostscript's dependency): it has no Latin glyphs, so Latin
# text would show as boxes. Pillow's own font has Latin, Greek and Cyrillic only.
WIDE_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
Points = list[tuple[float, float]]


@lru_cache(maxsize=1)
def wide_font() -> str | None:
    """The first of WIDE_FONTS this system has, or None."""
    return next((path for path in WIDE_FONTS if Path(path).is_file()), None)


@lru_cache(maxsize=128)
def font_of(size: int, path: str | None = None) -> Font:
    """The TrueType font at `path` (e.g. a Noto CJK font, for scripts Pillow's own font lacks)
    or Pillow's own font, `size` pixels tall (its fixed bitmap font where FreeType is missing)."""
    if path is not None:
        return ImageFont.truetype(path, size)
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow < 10.1, or no FreeType
        return ImageFont.load_default()


def renderable(text: str, font: Font) -> str | None:
    """`text` as the font can draw it: itself, or with what it cannot encode as '?' (the bitmap
    font knows Latin-1 only); None when nothing can be drawn. Glyphs a font lacks show as
    boxes."""
    for candidate in (text, text.encode("latin-1", "replace").decode("latin-1")):
        try:
            font.getbbox(candidate)
            return candidate
        except (UnicodeError, ValueError, OSError):
            continue
    return None


def extent(points: Points) -> tuple[float, float, float]:
    """(length, height, angle in degrees) of a tl, tr, br, bl polygon: its top edge's length and
    slope, and the mean of its side edges."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points[:4]
    length = math.hypot(x1 - x0, y1 - y0)
    height = (math.hypot(x3 - x0, y3 - y0) + math.hypot(x2 - x1, y2 - y1)) / 2
    return length, height, math.degrees(math.atan2(y1 - y0, x1 - x0))


def fitted_text(text: str, length: float, height: float, font: str | None) -> Image.Image | None:
    """`text` in black on transparent, as tall as FONT_SCALE of `height` and at most `length`
    wide (a smaller font when it is wider); None when nothing can be drawn."""
    size = min(max(round(height * FONT_SCALE), MIN_FONT), MAX_FONT)
    for _ in range(2):  # once at the height's size, once narrowed to the length
        face = font_of(size, font)
        shown = renderable(text, face)
        if shown is None:
            return None
        left, top, right, bottom = face.getbbox(shown)
        if right - left <= max(length, 1) or size == MIN_FONT:
            break
        size = max(MIN_FONT, int(size * max(length, 1) / (right - left)))
    assert shown is not None  # the loop returned on None
    # whole pixels (FreeType's box is typed float)
    layer = Image.new("LA", (max(1, int(right - left)), max(1, int(bottom - top))), (0, 0))
    with suppress(UnicodeError, ValueError, OSError):  # measured, yet not drawable
        ImageDraw.Draw(layer).text((-left, -top), shown, font=face, fill=(0, 255))
    return layer


def draw_overlay(image: Image.Image, page: Page, font: str | Path | None = None) -> Image.Image:
    """`image` (the page as read; EXIF orientation is applied here) with each line's polygon
    outlined and its words' (if read) in a second colour, beside a white panel of the same size
    holding each line's text inside its polygon. The result is twice as wide as the image.

    Polygons are in the page's pixels (page.width x page.height); an image of another size (the
    same page rendered at another DPI) has them scaled to it. `font`: a TrueType file for the
    text; by default the first of WIDE_FONTS found, else Pillow's own (Latin, Greek and Cyrillic
    glyphs only; others show as boxes)."""
    font = font if font is not None else wide_font()
    base = ImageOps.exif_transpose(image).convert("RGB")
    sx = base.width / page.width if page.width else 1.0
    sy = base.height / page.height if page.height else 1.0
    stroke = max(1, round(min(base.size) / 500))

    def scaled(polygon) -> Points:
        return [(float(x) * sx, float(y) * sy) for x, y in polygon]

    shapes = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(shapes)
    panel = Image.new("RGB", base.size, (255, 255, 255))
    guides = ImageDraw.Draw(panel)
    for line in page.lines:
        points = scaled(line.polygon)
        draw.polygon(points, fill=LINE_FILL, outline=LINE_COLOUR + (255,), width=stroke + 1)
        for word in line.words:  # over the line's edge, which they share
            draw.polygon(scaled(word.polygon), outline=WORD_COLOUR + (255,), width=stroke)
        guides.polygon(points, outline=GUIDE_COLOUR, width=stroke)
        length, height, angle = extent(points)
        layer = fitted_text(line.text, length, height, None if font is None else str(font))
        if layer is None:
            continue
        turned = layer.rotate(-angle, expand=True, resample=Image.Resampling.BICUBIC)
        cx = sum(x for x, _ in points[:4]) / 4
        cy = sum(y for _, y in points[:4]) / 4
        at = (round(cx - turned.width / 2), round(cy - turned.height / 2))
        panel.paste(Image.new("RGB", turned.size, TEXT_COLOUR), at, turned.getchannel("A"))
    marked = Image.alpha_composite(base.convert("RGBA"), shapes).convert("RGB")
    both = Image.new("RGB", (base.width * 2, base.height), (255, 255, 255))
    both.paste(marked, (0, 0))
    both.paste(panel, (base.width, 0))
    ImageDraw.Draw(both).line(
        [(base.width, 0), (base.width, base.height)], fill=(128, 128, 128), width=stroke
    )
    return both
