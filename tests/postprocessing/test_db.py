import cv2
import numpy as np

from triton_ocr.postprocessing.db import box_score, db_boxes, unclip

PARAMS = dict(thresh=0.3, box_thresh=0.5, unclip_ratio=1.6, max_candidates=1000, bent_lines=True)


def rect_map(shape, rects, value=0.9):
    prob = np.zeros(shape, np.float32)
    for x0, y0, x1, y1 in rects:
        prob[y0:y1, x0:x1] = value
    return prob


def test_two_separate_kernels_give_two_grown_boxes():
    prob = rect_map((200, 300), [(20, 20, 120, 40), (20, 100, 250, 130)])
    quads, scores, _ = db_boxes(prob, **PARAMS)
    assert quads.shape == (2, 4, 2) and scores.shape == (2,)
    assert (scores > 0.8).all()  # dilation adds a rim of zeros to the mean
    for quad, (x0, y0, x1, y1) in zip(
        sorted(quads, key=lambda q: q[0, 1]), [(20, 20, 120, 40), (20, 100, 250, 130)], strict=True
    ):
        # the box grew from the kernel by the unclip offset (area * ratio / perimeter) each side
        w, h = x1 - x0 + 1, y1 - y0 + 1  # dilation adds one pixel
        offset = w * h * PARAMS["unclip_ratio"] / (2 * (w + h))
        assert abs(quad[:, 0].min() - (x0 - offset)) < 2.5
        assert abs(quad[:, 0].max() - (x1 + offset)) < 2.5
        assert abs(quad[:, 1].min() - (y0 - offset)) < 2.5
        assert abs(quad[:, 1].max() - (y1 + offset)) < 2.5


def test_rotated_kernel_gives_rotated_quad():
    prob = np.zeros((300, 300), np.float32)
    box = cv2.boxPoints(((150, 150), (160, 30), 30)).astype(np.int32)
    cv2.fillPoly(prob, [box], 0.95)
    quads, _, _ = db_boxes(prob, **PARAMS)
    assert len(quads) == 1
    top_edge = quads[0][1] - quads[0][0]
    assert abs(np.degrees(np.arctan2(top_edge[1], top_edge[0])) - 30) < 3


def test_weak_and_tiny_regions_are_dropped():
    prob = rect_map((100, 100), [(10, 10, 60, 30)], value=0.4)  # above thresh, below box_thresh
    prob[70:72, 70:72] = 0.99  # a 2x2 speck
    quads, scores, _ = db_boxes(prob, **PARAMS)
    assert len(quads) == 0 and len(scores) == 0


def test_empty_map_gives_empty_arrays():
    quads, scores, _ = db_boxes(np.zeros((64, 64), np.float32), **PARAMS)
    assert quads.shape == (0, 4, 2) and scores.shape == (0,)


def test_box_score_is_mean_inside_polygon():
    prob = np.zeros((50, 50), np.float32)
    prob[10:20, 10:30] = 1.0
    quad = np.array([[10, 10], [29, 10], [29, 19], [10, 19]], np.float32)
    assert box_score(prob, quad) > 0.99
    half = np.array([[10, 10], [29, 10], [29, 29], [10, 29]], np.float32)
    assert 0.4 < box_score(prob, half) < 0.6


def test_unclip_grows_by_area_times_ratio_over_perimeter():
    quad = np.array([[0, 0], [100, 0], [100, 20], [0, 20]], np.float32)
    grown = unclip(quad, 1.5)
    expected = 100 * 20 * 1.5 / 240  # 12.5 px on each side
    assert abs(grown[:, 0].max() - (100 + expected)) <= 1.0
    assert abs(grown[:, 1].min() - (-expected)) <= 1.0
