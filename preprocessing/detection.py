"""Decoded image -> the detector's input tensor (resize geometry and normalisation)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import DetectorInput


def detection_size(
    height: int, width: int, min_side: int, max_side: int, multiple: int = 32
) -> tuple[int, int]:
    """Aspect-preserving target (height, width) for the detector, sides multiples of `multiple`.

    Small images are scaled up until the short side reaches `min_side` (small text needs pixels),
    then the long side is capped at `max_side` (bounded cost); each side is rounded to the nearest
    multiple, never below one multiple. No crop: the whole image is always seen.
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"image has no pixels: {width}x{height}")
    scale = max(1.0, min_side / min(height, width))
    scale = min(scale, max_side / max(height, width))

    def snap(side: int) -> int:
        return max(multiple, int(round(side * scale / multiple)) * multiple)

    return snap(height), snap(width)


def normalize(
    image: NDArray[np.uint8],
    mean: Sequence[float],
    std: Sequence[float],
    scale: float,
    channels_first: bool = False,
) -> NDArray[np.float32]:
    """HxWxC uint8 -> float32 (pixel * scale - mean) / std per channel, HxWxC or (with
    `channels_first`) a contiguous CxHxW.

    One float32 array, converted into and then scaled in place: the profile had this step at a
    third of an image's Python time with a temporary array per operation and a copy for the
    layout (docs/benchmarks.md). Same operations in the same order: the same values to the bit.
    """
    m = np.asarray(mean, dtype=np.float32)
    s = np.asarray(std, dtype=np.float32)
    if channels_first:
        out = np.empty((image.shape[2], *image.shape[:2]), dtype=np.float32)
        out[...] = image.transpose(2, 0, 1)
        m, s = m[:, None, None], s[:, None, None]
    else:
        out = image.astype(np.float32)
    out *= np.float32(scale)
    out -= m
    out /= s
    return out


def detection_input(image: NDArray[np.uint8], params: DetectorInput) -> NDArray[np.float32]:
    """BGR uint8 image -> the detector's [1, ...] float32 input (NCHW or NHWC, BGR or RGB)."""
    p = params
    height, width = detection_size(image.shape[0], image.shape[1], p.min_side_len, p.max_side_len)
    resized = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
    if p.channel_order == "RGB":
        resized = cv2.cvtColor(resized, cv2.COLOR_BGR2RGB)
    bgr = cast("NDArray[np.uint8]", resized)
    return normalize(bgr, p.mean, p.std, p.scale, channels_first=p.layout == "NCHW")[None]
