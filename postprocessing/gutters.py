"""Column gutters too narrow for the detector: lines run across them cut apart, and each
box's extent up to them, so that the layout sees the columns.

Where a page's columns stand close (a newspaper's), the detector's map joins a line to the
line level with it in the next column, and the two come back as one box whose reading mixes
the columns; where they are not joined, their boxes still reach into the gutter and overlap,
and no gap between columns shows (postprocessing.blocks). A gutter shows in the page's ink as
a blank band that runs down past many lines at one place, once the rules a printer may set in
it are taken out; the spaces between words do not line up from line to line like that. So a
band is a gutter where it is blank (but for specks) in a box's rows and in those of several
lines below it, or above it, with lines on both sides that run on a column's width, wider
than the spaces between the box's letters. A body-height box that crosses one is cut there
when it starts where lines of its column start; each box's extent for the layout ends at the
gutter. Lengths are in the page's median line heights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from .bends import Bend
from .detection import TextBoxes
from .geometry import quad_size
from .rules import LETTER_STROKE
from .strokes import gap_of, grey

LINE_PIXELS = 20  # the page is looked at scaled so that its median line is about this tall
REACH = 8.0  # the band is looked for this far below the box, or this far above it
MIN_LINES = 6  # lines of text on each side of the band within that reach, the box's not counted
GAP = 0.15  # the band is at least this wide, ...
WIDER = 2.0  # ... and this many times the usual space between the box's letters (in a grid of
# Chinese characters, or typewriter letters, the spaces between them line up down the page)
NEAR = 2.0  # a line counts on a side of the band when its ink comes this close to it
BODY = 1.5  # boxes taller than this (headlines) are never cut
LEVEL = 0.02  # boxes whose top edge rises or falls more than this per pixel are not cut
PART = 0.25  # a part of a cut box at least this long
ALIGN = 3.0  # a box cut apart starts this close to where two other lines of its column do
THIN = 0.25  # a broken rule in a gutter is no wider than this
SPECKS = 0.03  # a band's column may hold this share of its rows in specks of ink


def ink_of(gray: NDArray[np.uint8], line: float) -> NDArray[np.uint8]:
    """Dark pixels against their neighbourhood (uneven light does not matter), 1 where ink,
    less the rules down the page (runs longer than a letter's stroke) and their blurred
    edges."""
    block = max(3, int(2 * line) | 1)
    dark = cv2.adaptiveThreshold(
        gray, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block, 10
    )
    down = cv2.morphologyEx(
        dark, cv2.MORPH_OPEN, np.ones((max(3, int(LETTER_STROKE * line)), 1), np.uint8)
    )
    rules = cv2.dilate(down, np.ones((1, 3), np.uint8))
    ink = np.asarray(dark, np.uint8)
    ink[rules > 0] = 0
    return ink


def grey_at(page: NDArray[np.uint8], scale: float) -> NDArray[np.uint8]:
    """The page (BGR or grey) in grey, scaled by `scale` (at most 1)."""
    page = grey(page)
    if scale < 1.0:
        size = (max(1, round(page.shape[1] * scale)), max(1, round(page.shape[0] * scale)))
        page = np.asarray(cv2.resize(page, size, interpolation=cv2.INTER_AREA), np.uint8)
    return page


def runs_of(flags: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, end) of each run of True."""
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True))


@dataclass(frozen=True)
class PageInk:
    """A page's ink (ink_of) as running sums: down each column (`sums`, a row of zeros
    first) and over the page (`area`, its integral image, a row and a column of zeros first)."""

    sums: NDArray[np.int32]
    area: NDArray[np.int32]

    @classmethod
    def of(cls, ink: NDArray[np.uint8]) -> PageInk:
        sums = np.zeros((ink.shape[0] + 1, ink.shape[1]), np.int32)
        np.cumsum(ink, axis=0, out=sums[1:])
        area = np.zeros((ink.shape[0] + 1, ink.shape[1] + 1), np.int32)
        np.cumsum(sums, axis=1, out=area[:, 1:])
        return cls(sums, area)


def ink_between(
    area: NDArray[np.int32],
    x0: NDArray[np.int64],
    y0: NDArray[np.int64],
    x1: NDArray[np.int64],
    y1: NDArray[np.int64],
) -> NDArray[np.int32]:
    """The ink in each rectangle [x0, x1) x [y0, y1) of the page, from its integral image."""
    return np.asarray(area[y1, x1] - area[y0, x1] - area[y1, x0] + area[y0, x0], np.int32)


