"""What users upload: image payloads, good, odd and bad, generated here (no fixtures).

Each case is the file bytes and what must happen: an INVALID_ARG whose message matches `error`,
or (error None) a normal answer in which every word of LINE is found (normalised) when the
file holds that line. The bad-input tests send all of them to both entry points; the soak run
mixes them with real images.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import re
import zipfile
import zlib
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from triton_ocr import contract
from triton_ocr.client.ocr_client import TextLine, parse_lines
from triton_ocr.tools.samples import Placed, render

LINE = "Hello 42 world"
READS = ("hello", "42", "world")  # LINE's words, normalised
MAX_IMAGE_BYTES = 32 << 20  # detection_preprocessing's max_image_bytes (a test checks they agree)


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    error: str | None = None  # regex the INVALID_ARG message must match
    reads: tuple[str, ...] = ()  # normalised words the answer must contain (decodable files)
    # documents (PDFs, multi-page TIFFs): ensemble_model refuses them with this message while
    # `ocr` reads them (or refuses them with `error`); None: both entry points alike
    ensemble_error: str | None = None


def line_image() -> Image.Image:
    png = render((Placed(LINE, (30, 30), 48),), (560, 120)).png
    return Image.open(io.BytesIO(png)).convert("RGB")


def save(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def png_chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return len(body).to_bytes(4, "big") + kind + body + crc.to_bytes(4, "big")


def png_bomb(width: int, height: int, depth: int = 1, colour: int = 0, rows: int = 64) -> bytes:
    """A PNG (1-bit gray unless `depth` and `colour`, IHDR's colour type, say otherwise) whose
    header says width x height, with `rows` rows of zlib data: a decompression bomb if
    decoded."""
    samples = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([depth, colour, 0, 0, 0])
    row = b"\x00" * (1 + (width * samples * depth + 7) // 8)  # the filter byte, the samples
    packer = zlib.compressobj(9)  # row by row: a whole image's rows are never held at once
    idat = b"".join(packer.compress(row) for _ in range(rows)) + packer.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", idat)
        + png_chunk(b"IEND", b"")
    )


def with_bad_crc(png: bytes) -> bytes:
    """Flip a byte inside the first IDAT chunk's data: the CRC no longer matches."""
    at = png.index(b"IDAT") + 8
    return png[:at] + bytes([png[at] ^ 0xFF]) + png[at + 1 :]


def exif_sideways(image: Image.Image) -> bytes:
    """The line stored rotated a quarter, with EXIF orientation 6 saying how to view it."""
    exif = Image.Exif()
    exif[0x0112] = 6
    return save(image.transpose(Image.Transpose.ROTATE_90), "JPEG", exif=exif, quality=95)


def multi_frame_tiff(image: Image.Image) -> bytes:
    blank = Image.new("RGB", image.size, "white")
    return save(image, "TIFF", save_all=True, append_images=[blank])


def pdf_of(image: Image.Image) -> bytes:
    """The image as a one-page PDF (Pillow's writer), rendered back at the same size at 200 dpi."""
    return save(image, "PDF", resolution=200.0)


def many_pages_pdf(pages: int) -> bytes:
    """A PDF of `pages` blank pages (about 130 bytes each)."""
    import pypdfium2

    document = pypdfium2.PdfDocument.new()
    for _ in range(pages):
        document.new_page(200, 100).close()
    buffer = io.BytesIO()
    document.save(buffer)
    document.close()
    return buffer.getvalue()


def refused_by_ensemble(what: str) -> str:
    return re.escape(contract.DOCUMENT_REFUSED.format(what=what))


def zip_archive() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("page.txt", "not an image")
    return buffer.getvalue()


def image_cases() -> list[Case]:
    line = line_image()
    gray = line.convert("L")
    jpeg = save(line, "JPEG", quality=95)
    png = save(line, "PNG")
    rgba = np.zeros((line.height, line.width, 4), np.uint8)
    rgba[..., 3] = 255 - np.asarray(gray)  # dark ink on a transparent background
    deep = (np.asarray(gray).astype(np.uint16) * 257).astype(np.uint16)
    as_float = Image.fromarray(np.asarray(gray).astype(np.float32), mode="F")
    rng = np.random.default_rng(6)
    decodable = [
        Case("JPEG", jpeg),
        Case("progressive JPEG", save(line, "JPEG", quality=90, progressive=True)),
        Case("JPEG with bytes after its end", jpeg + b"trailing junk" * 10),
        Case("CMYK JPEG", save(line.convert("CMYK"), "JPEG", quality=95)),
        Case("EXIF-rotated JPEG", exif_sideways(line)),
        Case("PNG", png),
        Case("grayscale PNG", save(gray, "PNG")),
        Case("16-bit grayscale PNG", cv2.imencode(".png", deep)[1].tobytes()),
        Case("RGBA PNG, transparent background", save(Image.fromarray(rgba, "RGBA"), "PNG")),
        Case("gray + alpha PNG", save(Image.fromarray(rgba, "RGBA").convert("LA"), "PNG")),
        Case("palette PNG", save(line.convert("P", palette=Image.Palette.ADAPTIVE), "PNG")),
        Case("1-bit PNG", save(gray.point(lambda v: 255 if v > 128 else 0).convert("1"), "PNG")),
        Case("BMP", save(line, "BMP")),
        Case("TIFF", save(line, "TIFF")),
        Case(
            "multi-page TIFF (ocr reads its pages)",
            multi_frame_tiff(line),
            ensemble_error=refused_by_ensemble("a TIFF with 2 pages"),
        ),
        Case(
            "PDF with text (ocr reads its page)",
            pdf_of(line),
            ensemble_error=refused_by_ensemble("a PDF document"),
        ),
        Case("32-bit float TIFF", save(as_float, "TIFF")),
        Case("WebP", save(line, "WEBP", quality=95)),
        Case("JPEG 2000", save(line, "JPEG2000")),
        Case("PPM", save(line, "PPM")),
    ]
    decodable = [dataclasses.replace(c, reads=READS) for c in decodable]
    no_text = [
        Case("1x1 PNG", save(Image.new("RGB", (1, 1), "white"), "PNG")),
        Case("2x10000 PNG", save(Image.new("RGB", (10000, 2), "white"), "PNG")),
        Case("10000x2 PNG", save(Image.new("RGB", (2, 10000), "white"), "PNG")),
    ]
    refused = [
        Case("empty payload", b"", error="empty image"),
        Case("one byte", b"\x00", error="not a recognised image format"),
        Case("truncated JPEG", jpeg[: len(jpeg) * 2 // 5], error="truncated JPEG"),
        Case("truncated PNG", png[: len(png) // 2], error="corrupt or truncated PNG"),
        Case("PNG signature only", png[:8], error="corrupt or truncated PNG"),
        Case("PNG with a bad CRC", with_bad_crc(png), error="corrupt or truncated PNG"),
        Case(
            "random bytes",
            rng.integers(0, 256, 5000, dtype=np.uint8).tobytes(),
            error="not a recognised image format",
        ),
        Case("text file", b"Hello 42 world\nsecond line\n", error="text, not an image"),
        Case("JSON", b'{"image": "hello.png"}', error="text, not an image"),
        Case(
            "broken PDF",
            b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n",
            error="cannot read PDF: data format error",
            ensemble_error=refused_by_ensemble("a PDF document"),
        ),
        Case(
            "PDF of 10000 pages",
            many_pages_pdf(10_000),
            error="PDF has 10000 pages; at most 100 per request",
            ensemble_error=refused_by_ensemble("a PDF document"),
        ),
        Case(
            "SVG",
            b'<svg xmlns="http://www.w3.org/2000/svg"><text>Hello</text></svg>',
            error="SVG drawing",
        ),
        Case("HTML", b"<!DOCTYPE html><html><body>Hello</body></html>", error="HTML page"),
        Case("ZIP archive", zip_archive(), error="ZIP archive"),
        Case("gzip archive", gzip.compress(png), error="gzip archive"),
        Case(
            "HEIC photo header",
            b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64,
            error="ISO media file",
        ),
        Case("GIF", save(line, "GIF"), error="unsupported image format GIF"),
        Case("ICO", save(line.resize((64, 64)), "ICO"), error="unsupported image format ICO"),
        Case("PCX", save(line, "PCX"), error="unsupported image format PCX"),
        Case(
            "decompression bomb (30000x30000 PNG)",
            png_bomb(30000, 30000),
            error="image too large: 900000000 pixels exceeds the limit of 50000000 pixels",
        ),
        Case(
            "oversized file (beyond max_image_bytes)",
            png + b"\x00" * (MAX_IMAGE_BYTES + 1 - len(png)),
            error=f"{MAX_IMAGE_BYTES + 1} bytes exceeds the limit of {MAX_IMAGE_BYTES} bytes",
        ),
    ]
    return decodable + no_text + refused


def connect(protocol: str, url: str):
    """(tritonclient module, client) for `protocol` ("http" or "grpc") at `url`."""
    if protocol == "http":
        import tritonclient.http as module

        return module, module.InferenceServerClient(url, network_timeout=300, concurrency=1)
    import tritonclient.grpc as module

    return module, module.InferenceServerClient(url)


def image_tensor(module, model: str, data: bytes):
    """One encoded file as an entry point's input: ensemble_model's UINT8 [1, n] or ocr's
    BYTES [1, 1] (`module`: tritonclient.http or tritonclient.grpc)."""
    if model == contract.ENSEMBLE_MODEL:
        array = np.frombuffer(data, np.uint8).reshape(1, -1)
        tensor = module.InferInput(contract.INPUT_IMAGE, list(array.shape), "UINT8")
    else:
        array = np.array([[data]], dtype=np.object_)
        tensor = module.InferInput(contract.OCR_INPUT_IMAGES, [1, 1], "BYTES")
    tensor.set_data_from_numpy(array)
    return tensor


def infer_raw(client, module, model: str, data: bytes, **options) -> list[TextLine]:
    """Send one file as it is, without the client library's checks (so the server's are the
    ones tested) and without retries; InferenceServerException on refusal."""
    result = client.infer(model, [image_tensor(module, model, data)], **options)
    # ensemble_model's outputs hold one image ([1, N]); ocr's, one request of one image
    return parse_lines(*(result.as_numpy(name) for name in contract.OUTPUTS))
