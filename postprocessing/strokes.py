"""A page and the lines found on it -> how each line's type is set: how heavy (the mean width
of its strokes, in pixels) and how far apart its letters stand.

Bold type at the body's size (a section's title in a report, a statute's section heads) is
told from the body by its strokes alone. Within a line's box the ink is split from the paper
at the box's own Otsu level (a light scan's ink is lighter); a stroke of width w and length L
is about w·L pixels of ink and crosses about 2·L edges between ink and paper, so twice the ink
over the edges counted across and along the line is the strokes' mean width, whatever the
letters.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

LEAST_SIDE = 4  # a box narrower or lower than this many pixels has no measurable strokes


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


def line_type(
    page: NDArray[np.uint8], quads: NDArray[np.float32]
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Each line's stroke width (`width_of`) and letter gap (`gap_of`) on `page` (BGR or
    grey), from the box around its quad (0 and 0 where it holds no ink)."""
    height, width = page.shape[:2]
    strokes = np.zeros(len(quads), np.float32)
    gaps = np.zeros(len(quads), np.float32)
    for k, quad in enumerate(quads):
        x0, y0 = np.clip(np.floor(quad.min(axis=0)).astype(int), 0, (width, height))
        x1, y1 = np.clip(np.ceil(quad.max(axis=0)).astype(int), 0, (width, height))
        ink = ink_of(grey(page[y0:y1, x0:x1]))
        if ink is not None:
            strokes[k], gaps[k] = width_of(ink), gap_of(ink)
    return strokes, gaps


def grey(patch: NDArray[np.uint8]) -> NDArray[np.uint8]:
    if patch.ndim == 2:
        return np.ascontiguousarray(patch)
    if not patch.size:
        return np.zeros(patch.shape[:2], np.uint8)
    return np.asarray(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), np.uint8)
