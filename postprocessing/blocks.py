"""Line boxes -> blocks in reading order (a recursive XY cut) and each block's box.

A page is cut where whitespace runs across it: between columns (a gutter) and between
paragraphs or under a headline (a horizontal gap), recursively, gaps measured in the page's
median line height. At each region, in this order:

1. a top or bottom band of one row or of short lines only (a running header, a page number),
   set apart by a paragraph gap, reads first or last; not the first or last row of columns,
   though (lines of text each on one side of a gutter: double-spaced columns, set off from
   each other by part of a line, or one a line longer than the other);
2. the widest gutter splits columns, read left to right. A gutter is where lines of text (at
   least `column_min_width` line heights long) thin out to a quarter of a column's, at least
   `column_gap` wide: the detector's boxes of neighbouring columns may touch or overlap, and a
   caption may cross (it goes to the side of its centre). Both sides must be columns of text
   (their median line that long too): a receipt's prices and a grid's cells are shorter, so
   their rows read across. A headline across the gutter (taller than body text, or set apart
   by a paragraph gap, and not set into the columns like a pull quote) spans the columns: the
   region is cut under it at the first gap across, however narrow, so it reads before them;
3. horizontal gaps of `paragraph_gap` split the rest, top to bottom;
4. what cannot be cut is a block: its lines top to bottom, those on one row left to right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import Blocks

from .detection import on_one_row
from .geometry import quad_size, reading_order

# a gutter: where the lines covering it are at most this share of those covering a column
CROSSING = 0.25
MIN_COLUMN = 2  # lines of text a column holds at least
HEADLINE = 1.5  # a line this many median line heights tall is set larger than body text


@dataclass(frozen=True)
class Layout:
    order: NDArray[np.int64]  # [N] the lines' indices in reading order
    block: NDArray[np.int32]  # [N] per line of `order`: its block, blocks numbered in reading order


@dataclass(frozen=True)
class Region:
    lines: NDArray[np.int64]  # indices into the page's lines
    box: NDArray[np.float64]  # [len(lines), 4] x0, y0, x1, y1 of each


def gaps(starts: NDArray[np.float64], ends: NDArray[np.float64]) -> list[tuple[float, float]]:
    """The empty stretches between the intervals [start, end] once overlapping ones merge."""
    found = []
    order = np.argsort(starts, kind="stable")
    reach = ends[order[0]]
    for i in order[1:]:
        if starts[i] > reach:
            found.append((float(reach), float(starts[i])))
        reach = max(reach, ends[i])
    return found


def gutters(starts: NDArray[np.float64], ends: NDArray[np.float64]) -> list[tuple[float, float]]:
    """Where the intervals thin out between two columns of them: stretches covered by at most
    CROSSING of the most that cover any point on either side (boxes of neighbouring columns
    may overlap, a caption may cross), with MIN_COLUMN intervals wholly on each side."""
    edges = np.unique(np.concatenate([starts, ends]))
    middles = (edges[:-1] + edges[1:]) / 2  # the coverage is constant between two edges
    covered = ((starts[None, :] < middles[:, None]) & (middles[:, None] < ends[None, :])).sum(1)
    left = np.maximum.accumulate(covered)
    right = np.maximum.accumulate(covered[::-1])[::-1]
    thin = np.flatnonzero(covered <= CROSSING * np.minimum(left, right))
    found = []
    for run in np.split(thin, np.flatnonzero(np.diff(thin) > 1) + 1):
        if not len(run):
            continue
        start, end = float(edges[run[0]]), float(edges[run[-1] + 1])
        if (ends <= end).sum() >= MIN_COLUMN and (starts >= start).sum() >= MIN_COLUMN:
            found.append((start, end))
    return found


def spanning(
    box: NDArray[np.float64], start: float, end: float, blocks: Blocks, height: float
) -> list[int]:
    """The lines that span the columns beside the gutter [start, end]: reaching a line of text's
    length into both sides, taller than body text (a headline) or set apart from the columns by
    a paragraph gap (a full-width paragraph), with no column text beside them on both sides (a
    pull quote set into the columns spans nothing). A body-sized box within the columns' flow
    is two of their lines the detector merged: it spans nothing either."""
    reach = blocks.column_min_width * height
    crossing = np.flatnonzero((box[:, 0] <= start - reach) & (box[:, 2] >= end + reach))
    middles = (box[:, 1] + box[:, 3]) / 2
    found = []
    for i in crossing:
        top, bottom = box[i, 1], box[i, 3]
        beside = (box[:, 1] < bottom) & (box[:, 3] > top)
        if np.any(beside & (box[:, 2] <= box[i, 0])) and np.any(beside & (box[:, 0] >= box[i, 2])):
            continue  # set into the columns
        # the lines above and below it (by their middles: a box whose edge overlaps its own by
        # a hair is the next line, no gap between them)
        over = (box[:, 0] < box[i, 2]) & (box[:, 2] > box[i, 0])
        above = top - box[over & (middles < middles[i]), 3]
        below = box[over & (middles > middles[i]), 1] - bottom
        gap = blocks.paragraph_gap * height
        apart = (len(above) > 0 and above.min() >= gap) or (len(below) > 0 and below.min() >= gap)
        if bottom - top > HEADLINE * height or apart:
            found.append(int(i))
    return found


def under_headlines(region: Region, spans: list[int]) -> list[Region]:
    """`region` cut under the spanning lines at its top and above those at its bottom, at the
    first gap across it, however narrow, before the next line, else at their edge (the first
    lines of close-set columns overlap the boxes above them: no gap runs across); [] when
    that leaves no part beside them."""
    box = region.box
    middles = (box[:, 1] + box[:, 3]) / 2
    middle = np.median(middles)
    rows = gaps(box[:, 1], box[:, 3])
    at = []
    tops = [box[i, 3] for i in spans if box[i, 3] <= middle]
    if tops:  # the first gap below the lowest of them, above the next line's middle
        below = middles[middles > max(tops)].min(initial=np.inf)
        near = [(a + b) / 2 for a, b in rows if max(tops) - 1 <= a < below]
        at += near[:1] or [max(tops)]
    bottoms = [box[i, 1] for i in spans if box[i, 1] > middle]
    if bottoms:  # the last gap above the highest of them, below the line before's middle
        above = middles[middles < min(bottoms)].max(initial=-np.inf)
        near = [(a + b) / 2 for a, b in rows if above < b <= min(bottoms) + 1]
        at += near[-1:] or [min(bottoms)]
    parts = split(region, 1, sorted(set(at))) if at else []
    return parts if len(parts) > 1 else []


def split(region: Region, axis: int, at: list[float]) -> list[Region]:
    """`region` cut at the coordinates `at` along x (axis 0) or y (axis 1), in order."""
    centre = (region.box[:, axis] + region.box[:, axis + 2]) / 2
    side = np.searchsorted(np.asarray(sorted(at)), centre)
    parts = [np.flatnonzero(side == k) for k in range(len(at) + 1)]
    return [Region(region.lines[p], region.box[p]) for p in parts if len(p)]


def short(region: Region, blocks: Blocks, height: float) -> bool:
    return bool(np.median(region.box[:, 2] - region.box[:, 0]) < blocks.column_min_width * height)


def band(region: Region, blocks: Blocks, height: float) -> bool:
    """A running header or footer: its lines on one row, or short ones only."""
    x0, y0, x1, y1 = region.box.T
    corners = np.stack([np.stack([x0, y0], -1), np.stack([x1, y1], -1)], axis=1)
    return on_one_row(corners) or short(region, blocks, height)


def in_columns(part: Region, rest: Region, columns: list[tuple[float, float]]) -> bool:
    """Whether `part` is the first or last row of the columns in `rest`: each of its lines on
    one side of every gutter and at least half as long as the lines of the column it sits in
    (a running header's pieces are shorter, or cross a gutter)."""
    if not columns:
        return False
    middles = np.array(sorted((start + end) / 2 for start, end in columns))
    x0, x1 = part.box[:, 0], part.box[:, 2]
    if ((x0[:, None] < middles[None, :]) & (x1[:, None] > middles[None, :])).any():
        return False
    slot = np.searchsorted(middles, (x0 + x1) / 2)
    rest_x0, rest_x1 = rest.box[:, 0], rest.box[:, 2]
    rest_slot = np.searchsorted(middles, (rest_x0 + rest_x1) / 2)
    for s, length in zip(slot, x1 - x0, strict=True):
        beneath = (rest_x1 - rest_x0)[rest_slot == s]
        if not len(beneath) or length < 0.5 * np.median(beneath):
            return False
    return True


def cut(region: Region, blocks: Blocks, height: float) -> list[Region]:
    """`region` -> its blocks in reading order."""
    if len(region.lines) < 2:
        return [region]
    box = region.box
    # gutters run between lines of text: short pieces (a caption, a page number) may cross one
    long = box[:, 2] - box[:, 0] >= blocks.column_min_width * height
    found = gutters(box[long, 0], box[long, 2]) if long.sum() > 1 else []
    columns = [(start, end) for start, end in found if end - start >= blocks.column_gap * height]
    rows = [g for g in gaps(box[:, 1], box[:, 3]) if g[1] - g[0] >= blocks.paragraph_gap * height]
    if rows:  # 1. a band of one row or of short lines at the top or bottom first
        head, rest = split(region, 1, [sum(rows[0]) / 2])
        if band(head, blocks, height) and not in_columns(head, rest, columns):
            return [*cut(head, blocks, height), *cut(rest, blocks, height)]
        rest, tail = split(region, 1, [sum(rows[-1]) / 2])
        if band(tail, blocks, height) and not in_columns(tail, rest, columns):
            return [*cut(rest, blocks, height), *cut(tail, blocks, height)]
    for start, end in sorted(columns, key=lambda g: g[0] - g[1]):  # 2. widest gap first
        left, right = split(region, 0, [(start + end) / 2])
        if short(left, blocks, height) or short(right, blocks, height):
            continue
        spans = spanning(box, start, end, blocks, height)
        if not spans:
            return [*cut(left, blocks, height), *cut(right, blocks, height)]
        parts = under_headlines(region, spans)  # a headline over the columns reads first
        if parts:
            return [block for part in parts for block in cut(part, blocks, height)]
    if rows:  # 3. paragraphs
        parts = split(region, 1, [(a + b) / 2 for a, b in rows])
        return [block for part in parts for block in cut(part, blocks, height)]
    return [region]


def page_layout(quads: NDArray[np.float32], blocks: Blocks) -> Layout:
    """Line quads [N, 4, 2] of an upright page -> their reading order and blocks."""
    n = len(quads)
    if n == 0:
        return Layout(np.zeros(0, np.int64), np.zeros(0, np.int32))
    box = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1).astype(np.float64)
    height = float(np.median([quad_size(q)[1] for q in quads])) or 1.0
    leaves = cut(Region(np.arange(n), box), blocks, height)
    order = np.concatenate([leaf.lines[reading_order(quads[leaf.lines])] for leaf in leaves])
    block = np.repeat(np.arange(len(leaves), dtype=np.int32), [len(leaf.lines) for leaf in leaves])
    return Layout(order.astype(np.int64), block)


def block_boxes(
    quads: NDArray[np.float32], block: NDArray[np.int32], count: int
) -> NDArray[np.float32]:
    """Each of `count` blocks' box [count, 4, 2] (tl, tr, br, bl) around its lines' quads."""
    out = np.zeros((count, 4, 2), np.float32)
    for b in range(count):
        points = quads[block == b].reshape(-1, 2)
        (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
        out[b] = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    return out
