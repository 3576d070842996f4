"""Quads on the original image -> rectified text crops -> the recognizer's input batch."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from .geometry import quad_size

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


def resized_width(height: int, width: int, target_height: int, max_width: int) -> int:
    """Width of a crop resized to `target_height` keeping its aspect ratio, capped."""
    return int(min(max_width, max(1, math.ceil(target_height * width / max(height, 1)))))


def recognition_batch(
    crops: Sequence[np.ndarray],
    height: int,
    min_width: int,
    max_width: int,
    mean: Sequence[float],
    std: Sequence[float],
) -> np.ndarray:
    """Resize crops to `height` keeping aspect, normalise, right-pad to one width.

    Returns [N, 3, height, W] float32 with W = max(min_width, widest crop). Padding is 0 after
    normalisation, as in PP-OCR's training. An empty list gives one blank crop of min_width, since
    ONNX Runtime rejects a zero-size batch for the recognizer; callers know the true count.
    """
    widths = [resized_width(c.shape[0], c.shape[1], height, max_width) for c in crops]
    batch_width = max([min_width, *widths])
    batch = np.zeros((max(1, len(crops)), 3, height, batch_width), dtype=np.float32)
    m = np.asarray(mean, dtype=np.float32)
    s = np.asarray(std, dtype=np.float32)
    for i, (crop, w) in enumerate(zip(crops, widths, strict=True)):
        resized = cv2.resize(crop, (w, height), interpolation=cv2.INTER_LINEAR)
        batch[i, :, :, :w] = ((resized.astype(np.float32) / 255.0 - m) / s).transpose(2, 0, 1)
    return batch
