"""A page and the text read on it -> its tables: their cells (row, column, spans), each cell's
box and text.

Two kinds, found in this order:

1. **Ruled** tables: the page's ruled grids (postprocessing.rules) that hold text as a table
   does (`table_grid`: rules thinner than the text, rows and columns no narrower than a line
   of it, rules through little of it: strokes of big letters and a picture's edges run through
   text). Text goes to the cell its centre lies in; a merged cell whose texts stand apart in
   its columns is split back into them (`column_parts`: rules drawn only in the header).
2. **Unruled** tables, from the text's geometry (statements, receipts, papers' tables with
   horizontal rules only): the text outside ruled tables, cut into segments (a line, split
   where its words leave a gap of `SEGMENT_GAP` line heights), sorted into rows; runs of at
   least `MIN_ROWS` rows of two or more segments of one block set apart (or `WIDE_ROWS` rows
   of `WIDE_CELLS` or more: a header and one row of many columns), spaced no more than
   `ROW_GAP` line heights, with a few other rows among them (a section's label, a cell's next
   line) and header rows before, whose segments line up in columns (the gutters of
   blocks.gutters, and inside a column a gap between words most of its rows share: two close
   columns the detector ran into one line; a line run across a gutter is cut between its
   words; a column with text in one row only joins its neighbour). Columns of running prose
   (half of them or more wide and filled by lines of several words) are not a table. A segment
   across a gutter spans those columns; a cell's next line joins its row (in the first column,
   where its first word would not have fit on the line above: the label broke there; before
   the body, even when its pieces stand apart: a header's cells of two lines). In the header,
   a head spans a free column beside it that it reaches into, and a label beside two rows of
   heads spans both (`spanning_labels`).

Pure geometry on numpy arrays; the page is the upright one the text was read on, and the boxes
are axis-aligned (a photo's table must be roughly level).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from .blocks import gutters
from .geometry import Box, box_of, quad_of
from .rules import Grid, drawn, grids
from .words import Words, is_cjk

# --- ruled tables ---
RULE_THICKNESS = 0.3  # rules are at most this share of the text's line height thick
MIN_ROW, MIN_COLUMN = 0.8, 1.0  # a grid's rows and columns are at least so many line heights
CROSSED = 0.1  # rules run through at most this share of a table's text
# --- unruled tables ---
SEGMENT_GAP = 1.5  # a line's words this many line heights apart are different cells
CELL_GAP = 0.15  # a row's segments are set apart by at least this many line heights
ROW_GAP = 3.0  # rows of one table are at most this many line heights apart
MIN_ROWS = 3  # rows of two or more cells a table holds at least ...
WIDE_ROWS, WIDE_CELLS = 2, 4  # ... or this many rows of this many cells or more each
MAX_OTHER = 2  # other rows one table may hold in a row (a section label, a cell's next line)
NEXT_LINE = 0.5  # a cell's next line is at most this many line heights under its first
FILLED = 0.5  # a ruled cell's line that broke before its next word fills this share of it
# a header's head over columns of its own ("2007" over "N" and "% Pos") spans each column it
# reaches this share of its own width into
HEAD_REACH = 0.25
WORD_SPACE = 0.3  # the space between two words, in line heights
WORD_GUTTER = 0.4  # words this many line heights apart may stand in two columns ...
COMMON_GAP = 0.8  # ... when the same gap parts this share of a column's rows
PROSE_WIDTH = 12.0  # a column of prose is at least this many line heights wide, ...
PROSE_FILL = 0.7  # ... its median line fills this share of it ...
PROSE_WORDS = 4  # ... and holds at least this many words; half the columns so: no table


@dataclass(frozen=True)
class Cell:
    row: int
    column: int
    row_span: int
    column_span: int
    box: Box
    text: str


@dataclass(frozen=True)
class Table:
    box: Box
    rows: int
    columns: int
    ruled: bool
    cells: list[Cell] = field(default_factory=list)


def turned_table(table: Table, back: Callable[[NDArray[np.float32]], NDArray[np.float32]]) -> Table:
    """A table found on a page turned upright -> its boxes on the page as sent (`back` maps
    points); rows and columns stay the table's own."""

    def moved(box: Box) -> Box:
        return box_of(back(quad_of(box)))

    cells = [replace(cell, box=moved(cell.box)) for cell in table.cells]
    return replace(table, box=moved(table.box), cells=cells)


