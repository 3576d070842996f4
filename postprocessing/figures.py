"""A document page and the text found on it -> its figures: pictures (photos, drawings) set
among the text, as boxes, and where each goes among the page's blocks in reading order.

A page is a document when one light level (its paper) fills much of it; a scene photo has
no such level and gets no figures. On a document, what is neither paper nor text (each line's
box and a margin around it left out) is closed into regions; a region large enough, filled
enough, lying on the sheet (at each edge of the image it reaches, the paper reaches too: a
photographed sheet's background lies beyond the paper there) and not across the whole page is a
figure. Thin strokes alone (rules, a table's grid) are opened away.

Pure OpenCV and numpy on the upright page, at a fixed small scale so that the cost does not
grow with the page (docs/accuracy.md, "Figures"); a PDF page read from its text layer is
rendered at that scale alone for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from .geometry import Box

SCALE_SIDE = 400  # the page is looked at with its long side this many pixels
PAPER_LEVEL = 170  # a document's paper is at least this light (of 255) ...
PAPER_BAND = 24  # ... and the pixels within this many levels of it ...
PAPER_SHARE = 0.4  # ... fill at least this share of the page
LEAST_LINES = 3  # a page with fewer text lines is a picture or a label, not a document
INK = 40  # a pixel this many levels off the paper is ink or picture
TEXT_MARGIN = 0.3  # around each line's box, this many of its heights are the text's too
CLOSE, OPEN = 7, 5  # pixels (at SCALE_SIDE) of the closing that joins a picture, and the
# opening that drops strokes thinner than it
LEAST_AREA = 0.02  # a figure's box covers at least this share of the page ...
LEAST_SIDE = 0.1  # ... and this share of its width and of its height ...
LEAST_FILL = 0.3  # ... and its region fills at least this share of its box
EDGE_PAPER = 0.2  # at an image edge a figure reaches, at least this share of it is paper


def paper_level(grey: NDArray[np.uint8]) -> tuple[int, float]:
    """The page's most common level (its histogram smoothed over a few levels) and the share
    of the page within PAPER_BAND of it."""
    counts = np.bincount(grey.ravel(), minlength=256).astype(np.float64)
    level = int(np.argmax(np.convolve(counts, np.ones(9), "same")))
    near = counts[max(0, level - PAPER_BAND) : level + PAPER_BAND + 1].sum()
    return level, float(near / max(grey.size, 1))


def on_the_sheet(paper: NDArray[np.bool_], x: int, y: int, w: int, h: int) -> bool:
    """Whether a region (its box at the small scale) lies on the sheet: at every image edge it
    reaches, the paper reaches that edge too, and it does not run from one edge to the
    opposite one."""
    rows, columns = paper.shape
    left, top, right, bottom = x == 0, y == 0, x + w == columns, y + h == rows
    if (left and right) or (top and bottom):
        return False
    edges = [(left, paper[:, 0]), (top, paper[0]), (right, paper[:, -1]), (bottom, paper[-1])]
    return all(edge.mean() >= EDGE_PAPER for reached, edge in edges if reached)


def find_figures(page: NDArray[np.uint8], quads: NDArray[np.float32]) -> list[Box]:
    """The figures of an upright page (BGR or grey) on which text lines `quads` ([N, 4, 2],
    page pixels) were found, top to bottom, as boxes in page pixels."""
    height, width = page.shape[:2]
    if len(quads) < LEAST_LINES or not height or not width:
        return []
    scale = SCALE_SIDE / max(height, width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    # bilinear: an area average would read every pixel of the page (ten times the cost); the
    # closing below joins what sampling leaves of a halftone
    small = cv2.resize(page, size, interpolation=cv2.INTER_LINEAR)
    grey = cast(
        "NDArray[np.uint8]", cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
    )
    level, share = paper_level(grey)
    if level < PAPER_LEVEL or share < PAPER_SHARE:
        return []
    off = np.abs(grey.astype(np.int16) - level)
    ink = (off > INK).astype(np.uint8)
    for quad in quads * scale:
        (x0, y0), (x1, y1) = quad.min(axis=0), quad.max(axis=0)
        pad = TEXT_MARGIN * (y1 - y0)
        top, left = max(0, int(y0 - pad)), max(0, int(x0 - pad))
        ink[top : int(np.ceil(y1 + pad)) + 1, left : int(np.ceil(x1 + pad)) + 1] = 0
    joined = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((CLOSE, CLOSE), np.uint8))
    solid = cv2.morphologyEx(joined, cv2.MORPH_OPEN, np.ones((OPEN, OPEN), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(solid, connectivity=8)
    rows, columns = grey.shape
    found = []
    for x, y, w, h, area in stats[1:count].tolist():
        if (
            w * h >= LEAST_AREA * rows * columns
            and w >= LEAST_SIDE * columns
            and h >= LEAST_SIDE * rows
            and area >= LEAST_FILL * w * h
            and on_the_sheet(off <= PAPER_BAND, x, y, w, h)
        ):
            box = (x / scale, y / scale, min((x + w) / scale, width), min((y + h) / scale, height))
            found.append(box)
    return sorted(found, key=lambda b: (b[1], b[0]))


def overlap_x(a: Box, b: Box) -> float:
    return min(a[2], b[2]) - max(a[0], b[0])


def figure_places(blocks: Sequence[Box], figures: Sequence[Box]) -> list[int]:
    """Where each figure goes among the page's blocks (boxes in reading order): before the
    first block that starts below the figure's top and shares some of its width (the text
    under it in its column, or its caption), else after the last block."""
    places = []
    for figure in figures:
        under = [k for k, b in enumerate(blocks) if b[1] >= figure[1] and overlap_x(b, figure) > 0]
        places.append(under[0] if under else len(blocks))
    return places
