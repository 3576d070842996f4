"""Text boxes on the original image -> upright crops, the recognizer's raw material."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from triton_ocr.postprocessing.geometry import pad_quad, quad_size

VERTICAL_RATIO = 1.5  # a crop this much taller than wide is a vertical line: turn it to read


def warp_crop(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Perspective-warp the tl, tr, br, bl `quad` of `image` into an upright rectangle."""
    width, height = quad_size(quad)
    w = max(1, int(round(width)))
    h = max(1, int(round(height)))
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    crop = cv2.warpPerspective(
        image, matrix, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
    if h >= VERTICAL_RATIO * w:
        crop = cv2.rotate(crop, cv2.ROTATE_90_COUNTERCLOCKWISE)
    return crop


def cut_crops(image: np.ndarray, quads: Sequence[np.ndarray], margin: float) -> list[np.ndarray]:
    """One upright crop per quad, each taking `margin` of its box's height more above and below
    (detector boxes hug the text; the recognizer keeps spaces only with room around it)."""
    return [warp_crop(image, pad_quad(quad, margin)) for quad in quads]