def lines_beside(
    area: NDArray[np.int32],
    boxes: NDArray[np.int64],
    rows: tuple[int, int],
    start: int,
    end: int,
    line: float,
) -> NDArray[np.bool_]:
    """Which of the page's lines (boxes x0, y0, x1, y1) have their middle within `rows`
    [top, bottom) and a letter's ink (`line` pixels) in their rows within columns
    [start, end)."""
    middle = (boxes[:, 1] + boxes[:, 3]) / 2
    beside = (middle >= rows[0]) & (middle < rows[1]) & (boxes[:, 0] < end) & (boxes[:, 2] > start)
    near = np.flatnonzero(beside)
    x0, y0, x1, y1 = boxes[near].T
    ink = ink_between(area, np.clip(x0, start, end), y0, np.clip(x1, start, end), y1)
    beside[near[ink < line]] = False
    return np.asarray(beside)


def broken_rules(blank: NDArray[np.bool_], line: float) -> NDArray[np.bool_]:
    """The columns of a broken rule (its pieces shorter than a letter's stroke stay in the
    ink): runs of columns with ink at most `THIN` line heights wide, blank on both sides."""
    found = np.zeros_like(blank)
    for a, b in runs_of(~blank):
        if b - a <= THIN * line and a > 0 and b < len(blank) and blank[a - 1] and blank[b]:
            found[a:b] = True
    return found


def bands_in(
    ink: PageInk, boxes: NDArray[np.int64], own: int, line: float, column: float
) -> list[tuple[int, int]]:
    """The gutters [start, end) (the ink's columns) in or beside the line `boxes[own]`: runs of
    columns, `GAP` of them blank but for specks (and the rest a broken rule), from the box's
    rows down `REACH` line heights (or up: a column's first or last lines), with `MIN_LINES`
    other lines on each side that come near it, half as many of them running on `column`
    line heights from it (a column's, not a list's numbers or a receipt's prices). The `boxes`
    x0, y0, x1, y1 are in the ink's pixels, within the page."""
    sums, area = ink.sums, ink.area
    height, width = sums.shape[0] - 1, sums.shape[1]
    reach, near, far = int(REACH * line), int(NEAR * line), int(column * line)
    x0, y0, x1, y1 = boxes[own]
    # a gutter the box only reaches into is seen whole
    x0, x1, y0, y1 = max(0, x0 - near), min(width, x1 + near), max(0, y0), min(height, y1 + 1)
    if y1 <= y0:
        return []
    own_blank = sums[y1, x0:x1] - sums[y0, x0:x1] <= 1  # a speck at most in the box's rows
    inside = own_blank[max(0, int(boxes[own, 0]) - x0) : int(boxes[own, 2]) - x0]
    spacing = gap_of((~inside)[None, :].astype(np.uint8))  # between the box's letters
    found: list[tuple[int, int]] = []
    for top, bottom in ((y0, min(height, y1 + reach)), (max(0, y0 - reach), y1)):
        column_ink = sums[bottom, x0:x1] - sums[top, x0:x1]
        blank = (column_ink <= SPECKS * (bottom - top)) & own_blank
        band = blank | broken_rules(blank, line)
        for start, end in runs_of(band):
            if blank[start:end].sum() < max(GAP * line, WIDER * spacing):
                continue
            start, end = start + x0, end + x0
            if any(a < end and start < b for a, b in found) or start < far or end + far > width:
                continue
            rows = (top, bottom)
            left = lines_beside(area, boxes, rows, start - near, start, line)
            right = lines_beside(area, boxes, rows, end, end + near, line)
            # lines of a column run on a column's width from the gutter (a table's cells or
            # a list's numbers stop short of it)
            left_on = left & lines_beside(area, boxes, rows, start - far, start - far + near, line)
            right_on = right & lines_beside(area, boxes, rows, end + far - near, end + far, line)
            left[own] = right[own] = left_on[own] = right_on[own] = False
            if (
                min(left.sum(), right.sum()) >= MIN_LINES
                and min(left_on.sum(), right_on.sum()) >= MIN_LINES // 2
            ):
                found.append((start, end))
    found.sort()
    # a box that crosses a gutter is lines the detector joined when it starts where lines of
    # its column start (at the column's edge, or indented as they are) or goes on from a box
    # on its row; a byline or a title centred over the columns may have a space between its
    # words on the gutter
    ox0, oy0, ox1, oy1 = boxes[own]
    crossed = [b for b in found if ox0 + PART * line < b[0] and b[1] < ox1 - PART * line]
    if crossed:
        a = crossed[0][0]
        middle: NDArray[np.float64] = (boxes[:, 1] + boxes[:, 3]) / 2
        row: NDArray[np.bool_] = (
            (oy0 < middle) & (middle < oy1) & (ox0 - near < boxes[:, 2]) & (boxes[:, 2] <= ox0)
        )
        aligned: NDArray[np.bool_] = np.abs(middle - (oy0 + oy1) / 2) <= reach
        aligned &= boxes[:, 2] > a - near
        aligned &= (boxes[:, 0] < a) & (np.abs(boxes[:, 0] - ox0) <= ALIGN * line)
        aligned[own] = row[own] = False
        if aligned.sum() < 2 and not row.any():
            found = [b for b in found if b not in crossed]
    return found


