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


def crop_widths(crops: Sequence[np.ndarray], params: DetectionPostprocessing) -> list[int]:
    """Each crop's width in the recognizer batch before padding."""
    p = params
    if not p.rec_keep_aspect:
        return [p.rec_max_width] * len(crops)
    return [resized_width(c.shape[0], c.shape[1], p.rec_height, p.rec_max_width) for c in crops]


def padded_widths(widths: Sequence[int], params: DetectionPostprocessing) -> list[int]:
    """The batch width each crop needs on its own: its width, at least rec_min_width, rounded
    up to a multiple of rec_width_bucket (few distinct shapes let requests batch together)."""
    bucket = params.rec_width_bucket
    return [max(params.rec_min_width, -(-w // bucket) * bucket) for w in widths]


def recognition_batch(crops: Sequence[np.ndarray], params: DetectionPostprocessing) -> np.ndarray:
    """Resize crops to the recognizer's height, normalise, right-pad to one width.

    Returns [N, C, height, W] float32. With `rec_keep_aspect`, each crop keeps its aspect ratio
    (width capped at rec_max_width) and W is the largest of their `padded_widths`, the padding
    being 0 after normalisation as in PP-OCR's training; otherwise every crop is stretched to
    rec_max_width, as fixed-size recognizers expect. C is 3 (BGR) or 1 (grayscale). An empty list
    gives one blank crop, since ONNX Runtime rejects a zero-size batch for the recognizers;
    callers know the true count.
    """
    p = params
    widths = crop_widths(crops, p)
    batch_width = max([p.rec_min_width, *padded_widths(widths, p)])
    shape = (max(1, len(crops)), p.rec_channels, p.rec_height, batch_width)
    batch = np.zeros(shape, dtype=np.float32)
    mean = np.asarray(p.rec_mean, dtype=np.float32)
    std = np.asarray(p.rec_std, dtype=np.float32)
    for i, (crop, width) in enumerate(zip(crops, widths, strict=True)):
        if p.rec_channels == 1 and crop.ndim == 3:
            crop = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        resized = cv2.resize(crop, (width, p.rec_height), interpolation=cv2.INTER_LINEAR)
        resized = resized.reshape(p.rec_height, width, -1)
        normalized = (resized.astype(np.float32) / 255.0 - mean) / std
        batch[i, :, :, :width] = normalized.transpose(2, 0, 1)
    return batch


def group_indices(padded: Sequence[int], group_size: int) -> list[list[int]]:
    """Crop indices sorted by padded width (stable), cut into groups of `group_size`.

    Neighbours in width pad each other little, so far less compute goes to padding than when
    every crop is padded to the widest one. Both entry points group with this one function,
    so a crop is always recognized with the same padding, whichever way it came in.
    """
    order = sorted(range(len(padded)), key=lambda i: padded[i])
    return [order[i : i + group_size] for i in range(0, len(order), group_size)]


def recognition_groups(
    crops: Sequence[np.ndarray], params: DetectionPostprocessing, group_size: int
) -> list[tuple[list[int], np.ndarray]]:
    """(crop indices, recognizer batch) per width-sorted group of `group_size` crops."""
    padded = padded_widths(crop_widths(crops, params), params)
    return [
        (group, recognition_batch([crops[i] for i in group], params))
        for group in group_indices(padded, group_size)
    ]


def split_batch(
    batch: np.ndarray, padded: Sequence[int], group_size: int
) -> list[tuple[list[int], np.ndarray]]:
    """The groups of `recognition_groups`, cut out of a batch padded to the widest crop."""
    return [
        (group, np.ascontiguousarray(batch[group][..., : max(padded[i] for i in group)]))
        for group in group_indices(padded, group_size)
    ]
