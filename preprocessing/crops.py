"""Text boxes on the original image -> upright crops, the recognizer's raw material.

The crop geometry (padding, size, warp, vertical turn) is `crop_frame`'s, the one the word
boxes are mapped back through.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from triton_ocr.postprocessing.geometry import crop_frame


def warp_crop(image: np.ndarray, quad: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """Perspective-warp the tl, tr, br, bl `quad` of `image` (grown by `margin` of its height
    above and below) into an upright rectangle, turned to read when it is a vertical line."""
    frame = crop_frame(quad, margin)
    # warp, then turn: the turn moves whole pixels, so the crop's pixels are the plain warp's
    w, h = (frame.height, frame.width) if frame.vertical else (frame.width, frame.height)
    crop = cv2.warpPerspective(
        image, frame.warp, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
    if frame.vertical:
        crop = cv2.rotate(crop, cv2.ROTATE_90_COUNTERCLOCKWISE)
    return crop


def cut_crops(image: np.ndarray, quads: Sequence[np.ndarray], margin: float) -> list[np.ndarray]:
    """One upright crop per quad, each taking `margin` of its box's height more above and below
    (detector boxes hug the text; the recognizer keeps spaces only with room around it)."""
    return [warp_crop(image, quad, margin) for quad in quads]
