"""hOCR output: one XHTML file per document, as Tesseract and hocr-tools write it.

Each page is an `ocr_page` (its image, its size, its number), each block an `ocr_carea` holding
one `ocr_par`, each line an `ocr_line` (a heading's `ocr_header`, a caption's `ocr_caption`, as
Tesseract writes them; with its `textangle` when the page came turned), each
word an `ocrx_word` carrying the text; every element's `title` holds its axis-aligned `bbox`
(integer pixels of the page, clamped to it) and, for lines and words, `x_wconf` (0-100). A
line read without word boxes holds one `ocrx_word` with the line's text and box, so tools that
collect words still get every text. A page's tables (when read) are XHTML tables of class
`ocr_table` where their first line was read, a cell per cell (its `bbox`, its spans) holding the
lines whose centre lies in it, out of their blocks: every line is written once.
Spec: https://kba.github.io/hocr-spec/1.2/

Works on anything shaped like results.Page (read by attribute), so results.py can use it
without the two importing each other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from triton_ocr.contract import BLOCK_CAPTION, BLOCK_FIGURE, BLOCK_HEADING

OCR_SYSTEM = "triton-ocr"
CAPABILITIES = (
    "ocr_page ocr_carea ocr_par ocr_line ocr_header ocr_caption ocrx_word ocr_table ocr_photo"
)
# a line's class by its block's type, as Tesseract writes them (and OCRmyPDF reads them as lines):
# a heading's lines ocr_header, a caption's ocr_caption, the others ocr_line
LINE_CLASSES = {BLOCK_HEADING: "ocr_header", BLOCK_CAPTION: "ocr_caption"}
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


class CellLike(Protocol):
    @property
    def row(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def row_span(self) -> int: ...
    @property
    def column_span(self) -> int: ...
    @property
    def polygon(self) -> Sequence[Sequence[float]]: ...
    @property
    def text(self) -> str: ...


class TableLike(Protocol):
    @property
    def polygon(self) -> Sequence[Sequence[float]]: ...
    @property
    def rows(self) -> int: ...
    @property
    def columns(self) -> int: ...
    @property
    def cells(self) -> Sequence[CellLike]: ...
    def grid(self) -> Sequence[Sequence[CellLike | None]]: ...


def tables_of(page: object) -> Sequence[TableLike]:
    """A page's tables (results.Page.tables; none on a page shaped without them)."""
    return tuple(getattr(page, "tables", ()))


def centre(polygon: Sequence[Sequence[float]]) -> tuple[float, float]:
    return (
        sum(p[0] for p in polygon) / len(polygon),
        sum(p[1] for p in polygon) / len(polygon),
    )


def in_box(point: tuple[float, float], polygon: Sequence[Sequence[float]]) -> bool:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return min(xs) <= point[0] <= max(xs) and min(ys) <= point[1] <= max(ys)


def table_of(line: LineLike, tables: Sequence[TableLike]) -> int | None:
    """The table whose box holds a line's centre, if any."""
    middle = centre(line.polygon)
    return next((k for k, table in enumerate(tables) if in_box(middle, table.polygon)), None)


L = TypeVar("L", bound=LineLike)


def without_tables(
    blocks: Sequence[Sequence[L]], tables: Sequence[TableLike]
) -> tuple[list[tuple[int, list[L]]], dict[int, list[int]], dict[int, list[L]]]:
    """A page's blocks (their index, their lines) less the lines in its tables (blocks left
    empty dropped; a block that had none, a figure, kept); where each table goes, by its index:
    before the kept block at that place, so after the block that held its first line in reading
    order (a table none of whose lines came back goes last); and each table's lines."""
    kept: list[tuple[int, list[L]]] = []
    places: dict[int, list[int]] = {}
    held: dict[int, list[L]] = {}
    for b, lines in enumerate(blocks):
        rest = []
        for line in lines:
            k = table_of(line, tables)
            if k is None:
                rest.append(line)
                continue
            if k not in held:
                places.setdefault(len(kept), []).append(k)
            held.setdefault(k, []).append(line)
        if rest or not lines:
            kept.append((b, rest))
    for k in range(len(tables)):
        if k not in held:
            places.setdefault(len(kept), []).append(k)
    return kept, places, held


def cell_lines(table: TableLike, lines: Sequence[L]) -> list[list[L]]:
    """Per cell of a table, the lines whose centre it holds (a line in none: the nearest)."""
    found: list[list[L]] = [[] for _ in table.cells]
    middles = [centre(cell.polygon) for cell in table.cells]
    for line in lines:
        x, y = centre(line.polygon)
        held = [k for k, cell in enumerate(table.cells) if in_box((x, y), cell.polygon)]
        if held:
            found[held[0]].append(line)
        elif middles:
            nearest = min(range(len(middles)), key=lambda k: math.dist(middles[k], (x, y)))
            found[nearest].append(line)
    return found


@dataclass(frozen=True)
class TableRegion:
    """A table on a page, each of its cells with the page's lines that lie in it."""

    table: TableLike
    cells: list[tuple[CellLike, list[LineLike]]]


@dataclass(frozen=True)
class BlockRegion:
    """A block on a page: its box, its lines and its type (contract.BLOCK_TYPES, "" untold)."""

    polygon: Sequence[Sequence[float]]
    lines: Sequence[LineLike]
    type: str = ""


