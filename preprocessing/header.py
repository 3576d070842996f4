"""The header check of an encoded image: what it is and what it would cost, from the header
alone (Pillow reads format, size, sample layout and EXIF orientation; no pixel is decoded).

The server runs it before decoding, so oversized images are refused before any pixel is
allocated; the client runs the same check before sending (it needs Pillow only), so a file the
server would refuse never travels. Only formats whose header Pillow reads are accepted: a
format it cannot size (Radiance HDR, PFM, Sun raster, OpenEXR, ...) is refused by name, never
handed to a decoder to find out (OpenCV's HDR and EXR decoders also write the upload to a
temporary file first).
"""

from __future__ import annotations

import dataclasses
import io
import re
import warnings

from PIL import Image

from triton_ocr.errors import InvalidRequest
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
# Formats OpenCV would decode but Pillow cannot size from a header: refused by name.
UNSIZED_FORMATS = (
    (b"#?RADIANCE", "Radiance HDR"),
    (b"#?RGBE", "Radiance HDR"),
    (b"PF\n", "PFM"),
    (b"Pf\n", "PFM"),
    (b"\x59\xa6\x6a\x95", "Sun raster"),
    (b"v/1\x01", "OpenEXR"),
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_BIT_DEPTH_AT = 24  # IHDR's bit depth byte: signature 8, length 4, type 4, width 4, height 4
TIFF_BITS_TAG = 258  # BitsPerSample
TIFF_PAGES_COUNTED = 1000  # a header read counts a TIFF's pages up to this many (tiff_pages)
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
SIGNATURES = ((PNG_SIGNATURE, "PNG"), (b"\xff\xd8\xff", "JPEG"))
# JPEG markers: start of scan (the last one begins the final scan) and end of image. Neither can
# occur inside entropy-coded data (0xFF is stuffed there), so a file whose last scan has no end
# marker after it was cut short; OpenCV would return it grey-filled instead of failing.
JPEG_SOS, JPEG_EOI = b"\xff\xda", b"\xff\xd9"
# each scan of a JPEG is decoded over the whole image, so its scans times its pixels, not its
# bytes, set its decoding time (docs/reliability.md): a few dozen bytes a scan. A progressive
# JPEG has about 10 scans; at the pixel limit this allows 40, and more on smaller images.
JPEG_MOST_SCAN_PIXELS = 2_000_000_000


class ImageDecodeError(InvalidRequest):
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


@dataclasses.dataclass(frozen=True)
class Header:
    """What an encoded image's header says; format and size are None when Pillow does not
    recognise the container."""

    format: str | None
    size: tuple[int, int] | None  # (width, height) as stored, before the orientation
    orientation: int  # EXIF (TIFF: tag 274) orientation, 1 when absent
    pages: int  # a TIFF's frames, up to TIFF_PAGES_COUNTED; 1 for anything else
    bytes_per_pixel: int  # what the decoder's array takes per pixel, decoded as stored


def image_header(data: bytes) -> tuple[str | None, tuple[int, int] | None, int]:
    """Return (format, (width, height), EXIF orientation) read from the header only."""
    found = read_header(data)
    return found.format, found.size, found.orientation


def read_header(data: bytes) -> Header:
    """The header of encoded bytes, no pixel decoded: format, size, orientation, the pages of a
    TIFF (counted up to TIFF_PAGES_COUNTED) and the decoded bytes per pixel. Size, orientation
    and bytes are the first page's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow warns about large images; we check below
            with Image.open(io.BytesIO(data)) as img:
                orientation = orientation_of(img, data)
                return Header(
                    # a JPEG that holds more pictures after its first (MPF: a camera's large
                    # preview, a stereo pair) is read as its first, as OpenCV decodes it
                    "JPEG" if img.format == "MPO" else img.format,
                    stored_size(img),
                    orientation,
                    tiff_pages(img),
                    decoded_bytes_per_pixel(img, data),
                )
    except Image.DecompressionBombError as exc:  # Pillow's own limit, far beyond ours
        found = re.search(r"\((\d+) pixels\)", str(exc))
        raise TooManyPixels(int(found.group(1)) if found else None) from exc
    except Exception:
        return Header(None, None, 1, 1, 0)


def decoded_bytes_per_pixel(img: Image.Image, data: bytes = b"") -> int:
    """Bytes per pixel of the array a decoder makes of the current frame, as stored: channels
    (a palette expands to colours, alpha adds one) times the bytes of one sample (PNG: its
    IHDR bit depth; TIFF: BitsPerSample; else Pillow's mode)."""
    bands = img.getbands()
    alpha = "A" in bands or "a" in bands or "transparency" in img.info
    if img.mode.startswith("P"):
        channels = 4 if alpha else 3
    elif alpha and len(bands) != 1 and img.mode != "LA":  # colour + alpha: BGRA
        channels = max(len(bands), 4)
    else:  # gray (with or without alpha) as stored, or colour as stored
        channels = len(bands)
    sample = 1
    if img.mode in ("I", "F"):
        sample = 4
    elif img.mode.startswith("I;16"):
        sample = 2
    if img.format == "PNG" and data[:8] == PNG_SIGNATURE and len(data) > PNG_BIT_DEPTH_AT:
        sample = max(sample, 2 if data[PNG_BIT_DEPTH_AT] == 16 else 1)
    if img.format == "TIFF":
        bits = getattr(img, "tag_v2", {}).get(TIFF_BITS_TAG, 8)
        bits = max(bits) if isinstance(bits, tuple) and bits else bits
        if isinstance(bits, int) and bits > 0:
            sample = max(sample, -(-bits // 8))
    return max(1, channels) * sample


def orientation_of(img: Image.Image, data: bytes = b"") -> int:
    """The EXIF (TIFF: tag 274) orientation of the current frame, 1 when absent or broken.

    A PNG's eXIf chunk may follow its pixels, where Pillow looks only by decoding them all,
    before any of our limits is checked (a bomb's whole working memory). It is found instead
    by stepping over the chunks of `data`, the PNG's bytes."""
    try:
        if img.format != "PNG":
            return int(img.getexif().get(EXIF_ORIENTATION_TAG, 1))
        if "exif" not in img.info and (late := png_chunk(data, b"eXIf")) is not None:
            img.info["exif"] = b"Exif\x00\x00" + late  # as Pillow keeps a chunk it has read
        # Image's own getexif reads what was found, no pixel decoded
        return int(Image.Image.getexif(img).get(EXIF_ORIENTATION_TAG, 1))
    except Exception:  # a broken EXIF block must not hide a decodable image
        return 1


def png_chunk(data: bytes, kind: bytes) -> bytes | None:
    """The data of a PNG's first chunk of this type, found from the chunks' lengths alone (no
    pixel decoded), or None."""
    at = len(PNG_SIGNATURE)
    while at + 8 <= len(data) and data[at + 4 : at + 8] != b"IEND":
        length = int.from_bytes(data[at : at + 4], "big")
        if data[at + 4 : at + 8] == kind:
            return data[at + 8 : at + 8 + length]
        at += 12 + length
    return None


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


def tiff_pages(img: Image.Image, most: int = TIFF_PAGES_COUNTED) -> int:
    """The frames of an open TIFF, counted up to `most`, the first frame current again (1 for
    other formats, or when a page's directory cannot be read: the first page is then decoded
    as an image, as before documents were read). Pillow's own count (n_frames) walks the whole
    chain of page directories in time growing with its length squared (docs/reliability.md)."""
    if img.format != "TIFF":
        return 1
    try:
        if not getattr(img, "is_animated", False):  # no second IFD: cheap, no walk
            return 1
        count = 1
        try:
            while count < most:
                img.seek(count)
                count += 1
        except EOFError:  # past the last page (or the chain came back on itself)
            pass
        img.seek(0)
        return count
    except Exception:
        return 1


def page_count_of_tiff(data: bytes) -> int:
    """The pages of TIFF bytes, up to TIFF_PAGES_COUNTED (1 for anything else), from the
    headers only."""
    try:
        return read_header(data).pages
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


def check_size(
    size: tuple[int, int], bytes_per_pixel: int, limits: ImageLimits, what: str = "image too large"
) -> None:
    """Refuse an image whose header promises more pixels than the limit, or a decoded array
    larger than limits.max_decoded_bytes (deep or many-channel samples); `what` begins the
    message (a page's: "page 3")."""
    width, height = size
    if width * height > limits.max_image_pixels:
        raise ImageDecodeError(
            f"{what}: {width}x{height} = {width * height} pixels exceeds the limit of "
            f"{limits.max_image_pixels} pixels"
        )
    needed = width * height * bytes_per_pixel
    if needed > limits.max_decoded_bytes:
        raise ImageDecodeError(
            f"{what}: {width}x{height} at {bytes_per_pixel} bytes per pixel decodes to "
            f"{needed} bytes, over the limit of {limits.max_decoded_bytes} bytes"
        )


def check_encoded(data: bytes, limits: ImageLimits) -> tuple[str, int]:
    """Refuse what the header alone shows is unacceptable (empty, too many bytes or pixels, a
    format that is not decoded); return (format, the EXIF orientation still to apply
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
        found = read_header(data)
    except TooManyPixels as exc:
        raise ImageDecodeError(
            f"image too large: {exc.pixels} pixels exceeds the limit of "
            f"{limits.max_image_pixels} pixels"
        ) from exc
    fmt, orientation = found.format, found.orientation
    if found.size is None:  # no header Pillow reads: never decoded to find the size out
        named = next((name for magic, name in UNSIZED_FORMATS if data.startswith(magic)), None)
        if named is not None:
            raise ImageDecodeError(f"unsupported image format {named} (supported: {SUPPORTED})")
        raise ImageDecodeError(f"cannot decode image ({len(data)} bytes): {what_it_is(data)}")
    check_size(found.size, found.bytes_per_pixel, limits)
    if fmt not in DECODABLE_FORMATS:
        raise ImageDecodeError(f"unsupported image format {fmt} (supported: {SUPPORTED})")
    if found.pages > 1:
        more = " or more" if found.pages >= TIFF_PAGES_COUNTED else ""
        raise DocumentGiven(f"a TIFF with {found.pages}{more} pages")
    pixels = found.size[0] * found.size[1]
    if fmt == "JPEG" and (scans := data.count(JPEG_SOS)) * pixels > JPEG_MOST_SCAN_PIXELS:
        raise ImageDecodeError(
            f"JPEG has {scans} scans of {pixels} pixels each: at most "
            f"{JPEG_MOST_SCAN_PIXELS // pixels} at that size (each scan is decoded over the "
            "whole image; a progressive JPEG has about 10)"
        )
    if fmt == "JPEG" and data.rfind(JPEG_EOI) < data.rfind(JPEG_SOS):
        raise ImageDecodeError(
            f"cannot decode image ({len(data)} bytes): truncated JPEG data (no end-of-image "
            "marker after the last scan)"
        )
    return fmt, 1 if fmt == "TIFF" else orientation
