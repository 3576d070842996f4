"""Upside-down text: the 0/180-degree classifier's input from recognizer rows, and the turn.

PP-OCR's classifier (ch_ppocr_mobile_v2.0_cls) sees each crop resized to its input height
keeping the aspect ratio, at most its input width wide, right-padded with 0 after the same
normalisation as the recognizer's. Both entry points derive that input from the rows of the
recognizer batch they already built (crop i in its first widths[i] columns), so the classifier
sees the same pixels whichever way a request came in, and no second crop is cut.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

UPSIDE_DOWN = 1  # the classifier's classes: 0 upright, 1 turned by 180 degrees


def classifier_input(
    batch: np.ndarray, widths: Sequence[int], height: int, width: int
) -> np.ndarray:
    """Recognizer rows [n, C, H, W] -> classifier input [n, C, height, width] (float32)."""
    rows, channels, rec_height, _ = batch.shape
    out = np.zeros((rows, channels, height, width), dtype=np.float32)
    for i, crop_width in enumerate(widths):
        crop = batch[i, :, :, :crop_width].transpose(1, 2, 0)  # HWC for OpenCV
        target = min(width, max(1, int(np.ceil(height * crop_width / rec_height))))
        resized = cv2.resize(crop, (target, height), interpolation=cv2.INTER_LINEAR)
        out[i, :, :, :target] = resized.reshape(height, target, channels).transpose(2, 0, 1)
    return out


def upside_down(probabilities: np.ndarray, threshold: float) -> np.ndarray:
    """[n, 2] class probabilities -> [n] bool: classified 180 degrees with at least `threshold`
    (below it the crop stays as it is: turning a correct line over costs more than leaving an
    uncertain one)."""
    probabilities = np.asarray(probabilities).reshape(-1, 2)
    return (probabilities.argmax(axis=1) == UPSIDE_DOWN) & (
        probabilities[:, UPSIDE_DOWN] >= threshold
    )


def turn_over(batch: np.ndarray, widths: Sequence[int], flags: Sequence[bool]) -> np.ndarray:
    """A copy of `batch` with each flagged row's crop (its first widths[i] columns) rotated by
    180 degrees; the padding stays on the right, as the recognizer was trained."""
    if not np.any(flags):
        return batch
    out = batch.copy()
    for i, (crop_width, flag) in enumerate(zip(widths, flags, strict=True)):
        if flag:
            out[i, :, :, :crop_width] = batch[i, :, ::-1, crop_width - 1 :: -1]
    return out
