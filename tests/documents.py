"""Documents made in memory for tests: PDFs (Pillow, pikepdf, pdfium, fpdf2) and multi-page TIFFs.

Nothing is written to disk; every maker returns the encoded bytes.
"""

from __future__ import annotations

import io

import pikepdf
import pypdfium2 as pdfium
from fpdf import FPDF
from fpdf.enums import TextMode
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


# the words of born_digital_pdf's page, as a person reads them: the heading, then each column
BORN_DIGITAL_HEADING = "Reading born-digital pages"
BORN_DIGITAL_COLUMNS = (
    ("The text layer of a page holds", "its exact words, and reading", "them costs no network."),
    ("A scanned page has none, so", "the service reads it by OCR", "as it always has done."),
)


def born_digital_pdf(
    text_mode: TextMode = TextMode.FILL, picture: Image.Image | None = None, rotate: int = 0
) -> bytes:
    """A page of drawn text as a word processor writes it (fpdf2): a heading over two columns.
    `text_mode` INVISIBLE gives OCR text as OCRmyPDF lays it under a scan, `picture` is drawn
    over the whole page first, `rotate` sets the page's /Rotate."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    if picture is not None:
        pdf.image(picture, 0, 0, pdf.w, pdf.h)
    pdf.text_mode = text_mode
    pdf.set_font("Helvetica", size=20)
    pdf.text(72, 90, BORN_DIGITAL_HEADING)
    pdf.set_font("Helvetica", size=11)
    for column, x in zip(BORN_DIGITAL_COLUMNS, (72, 320), strict=True):
        for k, line in enumerate(column):
            pdf.text(x, 140 + 16 * k, line)
    made = bytes(pdf.output())
    if not rotate:
        return made
    with pikepdf.open(io.BytesIO(made)) as document:
        document.pages[0].Rotate = rotate
        buffer = io.BytesIO()
        document.save(buffer)
    return buffer.getvalue()


def table_pdf() -> bytes:
    """tests.samples.RULED_CELLS as a word processor lays out a table (fpdf2's, every border
    drawn): drawn text, its header's second cell across two columns."""
    from tests.samples import RULED_CELLS

    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    with pdf.table(col_widths=(110, 80, 80, 60), width=330, line_height=22) as table:
        for cells in RULED_CELLS:
            row = table.row()
            for k, text in enumerate(cells):
                if text is None:
                    continue
                spans = 2 if k + 1 < len(cells) and cells[k + 1] is None else 1
                row.cell(text, colspan=spans)
    return bytes(pdf.output())