@dataclass(frozen=True)
class Segment:
    """A run of text in one cell: a line, or the part of a line between wide word gaps."""

    box: Box
    text: str
    line: int  # the line it came from, for the order of text in a cell
    block: int  # the line's block (postprocessing.blocks)
    words: tuple[tuple[Box, str], ...] = ()  # its words' boxes and texts, when read


def split_at(segment: Segment, cuts: Sequence[float]) -> list[Segment]:
    """A segment cut where a gutter between columns runs between two of its words (the
    detector ran one line across two cells)."""
    parts: list[list[tuple[Box, str]]] = [[]]
    for word in segment.words:
        last = parts[-1][-1][0] if parts[-1] else None
        if last is not None and any(last[2] <= cut <= word[0][0] for cut in cuts):
            parts.append([])
        parts[-1].append(word)
    if len(parts) == 1:
        return [segment]
    return [
        replace(
            segment,
            box=(
                part[0][0][0],
                min(b[1] for b, _ in part),
                part[-1][0][2],
                max(b[3] for b, _ in part),
            ),
            text=joined([t for _, t in part]),
            words=tuple(part),
        )
        for part in parts
    ]


# --- ruled tables ------------------------------------------------------------------------------


def crossed(grid: Grid, segment: Segment) -> bool:
    """Whether one of the grid's rules runs through a segment's text (then the "rules" are
    strokes of large letters, a picture's edges: no table)."""
    x0, y0, x1, y1 = segment.box
    w, h, tol = x1 - x0, y1 - y0, grid.tolerance()
    for x in grid.xs[1:-1]:
        if x0 + 0.2 * w < x < x1 - 0.2 * w and drawn(grid.vertical, x, y0, y1, tol):
            return True
    for y in grid.ys[1:-1]:
        if y0 + 0.3 * h < y < y1 - 0.3 * h and drawn(grid.horizontal, y, x0, x1, tol):
            return True
    return False


def table_grid(grid: Grid, found: Sequence[Segment]) -> bool:
    """A grid that holds text as a table does: rules thinner than its text, rows and columns
    no narrower than a line of it, text in two cells or more, and rules through no more than
    CROSSED of its segments."""
    mine = [s for s in found if inside(center(s.box), grid.box)]
    if len(mine) < 2:
        return False
    height = float(np.median([s.box[3] - s.box[1] for s in mine]))
    thickness = float(np.median(np.concatenate([grid.horizontal[:, 3], grid.vertical[:, 3]])))
    if thickness > max(RULE_THICKNESS * height, 3.0):
        return False
    if min(np.diff(grid.ys)) < MIN_ROW * height or min(np.diff(grid.xs)) < MIN_COLUMN * height:
        return False
    return sum(crossed(grid, s) for s in mine) <= CROSSED * len(mine)


def column_parts(
    xs: Sequence[float], column: int, span: int, box: Box, found: Sequence[Segment]
) -> list[tuple[int, int]]:
    """A merged cell's columns as (first, span): the cell whole, or one cell a column where its
    text stands apart in two or more of them and none crosses a column's edge (a table ruled
    across but not down, its columns set by the header's rules: the rule is missing because
    it was never drawn, not because the cell spans)."""
    if span == 1:
        return [(column, 1)]
    mine = [s for s in found if inside(center(s.box), box)]
    edges = xs[column + 1 : column + span]
    if any(s.box[0] < x < s.box[2] for s in mine for x in edges):
        return [(column, span)]
    holding = {column + int(np.searchsorted(edges, center(s.box)[0])) for s in mine}
    if len(holding) < 2:
        return [(column, span)]
    return [(c, 1) for c in range(column, column + span)]


