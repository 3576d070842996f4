"""Bent lines (postprocessing/bends.py): a curved band of the detector's map is found as one
line along its centre, kept by its own region's score, boxed at its own height; a straight
band, and two lines the detector joined, stay straight boxes."""

from __future__ import annotations

import numpy as np

from triton_ocr.postprocessing.db import db_boxes
from triton_ocr.postprocessing.geometry import quad_size, reading_order

PARAMS = dict(thresh=0.3, box_thresh=0.6, unclip_ratio=1.5, max_candidates=1000, bent_lines=True)
TEXT = 8  # the band's height on the map, pixels


def band_map(
    middle, width: int = 400, height: int = 200, x0: int = 20, x1: int = 380
) -> np.ndarray:
    """A map with one band TEXT high whose middle at column x is middle(x)."""
    prob = np.zeros((height, width), np.float32)
    for x in range(x0, x1):
        y = int(round(middle(x)))
        prob[y - TEXT // 2 : y + TEXT // 2, x] = 0.9
    return prob


def bow(x: float) -> float:
    """A page bowing down towards its edge: level, then 30 pixels lower at the right end."""
    return 60 + 30 * ((x - 20) / 360) ** 3


def test_a_bent_band_is_one_line_along_its_centre_boxed_at_its_own_height():
    quads, scores, bends = db_boxes(band_map(bow), **PARAMS)
    assert len(quads) == 1 and scores[0] > 0.7  # dilation adds a rim of zeros
    (bend,) = bends
    assert bend is not None
    # the centre follows the band: level at the left, 30 pixels lower at the right end
    xs, ys = bend.centre[:, 0], bend.centre[:, 1]
    inside = (xs > 30) & (xs < 370)
    assert np.abs(ys[inside] - [bow(x) - 0.5 for x in xs[inside]]).max() < 2.0
    # the box: the band's own height, grown as DB grows a level band's, not the 30 pixels more
    # the curve spans
    level = db_boxes(band_map(lambda x: 60.0), **PARAMS)[0][0]
    assert abs(quad_size(quads[0])[1] - quad_size(level)[1]) < 3


def test_a_bent_band_scores_by_its_own_region():
    """Its straight box is mostly background: scored by that box, the line would be dropped."""
    steep = band_map(lambda x: 40 + 120 * ((x - 20) / 360) ** 3)
    quads, _, bends = db_boxes(steep, **PARAMS)
    assert len(quads) == 1 and bends[0] is not None
    # a pack without bent lines (PP-OCRv4's) scores it by its straight box, as before
    assert len(db_boxes(steep, **{**PARAMS, "bent_lines": False})[0]) == 0


def test_straight_and_joined_bands_stay_straight_boxes():
    level = band_map(lambda x: 60.0)
    tilted = band_map(lambda x: 60 + 0.2 * x)
    # one column's line, then the next column's a line lower, joined where they meet
    step = band_map(lambda x: 60.0 if x < 200 else 75.0)
    step[60:75, 198:202] = 0.9
    for prob in (level, tilted):
        quads, _, bends = db_boxes(prob, **PARAMS)
        assert len(quads) == 1 and bends == [None]
    # scored by its straight box as before: mostly background, dropped
    assert db_boxes(step, **PARAMS)[2] == []


def test_tilted_lines_stay_in_their_order():
    """Two parallel lines tilted down to the right: the lower one's middle lies within the
    upper one's vertical extent, not between its edges."""
    upper = np.array([[0, 0], [400, 40], [400, 60], [0, 20]], np.float32)
    lower = upper + np.array([0, 25], np.float32)
    word = np.array([[410, 42], [470, 48], [470, 68], [410, 62]], np.float32)  # upper's next word
    order = reading_order(np.stack([lower, word, upper]))
    assert order.tolist() == [2, 1, 0]
