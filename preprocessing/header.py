"""The header check of an encoded image: what it is and what it would cost, from the header
alone (Pillow reads format, size and EXIF orientation; no pixel is decoded).

The server runs it before decoding, so oversized images are refused before any pixel is
allocated; the client runs the same check before sending (it needs Pillow only), so a file the
server would refuse never travels.
"""

from __future__ import annotations

import io
import re
import warnings

from PIL import Image

from triton_ocr.settings import ImageLimits

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


def check_encoded(data: bytes, limits: ImageLimits) -> tuple[str | None, int]:
    """Refuse what the header alone shows is unacceptable (empty, too many bytes or pixels, a
    format that is not decoded); return (format or None, EXIF orientation)."""
    if len(data) == 0:
        raise ImageDecodeError("empty image: the request carried 0 bytes")
    if len(data) > limits.max_image_bytes:
        raise ImageDecodeError(
            f"image too large: {len(data)} bytes exceeds the limit of "
            f"{limits.max_image_bytes} bytes"
        )
    try:
        fmt, size, orientation = image_header(data)
    except TooManyPixels as exc:
        raise ImageDecodeError(
            f"image too large: {exc.pixels} pixels exceeds the limit of "
            f"{limits.max_image_pixels} pixels"
        ) from exc
    if size is not None:
        width, height = size
        if width * height > limits.max_image_pixels:
            raise ImageDecodeError(
                f"image too large: {width}x{height} = {width * height} pixels exceeds the "
                f"limit of {limits.max_image_pixels} pixels"
            )
    if fmt is not None and fmt not in DECODABLE_FORMATS:
        raise ImageDecodeError(f"unsupported image format {fmt} (supported: {SUPPORTED})")
    if fmt == "JPEG" and data.rfind(JPEG_EOI) < data.rfind(JPEG_SOS):
        raise ImageDecodeError(
            f"cannot decode image ({len(data)} bytes): truncated JPEG data (no end-of-image "
            "marker after the last scan)"
        )
    return fmt, orientation
