"""Differentiable-Binarization (DB) probability map -> scored quadrilaterals."""

from __future__ import annotations

from typing import cast

import cv2
import numpy as np
import pyclipper
from numpy.typing import NDArray

from .bends import Bend, line_bend
from .geometry import order_quad


def box_score(prob: NDArray[np.float32], quad: NDArray[np.float32]) -> float:
    """Mean probability inside `quad`, computed on the quad's bounding window only."""
    h, w = prob.shape
    xmin = int(np.clip(np.floor(quad[:, 0].min()), 0, w - 1))
    xmax = int(np.clip(np.ceil(quad[:, 0].max()), 0, w - 1))
    ymin = int(np.clip(np.floor(quad[:, 1].min()), 0, h - 1))
    ymax = int(np.clip(np.ceil(quad[:, 1].max()), 0, h - 1))
    mask = np.zeros((ymax - ymin + 1, xmax - xmin + 1), dtype=np.uint8)
    shifted = (quad - np.array([xmin, ymin], dtype=np.float32)).round().astype(np.int32)
    cv2.fillPoly(mask, [shifted], (1,))  # cv2's stubs take the colour as a sequence only
    return float(cv2.mean(prob[ymin : ymax + 1, xmin : xmax + 1], mask)[0])


def unclip(quad: NDArray[np.float32], ratio: float) -> NDArray[np.float32]:
    """Grow a shrunk text kernel back to the full text (offset = area * ratio / perimeter)."""
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    perimeter = cv2.arcLength(quad.astype(np.float32), True)
    if perimeter == 0:
        return quad
    distance = area * ratio / perimeter
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(
        quad.round().astype(np.int64).tolist(), pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON
    )
    grown = offset.Execute(distance)
    if not grown:
        return quad
    return np.asarray(max(grown, key=len), dtype=np.float32)


def db_boxes(
    prob: NDArray[np.float32],
    thresh: float,
    box_thresh: float,
    unclip_ratio: float,
    max_candidates: int,
    bent_lines: bool,
    min_size: float = 3.0,
) -> tuple[NDArray[np.float32], NDArray[np.float32], list[Bend | None]]:
    """Find text boxes in a [H, W] probability map.

    Returns (quads [N, 4, 2] float32 in map pixels, ordered tl, tr, br, bl; scores [N]; each
    box's bend where, with `bent_lines`, its line is bent, else None: postprocessing.bends).
    """
    bitmap = cv2.dilate((prob > thresh).astype(np.uint8), np.ones((2, 2), np.uint8))
    contours, _ = cv2.findContours(bitmap, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    quads, scores, bends = [], [], []
    for contour in contours[:max_candidates]:
        rect = cv2.minAreaRect(contour)
        if min(rect[1]) < min_size:
            continue
        kernel = cast("NDArray[np.float32]", cv2.boxPoints(rect))  # cv2's stubs: any number type
        bend = line_bend(contour, rect, unclip_ratio) if bent_lines else None
        # a bent line's box holds much background: its score is its region's (PaddleOCR's
        # "slow" score mode, for curved text)
        score = box_score(prob, contour.reshape(-1, 2).astype(np.float32) if bend else kernel)
        if score < box_thresh:
            continue
        grown = cv2.minAreaRect(unclip(kernel, unclip_ratio))
        if min(grown[1]) < min_size + 2:
            continue
        quads.append(bend.band() if bend else order_quad(cv2.boxPoints(grown)))
        scores.append(score)
        bends.append(bend)
    if not quads:
        return np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32), []
    return np.stack(quads).astype(np.float32), np.asarray(scores, np.float32), bends
