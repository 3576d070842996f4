"""Markdown out: a document's pages as a person reads them, for search and language models.

From the blocks the service returns in reading order, each as its type says
(postprocessing/block_types.py decides them on the server): a heading (levels by size, largest
first); a list (its items split at their markers); a paragraph, its lines joined (a word split
by a hyphen at a line end joined again; running text going on in the next column joined to
it; paragraphs one under another with no gap parted again), or, when its rows hold lines set
apart (a price beside its item), its rows kept with hard line breaks; a caption as a
paragraph. A page's tables (when read) come where their first line was read, as GitHub tables,
or HTML tables where cells span. Running headers and footers are left out unless asked for. An
HTML comment names each page after the first. Every word is a word the service read: the text
is escaped so that Markdown reads it as text, and only list, heading and table markup is added
(a bullet glyph the service read becomes the list's). A page without blocks (ensemble_model's)
is read line by line.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from triton_ocr.contract import BLOCK_FIGURE as FIGURE
from triton_ocr.contract import BLOCK_FOOTER as FOOTER
from triton_ocr.contract import BLOCK_HEADER as HEADER
from triton_ocr.contract import BLOCK_HEADING as HEADING
from triton_ocr.contract import BLOCK_LIST as LIST
from triton_ocr.contract import BLOCK_PARAGRAPH as PARAGRAPH
from triton_ocr.contract import BLOCK_TABLE as TABLE
from triton_ocr.contract import LIST_MARKERS

from .alto import hyphen_split
from .hocr import CellLike, LineLike, PageLike, TableLike, tables_of, without_tables

Polygon = Sequence[Sequence[float]]
LEVEL_STEP = 0.85  # a heading this much smaller than the largest of its level starts the next
# a block is running text when each row but its last spans this share of its width, and no
# row has a gap wider than this many line heights between two of its lines
PROSE_SHARE, COLUMN_GAP = 0.75, 1.5
# ... or, set to a narrower measure beside a picture or an inset, spans at least this share,
# holds this many words, and starts and ends within this share of a line height of the rows
# next to it, in a run of at least this many rows so (justified text; a poem's lines are not)
NARROW_SHARE, NARROW_WORDS, ALIGNED_EDGES, NARROW_RUN = 0.4, 3, 0.25, 3
# a paragraph that ends without one of these and a next one that starts lower case are one
# (running text going on in the next column)
SENTENCE_ENDS = '.!?:;…"”’)]'
BULLET, NUMBERED, LETTERED = (re.compile(marker) for marker in LIST_MARKERS)
# characters Markdown could read as markup anywhere in a line, and at its start
INLINE = re.compile(r"([\\`*_\[\]<>|~])")
ENTITY = re.compile(r"&(?=#?\w+;)")
LEADING = re.compile(r"^(#{1,6}(?=\s|$)|[+\-=>]|\d{1,9}[.)](?=\s|$))")


@dataclass(frozen=True)
class Group:
    """A block's lines, or a line alone on a page without blocks (ensemble_model's)."""

    lines: tuple[LineLike, ...]
    type: str = PARAGRAPH  # one of contract.BLOCK_TYPES

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def groups_of(page: PageLike) -> list[Group]:
    if page.blocks:
        return [
            Group(tuple(block.lines), getattr(block, "type", "") or PARAGRAPH)
            for block in page.blocks
        ]
    return [Group((line,)) for line in page.lines]


@dataclass(frozen=True)
class Shaped:
    """A block and what it reads as."""

    kind: str  # one of contract.BLOCK_TYPES
    block: Group
    height: float  # its lines' mean height (pixels)
    table: TableLike | None = None


def line_height(polygon: Polygon) -> float:
    """The height of a line's box: the mean of its left and right edges (tl-bl, tr-br)."""
    (tlx, tly), (trx, try_), (brx, bry), (blx, bly) = polygon
    return (math.hypot(blx - tlx, bly - tly) + math.hypot(brx - trx, bry - try_)) / 2


