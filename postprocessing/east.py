"""EAST score + geometry maps -> scored quadrilaterals (Zhou et al., 2017, RBOX geometry).

Every map cell (stride 4) above the score threshold predicts a rotated rectangle: distances to
its top, right, bottom and left edges and a rotation angle. Decoding is vectorised over all
cells; the boxes are then merged row by row (locality-aware NMS, as in the paper) and finished
with a standard rotated-box NMS.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from .geometry import order_quad

STRIDE = 4  # EAST predicts on a quarter-resolution grid


def decode_geometry(
    scores: NDArray[np.float32], geometry: NDArray[np.float32], score_thresh: float
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Quads [K, 4, 2] (tl, tr, br, bl, input pixels) and scores [K] of all cells above thresh.

    `scores` is [H, W]; `geometry` is [H, W, 5] = (top, right, bottom, left, angle) in input
    pixels and radians. Cells come out in row-major order (what locality-aware NMS expects).
    """
    ys, xs = np.nonzero(scores > score_thresh)
    if ys.size == 0:
        return np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32)
    top, right, bottom, left, angle = (geometry[ys, xs, i].astype(np.float32) for i in range(5))
    cos, sin = np.cos(angle), np.sin(angle)
    # corners in the box's own frame (origin at the cell), then rotated into the image:
    # image = origin + [[cos, sin], [-sin, cos]] @ local
    local = np.stack(
        [
            np.stack([-left, -top], axis=-1),
            np.stack([right, -top], axis=-1),
            np.stack([right, bottom], axis=-1),
            np.stack([-left, bottom], axis=-1),
        ],
        axis=1,
    )  # [K, 4, 2]
    origin = np.stack([xs, ys], axis=-1).astype(np.float32) * STRIDE
    rotated_x = cos[:, None] * local[..., 0] + sin[:, None] * local[..., 1]
    rotated_y = -sin[:, None] * local[..., 0] + cos[:, None] * local[..., 1]
    quads = np.stack([rotated_x, rotated_y], axis=-1) + origin[:, None, :]
    return quads.astype(np.float32), scores[ys, xs].astype(np.float32)


def quad_iou(a: NDArray[np.floating[Any]], b: NDArray[np.floating[Any]]) -> float:
    """Intersection over union of two convex quads."""
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = cv2.contourArea(a.astype(np.float32)) + cv2.contourArea(b.astype(np.float32)) - inter
    return float(inter / union) if union > 0 else 0.0


def locality_aware_merge(
    quads: NDArray[np.float32], scores: NDArray[np.float32], iou_thresh: float
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Merge each quad into the previous one when they overlap (score-weighted average).

    Neighbouring cells of one text predict nearly the same box, so walking the cells in row
    order and merging consecutive overlaps collapses thousands of candidates to a few per text
    in linear time. Returns merged quads and their mean cell score.
    """
    merged: list[NDArray[np.float64]] = []
    weights: list[float] = []
    counts: list[int] = []
    for quad, score in zip(quads, scores, strict=True):
        if merged and quad_iou(merged[-1], quad) > iou_thresh:
            total = weights[-1] + score
            merged[-1] = (merged[-1] * weights[-1] + quad * score) / total
            weights[-1] = total
            counts[-1] += 1
        else:
            merged.append(quad.astype(np.float64))
            weights.append(float(score))
            counts.append(1)
    if not merged:
        return np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32)
    mean_scores = np.asarray(weights, np.float32) / np.asarray(counts, np.float32)
    return np.stack(merged).astype(np.float32), mean_scores


def rotated_nms(
    quads: NDArray[np.float32], scores: NDArray[np.float32], iou_thresh: float
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Standard NMS on rotated rectangles (OpenCV's implementation); keeps higher scores."""
    if len(quads) == 0:
        return quads, scores
    rects = [cv2.minAreaRect(q) for q in quads]
    found = cv2.dnn.NMSBoxesRotated(rects, scores.tolist(), 0.0, iou_thresh)
    keep = np.asarray(found, dtype=np.int64).reshape(-1)
    return quads[keep], scores[keep]


def east_boxes(
    scores: NDArray[np.float32],
    geometry: NDArray[np.float32],
    score_thresh: float,
    merge_iou: float,
    nms_iou: float,
    max_candidates: int,
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """EAST maps ([H, W] scores, [H, W, 5] geometry) -> quads [N, 4, 2] in input pixels, scores."""
    quads, cell_scores = decode_geometry(scores, geometry, score_thresh)
    if len(quads) > max_candidates:  # keep the strongest cells, still in row-major order
        strongest = np.sort(np.argsort(-cell_scores, kind="stable")[:max_candidates])
        quads, cell_scores = quads[strongest], cell_scores[strongest]
    quads, box_scores = locality_aware_merge(quads, cell_scores, merge_iou)
    quads, box_scores = rotated_nms(quads, box_scores, nms_iou)
    ordered = [order_quad(cv2.boxPoints(cv2.minAreaRect(q))) for q in quads]
    if not ordered:
        return np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32)
    return np.stack(ordered).astype(np.float32), box_scores.astype(np.float32)