def continues(
    segment: Segment, above: Sequence[Segment], cell: tuple[float, float], height: float
) -> bool:
    """Whether `segment` is the next line of a cell's text in `above` (the line before it): it
    holds words (figures do not wrap) and lies close under a segment filling half its cell's
    width (`cell`: from its left rule to its right) whose line ends too near the right rule for
    the segment's first word to have fitted there."""
    if not any(ch.isalpha() for ch in segment.text):
        return False
    x0, _, x1, _ = segment.box
    left, right = cell
    over = [s for s in above if s.box[0] < x1 and s.box[2] > x0]
    return any(
        segment.box[1] - s.box[3] <= NEXT_LINE * height
        and s.box[2] - s.box[0] >= FILLED * (right - left)
        and broke_before(s, segment, right, WORD_SPACE * height)
        for s in over
    )


def rows_within(grid: Grid, found: Sequence[Segment], height: float) -> bool:
    """Whether a row of the grid (a band between two rules across it) holds rows of a table of
    its own: two or more lines of segments set apart, each opening in the first column (with
    its label: a cell's list of lines under its first does not) and not the next line of a
    cell's text above. Its rules then frame the table (rules drawn down the columns, or under
    the header only), and its rows and columns are the text's to tell (unruled tables)."""
    xs, ys = grid.xs, grid.ys
    for top, bottom in zip(ys, ys[1:], strict=False):
        band = [
            s
            for s in found
            if xs[0] <= center(s.box)[0] <= xs[-1] and top <= center(s.box)[1] <= bottom
        ]
        lines = rows_of(band)
        opened = 0
        for k, line in enumerate(lines):
            if not set_apart(line, height, blocks=False) or line[0].box[0] >= xs[1]:
                continue
            cells = [column_of(xs, center(s.box)[0]) for s in line]
            if k and any(
                continues(s, lines[k - 1], cell, height)
                for s, cell in zip(line, cells, strict=True)
            ):
                continue
            opened += 1
        if opened >= 2:
            return True
    return False


def column_of(xs: Sequence[float], x: float) -> tuple[float, float]:
    """The grid column (its left and right rules) holding `x`."""
    k = min(max(int(np.searchsorted(xs, x)), 1), len(xs) - 1)
    return xs[k - 1], xs[k]


def ruled_tables(gray: NDArray[np.uint8], found: Sequence[Segment]) -> list[Table]:
    """The page's ruled tables, each cell's text from the segments whose centre lies in it."""
    tables = []
    height = float(np.median([s.box[3] - s.box[1] for s in found]))
    for grid in grids(gray, height):
        if not table_grid(grid, found) or rows_within(grid, found, height):
            continue
        xs, ys = grid.xs, grid.ys
        made = []
        for row, column, row_span, column_span in grid.cells:
            whole = (xs[column], ys[row], xs[column + column_span], ys[row + row_span])
            for first, span in column_parts(xs, column, column_span, whole, found):
                box = (xs[first], ys[row], xs[first + span], ys[row + row_span])
                made.append(Cell(row, first, row_span, span, box, text_in(box, found)))
        if sum(bool(cell.text) for cell in made) >= 2:
            tables.append(Table(grid.box, len(ys) - 1, len(xs) - 1, True, made))
    return tables


# --- text into segments ------------------------------------------------------------------------


def joined(texts: Sequence[str]) -> str:
    """Words joined as they are written: with spaces, none between two CJK characters."""
    out = ""
    for text in texts:
        if out and not (is_cjk(out[-1]) and is_cjk(text[0])):
            out += " "
        out += text
    return out


def segments(
    texts: Sequence[str],
    quads: NDArray[np.float32],
    line_block: NDArray[np.int32],
    words: Words | None,
) -> list[Segment]:
    """The page's lines as segments, each split where its words leave a gap of SEGMENT_GAP line
    heights (a line the detector ran across two cells)."""
    found = []
    for k, (text, quad) in enumerate(zip(texts, quads, strict=True)):
        block = int(line_block[k])
        mine = np.flatnonzero(words.lines == k) if words is not None else np.zeros(0, np.int64)
        if words is None or not len(mine):
            found.append(Segment(box_of(quad), text, k, block))
            continue
        boxes = [box_of(words.quads[i]) for i in mine]
        height = box_of(quad)[3] - box_of(quad)[1]
        start = 0
        for j in range(1, len(mine) + 1):
            if j == len(mine) or boxes[j][0] - boxes[j - 1][2] > SEGMENT_GAP * height:
                part = mine[start:j]
                text = joined([words.texts[i] for i in part])
                held = tuple((boxes[p], words.texts[mine[p]]) for p in range(start, j))
                found.append(Segment(box_of(words.quads[part]), text, k, block, held))
                start = j
    return found