def x_range(lines: Sequence[LineLike]) -> tuple[float, float]:
    """The left and right of some lines' boxes."""
    xs = [x for line in lines for x, _ in line.polygon]
    return min(xs), max(xs)


def rows_of(lines: Sequence[LineLike]) -> list[list[LineLike]]:
    """A block's lines in rows: a line whose middle lies within half a line's height of the
    row's joins it (a price beside its item, a page number beside a running head)."""
    rows: list[list[LineLike]] = []
    for line in lines:
        middle = sum(y for _, y in line.polygon) / 4
        last = rows[-1][-1] if rows else None
        if (
            last
            and abs(sum(y for _, y in last.polygon) / 4 - middle) <= line_height(last.polygon) / 2
        ):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def row_gaps(row: Sequence[LineLike]) -> list[float]:
    """The gaps between a row's lines, left to right, in their heights."""
    spans = sorted((*x_range([line]), line_height(line.polygon)) for line in row)
    return [
        (right[0] - left[1]) / max(left[2], 1.0)
        for left, right in zip(spans, spans[1:], strict=False)
    ]


def filled(rows: Sequence[Sequence[LineLike]]) -> list[bool]:
    """Which rows of a block fill its measure: its width, or a narrower one that a run of rows
    around them share (justified text set beside a picture)."""
    left, right = x_range([line for row in rows for line in row])
    edges = [x_range(row) for row in rows]
    narrow = [
        a1 - a0 >= NARROW_SHARE * (right - left)
        and sum(len(line.text.split()) for line in row) >= NARROW_WORDS
        for row, (a0, a1) in zip(rows, edges, strict=True)
    ]
    # runs of rows, each starting and ending where the one before does
    run_of = list(range(len(rows)))
    for k in range(1, len(rows)):
        tolerance = ALIGNED_EDGES * line_height(rows[k][0].polygon)
        (a0, a1), (b0, b1) = edges[k - 1], edges[k]
        if narrow[k - 1] and narrow[k] and abs(a0 - b0) <= tolerance and abs(a1 - b1) <= tolerance:
            run_of[k] = run_of[k - 1]
    runs = Counter(run_of)
    return [
        a1 - a0 >= PROSE_SHARE * (right - left) or runs[run_of[k]] >= NARROW_RUN
        for k, (a0, a1) in enumerate(edges)
    ]


def prose(block: Group) -> bool:
    """Whether a block is running text: no row set apart in columns (a price beside its item),
    each row filling the block's measure but the last (`filled`). Else it is read row by row
    (a receipt, an address, a list of figures)."""
    rows = rows_of(block.lines)
    if any(gap > COLUMN_GAP for row in rows for gap in row_gaps(row)):
        return False
    return all(filled(rows)[:-1])


def shape(pages: Sequence[PageLike]) -> list[list[Shaped]]:
    """Each page's blocks (or lines, on a page without blocks) with what each reads as, and
    its tables where their first lines were read."""
    shaped = []
    for page in pages:
        tables = tables_of(page)
        groups = groups_of(page)
        kept, places, _ = without_tables([g.lines for g in groups], tables)
        found = []
        for i in range(len(kept) + 1):
            found += [Shaped(TABLE, Group(()), 0.0, tables[k]) for k in places.get(i, [])]
            if i == len(kept):
                break
            b, lines = kept[i]
            block = Group(tuple(lines), groups[b].type)
            height = sum(line_height(line.polygon) for line in lines) / max(len(lines), 1)
            found.append(Shaped(block.type, block, height))
        shaped.append(found)
    return shaped


