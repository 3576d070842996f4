"""Decoded image -> the detector's input tensor (resize geometry)."""

from __future__ import annotations

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


def detection_input(image: NDArray[np.uint8], params: DetectorInput) -> NDArray[np.uint8]:
    """BGR uint8 image -> the detector's input: the image resized, [1, H, W, 3] BGR uint8.

    Every detector takes this: its exported graph converts it to what it was trained on
    (config/packs.py `Normalisation`), so a quarter of float32's bytes cross shared memory.
    """
    p = params
    height, width = detection_size(image.shape[0], image.shape[1], p.min_side_len, p.max_side_len)
    resized = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
    return cast("NDArray[np.uint8]", resized)[None]
