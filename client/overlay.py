"""A page with what was read drawn on it, for a person to judge a result at a glance.

Each line's polygon is outlined (its words', when read, in a second colour) and its recognized
text is written on a light, half-transparent label on its top-left corner (as object detectors
label their boxes: above the line, else over its top or below it, where it covers no other
label), in a font half the line's height. The page is faded a little so that both stand out.
Pillow only.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, ImageOps

from .results import Page

LINE_COLOUR = (0, 102, 255)  # blue: a line's polygon, and the edge of its label
WORD_COLOUR = (255, 128, 0)  # orange: a word's polygon
LINE_FILL = (0, 102, 255, 30)  # a faint tint over each line, so its extent shows
LABEL_FILL = (255, 255, 255, 200)  # behind the recognized text: mostly opaque
WASH = 0.3  # the page is faded this much toward white, so that boxes and labels stand out
LABEL_EDGE = LINE_COLOUR + (255,)
TEXT_COLOUR = (0, 0, 0, 255)
FONT_SCALE = 0.5  # label text height / line height
MIN_FONT, MAX_FONT = 11, 120  # pixels: readable labels, bounded for huge lines

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
Box = tuple[float, float, float, float]


@lru_cache(maxsize=64)
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


def overlap(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def place(size: tuple[int, int], line: Box, label: tuple[float, float], taken: Sequence[Box]):
    """Where a label of `label` (width, height) goes for the line with bounds `line`: on its
    top-left corner, above it; else over its top, else below it, the first that covers no label
    in `taken` (else the one covering least). Kept inside the image."""
    width, height = label
    x = min(max(line[0], 0.0), max(size[0] - width, 0.0))
    best: tuple[float, Box] | None = None
    for y in (line[1] - height, line[1], line[3]):
        y = min(max(y, 0.0), max(size[1] - height, 0.0))
        box = (x, y, x + width, y + height)
        cost = sum(overlap(box, other) for other in taken)
        if cost == 0:
            return box
        if best is None or cost < best[0]:
            best = (cost, box)
    assert best is not None
    return best[1]


def corners(points: Sequence[tuple[float, float]]) -> Box:
    xs, ys = [x for x, _ in points], [y for _, y in points]
    return min(xs), min(ys), max(xs), max(ys)


def line_height(points: Sequence[tuple[float, float]]) -> float:
    """The height of a line's polygon (tl, tr, br, bl): its left side, or its bounds' height."""
    if len(points) == 4:
        (x0, y0), (x3, y3) = points[0], points[3]
        return float(((x0 - x3) ** 2 + (y0 - y3) ** 2) ** 0.5)
    return corners(points)[3] - corners(points)[1]


def draw_overlay(image: Image.Image, page: Page, font: str | Path | None = None) -> Image.Image:
    """`image` (the page as read; EXIF orientation is applied here) in RGB, with each line's
    polygon outlined, its words' polygons (if read) in a second colour, and its text on a label.

    Polygons are in the page's pixels (page.width x page.height); an image of another size
    (the same page rendered at another DPI) has them scaled to it. The result has the size of
    the (oriented) image. `font`: a TrueType file for the labels (Pillow's own font has Latin,
    Greek and Cyrillic glyphs only; others show as boxes)."""
    base = ImageOps.exif_transpose(image).convert("RGB")
    faded = Image.blend(base, Image.new("RGB", base.size, (255, 255, 255)), WASH)
    sx = base.width / page.width if page.width else 1.0
    sy = base.height / page.height if page.height else 1.0
    stroke = max(1, round(min(base.size) / 500))
    polygons = [[(float(x) * sx, float(y) * sy) for x, y in line.polygon] for line in page.lines]

    shapes = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(shapes)
    for line, points in zip(page.lines, polygons, strict=True):
        draw.polygon(points, fill=LINE_FILL, outline=LINE_COLOUR + (255,), width=stroke + 1)
        for word in line.words:  # over the line's edge, which they share
            scaled = [(float(x) * sx, float(y) * sy) for x, y in word.polygon]
            draw.polygon(scaled, outline=WORD_COLOUR + (255,), width=stroke)

    labels = Image.new("RGBA", base.size, (0, 0, 0, 0))
    write = ImageDraw.Draw(labels)
    placed: list[Box] = []
    for line, points in zip(page.lines, polygons, strict=True):
        size = round(line_height(points) * FONT_SCALE)
        face = font_of(min(max(size, MIN_FONT), MAX_FONT), None if font is None else str(font))
        shown = renderable(line.text, face) if line.text else None
        if shown is None:
            continue
        left, top, right, bottom = write.textbbox((0, 0), shown, font=face)
        pad = max(2, round((bottom - top) * 0.15))
        label = (right - left + 2 * pad, bottom - top + 2 * pad)
        box = place(base.size, corners(points), label, placed)
        placed.append(box)
        write.rectangle(box, fill=LABEL_FILL, outline=LABEL_EDGE)
        with suppress(UnicodeError, ValueError, OSError):  # measured, yet not drawable
            write.text(
                (box[0] + pad - left, box[1] + pad - top), shown, font=face, fill=TEXT_COLOUR
            )
    shown_image = Image.alpha_composite(faded.convert("RGBA"), shapes)
    return Image.alpha_composite(shown_image, labels).convert("RGB")
