"""Quads on the original image -> rectified text crops -> the recognizer's input batch."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from triton_ocr.params import DetectionPostprocessing

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


def recognition_batch(crops: Sequence[np.ndarray], params: DetectionPostprocessing) -> np.ndarray:
    """Resize crops to the recognizer's height, normalise, right-pad to one width.

    Returns [N, C, height, W] float32. With `rec_keep_aspect`, each crop keeps its aspect ratio
    (width capped at rec_max_width) and W = max(rec_min_width, widest crop), the padding being 0
    after normalisation as in PP-OCR's training; otherwise every crop is stretched to
    rec_max_width, as fixed-size recognizers expect. C is 3 (BGR) or 1 (grayscale). An empty list
    gives one blank crop, since ONNX Runtime rejects a zero-size batch for the recognizers;
    callers know the true count.
    """
    p = params
    if p.rec_keep_aspect:
        widths = [
            resized_width(c.shape[0], c.shape[1], p.rec_height, p.rec_max_width) for c in crops
        ]
        batch_width = max([p.rec_min_width, *widths])
    else:
        widths = [p.rec_max_width] * len(crops)
        batch_width = p.rec_max_width
    shape = (max(1, len(crops)), p.rec_channels, p.rec_height, batch_width)
    batch = np.zeros(shape, dtype=np.float32)
    mean = np.asarray(p.rec_mean, dtype=np.float32)
    std = np.asarray(p.rec_std, dtype=np.float32)
    for i, (crop, width) in enumerate(zip(crops, widths, strict=True)):
        if p.rec_channels == 1 and crop.ndim == 3:
            crop = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        resized = cv2.resize(crop, (width, p.rec_height), interpolation=cv2.INTER_LINEAR)
        resized = resized.reshape(p.rec_height, width, -1)
        batch[i, :, :, :width] = ((resized.astype(np.float32) / 255.0 - mean) / std).transpose(
            2, 0, 1
        )
    return batch


def recognition_groups(
    crops: Sequence[np.ndarray], params: DetectionPostprocessing, group_size: int
) -> list[tuple[list[int], np.ndarray]]:
    """Crops sorted by aspect ratio, cut into batches of `group_size`: (crop indices, batch).

    Neighbours in width pad each other little, so far less compute goes to padding than when
    every crop is padded to the widest one.
    """
    order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / max(crops[i].shape[0], 1))
    groups = [order[i : i + group_size] for i in range(0, len(order), group_size)]
    return [(group, recognition_batch([crops[i] for i in group], params)) for group in groups]
