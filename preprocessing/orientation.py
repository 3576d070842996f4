"""Upside-down text, before the recognizer: the 0/180-degree classifier's input, and the turn
of the rows it finds upside down.

PP-OCR's classifier (ch_ppocr_mobile_v2.0_cls) sees each crop resized to its input height
keeping the aspect ratio, at most its input width wide, right-padded with 0 after the same
normalisation as the recognizer's. Its input is derived from the recognizer rows already built
(crop i in the first widths[i] columns of row i), so no second crop is cut.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import ClassifierInput


def classifier_input(
    batch: NDArray[np.float32], widths: Sequence[int], size: ClassifierInput
) -> NDArray[np.float32]:
    """Recognizer rows [n, C, H, W] -> classifier input [n, C, size.height, size.width]."""
    rows, channels, rec_height, _ = batch.shape
    height, width = size.height, size.width
    out = np.zeros((rows, channels, height, width), dtype=np.float32)
    for i, crop_width in enumerate(widths):
        crop = batch[i, :, :, :crop_width].transpose(1, 2, 0)  # HWC for OpenCV
        target = min(width, max(1, int(np.ceil(height * crop_width / rec_height))))
        resized = cv2.resize(crop, (target, height), interpolation=cv2.INTER_LINEAR)
        out[i, :, :, :target] = resized.reshape(height, target, channels).transpose(2, 0, 1)
    return out


def turn_over(
    batch: NDArray[np.float32], widths: Sequence[int], flags: Sequence[bool] | NDArray[np.bool_]
) -> NDArray[np.float32]:
    """A copy of `batch` with each flagged row's crop (its first widths[i] columns) rotated by
    180 degrees; the padding stays on the right, as the recognizer was trained."""
    if not np.any(flags):
        return batch
    out = batch.copy()
    for i, (crop_width, flag) in enumerate(zip(widths, flags, strict=True)):
        if flag:
            out[i, :, :, :crop_width] = batch[i, :, ::-1, crop_width - 1 :: -1]
    return out
