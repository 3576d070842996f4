"""Documents made in memory for tests: PDFs (Pillow, pikepdf, pdfium) and multi-page TIFFs.

Nothing is written to disk; every maker returns the encoded bytes.
"""

from __future__ import annotations

import io

import pikepdf
import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFont, TiffImagePlugin

ORIENTATION_TAG = 274  # EXIF/TIFF Orientation


def text_page(text: str, size: tuple[int, int] = (400, 300), font_size: int = 28) -> Image.Image:
    """A white RGB page with black text on a few lines and a black square top-left (so
    rotation and flips can be seen)."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0] // 10, size[1] // 10), fill="black")
    font = ImageFont.load_default(font_size)
    for row, line in enumerate(text.splitlines() or [text]):
        draw.text((size[0] // 8, size[1] // 5 + row * font_size * 3 // 2), line, "black", font)
    return image


def make_pdf(pages: list[Image.Image], resolution: float = 200.0) -> bytes:
    """A PDF with one page per image, each page the image at `resolution` dpi (Pillow's
    writer: RGB pages are stored as JPEG)."""
    buffer = io.BytesIO()
    first, *rest = pages
    first.save(buffer, "PDF", save_all=True, append_images=rest, resolution=resolution)
    return buffer.getvalue()


def make_tiff(
    frames: list[Image.Image], orientations: list[int] | None = None, compression: str = "raw"
) -> bytes:
    """A TIFF with one page per image (any mode Pillow writes: RGB, L, I;16, ...), each with
    its own orientation tag when `orientations` gives one (1 leaves it out)."""
    orientations = orientations or [1] * len(frames)
    buffer = io.BytesIO()
    with TiffImagePlugin.AppendingTiffWriter(buffer, new=True) as writer:
        for frame, orientation in zip(frames, orientations, strict=True):
            info = {ORIENTATION_TAG: orientation} if orientation != 1 else {}
            frame.save(writer, "TIFF", tiffinfo=info, compression=compression)
            writer.newFrame()
    return buffer.getvalue()


def pikepdf_pdf(
    pages: int = 1,
    size: tuple[float, float] = (200, 100),
    encryption: pikepdf.Encryption | None = None,
    rotate: int = 0,
) -> bytes:
    """A PDF of blank pages `size` points large, maybe rotated and encrypted."""
    pdf = pikepdf.new()
    for _ in range(pages):
        pdf.add_blank_page(page_size=size)
        if rotate:
            pdf.pages[-1].Rotate = rotate
    buffer = io.BytesIO()
    pdf.save(buffer, encryption=encryption)
    return buffer.getvalue()


def encrypted_pdf(user: str = "secret", owner: str = "owner") -> bytes:
    """A one-page PDF encrypted with AES-256; an empty `user` password opens without one."""
    return pikepdf_pdf(encryption=pikepdf.Encryption(user=user, owner=owner))


def many_pages_pdf(n: int, size: tuple[float, float] = (100, 100)) -> bytes:
    """A PDF of `n` blank pages (10,000 pages: about 1.3 MB, made in about 0.25 s)."""
    pdf = pdfium.PdfDocument.new()
    try:
        for _ in range(n):
            pdf.new_page(*size)
        buffer = io.BytesIO()
        pdf.save(buffer)
    finally:
        pdf.close()
    return buffer.getvalue()