Region = BlockRegion | TableRegion


def page_regions(page: PageLike) -> list[Region]:
    """A page's blocks (box, lines) and tables in reading order: a table where its first line
    was read, its lines in its cells and out of their blocks (a block that lost lines boxed
    around the rest)."""
    blocks = page_blocks(page)
    tables = tables_of(page)
    if not tables:
        return list(blocks)
    kept, places, held = without_tables([list(block.lines) for block in blocks], tables)
    regions: list[Region] = []
    for i in range(len(kept) + 1):
        for k in places.get(i, []):
            lines_in = cell_lines(tables[k], held.get(k, []))
            cells = list(zip(tables[k].cells, lines_in, strict=True))
            regions.append(TableRegion(tables[k], cells))
        if i < len(kept):
            b, lines = kept[i]
            block = blocks[b]
            points = block.polygon
            if len(lines) < len(block.lines):  # boxed around the lines left
                points = [point for line in lines for point in line.polygon]
            regions.append(BlockRegion(points, lines, block.type))
    return regions


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


def page_blocks(page: PageLike) -> list[BlockRegion]:
    """Each block of the page, its box, its lines and its type; a page without blocks
    (ensemble_model's lines, or an older server's) is one block of all its lines, boxed around
    them."""
    blocks = getattr(page, "blocks", ())
    if blocks:
        return [
            BlockRegion(block.polygon, block.lines, getattr(block, "type", "")) for block in blocks
        ]
    if not page.lines:
        return []
    return [BlockRegion([point for line in page.lines for point in line.polygon], page.lines)]


def page_hocr(page: PageLike, source: str | None) -> list[str]:
    number = page.number + 1
    properties = [] if source is None else ['image "{}"'.format(source.replace('"', '\\"'))]
    properties += [f"bbox 0 0 {page.width} {page.height}", f"ppageno {page.number}"]
    page_title = escape("; ".join(properties), double_quotes=False)
    out = [f"  <div class='ocr_page' id='page_{number}' title='{page_title}'>"]
    error = getattr(page, "error", "")
    if error:  # a page the server could not read: why, for a reader
        out.append(f"   <!-- not read: {escape(error).replace('--', '- -')} -->")
    counts = {"line": 0, "word": 0, "block": 0, "table": 0, "photo": 0}
    for region in page_regions(page):
        if isinstance(region, TableRegion):
            out += table_hocr(region, page, counts)
            continue
        if picture(region):
            counts["photo"] += 1
            box = title(bbox_of(region.polygon, page.width, page.height))
            ident = f"photo_{number}_{counts['photo']}"
            out.append(f"   <div class='ocr_photo' id='{ident}' title='{box}'></div>")
            continue
        counts["block"] += 1
        block_count = counts["block"]
        box = title(bbox_of(region.polygon, page.width, page.height))
        kind = LINE_CLASSES.get(region.type, "ocr_line")
        out.append(f"   <div class='ocr_carea' id='block_{number}_{block_count}' title='{box}'>")
        out.append(f"    <p class='ocr_par' id='par_{number}_{block_count}' title='{box}'>")
        out += [
            f"     {row}" for line in region.lines for row in line_hocr(line, page, counts, kind)
        ]
        out += ["    </p>", "   </div>"]
    out.append("  </div>")
    return out


def picture(region: BlockRegion) -> bool:
    """A figure's own block: the picture, with no text of its own (its text is in blocks of
    type figure with lines)."""
    return region.type == BLOCK_FIGURE and not region.lines


def table_hocr(region: TableRegion, page: PageLike, counts: dict[str, int]) -> list[str]:
    """A table as an `ocr_table` XHTML table: a row per table row, a cell per cell (its box, its
    spans) holding the lines that lie in it, so that every line is written once."""
    number = page.number + 1
    counts["table"] += 1
    box = title(bbox_of(region.table.polygon, page.width, page.height))
    out = [f"   <table class='ocr_table' id='table_{number}_{counts['table']}' title='{box}'>"]
    for row in range(region.table.rows):
        out.append("    <tr>")
        for cell, lines in region.cells:
            if cell.row != row:
                continue
            spans = (f" rowspan='{cell.row_span}'" if cell.row_span > 1 else "") + (
                f" colspan='{cell.column_span}'" if cell.column_span > 1 else ""
            )
            cell_box = title(bbox_of(cell.polygon, page.width, page.height))
            out.append(f"     <td title='{cell_box}'{spans}>")
            out += [f"      {row}" for line in lines for row in line_hocr(line, page, counts)]
            out.append("     </td>")
        out.append("    </tr>")
    out.append("   </table>")
    return out


def line_hocr(
    line: LineLike, page: PageLike, counts: dict[str, int], kind: str = "ocr_line"
) -> list[str]:
    number = page.number + 1
    counts["line"] += 1
    box = title(bbox_of(line.polygon, page.width, page.height), line.score)
    rotation = getattr(page, "rotation", 0)
    if rotation:  # as Tesseract writes it: the text's counter-clockwise angle on the page
        box += f"; textangle {(360 - rotation) % 360}"
    out = [f"<span class='{kind}' id='line_{number}_{counts['line']}' title='{box}'>"]
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
