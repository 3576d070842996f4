"""hOCR output: one XHTML file per document, as Tesseract and hocr-tools write it.

Each page is an `ocr_page` (its image, its size, its number), each block an `ocr_carea` holding
one `ocr_par`, each line an `ocr_line` (with its `textangle` when the page came turned), each
word an `ocrx_word` carrying the text; every element's `title` holds its axis-aligned `bbox`
(integer pixels of the page, clamped to it) and, for lines and words, `x_wconf` (0-100). A
line read without word boxes holds one `ocrx_word` with the line's text and box, so tools that
collect words still get every text. Spec: https://kba.github.io/hocr-spec/1.2/

Works on anything shaped like results.Page (read by attribute), so results.py can use it
without the two importing each other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

OCR_SYSTEM = "triton-ocr"
CAPABILITIES = "ocr_page ocr_carea ocr_par ocr_line ocrx_word"
HEADER = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
 <head>
  <title>{title}</title>
  <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
  <meta name='ocr-system' content='{system}'/>
  <meta name='ocr-capabilities' content='{capabilities}'/>
 </head>
 <body>
"""
FOOTER = """ </body>
</html>
"""
# Characters XML 1.0 does not allow, even escaped (control characters, lone surrogates, ...).
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
Bbox = tuple[int, int, int, int]


# read-only members (properties), so that frozen dataclasses holding tuples match them
class WordLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def polygon(self) -> Sequence[Sequence[float]]: ...
    @property
    def score(self) -> float: ...


class LineLike(WordLike, Protocol):
    @property
    def words(self) -> Sequence[WordLike]: ...


class BlockLike(Protocol):
    @property
    def polygon(self) -> Sequence[Sequence[float]]: ...
    @property
    def lines(self) -> Sequence[LineLike]: ...


class PageLike(Protocol):
    @property
    def number(self) -> int: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def lines(self) -> Sequence[LineLike]: ...
    @property
    def blocks(self) -> Sequence[BlockLike]: ...
    @property
    def rotation(self) -> int: ...


def bbox_of(polygon: Iterable[Sequence[float]], width: int, height: int) -> Bbox:
    """The integer box (x0, y0, x1, y1) around `polygon`, within a `width` x `height` page:
    x0, y0 rounded down, x1, y1 rounded up (a float a hair off an integer counts as it)."""
    points = [(float(x), float(y)) for x, y in polygon]
    if not points:
        raise ValueError("a polygon without points has no box")

    def down(value: float, limit: int) -> int:
        return min(max(math.floor(value + 1e-3), 0), limit)

    def up(value: float, limit: int) -> int:
        return min(max(math.ceil(value - 1e-3), 0), limit)

    xs, ys = [x for x, _ in points], [y for _, y in points]
    return down(min(xs), width), down(min(ys), height), up(max(xs), width), up(max(ys), height)


def wconf(score: float) -> int:
    """A confidence in 0..1 as hOCR's x_wconf, 0..100."""
    return min(max(round(float(score) * 100), 0), 100)


def escape(text: str, double_quotes: bool = True) -> str:
    """Text safe in XML and HTML content and in single-quoted attributes (and double-quoted
    ones unless `double_quotes` is False)."""
    text = NOT_XML.sub("\ufffd", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace('"', "&quot;") if double_quotes else text
    return text.replace("'", "&#39;")


def title(bbox: Bbox, score: float | None = None) -> str:
    found = "bbox {} {} {} {}".format(*bbox)
    return found if score is None else f"{found}; x_wconf {wconf(score)}"


def page_blocks(page: PageLike) -> list[tuple[Sequence[Sequence[float]], Sequence[LineLike]]]:
    """Each block of the page, its box and its lines; a page without blocks (ensemble_model's
    lines, or an older server's) is one block of all its lines, boxed around them."""
    blocks = getattr(page, "blocks", ())
    if blocks:
        return [(block.polygon, block.lines) for block in blocks]
    if not page.lines:
        return []
    return [([point for line in page.lines for point in line.polygon], page.lines)]


def page_hocr(page: PageLike, source: str | None) -> list[str]:
    number = page.number + 1
    properties = [] if source is None else ['image "{}"'.format(source.replace('"', '\\"'))]
    properties += [f"bbox 0 0 {page.width} {page.height}", f"ppageno {page.number}"]
    page_title = escape("; ".join(properties), double_quotes=False)
    out = [f"  <div class='ocr_page' id='page_{number}' title='{page_title}'>"]
    error = getattr(page, "error", "")
    if error:  # a page the server could not read: why, for a reader
        out.append(f"   <!-- not read: {escape(error).replace('--', '- -')} -->")
    counts = {"line": 0, "word": 0}
    for block_count, (points, lines) in enumerate(page_blocks(page), start=1):
        box = title(bbox_of(points, page.width, page.height))
        out.append(f"   <div class='ocr_carea' id='block_{number}_{block_count}' title='{box}'>")
        out.append(f"    <p class='ocr_par' id='par_{number}_{block_count}' title='{box}'>")
        out += [f"     {row}" for line in lines for row in line_hocr(line, page, counts)]
        out += ["    </p>", "   </div>"]
    out.append("  </div>")
    return out


def line_hocr(line: LineLike, page: PageLike, counts: dict[str, int]) -> list[str]:
    number = page.number + 1
    counts["line"] += 1
    box = title(bbox_of(line.polygon, page.width, page.height), line.score)
    rotation = getattr(page, "rotation", 0)
    if rotation:  # as Tesseract writes it: the text's counter-clockwise angle on the page
        box += f"; textangle {(360 - rotation) % 360}"
    out = [f"<span class='ocr_line' id='line_{number}_{counts['line']}' title='{box}'>"]
    for word in list(line.words) or [line]:  # without word boxes: the line as one word
        counts["word"] += 1
        word_box = bbox_of(word.polygon, page.width, page.height)
        out.append(
            f" <span class='ocrx_word' id='word_{number}_{counts['word']}' "
            f"title='{title(word_box, word.score)}'>{escape(word.text)}</span>"
        )
    out.append("</span>")
    return out


def to_hocr(pages: Iterable[PageLike], source: str | None = None) -> str:
    """One hOCR (XHTML) document holding `pages`, read from the file `source` (if any)."""
    head = HEADER.format(title=escape(source or ""), system=OCR_SYSTEM, capabilities=CAPABILITIES)
    body = [line for page in pages for line in page_hocr(page, source)]
    return head + "\n".join(body) + ("\n" if body else "") + FOOTER
