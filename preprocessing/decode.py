"""Encoded bytes -> 8-bit BGR image, the way a user expects to see the picture.

Pillow reads only the header (format, size, EXIF orientation) so oversized images are refused
before any pixel is allocated; OpenCV does the decoding. `check_encoded` is that header check
alone, which the client runs before sending, so a file the server would refuse never travels.
Alpha is composited over white (transparent PNGs usually carry dark text on a transparent
background), 16-bit and float images are scaled to 8 bits, and grayscale is expanded to three
channels.
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

EXIF_ORIENTATION_TAG = 0x0112
# Pillow's names of the formats the OpenCV build decodes; anything else Pillow recognises (GIF,
# ICO, TGA, PSD, ...) is refused by name rather than half-supported through a second decoder.
DECODABLE_FORMATS = {
    "BMP": "BMP",
    "DIB": "BMP",
    "JPEG": "JPEG",
    "JPEG2000": "JPEG 2000",
    "PNG": "PNG",
    "PPM": "PNM",
    "TIFF": "TIFF",
    "WEBP": "WebP",
}
SUPPORTED = ", ".join(sorted(set(DECODABLE_FORMATS.values())))
# Leading bytes (case-insensitive, after whitespace) of common uploads that are not raster
# images, for a message that says what came instead.
NOT_IMAGES = (
    (b"%pdf", "a PDF document"),
    (b"<svg", "an SVG drawing"),
    (b"<?xml", "an XML (or SVG) document"),
    (b"<!doctype html", "an HTML page"),
    (b"<html", "an HTML page"),
    (b"pk\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "a gzip archive"),
)
ISO_MEDIA = b"ftyp"  # at offset 4: HEIC/AVIF photos, MP4 video
# Signatures of decodable formats, for data too broken for Pillow to name.
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"\xff\xd8\xff", "JPEG"))
# JPEG markers: start of scan (the last one begins the final scan) and end of image. Neither can
# occur inside entropy-coded data (0xFF is stuffed there), so a file whose last scan has no end
# marker after it was cut short; OpenCV would return it grey-filled instead of failing.
JPEG_SOS, JPEG_EOI = b"\xff\xda", b"\xff\xd9"


class ImageDecodeError(ValueError):
    """The bytes are not an image this service can read; the message names the problem."""


class TooManyPixels(ImageDecodeError):
    """Pillow refused the header as a decompression bomb (over twice its own pixel limit)."""

    def __init__(self, pixels: int | None) -> None:
        super().__init__(f"image too large: {pixels} pixels")
        self.pixels = pixels


@dataclass(frozen=True)
class DecodeLimits:
    """What one encoded image may cost: its size and its pixel count (checked from the header,
    before any pixel is decoded)."""

    max_bytes: int
    max_pixels: int


def image_header(data: bytes) -> tuple[str | None, tuple[int, int] | None, int]:
    """Return (format, (width, height), EXIF orientation) read from the header only.

    Format and size are None when Pillow does not recognise the container; OpenCV may still
    decode it (e.g. PFM), in which case no orientation is applied.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow warns about large images; we check below
            with Image.open(io.BytesIO(data)) as img:
                try:
                    orientation = int(img.getexif().get(EXIF_ORIENTATION_TAG, 1))
                except Exception:  # a broken EXIF block must not hide a decodable image
                    orientation = 1
                return img.format, img.size, orientation
    except Image.DecompressionBombError as exc:  # Pillow's own limit, far beyond ours
        found = re.search(r"\((\d+) pixels\)", str(exc))
        raise TooManyPixels(int(found.group(1)) if found else None) from exc
    except Exception:
        return None, None, 1


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


def what_it_is(data: bytes) -> str:
    """A name for bytes that no image decoder took, from their leading bytes."""
    for signature, fmt in SIGNATURES:
        if data.startswith(signature):
            return f"corrupt or truncated {fmt} data"
    head = data[:64].lstrip().lower()
    for magic, name in NOT_IMAGES:
        if head.startswith(magic):
            return f"{name}, not an image"
    if data[4:8] == ISO_MEDIA:
        brand = data[8:12].decode("ascii", "replace")
        return f"an ISO media file ({brand}: HEIC/AVIF or video), not supported ({SUPPORTED})"
    try:
        text = data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if text and all(c.isprintable() or c.isspace() for c in text):
        return "text, not an image"
    return f"not a recognised image format (supported: {SUPPORTED})"


def check_encoded(data: bytes, limits: DecodeLimits) -> tuple[str | None, int]:
    """Refuse what the header alone shows is unacceptable (empty, too many bytes or pixels, a
    format that is not decoded); return (format or None, EXIF orientation)."""
    if len(data) == 0:
        raise ImageDecodeError("empty image: the request carried 0 bytes")
    if len(data) > limits.max_bytes:
        raise ImageDecodeError(
            f"image too large: {len(data)} bytes exceeds the limit of {limits.max_bytes} bytes"
        )
    try:
        fmt, size, orientation = image_header(data)
    except TooManyPixels as exc:
        raise ImageDecodeError(
            f"image too large: {exc.pixels} pixels exceeds the limit of {limits.max_pixels} pixels"
        ) from exc
    if size is not None:
        width, height = size
        if width * height > limits.max_pixels:
            raise ImageDecodeError(
                f"image too large: {width}x{height} = {width * height} pixels exceeds the "
                f"limit of {limits.max_pixels} pixels"
            )
    if fmt is not None and fmt not in DECODABLE_FORMATS:
        raise ImageDecodeError(f"unsupported image format {fmt} (supported: {SUPPORTED})")
    if fmt == "JPEG" and data.rfind(JPEG_EOI) < data.rfind(JPEG_SOS):
        raise ImageDecodeError(
            f"cannot decode image ({len(data)} bytes): truncated JPEG data (no end-of-image "
            "marker after the last scan)"
        )
    return fmt, orientation


def decode_image(data: bytes, limits: DecodeLimits) -> np.ndarray:
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
    if fmt is None and image.shape[0] * image.shape[1] > limits.max_pixels:
        raise ImageDecodeError(
            f"image too large: {image.shape[1]}x{image.shape[0]} pixels exceeds the limit of "
            f"{limits.max_pixels} pixels"
        )
    return apply_exif_orientation(to_bgr(image), orientation)