def heading_levels(shaped: Sequence[Sequence[Shaped]]) -> dict[float, int]:
    """Heading heights -> levels: the largest are level 1, and a height this much smaller than
    the largest of its level starts the next (at most 6)."""
    heights = sorted({s.height for page in shaped for s in page if s.kind == HEADING}, reverse=True)
    levels: dict[float, int] = {}
    level, first = 1, heights[0] if heights else 0.0
    for height in heights:
        if height < first * LEVEL_STEP:
            level, first = min(level + 1, 6), height
        levels[height] = level
    return levels


def list_marker(text: str) -> re.Match[str] | None:
    return BULLET.match(text) or NUMBERED.match(text) or LETTERED.match(text)


def wide(character: str) -> bool:
    return unicodedata.east_asian_width(character) in ("W", "F")


def joined(lines: Sequence[str]) -> str:
    """A paragraph's lines as one: a word split by a hyphen at a line end joined again, CJK
    lines joined without a space, the others with one."""
    text = ""
    for line in (" ".join(line.split()) for line in lines):
        if not line:
            continue
        if not text:
            text = line
        elif hyphen_split(text.split()[-1], line.split()[0]):
            text = text[:-1] + line
        elif wide(text[-1]) and wide(line[0]):
            text += line
        else:
            text += " " + line
    return text


def inline_escaped(text: str) -> str:
    """`text` as Markdown reads it as plain text inside a line (a table cell): inline markup
    characters backslash-escaped."""
    return ENTITY.sub(r"\\&", INLINE.sub(r"\\\1", text))


def escaped(text: str) -> str:
    """`text` as Markdown reads it as plain text: markup characters backslash-escaped."""
    text = inline_escaped(text)
    return LEADING.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], text)


def list_items(lines: Sequence[LineLike]) -> list[str]:
    """A list block's items: each line that starts with a marker starts one, the next lines
    without one go on it. Numbered items stay numbered where they count up from the first
    (Markdown renumbers an ordered list); bullets become the list's own, other labels (a), 3.
    out of turn) stay as text of a bullet item."""
    items: list[list[str]] = []
    for line in lines:
        if list_marker(line.text) or not items:
            items.append([line.text])
        else:
            items[-1].append(line.text)
    texts = [joined(item) for item in items]
    numbers = [int(m.group(1)) if (m := NUMBERED.match(text)) else None for text in texts]
    counting = numbers[0] is not None and numbers == list(
        range(numbers[0], numbers[0] + len(numbers))
    )
    rendered = []
    for text in texts:
        number, bullet = NUMBERED.match(text), BULLET.match(text)
        if counting and number:
            rendered.append(f"{number.group(1)}{number.group(2)} {escaped(text[number.end() :])}")
        elif bullet:
            rendered.append(f"- {escaped(text[bullet.end() :])}")
        else:
            rendered.append(f"- {escaped(text)}")
    return rendered


def paragraphs_of(block: Group) -> list[Group] | None:
    """A block of running text that holds paragraphs one under another with no gap between
    them (a short row ending a sentence, the next row starting another): its paragraphs, each
    running text over more than one row (the first and the last may be the end or the start of
    one going on in another column); None when the block is not so (a poem's short lines, an
    address)."""
    rows = rows_of(block.lines)
    full = filled(rows)
    ends = [
        k + 1
        for k, row in enumerate(rows[:-1])
        if not full[k]
        and row[-1].text.rstrip()[-1:] in SENTENCE_ENDS
        and rows[k + 1][0].text.lstrip()[:1].isupper()
    ]
    cuts = [0, *ends, len(rows)]
    parts = [
        Group(tuple(line for row in rows[a:b] for line in row), block.type)
        for a, b in zip(cuts, cuts[1:], strict=False)
    ]
    runs = all(b - a > 1 for a, b in zip(cuts[1:-1], cuts[2:-1], strict=False))
    return parts if ends and runs and all(prose(part) for part in parts) else None


