"""A page and the lines found on it -> how each line's type is set: how heavy (the mean width
of its strokes, in pixels), how far apart its letters stand and how far they lean (italic).

Bold type at the body's size (a section's title in a report, a statute's section heads) is
told from the body by its strokes alone. Within a line's box the ink is split from the paper
at the box's own Otsu level (a light scan's ink is lighter); a stroke of width w and length L
is about w·L pixels of ink and crosses about 2·L edges between ink and paper, so twice the ink
over the edges counted across and along the line is the strokes' mean width, whatever the
letters. Italic type's upright strokes lean right: sheared back by the right amount, the
line's ink falls into the fewest, fullest columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

LEAST_SIDE = 4  # a box narrower or lower than this many pixels has no measurable strokes
# the slants tried: how far a line's upright strokes lean right, across over up (roman type
# about 0, an italic face clearly more)
SHEARS = np.round(np.arange(-0.1, 0.451, 0.05), 2)
LEAST_INK = 20  # pixels of ink below which a slant is not told
# a line's slant is measured on its start, scaled down to this many pixels high (up to twice as
# many) and this many of its heights long: enough letters to tell a face, a bounded cost
SLANT_HEIGHT, SLANT_LENGTH = 16, 12
STEM = 0.5  # a column's ink counts in a slant's measure beyond this share of its fullest column's
CHUNK = 64  # lines whose slants are counted together
LEVEL = 1.1  # a line whose box is at most this many times its height is level: its box is it


def ink_of(patch: NDArray[np.uint8]) -> NDArray[np.uint8] | None:
    """The dark type in a grey patch as 1s, split from the paper at the patch's own Otsu
    level (None: too small to tell)."""
    if min(patch.shape) < LEAST_SIDE:
        return None
    _, ink = cv2.threshold(patch, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return np.asarray(ink, np.uint8)


def width_of(ink: NDArray[np.uint8]) -> float:
    """The mean width of the strokes in an ink mask (0: no ink)."""
    edges = np.count_nonzero(np.diff(ink, axis=0)) + np.count_nonzero(np.diff(ink, axis=1))
    return 2.0 * float(np.count_nonzero(ink)) / edges if edges else 0.0


def gap_of(ink: NDArray[np.uint8]) -> float:
    """How far apart a line's glyphs stand: the median run of inkless columns between two
    inked ones, over the line's height (0: one glyph or none). Most such runs are the gaps
    between a word's letters, so word spaces do not move it; type set letter-spaced ("C H A
    P T E R") stands several times further apart than the body's."""
    inked = np.flatnonzero(ink.max(axis=0))
    runs = np.diff(inked) - 1
    runs = np.sort(runs[runs > 0])  # the median, without np.median's cost on a few values
    if not len(runs):
        return 0.0
    return float(runs[(len(runs) - 1) // 2] + runs[len(runs) // 2]) / 2 / ink.shape[0]


def slants_of(patches: Sequence[NDArray[np.uint8]]) -> NDArray[np.float32]:
    """How far each line's upright strokes lean right (across over up: 0 for roman type), from
    its ink: the shear of SHEARS, about its middle row, that gathers the most ink into full
    columns (the sum of each column's squared ink beyond STEM of the line's fullest column);
    0 where a patch holds too little ink to tell. The shears of CHUNK lines are counted in one
    bincount (a dense page's pixels times SHEARS at once would take hundreds of MB)."""
    slants = np.zeros(len(patches), np.float32)
    for start in range(0, len(patches), CHUNK):
        slants[start : start + CHUNK] = chunk_slants(patches[start : start + CHUNK])
    return slants


def chunk_slants(patches: Sequence[NDArray[np.uint8]]) -> NDArray[np.float32]:
    """slants_of for a few lines, all their shears counted in one bincount."""
    slants = np.zeros(len(patches), np.float32)
    inked = ((k, np.nonzero(patch)) for k, patch in enumerate(patches))
    found = [(k, ys, xs) for k, (ys, xs) in inked if len(xs) >= LEAST_INK]
    if not found:
        return slants
    lines = np.array([k for k, _, _ in found])
    heights = np.array([patches[k].shape[0] for k in lines])
    # each line's columns under each shear are counted apart: a segment per (line, shear), as
    # wide as the line and the furthest a row is shifted either way
    margin = int(np.ceil(heights.max() / 2 * np.abs(SHEARS).max())) + 1
    spans = np.array([patches[k].shape[1] for k in lines]) + 2 * margin
    starts = np.concatenate([[0], np.cumsum(np.repeat(spans, len(SHEARS)))])
    # where each row of each line lands under each shear: its shift plus its segment's start
    first_row = np.concatenate([[0], np.cumsum(heights)])
    row_line = np.repeat(np.arange(len(found)), heights)
    middle = np.arange(first_row[-1]) - first_row[row_line] - heights[row_line] / 2
    shift = np.floor(middle * SHEARS[:, None] + 0.5).astype(np.int64) + margin
    lands = shift + starts[:-1].reshape(len(found), len(SHEARS)).T[:, row_line]
    ys = np.concatenate([ys + first_row[n] for n, (_, ys, _) in enumerate(found)])
    xs = np.concatenate([xs for _, _, xs in found])
    counts = np.bincount((lands[:, ys] + xs).ravel(), minlength=int(starts[-1]))
    # an upright stroke sheared straight fills one column as tall as the line's fullest; curves
    # and serifs, which fill short runs at any shear, count little
    fullest = np.maximum.reduceat(counts, starts[:-1]).reshape(len(found), len(SHEARS)).max(axis=1)
    floor = np.repeat(np.repeat(fullest * STEM, len(SHEARS)), np.diff(starts))
    tall = np.maximum(counts - floor, 0.0)
    sharpness = np.add.reduceat(tall * tall, starts[:-1]).reshape(len(found), len(SHEARS))
    slants[lines] = SHEARS[np.argmax(sharpness, axis=1)]
    return slants


def slant_patch(
    page: NDArray[np.uint8], quad: NDArray[np.float32], box_ink: NDArray[np.uint8]
) -> NDArray[np.uint8] | None:
    """The ink of a line's start, scaled down towards SLANT_HEIGHT pixels high, SLANT_LENGTH
    heights long (a face leans alike all along a line): from its box's ink where the box is
    the line (level), else from the line warped upright (its tilt taken out: a tilted line's
    strokes lean as its baseline does, and its box holds its neighbours' ink). None: too
    small."""
    tl, tr, br, bl = np.asarray(quad, np.float64)
    length = max(math.hypot(*(tr - tl)), math.hypot(*(br - bl)))
    height = max(math.hypot(*(bl - tl)), math.hypot(*(br - tr)))
    if min(length, height) < LEAST_SIDE:
        return None
    part = min(1.0, SLANT_LENGTH * height / length)  # the share of the line measured
    step = max(1, int(height // SLANT_HEIGHT))  # every step-th pixel: SLANT_HEIGHT rows or more
    if box_ink.shape[0] <= height * LEVEL:
        return box_ink[::step, : int(np.ceil(box_ink.shape[1] * part)) : step]
    width, rows = round(length * part / step), round(height / step)
    if min(width, rows) < LEAST_SIDE:
        return None
    source = np.array([tl, tl + (tr - tl) * part, bl + (br - bl) * part, bl], np.float32)
    corners = np.array([[0, 0], [width, 0], [width, rows], [0, rows]], np.float32)
    warp = cv2.getPerspectiveTransform(source, corners)
    patch = cv2.warpPerspective(page, warp, (width, rows), borderMode=cv2.BORDER_REPLICATE)
    return ink_of(grey(np.asarray(patch, np.uint8)))


def line_type(
    page: NDArray[np.uint8], quads: NDArray[np.float32]
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Each line's stroke width (`width_of`) and letter gap (`gap_of`) on `page` (BGR or
    grey), from the box around its quad, and its slant (`slants_of`) from its start (0, 0 and 0
    where it holds no ink)."""
    height, width = page.shape[:2]
    strokes = np.zeros(len(quads), np.float32)
    gaps = np.zeros(len(quads), np.float32)
    patches: list[NDArray[np.uint8]] = [np.zeros((0, 0), np.uint8)] * len(quads)
    for k, quad in enumerate(quads):
        x0, y0 = np.clip(np.floor(quad.min(axis=0)).astype(int), 0, (width, height))
        x1, y1 = np.clip(np.ceil(quad.max(axis=0)).astype(int), 0, (width, height))
        ink = ink_of(grey(page[y0:y1, x0:x1]))
        if ink is None:
            continue
        strokes[k], gaps[k] = width_of(ink), gap_of(ink)
        if strokes[k] > 0 and (patch := slant_patch(page, quad, ink)) is not None:
            patches[k] = patch
    return strokes, gaps, slants_of(patches)


def grey(patch: NDArray[np.uint8]) -> NDArray[np.uint8]:
    if patch.ndim == 2:
        return np.ascontiguousarray(patch)
    if not patch.size:
        return np.zeros(patch.shape[:2], np.uint8)
    return np.asarray(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), np.uint8)