@dataclass(frozen=True)
class Part:
    """A box's part on one side of the gutters: where its text is (`start`, `end`: up to the
    gutter, what the page's layout sees) and what is read (`left`, `right`: up to the
    gutter's middle at most, blank paper the recognizer may use as margin)."""

    start: float
    end: float
    left: float
    right: float


def parts_of(x0: float, x1: float, bands: Sequence[tuple[float, float]], line: float) -> list[Part]:
    """The box [x0, x1] less the gutters it reaches into: its parts, left to right, each at
    least `PART` line heights long (a sliver past a gutter is its blank edge)."""
    parts, start, left = [], x0, x0
    for a, b in bands:
        middle = (a + b) / 2
        parts.append(Part(start, min(a, x1), left, min(middle, x1)))
        start, left = max(b, start), max(middle, left)
    parts.append(Part(start, x1, left, x1))
    return [p for p in parts if p.end - p.start >= PART * line]


def part_of(quad: NDArray[np.float32], left: float, right: float) -> NDArray[np.float32]:
    """The part of a tl, tr, br, bl quad between the vertical lines x = left and x = right,
    its corners on the quad's top and bottom edges."""
    tl, tr, br, bl = quad.astype(np.float64)

    def on(a: NDArray[np.float64], b: NDArray[np.float64], x: float) -> NDArray[np.float64]:
        t = 0.0 if b[0] == a[0] else (x - a[0]) / (b[0] - a[0])
        return a + (b - a) * t

    corners = [on(tl, tr, left), on(tl, tr, right), on(bl, br, right), on(bl, br, left)]
    return np.array(corners, np.float32)


@dataclass(frozen=True)
class Cut:
    found: TextBoxes  # the boxes to read, gutters cut out
    extents: NDArray[np.float32]  # [N, 4, 2] each box's quad up to the gutters: for the layout


def cut_at_gutters(found: TextBoxes, page: NDArray[np.uint8], column: float) -> Cut:
    """`found` with each box that crosses a column gutter cut into its parts (left to right,
    where the box stood in the order, their score the box's, straight: a bent box that
    crosses a gutter is two lines the detector joined), and the boxes' extents: their quads
    with what reaches into a gutter left out, so that the layout sees the gutter between
    close-set columns. `page` is the image the boxes are in, BGR or grey; `column` is how many
    line heights a column's lines run at least."""
    if len(found.quads) < MIN_LINES:
        return Cut(found, found.quads)
    heights = np.array([quad_size(q)[1] for q in found.quads])
    line = float(np.median(heights))
    x0s, x1s = found.quads[:, 0, 0], found.quads[:, 1, 0]
    level = (x1s > x0s) & (
        np.abs(found.quads[:, 1, 1] - found.quads[:, 0, 1]) <= LEVEL * (x1s - x0s)
    )
    # boxes shorter than a column's line neither join columns nor hide a gutter from the
    # layout (postprocessing.blocks finds gutters between long lines)
    looked = level & (heights <= BODY * line) & (x1s - x0s >= column * line)
    if line <= 0 or not looked.any():
        return Cut(found, found.quads)
    scale = min(1.0, LINE_PIXELS / line)
    small_line = line * scale
    ink = PageInk.of(ink_of(grey_at(page, scale), small_line))
    corners = np.concatenate([found.quads.min(axis=1), found.quads.max(axis=1)], axis=1)
    frame = [ink.sums.shape[1], ink.sums.shape[0] - 1] * 2
    boxes = np.clip(np.round(corners * scale), 0, frame).astype(np.int64)
    quads: list[NDArray[np.float32]] = []
    extents: list[NDArray[np.float32]] = []
    scores: list[float] = []
    bends: list[Bend | None] = []
    for i, quad in enumerate(found.quads):
        bend = found.bends[i] if found.bends else None
        parts = []
        if looked[i]:
            bands = bands_in(ink, boxes, i, small_line, column)
            edges = [(a / scale, b / scale) for a, b in bands]
            parts = parts_of(float(x0s[i]), float(x1s[i]), edges, line) if edges else []
        if len(parts) < 2:  # read whole (a bent line along its bend)
            quads.append(quad)
            extents.append(part_of(quad, parts[0].start, parts[0].end) if parts else quad)
            scores.append(float(found.scores[i]))
            bends.append(bend)
            continue
        for part in parts:
            quads.append(part_of(quad, part.left, part.right))
            extents.append(part_of(quad, part.start, part.end))
            scores.append(float(found.scores[i]))
            bends.append(None)
    cut = replace(
        found,
        quads=np.stack(quads).astype(np.float32).reshape(-1, 4, 2),
        scores=np.asarray(scores, np.float32),
        bends=bends if found.bends else (),
    )
    return Cut(cut, np.stack(extents).astype(np.float32).reshape(-1, 4, 2))
