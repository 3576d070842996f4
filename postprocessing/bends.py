"""A bent text line's centre, from its region of the detector's map.

A line on a photographed page that curves (a book's page bowing towards its spine, a receipt
held in the hand) is a curved band on the map. Its straight box (the band's minimum-area
rectangle) is then much thicker than the text, and a crop warped from it holds a slanted slice
of the line with parts of its neighbours: the recognizer reads it garbled, or less surely than
the text filter keeps. Such a line is cut along its centre instead (preprocessing.crops).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

# a region's box this many times thicker than the region (its area over its length) holds a
# bent line: the photographed pages of the dev split have such boxes by the dozen, the flat
# pages 1.31 at the 95th percentile
BENT = 1.5
LONG = 4.0  # only a line this many times longer than its box is thick is taken as bent
LEVEL = 30.0  # ... and one within this many degrees of level (a vertical line stays straight)
# the centre is measured every this many text heights along the line, and a polynomial of at
# most this degree fitted through those points: a page's curve, not each letter's outline
STEP, DEGREE = 1.0, 3
# a bent line's centre lies within this share of its height of that curve, and its height
# along it stays within this many times its median: two lines the detector joined (a step from
# one column's line to the next's, a tall initial beside its line) do not, and stay straight
# (on the dev split's pages: bent lines 0.19 and 1.32 at most, joined ones 0.42 and 3.06 or more)
CURVE_SLACK, EVEN = 0.25, 1.5


@dataclass(frozen=True)
class Bend:
    """A bent line's centre, left to right, grown as its straight box is, and half its grown
    height, in the pixels of the frame it was found in."""

    centre: NDArray[np.float32]  # [K, 2] x, y
    half: float

    def band(self) -> NDArray[np.float32]:
        """[4, 2] tl, tr, br, bl: the band of the line's height along the chord of its centre,
        the line's box (where it stands on the page, in reading order and in its block); its
        straight box would reach into the lines above and below."""
        first, last = self.centre[0].astype(np.float64), self.centre[-1].astype(np.float64)
        chord = last - first
        down = np.array([-chord[1], chord[0]]) / max(float(np.linalg.norm(chord)), 1e-9)
        lift = self.half * down
        return np.array([first - lift, last - lift, last + lift, first + lift], np.float32)

    def scaled(self, sx: float, sy: float) -> Bend:
        """The same bend in a frame scaled by `sx` across and `sy` down."""
        return Bend(
            (self.centre * np.array([sx, sy], np.float32)).astype(np.float32), self.half * sy
        )


def line_bend(contour: NDArray[Any], rect: tuple[Any, ...], unclip_ratio: float) -> Bend | None:
    """The centre of the map region `contour` (its minimum-area rectangle `rect`), when it is
    a bent line (BENT, LONG, LEVEL, CURVE_SLACK, EVEN); None for a straight one. The centre
    is grown at its ends, and its half height beyond the text, by the distance DB's unclip
    grows a region (area * ratio / perimeter)."""
    (cx, cy), (w, h), angle = rect
    length, thick = max(w, h), min(w, h)
    area = float(cv2.contourArea(contour))
    if area <= 0 or length < LONG * thick or thick < BENT * area / length:
        return None
    theta = math.radians(angle if w >= h else angle + 90.0)
    along = np.array([math.cos(theta), math.sin(theta)])
    if along[0] < 0:
        along = -along  # left to right
    if abs(along[1]) > math.sin(math.radians(LEVEL)):
        return None
    down = np.array([-along[1], along[0]])
    points = region_points(contour)
    centre = np.array([cx, cy])
    u = (points - centre) @ along
    v = (points - centre) @ down
    text = area / length  # the text's height in the map
    edges = np.arange(u.min(), u.max() + STEP * text, STEP * text)
    which = np.digitize(u, edges)
    bins, counts = np.unique(which, return_counts=True)
    bins = bins[counts >= np.median(counts) / 2]  # not a sliver at an end
    us = np.array([u[which == k].mean() for k in bins])
    tops = np.array([v[which == k].min() for k in bins])
    bottoms = np.array([v[which == k].max() for k in bins])
    if len(us) < 3:
        return None
    middles = (tops + bottoms) / 2
    fit = np.polyfit(us, middles, min(DEGREE, len(us) - 1))
    # each bin's height across the curve where it slopes, not straight down through it
    heights = (bottoms - tops + 1.0) / np.hypot(1.0, np.polyval(np.polyder(fit), us))
    strays = float(np.abs(middles - np.polyval(fit, us)).max())
    if strays > CURVE_SLACK * text or heights.max() > EVEN * np.median(heights):
        return None
    grow = area * unclip_ratio / max(float(cv2.arcLength(contour, True)), 1.0)
    samples = np.linspace(u.min() - grow, u.max() + grow, max(8, len(us) * 2))
    line = centre + samples[:, None] * along + np.polyval(fit, samples)[:, None] * down
    # as tall as its tallest part, as a straight box is (a level line taken for bent, its region
    # waisted between words, is then cut as its straight box would cut it)
    half = float(heights.max()) / 2 + grow
    return Bend(line.astype(np.float32), half)


def region_points(contour: NDArray[Any]) -> NDArray[np.float64]:
    """[P, 2] the centres of the pixels inside `contour` (x, y)."""
    x, y, w, h = cv2.boundingRect(contour)
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [contour - np.array([x, y])], -1, (1,), thickness=cv2.FILLED)
    ys, xs = np.nonzero(mask)
    return np.asarray(np.stack([xs + x, ys + y], axis=1), np.float64)
