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
TIFF_WIDTH_TAG, TIFF_HEIGHT_TAG = 256, 257  # ImageWidth, ImageLength
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
PDF_MAGIC = b"%pdf"  # a PDF's first bytes (case-insensitive, after whitespace)
# Leading bytes (case-insensitive, after whitespace) of common uploads that are not raster
# images, for a message that says what came instead.
NOT_IMAGES = (
    (PDF_MAGIC, "a PDF document"),
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


class DocumentGiven(ImageDecodeError):
    """The bytes are a document (a PDF, a TIFF with more than one page): pages, not one image.

    A single-image entry point refuses it; the `ocr` entry point reads each page
    (preprocessing.documents). `what` names it, e.g. "a PDF document", "a TIFF with 3 pages".
    """

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: pages, not one image")
        self.what = what


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
    fmt, size, orientation, _ = header_and_pages(data)
    return fmt, size, orientation


def header_and_pages(data: bytes) -> tuple[str | None, tuple[int, int] | None, int, int]:
    """image_header plus the number of pages: a TIFF's frames (its IFD chain is walked, no pixel
    is decoded), 1 for anything else. Size and orientation are the first page's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow warns about large images; we check below
            with Image.open(io.BytesIO(data)) as img:
                orientation = orientation_of(img)
                return img.format, stored_size(img), orientation, tiff_pages(img)
    except Image.DecompressionBombError as exc:  # Pillow's own limit, far beyond ours
        found = re.search(r"\((\d+) pixels\)", str(exc))
        raise TooManyPixels(int(found.group(1)) if found else None) from exc
    except Exception:
        return None, None, 1, 1


def orientation_of(img: Image.Image) -> int:
    """The EXIF (TIFF: tag 274) orientation of the current frame, 1 when absent or broken."""
    try:
        return int(img.getexif().get(EXIF_ORIENTATION_TAG, 1))
    except Exception:  # a broken EXIF block must not hide a decodable image
        return 1


def stored_size(img: Image.Image) -> tuple[int, int]:
    """(width, height) as stored, before the orientation is applied. Newer Pillow reports (and
    loads) a TIFF already turned by its orientation tag; OpenCV decodes it as stored and
    decode.py turns it."""
    if img.format == "TIFF":
        tags = getattr(img, "tag_v2", {})
        width, height = tags.get(TIFF_WIDTH_TAG), tags.get(TIFF_HEIGHT_TAG)
        if isinstance(width, int) and isinstance(height, int):
            return width, height
    return img.size


def tiff_pages(img: Image.Image) -> int:
    """The frames of an open TIFF (1 for other formats, or when the IFD chain is broken: the
    first page is then decoded as an image, as before documents were read)."""
    if img.format != "TIFF":
        return 1
    try:
        if not getattr(img, "is_animated", False):  # no second IFD: cheap, no walk
            return 1
        return max(1, int(img.n_frames))
    except Exception:
        return 1


def page_count_of_tiff(data: bytes) -> int:
    """The pages of TIFF bytes (1 for anything else), from the headers only."""
    try:
        return header_and_pages(data)[3]
    except TooManyPixels:
        return 1


def is_pdf(data: bytes) -> bool:
    """Whether the bytes start as a PDF does (`%PDF`, after optional whitespace)."""
    return data[:64].lstrip().lower().startswith(PDF_MAGIC)


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
    format that is not decoded); return (format or None, the EXIF orientation still to apply
    once OpenCV decoded the image: 1 for a TIFF, whose OpenCV decoder applies its orientation
    tag itself, even with IMREAD_UNCHANGED; opencv#14609).

    A document raises DocumentGiven: a PDF right after the byte checks, a multi-page TIFF after
    its first page passed every other check (so a caller that reads documents page by page may
    catch it and go on).
    """
    if len(data) == 0:
        raise ImageDecodeError("empty image: the request carried 0 bytes")
    if len(data) > limits.max_image_bytes:
        raise ImageDecodeError(
            f"image too large: {len(data)} bytes exceeds the limit of "
            f"{limits.max_image_bytes} bytes"
        )
    if is_pdf(data):
        raise DocumentGiven("a PDF document")
    try:
        fmt, size, orientation, pages = header_and_pages(data)
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
    if pages > 1:
        raise DocumentGiven(f"a TIFF with {pages} pages")
    if fmt == "JPEG" and data.rfind(JPEG_EOI) < data.rfind(JPEG_SOS):
        raise ImageDecodeError(
            f"cannot decode image ({len(data)} bytes): truncated JPEG data (no end-of-image "
            "marker after the last scan)"
        )
    return fmt, 1 if fmt == "TIFF" else orientation
