"""Encoded bytes -> 8-bit BGR image, the way a user expects to see the picture.

The header is checked first (triton_ocr.preprocessing.header), so oversized images are refused
before any pixel is allocated; OpenCV decodes only formats whose header was read. Alpha is
composited over white (transparent PNGs usually carry dark text on a transparent background),
16-bit and float images are scaled to 8 bits, and grayscale is expanded to three channels;
large deep or alpha images are converted a strip of rows at a time.
"""

from __future__ import annotations

from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import ImageLimits

from .header import ImageDecodeError, check_encoded


def apply_exif_orientation(image: NDArray[np.uint8], orientation: int) -> NDArray[np.uint8]:
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
    return image if op is None else cast("NDArray[np.uint8]", op(image))


# Conversions of large images run a strip of rows at a time, so their temporaries (wider
# integers, floats for alpha blending) stay this size whatever the image's.
STRIP_PIXELS = 1 << 20


def float_full_scale(image: NDArray[np.floating[Any]]) -> float:
    """What a float image's 1.0 is: 255 when it holds 8-bit values (Pillow's mode F), else 1;
    NaN and infinities are ignored. Read a strip at a time."""
    rows = max(1, STRIP_PIXELS // max(1, image[0].size if len(image) else 1))
    top = 0.0
    for start in range(0, len(image), rows):
        strip = np.nan_to_num(image[start : start + rows], nan=0.0, posinf=0.0, neginf=0.0)
        if strip.size:
            top = max(top, float(strip.max()))
    return 255.0 if top > 1.0 else 1.0


def to_uint8(image: NDArray[Any], full: float | None = None) -> NDArray[np.uint8]:
    """Scale any decoded depth (8/16-bit integer, float in [0, 1]) to uint8. `full`: a float
    image's full scale, when a caller converting strips read it from the whole image."""
    if image.dtype == np.uint8:
        return image
    if image.dtype == np.uint16:
        return (image // 257).astype(np.uint8)  # = value * 255 // 65535, without widening
    if np.issubdtype(image.dtype, np.floating):
        finite = np.nan_to_num(image.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        scale = float_full_scale(image) if full is None else full
        return (np.clip(finite / scale, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    info = np.iinfo(image.dtype)
    scaled = (image.astype(np.float64) - info.min) / (info.max - info.min) * 255.0
    return scaled.astype(np.uint8)


def to_bgr(image: NDArray[Any]) -> NDArray[np.uint8]:
    """Return a 3-channel BGR uint8 image; alpha is composited over white. Deep or alpha
    images are converted a strip of rows at a time into the one output array."""
    channels = 1 if image.ndim == 2 else image.shape[2]
    if channels not in (1, 2, 3, 4):
        raise ImageDecodeError(f"unsupported number of image channels: {channels}")
    if image.dtype == np.uint8 and channels in (1, 3):
        return strip_to_bgr(image)
    full = float_full_scale(image) if np.issubdtype(image.dtype, np.floating) else None
    out = np.empty((image.shape[0], image.shape[1], 3), np.uint8)
    rows = max(1, STRIP_PIXELS // max(1, image.shape[1]))
    for start in range(0, image.shape[0], rows):
        out[start : start + rows] = strip_to_bgr(image[start : start + rows], full)
    return out


def strip_to_bgr(image: NDArray[Any], full: float | None = None) -> NDArray[np.uint8]:
    """to_bgr of one strip (or a whole small image)."""
    image = to_uint8(image, full)
    if image.ndim == 2:
        return cast("NDArray[np.uint8]", cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    channels = image.shape[2]
    if channels == 1:
        return cast("NDArray[np.uint8]", cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR))
    if channels == 3:
        return image
    if channels == 2:  # gray + alpha
        color = cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
        alpha = image[:, :, 1]
    else:
        color = image[:, :, :3]
        alpha = image[:, :, 3]
    a = alpha.astype(np.float32)[:, :, None] / 255.0
    blended: NDArray[np.float32] = color.astype(np.float32) * a + 255.0 * (1.0 - a)
    return (blended + 0.5).astype(np.uint8)


def decode_image(data: bytes, limits: ImageLimits) -> NDArray[np.uint8]:
    """Decode encoded image bytes into an upright HxWx3 uint8 BGR array.

    Raises ImageDecodeError naming the problem (empty, too large, not an image, an unsupported
    format, corrupt or truncated data).
    """
    fmt, orientation = check_encoded(data, limits)
    buffer = np.frombuffer(data, dtype=np.uint8)
    image = cv2.imdecode(buffer, cv2.IMREAD_UNCHANGED)
    if image is None or image.size == 0:
        raise ImageDecodeError(
            f"cannot decode image ({len(data)} bytes): corrupt or truncated {fmt} data"
        )
    if image.nbytes > limits.max_decoded_bytes:  # the header lied: refuse, do not convert it
        raise ImageDecodeError(
            f"image too large: it decoded to {image.shape[1]}x{image.shape[0]} pixels "
            f"({image.nbytes} bytes), over its header's size or the limit of "
            f"{limits.max_decoded_bytes} bytes"
        )
    return apply_exif_orientation(to_bgr(image), orientation)
