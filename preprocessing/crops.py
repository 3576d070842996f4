"""Text boxes on the original image -> upright crops, the recognizer's raw material.

The crop geometry (padding, size, warp, vertical turn) is `crop_frame`'s, the one the word
boxes are mapped back through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_ocr.postprocessing.bends import Bend
from triton_ocr.postprocessing.geometry import crop_frame


def warp_crop(
    image: NDArray[np.uint8],
    quad: NDArray[np.float32],
    margin: float = 0.0,
    room: float | None = None,
) -> NDArray[np.uint8]:
    """Perspective-warp the tl, tr, br, bl `quad` of `image` (grown by `margin` of its height
    above and below) into an upright rectangle, turned to read when it is a vertical line. With
    `room` (< `margin`), only that much of the margin comes from the page (fill_beyond)."""
    frame = crop_frame(quad, margin)
    # warp, then turn: the turn moves whole pixels, so the crop's pixels are the plain warp's
    w, h = (frame.height, frame.width) if frame.vertical else (frame.width, frame.height)
    crop = cv2.warpPerspective(
        image, frame.warp, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
    if frame.vertical:
        crop = cv2.rotate(crop, cv2.ROTATE_90_COUNTERCLOCKWISE)
    if room is not None and room < margin:
        crop = fill_beyond(cast("NDArray[np.uint8]", crop), frame.top, frame.bottom, room)
    return cast("NDArray[np.uint8]", crop)


def fill_beyond(
    crop: NDArray[np.uint8], top: float, bottom: float, room: float
) -> NDArray[np.uint8]:
    """`crop` with its rows more than `room` box heights above `top` or below `bottom` (the box's
    own edges in the crop) replaced by the last row within: the crop keeps its size, so the text
    keeps its scale in the recognizer's row, but not the next line's strokes."""
    h = crop.shape[0]
    extent = room * (bottom - top)
    first = int(np.clip(np.floor(top - extent), 0, h - 1))
    last = int(np.clip(np.ceil(bottom + extent) - 1, first, h - 1))
    out = crop.copy()
    out[:first] = crop[first]
    out[last + 1 :] = crop[last]
    return out


def bent_crop(image: NDArray[np.uint8], bend: Bend, margin: float) -> NDArray[np.uint8]:
    """The band of `image` along a bent line's centre (postprocessing.bends), straightened: each
    column of the crop is the line's cross-section at that point of its centre, `margin` of the
    line's height more above and below. The band follows the line, so its neighbours stay out
    of it as they do out of a straight line's crop."""
    centre = bend.centre.astype(np.float64)
    along = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(centre, axis=0), axis=1))])
    width = max(1, int(round(along[-1])))
    height = max(1, int(round(2 * bend.half * (1 + 2 * margin))))
    at = (np.arange(width) + 0.5) * along[-1] / width
    x, y = np.interp(at, along, centre[:, 0]), np.interp(at, along, centre[:, 1])
    dx, dy = np.gradient(x), np.gradient(y)
    norm = np.maximum(np.hypot(dx, dy), 1e-9)
    down_x, down_y = -dy / norm, dx / norm
    v = (np.arange(height) + 0.5 - height / 2)[:, None]
    map_x = (x[None, :] + v * down_x[None, :]).astype(np.float32)
    map_y = (y[None, :] + v * down_y[None, :]).astype(np.float32)
    crop = cv2.remap(image, map_x, map_y, cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
    return cast("NDArray[np.uint8]", crop)


def cut_crops(
    image: NDArray[np.uint8],
    quads: NDArray[np.float32] | Sequence[NDArray[np.float32]],
    margin: float,
    rooms: NDArray[np.float32] | Sequence[float] | None = None,
    bends: Sequence[Bend | None] = (),
) -> list[NDArray[np.uint8]]:
    """One upright crop per quad, each taking `margin` of its box's height more above and below
    (detector boxes hug the text; the recognizer keeps spaces only with room around it), of
    which `rooms` (postprocessing.geometry.room_on_page) says how much may come from the page;
    a bent line's (`bends`, by quad) cut along its centre instead (bent_crop)."""
    crops = []
    for i, quad in enumerate(quads):
        bend = bends[i] if bends else None
        if bend is not None:
            crops.append(bent_crop(image, bend, margin))
        elif rooms is None:
            crops.append(warp_crop(image, quad, margin))
        else:
            crops.append(warp_crop(image, quad, margin, float(rooms[i])))
    return crops
