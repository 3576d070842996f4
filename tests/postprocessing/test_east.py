"""EAST geometry decode and NMS on synthetic maps that encode known rotated rectangles."""

import numpy as np
import pytest

from triton_ocr.postprocessing.east import (
    STRIDE,
    decode_geometry,
    east_boxes,
    quad_iou,
    rotated_nms,
)

PARAMS = dict(score_thresh=0.8, merge_iou=0.2, nms_iou=0.2, max_candidates=20000)


def rotation(angle: float) -> np.ndarray:
    """EAST's frame: image = origin + R @ local, with R = [[cos, sin], [-sin, cos]]."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, s], [-s, c]])


def rect_corners(center, width, height, angle) -> np.ndarray:
    """tl, tr, br, bl of a width x height rectangle rotated by `angle` around `center`."""
    half = np.array([[-width, -height], [width, -height], [width, height], [-width, height]]) / 2
    return (half @ rotation(angle).T + np.asarray(center)).astype(np.float32)


def encode(shape_hw, rects, score=0.95):
    """Score [H/4, W/4] and geometry [H/4, W/4, 5] maps whose cells inside each rectangle
    predict exactly that rectangle (as a perfect EAST would)."""
    h, w = shape_hw[0] // STRIDE, shape_hw[1] // STRIDE
    scores = np.zeros((h, w), np.float32)
    geometry = np.zeros((h, w, 5), np.float32)
    ys, xs = np.mgrid[0:h, 0:w]
    origins = np.stack([xs, ys], axis=-1).reshape(-1, 2).astype(np.float64) * STRIDE
    for center, width, height, angle in rects:
        # the box centre in each cell's local frame: R^T (center - origin)
        local = (np.asarray(center) - origins) @ rotation(angle)
        inside = (np.abs(local[:, 0]) < width / 2 - 2) & (np.abs(local[:, 1]) < height / 2 - 2)
        rows, cols = ys.reshape(-1)[inside], xs.reshape(-1)[inside]
        lx, ly = local[inside, 0], local[inside, 1]
        scores[rows, cols] = score
        geometry[rows, cols] = np.stack(
            [
                height / 2 - ly,
                width / 2 + lx,
                height / 2 + ly,
                width / 2 - lx,
                np.full_like(lx, angle),
            ],
            axis=-1,
        )
    return scores, geometry


def match(found: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """The found quad closest to `expected` (by mean corner distance)."""
    distances = [np.abs(q - expected).mean() for q in found]
    return found[int(np.argmin(distances))]


@pytest.mark.parametrize("degrees", [0, 10, -15, 30, -40])
@pytest.mark.parametrize(("width", "height"), [(200, 40), (90, 24), (400, 64)])
def test_rotated_rectangles_decode_within_a_pixel(degrees, width, height):
    angle = np.radians(degrees)
    center = (320, 240)
    scores, geometry = encode((480, 640), [(center, width, height, angle)])
    quads, box_scores = east_boxes(scores, geometry, **PARAMS)
    assert len(quads) == 1 and box_scores[0] == pytest.approx(0.95)
    expected = rect_corners(center, width, height, angle)
    # corners come back ordered from the top-left, whatever the sign of the rotation
    assert np.abs(np.sort(quads[0], axis=0) - np.sort(expected, axis=0)).max() < 1.0
    assert np.abs(match(quads[0][None], expected) - expected).mean() < 1.0


def test_rectangles_near_the_borders():
    rects = [
        ((70, 30), 120, 40, 0.0),
        ((560, 455), 150, 36, np.radians(5)),
        ((20, 300), 36, 200, 0.0),
    ]
    scores, geometry = encode((480, 640), rects)
    quads, _ = east_boxes(scores, geometry, **PARAMS)
    assert len(quads) == 3
    for center, width, height, angle in rects:
        expected = rect_corners(center, width, height, angle)
        found = match(quads, expected)
        assert quad_iou(found, expected) > 0.95


def test_decode_is_vectorised_over_cells_in_row_major_order():
    scores, geometry = encode((256, 256), [((128, 128), 100, 40, 0.2)])
    quads, cell_scores = decode_geometry(scores, geometry, 0.8)
    assert len(quads) == int((scores > 0.8).sum()) > 50
    # every cell predicts the same rectangle
    assert np.abs(quads - quads.mean(axis=0)).max() < 1e-3
    assert np.all(cell_scores == pytest.approx(0.95))


def test_words_side_by_side_come_back_as_two_boxes():
    """Row-major merging alternates between the two words on every row; only NMS across the
    rows' boxes collapses each word to one box."""
    left, right = ((150, 200), 160, 40, 0.0), ((450, 200), 160, 40, 0.0)
    scores, geometry = encode((480, 640), [left, right])
    quads, _ = east_boxes(scores, geometry, **PARAMS)
    assert len(quads) == 2
    for rect in (left, right):
        assert quad_iou(match(quads, rect_corners(*rect)), rect_corners(*rect)) > 0.95


def test_rotated_nms_drops_duplicates_and_keeps_distinct_boxes():
    a = rect_corners((200, 100), 160, 40, 0.0)
    a_dup = rect_corners((204, 102), 160, 40, 0.05)
    b = rect_corners((200, 300), 160, 40, 0.0)
    quads, scores = rotated_nms(
        np.stack([a_dup, b, a]), np.array([0.8, 0.9, 0.95], np.float32), 0.2
    )
    assert len(quads) == 2
    assert sorted(scores.tolist()) == pytest.approx([0.9, 0.95])  # the weaker duplicate went


def test_no_cell_above_threshold_gives_no_boxes():
    scores, geometry = encode((128, 128), [((64, 64), 60, 20, 0.0)], score=0.5)
    quads, box_scores = east_boxes(scores, geometry, **PARAMS)
    assert quads.shape == (0, 4, 2) and box_scores.shape == (0,)
