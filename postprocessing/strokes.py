"""A page and the lines found on it -> how heavy each line's type is: the mean width of its
strokes, in pixels.

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


def stroke_width(patch: NDArray[np.uint8]) -> float:
    """The mean stroke width of the dark type in a grey patch (0: no ink)."""
    if min(patch.shape) < LEAST_SIDE:
        return 0.0
    _, ink = cv2.threshold(patch, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    edges = np.count_nonzero(np.diff(ink, axis=0)) + np.count_nonzero(np.diff(ink, axis=1))
    return 2.0 * float(np.count_nonzero(ink)) / edges if edges else 0.0


def stroke_widths(page: NDArray[np.uint8], quads: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each line's stroke width on `page` (BGR or grey), from the box around its quad."""
    height, width = page.shape[:2]
    widths = np.zeros(len(quads), np.float32)
    for k, quad in enumerate(quads):
        x0, y0 = np.clip(np.floor(quad.min(axis=0)).astype(int), 0, (width, height))
        x1, y1 = np.clip(np.ceil(quad.max(axis=0)).astype(int), 0, (width, height))
        widths[k] = stroke_width(grey(page[y0:y1, x0:x1]))
    return widths


def grey(patch: NDArray[np.uint8]) -> NDArray[np.uint8]:
    if patch.ndim == 2:
        return np.ascontiguousarray(patch)
    if not patch.size:
        return np.zeros(patch.shape[:2], np.uint8)
    return np.asarray(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), np.uint8)