def paragraph(block: Group) -> str:
    """A block of running text as one paragraph, or as its paragraphs where it holds several;
    another block row by row, hard line breaks between its rows."""
    if prose(block):
        return escaped(joined([line.text for line in block.lines]))
    if parts := paragraphs_of(block):
        return "\n\n".join(escaped(joined([line.text for line in p.lines])) for p in parts)
    rows = [" ".join(" ".join(line.text.split()) for line in row) for row in rows_of(block.lines)]
    return "\\\n".join(escaped(row) for row in rows)


def goes_on(before: Shaped, after: Shaped) -> bool:
    """Whether `after` is the running text of `before` going on (in the next column)."""
    if before.kind != PARAGRAPH or after.kind != PARAGRAPH:
        return False
    if not (prose(before.block) and prose(after.block)):
        return False
    last, first = before.block.lines[-1].text.rstrip(), after.block.lines[0].text.lstrip()
    return bool(last and first) and last[-1] not in SENTENCE_ENDS and first[0].islower()


def page_markdown(
    shaped: Sequence[Shaped], levels: dict[float, int], headers_footers: bool
) -> list[str]:
    kept = [s for s in shaped if s.kind not in (HEADER, FOOTER) or headers_footers]
    parts: list[str] = []
    running: list[str] = []  # the lines of the paragraph last written, while it may go on
    for k, s in enumerate(kept):
        texts = [line.text for line in s.block.lines]
        if s.table is not None:
            parts.append(table_markdown(s.table))
        elif s.kind == FIGURE and not texts:  # the picture itself: where it stands, no words
            parts.append(comment("figure"))
        elif s.kind == HEADING:
            parts.append("#" * levels[s.height] + " " + escaped(joined(texts)))
        elif s.kind == LIST:
            parts.append("\n".join(list_items(s.block.lines)))
        elif k and goes_on(kept[k - 1], s):
            running += texts
            parts[-1] = escaped(joined(running))
            continue
        else:
            parts.append(paragraph(s.block))
        running = texts
    return parts


def table_markdown(table: TableLike) -> str:
    """A table as a GitHub table, its first row the header; as an HTML table where a cell
    spans rows or columns (a GitHub table cannot say so)."""
    grid = table.grid()
    if any(c.row_span > 1 or c.column_span > 1 for c in table.cells):
        return table_html(grid)
    rows = [
        "| " + " | ".join(inline_escaped(" ".join(c.text.split())) if c else "" for c in row) + " |"
        for row in grid
    ]
    rule = "|" + " --- |" * table.columns
    return "\n".join([rows[0], rule, *rows[1:]])


def table_html(grid: Sequence[Sequence[CellLike | None]]) -> str:
    """A table as one HTML block (no blank line inside, so Markdown keeps it whole)."""
    rows = []
    for row in grid:
        cells = []
        for c in row:
            if c is None:
                continue
            spans = (f' rowspan="{c.row_span}"' if c.row_span > 1 else "") + (
                f' colspan="{c.column_span}"' if c.column_span > 1 else ""
            )
            cells.append(f"<td{spans}>{html.escape(' '.join(c.text.split()))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>\n" + "\n".join(rows) + "\n</table>"


def comment(text: str) -> str:
    """An HTML comment that Markdown shows as nothing and a reader can find."""
    return "<!-- " + text.replace("--", "- -") + " -->"


def to_markdown(pages: Sequence[PageLike], headers_footers: bool = False) -> str:
    """A document's pages as CommonMark: blocks in reading order, a comment between pages; a
    page without blocks (from `ensemble_model`) is read line by line."""
    shaped = shape(pages)
    levels = heading_levels(shaped)
    parts = []
    for k, (page, found) in enumerate(zip(pages, shaped, strict=True)):
        if k:
            parts.append(comment(f"page {page.number + 1}"))
        error = getattr(page, "error", "")  # a page not read (Page.error)
        if error:
            parts.append(comment(f"page {page.number + 1} not read: {error}"))
        parts.extend(page_markdown(found, levels, headers_footers))
    return "\n\n".join(parts) + "\n" if parts else ""