def center(box: Box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def inside(point: tuple[float, float], box: Box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def text_in(box: Box, segments: Sequence[Segment]) -> str:
    """The text of the segments whose centre lies in `box`, line by line in reading order."""
    mine = [s for s in segments if inside(center(s.box), box)]
    mine.sort(key=lambda s: (s.line, s.box[0]))
    return joined([s.text for s in mine if s.text])


# --- unruled tables ----------------------------------------------------------------------------


def rows_of(found: Sequence[Segment]) -> list[list[Segment]]:
    """Segments sorted into rows: top to bottom, a segment joining the last row when it
    overlaps the row's vertical extent by half its own height or the row's and lies beside
    (not under) the row's segments; each row left to right."""
    rows: list[list[Segment]] = []
    extents: list[tuple[float, float]] = []
    for s in sorted(found, key=lambda s: center(s.box)[1]):
        top, bottom = s.box[1], s.box[3]
        if rows:
            a, b = extents[-1]
            overlap = min(b, bottom) - max(a, top)
            beside = all(s.box[0] >= o.box[2] or s.box[2] <= o.box[0] for o in rows[-1])
            if beside and overlap >= 0.5 * min(b - a, bottom - top):
                rows[-1].append(s)
                extents[-1] = (min(a, top), max(b, bottom))
                continue
        rows.append([s])
        extents.append((top, bottom))
    return [sorted(row, key=lambda s: s.box[0]) for row in rows]


def set_apart(row: Sequence[Segment], height: float, blocks: bool = True) -> bool:
    """Two or more segments of one block, each at least CELL_GAP line heights from the next.
    (Lines side by side in different blocks are columns of text: the block code reads a
    table's rows across.) `blocks` False: of any blocks (the rules frame the table)."""
    return (
        len(row) >= 2
        and (not blocks or len({s.block for s in row}) == 1)
        and all(
            b.box[0] - a.box[2] >= CELL_GAP * height for a, b in zip(row, row[1:], strict=False)
        )
    )


def runs(rows: list[list[Segment]], height: float) -> list[list[list[Segment]]]:
    """The rows of each table: runs of rows of set-apart segments (MIN_ROWS or more, or
    WIDE_ROWS of WIDE_CELLS or more: a header and one row of many columns), each row at most
    ROW_GAP line heights below the one before. Up to MAX_OTHER other rows may come
    between two of them (a section's label, a cell's second line), and as many rows of two or
    more segments before the first (a header whose cells run over several lines)."""
    apart = [set_apart(row, height) for row in rows]

    def near(k: int) -> bool:  # row k close under row k - 1
        return min(s.box[1] for s in rows[k]) - max(s.box[3] for s in rows[k - 1]) <= (
            ROW_GAP * height
        )

    found: list[list[list[Segment]]] = []
    current: list[int] = []
    pending: list[int] = []

    def close() -> None:
        held = [rows[k] for k in current if apart[k]]
        wide = len(held) >= WIDE_ROWS and all(len(row) >= WIDE_CELLS for row in held)
        if len(held) >= MIN_ROWS or wide:
            found.append([rows[k] for k in current])
        current.clear()
        pending.clear()

    for k in range(len(rows)):
        if current and not near(k):
            close()
        if apart[k]:
            if not current:
                lead: list[int] = []
                j = k - 1
                while j >= 0 and len(lead) < MAX_OTHER and len(rows[j]) >= 2 and near(j + 1):
                    lead.insert(0, j)
                    j -= 1
                current.extend(lead)
            current.extend(pending)
            current.append(k)
            pending.clear()
        elif current and len(pending) < MAX_OTHER:
            pending.append(k)
        else:
            close()
    close()
    return found


def prose_column(start: float, end: float, members: list[Segment], height: float) -> bool:
    """A column of running text: wide, its median line filling most of it with several words
    (ragged or justified)."""
    width = end - start
    if width < PROSE_WIDTH * height or not members:
        return False
    fill = float(np.median([s.box[2] - s.box[0] for s in members])) / width
    words = float(np.median([len(s.text.split()) for s in members]))
    return fill >= PROSE_FILL and words >= PROSE_WORDS


def prose(columns: list[tuple[float, float]], members: list[list[Segment]], height: float) -> bool:
    """Columns of running text rather than a table: half of them or more are (a sidebar's
    short lines beside them do not make a table)."""
    running = sum(
        prose_column(start, end, segs, height)
        for (start, end), segs in zip(columns, members, strict=True)
    )
    return running * 2 >= len(columns)


def first_word_width(segment: Segment) -> float:
    """The width of a segment's first word (its share of the segment's characters when its
    words were not read)."""
    if segment.words:
        box = segment.words[0][0]
        return box[2] - box[0]
    first = (segment.text.split() or [segment.text])[0]
    return (segment.box[2] - segment.box[0]) * len(first) / max(len(segment.text), 1)


def wrapped_first_column(
    row: list[Segment], sp: list[tuple[int, int]], above: list[Segment], limit: float, space: float
) -> bool:
    """`row` is the next line of the first column's cell above: it holds the first column only,
    and its first word would not have fit on that cell's last line within `limit` (the right
    edge of the column's widest line), so the line broke there; a label of its own (a section's
    name under a short row label) would have fit."""
    if len(row) != 1 or sp[0] != (0, 0):
        return False
    column = [s for s in above if s.box[0] < row[0].box[2] and s.box[2] > row[0].box[0]]
    if not column:
        return False
    return broke_before(max(column, key=lambda s: s.box[3]), row[0], limit, space)


def broke_before(line: Segment, following: Segment, limit: float, space: float) -> bool:
    """Whether `line` broke because the first word of `following` would not have fitted after
    it (a space, then the word) within `limit`: the text wrapped there."""
    return line.box[2] + space + first_word_width(following) > limit


def columns_used(sp: Sequence[tuple[int, int]]) -> set[int]:
    return {c for a, b in sp for c in range(a, b + 1)}


def body_start(spans: list[list[tuple[int, int]]]) -> int:
    """The first row of a table's body: a label and text in half the columns (0: none)."""
    n = max(b for sp in spans for _, b in sp) + 1
    return next(
        (k for k, sp in enumerate(spans) if (0, 0) in sp and 2 * len(columns_used(sp)) >= n), 0
    )


def spanning_labels(spans: list[list[tuple[int, int]]]) -> set[int]:
    """The header's rows that are labels beside two rows of heads ("Country" beside "2007" over
    "N"): rows before the body between two rows, each with text only in columns both of those
    leave empty. Their cells span the two rows."""
    body = body_start(spans)
    return {
        k
        for k in range(1, body - 1)
        if not columns_used(spans[k]) & (columns_used(spans[k - 1]) | columns_used(spans[k + 1]))
    }


def next_lines_joined(
    run: list[list[Segment]], spans: list[list[tuple[int, int]]], height: float
) -> tuple[list[list[Segment]], list[list[tuple[int, int]]]]:
    """Rows that are a cell's next lines joined to the row above: not set apart (or before the
    body, its first row with a label and text in half the columns: a header's cells of two
    lines), close under it (NEXT_LINE line heights), and either text only in columns after the
    first that the row above has text in, or the first column's text wrapped
    (wrapped_first_column)."""
    limit = max(
        (
            s.box[2]
            for row, sp in zip(run, spans, strict=True)
            for s, c in zip(row, sp, strict=True)
            if c == (0, 0)
        ),
        default=0.0,
    )
    body = body_start(spans)
    rows = [list(run[0])]
    row_spans = [list(spans[0])]
    for k, (row, sp) in enumerate(zip(run[1:], spans[1:], strict=True), 1):
        above = columns_used(row_spans[-1])
        gap = min(s.box[1] for s in row) - max(s.box[3] for s in rows[-1])
        if (
            (not set_apart(row, height) or k < body)
            and gap <= NEXT_LINE * height
            and (
                all(a > 0 and set(range(a, b + 1)) <= above for a, b in sp)
                or wrapped_first_column(row, sp, rows[-1], limit, WORD_SPACE * height)
            )
        ):
            rows[-1] += row
            row_spans[-1] += sp
            continue
        rows.append(list(row))
        row_spans.append(list(sp))
    return rows, row_spans


def parted(rows: list[list[tuple[float, float]]], x: float) -> int:
    """How many rows (their words' spans) `x` parts: words on both sides, none across it."""
    return sum(
        any(e <= x for _, e in spans)
        and any(s >= x for s, _ in spans)
        and not any(s < x < e for s, e in spans)
        for spans in rows
    )


def word_gutters(run: list[list[Segment]], edges: list[float], height: float) -> list[float]:
    """Gutters inside columns that the words show and the segments hide (the detector ran two
    close cells into one line in most rows): in a column, a stretch between words at least
    WORD_GUTTER line heights wide in COMMON_GAP of the rows with words there, each with words
    on both sides of it, and no word of the table's first row across it."""
    head = [b for s in run[0] for b, _ in s.words] or [s.box for s in run[0]]
    found = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        rows = []
        for row in run:
            spans = sorted(
                (b[0], b[2]) for s in row for b, _ in s.words if lo <= (b[0] + b[2]) / 2 < hi
            )
            if spans:
                rows.append(spans)
        if len(rows) < MIN_ROWS:
            continue
        gaps = [
            (a[1], b[0])
            for spans in rows
            for a, b in zip(spans, spans[1:], strict=False)
            if b[0] - a[1] >= WORD_GUTTER * height
        ]
        best = max(((parted(rows, (a + b) / 2), (a + b) / 2) for a, b in gaps), default=(0, 0.0))
        # the header's words part there too (a label column's "Q2 2006" under one wide head
        # is one column)
        if best[0] >= COMMON_GAP * len(rows) and not any(b[0] < best[1] < b[2] for b in head):
            found.append(best[1])
    return found


def lone_columns_joined(run: list[list[Segment]], cuts: list[float]) -> list[float]:
    """The cuts less the one beside each column whose text stands in one row only, on the side
    of the nearer neighbouring text: a piece of one cell the detector boxed apart (the "%" of a
    head "% Pos" over a column of figures), not a column."""
    n = len(cuts) + 1
    rows: list[set[int]] = [set() for _ in range(n)]
    spans = [[np.inf, -np.inf] for _ in range(n)]
    for r, row in enumerate(run):
        for s in row:
            c = int(np.searchsorted(cuts, center(s.box)[0]))
            rows[c].add(r)
            spans[c] = [min(spans[c][0], s.box[0]), max(spans[c][1], s.box[2])]
    dropped: set[int] = set()
    for c in range(n):
        if len(rows[c]) != 1 or n - len(dropped) <= 2:
            continue
        left = spans[c][0] - spans[c - 1][1] if c > 0 and rows[c - 1] else np.inf
        right = spans[c + 1][0] - spans[c][1] if c + 1 < n and rows[c + 1] else np.inf
        if min(left, right) < np.inf:
            dropped.add(c - 1 if left <= right else c)
    return [x for i, x in enumerate(cuts) if i not in dropped]


def unruled_table(run: list[list[Segment]], height: float) -> Table | None:
    """A run of rows as a table, if its segments line up in two or more columns."""
    every = [s for row in run for s in row]
    starts = np.array([s.box[0] for s in every], np.float64)
    ends = np.array([s.box[2] for s in every], np.float64)
    cuts = [(a + b) / 2 for a, b in gutters(starts, ends)]
    if not cuts:
        return None
    cuts = sorted(cuts + word_gutters(run, [float(starts.min()), *cuts, float(ends.max())], height))
    cuts = lone_columns_joined(run, cuts)
    # a line run across a gutter is cut between its words, but not in the header (the rows up
    # to the first set apart), where a cell centred over two columns spans them
    header = next(k for k, row in enumerate(run) if set_apart(row, height)) + 1
    run = run[:header] + [
        sorted((p for s in row for p in split_at(s, cuts)), key=lambda s: s.box[0])
        for row in run[header:]
    ]
    edges = [float(starts.min()), *cuts, float(ends.max())]
    n = len(edges) - 1

    def columns_of(s: Segment) -> tuple[int, int]:
        """The columns a segment covers: those it overlaps by half of theirs or its own."""
        covered = [
            c
            for c in range(n)
            if min(s.box[2], edges[c + 1]) - max(s.box[0], edges[c])
            >= 0.5 * min(s.box[2] - s.box[0], edges[c + 1] - edges[c])
        ]
        return (covered[0], covered[-1]) if covered else (0, 0)

    def reach_of(s: Segment, others: set[int]) -> tuple[int, int]:
        """A header's head: its columns, and those beside it that no other head of its row
        takes which it reaches HEAD_REACH of its width into."""
        a, b = columns_of(s)
        width = max(s.box[2] - s.box[0], 1.0)

        def reached(c: int) -> bool:
            if not 0 <= c < n or c in others:
                return False
            return min(s.box[2], edges[c + 1]) - max(s.box[0], edges[c]) >= HEAD_REACH * width

        return (a - 1 if reached(a - 1) else a, b + 1 if reached(b + 1) else b)

    spans = [[columns_of(s) for s in row] for row in run]
    bounds = [(edges[c], edges[c + 1]) for c in range(n)]
    alone = [
        [
            s
            for row, sp in zip(run, spans, strict=True)
            for s, (a, b) in zip(row, sp, strict=True)
            if a == b == c
        ]
        for c in range(n)
    ]
    if prose(bounds, alone, height):
        return None
    run, spans = next_lines_joined(run, spans, height)
    for k in range(body_start(spans)):  # the header's rows
        spans[k] = [
            reach_of(s, columns_used(spans[k][:j] + spans[k][j + 1 :]))
            for j, s in enumerate(run[k])
        ]
    labels = spanning_labels(spans)
    kept = [k for k in range(len(run)) if k not in labels]
    place = {k: r for r, k in enumerate(kept)} | {k: kept.index(k - 1) for k in labels}
    cells = []
    for k, (row, sp) in enumerate(zip(run, spans, strict=True)):
        label = k in labels
        rows = run[k - 1 : k + 2] if label else [row]
        top, bottom = min(s.box[1] for s in rows[0]), max(s.box[3] for s in rows[-1])
        taken: dict[tuple[int, int], list[Segment]] = {}
        for s, key in zip(row, sp, strict=True):
            taken.setdefault(key, []).append(s)
        used = columns_used(list(taken))
        beside = set().union(*(columns_used(spans[j]) for j in (k - 1, k + 1) if j in labels))
        for c in range(n):
            if c not in used and c not in beside and not label:
                taken[(c, c)] = []
        for (a, b), segs in sorted(taken.items()):
            if any(c in used for c in range(a, b + 1)) and not segs:
                continue  # a column a spanning segment already covers
            box = (edges[a], top, edges[b + 1], bottom)
            text = joined([s.text for line in rows_of(segs) for s in line])
            cells.append(Cell(place[k], a, 2 if label else 1, b - a + 1, box, text))
    cells.sort(key=lambda c: (c.row, c.column))
    table_box = (edges[0], min(c.box[1] for c in cells), edges[-1], max(c.box[3] for c in cells))
    return Table(table_box, len(kept), n, False, cells)


def unruled_tables(found: Sequence[Segment]) -> list[Table]:
    """The tables among segments outside ruled tables."""
    if len(found) < min(2 * MIN_ROWS, WIDE_ROWS * WIDE_CELLS):
        return []
    height = float(np.median([s.box[3] - s.box[1] for s in found]))
    tables = []
    for run in runs(rows_of(found), height):
        table = unruled_table(run, height)
        if table is not None:
            tables.append(table)
    return tables


def find_tables(
    page: NDArray[np.uint8],
    texts: Sequence[str],
    quads: NDArray[np.float32],
    line_block: NDArray[np.int32],
    words: Words | None,
) -> list[Table]:
    """The tables of an upright page (BGR pixels) and of the text read on it (its lines, their
    blocks and words), top to bottom."""
    found = segments(texts, quads, line_block, words)
    gray = cv2.cvtColor(page, cv2.COLOR_BGR2GRAY).astype(np.uint8)
    ruled = ruled_tables(gray, found) if found else []
    rest = [s for s in found if not any(inside(center(s.box), t.box) for t in ruled)]
    return sorted(ruled + unruled_tables(rest), key=lambda t: (t.box[1], t.box[0]))
