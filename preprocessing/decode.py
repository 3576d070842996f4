"""Encoded bytes -> 8-bit BGR image, the way a user expects to see the picture.

The header is checked first (triton_ocr.preprocessing.header), so oversized images are refused
before any pixel is allocated; OpenCV does the decoding. Alpha is composited over white
(transparent PNGs usually carry dark text on a transparent background), 16-bit and float images
are scaled to 8 bits, and grayscale is expanded to three channels.
"""

from __future__ import annotations

import cv2
import numpy as np

from triton_ocr.settings import ImageLimits

from .header import ImageDecodeError, check_encoded, what_it_is


def apply_exif_orientation(image: np.ndarray, orientation: int) -> np.ndarray:
    """Rotate/flip so the image looks as its EXIF orientation (1..8) says it should."""
    ops = {
        2: lambda im: cv2.flip(im, 1),
        3: lambda im: cv2.rotate(im, cv2.ROTATE_180),
        4: lambda im: cv2.flip(im, 0),
        5: lambda im: cv2.flip(cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE), 1),
        6: lambda im: cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE),
        7: lambda im: cv2.flip(cv2.rotate(im, cv2.ROTATE_90_COUNTERCLOCKWISE), 1),
        8: lambda im: cv2.rotate(im, cv2.ROTATE_90_COUNTERCLOCKWISE),
    }
    op = ops.get(orientation)
    return image if op is None else op(image)


def to_uint8(image: np.ndarray) -> np.ndarray:
    """Scale any decoded depth (8/16-bit integer, float in [0, 1]) to uint8."""
    if image.dtype == np.uint8:
        return image
    if image.dtype == np.uint16:
        return (image.astype(np.uint32) * 255 // 65535).astype(np.uint8)
    if np.issubdtype(image.dtype, np.floating):
        finite = np.nan_to_num(image.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        # float images come as [0, 1] or as 8-bit values stored in floats (Pillow's mode F)
        full = 255.0 if finite.size and float(finite.max()) > 1.0 else 1.0
        return (np.clip(finite / full, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    info = np.iinfo(image.dtype)
    scaled = (image.astype(np.float64) - info.min) / (info.max - info.min) * 255.0
    return scaled.astype(np.uint8)


def to_bgr(image: np.ndarray) -> np.ndarray:
    """Return a 3-channel BGR uint8 image; alpha is composited over white."""
    image = to_uint8(image)
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    channels = image.shape[2]
    if channels == 1:
        return cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
    if channels == 3:
        return image
    if channels == 2:  # gray + alpha
        color = cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
        alpha = image[:, :, 1]
    elif channels == 4:
        color = image[:, :, :3]
        alpha = image[:, :, 3]
    else:
        raise ImageDecodeError(f"unsupported number of image channels: {channels}")
    a = alpha.astype(np.float32)[:, :, None] / 255.0
    blended = color.astype(np.float32) * a + 255.0 * (1.0 - a)
    return (blended + 0.5).astype(np.uint8)


def decode_image(data: bytes, limits: ImageLimits) -> np.ndarray:
    """Decode encoded image bytes into an upright HxWx3 uint8 BGR array.

    Raises ImageDecodeError naming the problem (empty, too large, not an image, an unsupported
    format, corrupt or truncated data).
    """
    fmt, orientation = check_encoded(data, limits)
    buffer = np.frombuffer(data, dtype=np.uint8)
    image = cv2.imdecode(buffer, cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        what = f"corrupt or truncated {fmt} data" if fmt else what_it_is(data)
        raise ImageDecodeError(f"cannot decode image ({len(data)} bytes): {what}")
    if fmt is None and image.shape[0] * image.shape[1] > limits.max_image_pixels:
        raise ImageDecodeError(
            f"image too large: {image.shape[1]}x{image.shape[0]} pixels exceeds the limit of "
            f"{limits.max_image_pixels} pixels"
        )
    return apply_exif_orientation(to_bgr(image), orientation)
