"""Hostile payloads: small files that promise huge images, documents that lie about their pages.

Each is built here from a few bytes of header (no fixtures): an image bomb per accepted format
(its header declares far more pixels than the limit, its data is tiny), deep images over the
decoded-bytes limit, a Radiance HDR (a format that cannot be sized from its header), and PDFs
whose page tree, page size or drawn image is out of all proportion to their bytes. The unit
tests check that each is refused from its header; `triton-ocr hostile` sends them to a real
server and measures what they cost it.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass

import numpy as np
from PIL import Image

from .payloads import png_bomb, save


@dataclass(frozen=True)
class Bomb:
    name: str
    data: bytes
    error: str  # regex the refusal's message must match
    document: bool = False  # a PDF or multi-page TIFF: only `ocr` reads it page by page


def jpeg_bomb(width: int, height: int) -> bytes:
    """A small baseline JPEG whose frame header (SOF0) is patched to width x height."""
    data = bytearray(save(Image.new("L", (16, 16), 255), "JPEG", quality=50))
    at = data.index(b"\xff\xc0") + 5  # marker 2, length 2, precision 1
    data[at : at + 4] = struct.pack(">HH", height, width)
    return bytes(data)


def jpeg_scans_bomb(side: int, scans: int) -> bytes:
    """A progressive JPEG of a side x side flat page (within the pixel limit) whose last scan,
    a few dozen bytes, is repeated `scans` times: each is decoded over the whole image."""
    data = save(Image.new("L", (side, side), 128), "JPEG", progressive=True, quality=90)
    last, end = data.rindex(b"\xff\xda"), data.rindex(b"\xff\xd9")
    return data[:end] + data[last:end] * scans + data[end:]


def webp_bomb(width: int, height: int) -> bytes:
    """A lossless WebP (VP8L) whose header says width x height (at most 16384 each)."""
    data = bytearray(save(Image.new("RGB", (16, 16), "white"), "WEBP", lossless=True))
    at = data.index(b"VP8L") + 8 + 1  # chunk tag 4, size 4, signature byte 0x2f
    bits = int.from_bytes(data[at : at + 4], "little")
    bits = (bits & ~0xFFFFFFF) | (width - 1) | ((height - 1) << 14)
    data[at : at + 4] = bits.to_bytes(4, "little")
    return bytes(data)


def bmp_bomb(width: int, height: int) -> bytes:
    """A 24-bit BMP header for width x height followed by a few bytes of pixels."""
    data = bytearray(save(Image.new("RGB", (4, 4), "white"), "BMP"))
    data[18:26] = struct.pack("<ii", width, height)
    return bytes(data)


def pnm_bomb(width: int, height: int) -> bytes:
    return b"P6\n%d %d\n255\n" % (width, height) + b"\xff" * 64


def jpeg2000_bomb(width: int, height: int) -> bytes:
    """A JPEG 2000 codestream whose image and tile size (SIZ) are patched to width x height."""
    data = bytearray(save(Image.new("L", (16, 16), 255), "JPEG2000", no_jp2=True))
    at = data.index(b"\xff\x51") + 6  # marker 2, Lsiz 2, Rsiz 2: Xsiz, Ysiz, offsets, tile
    data[at : at + 8] = struct.pack(">II", width, height)
    data[at + 16 : at + 24] = struct.pack(">II", width, height)
    return bytes(data)


def tiff_frame(width: int, height: int, samples: int = 1, bits: int = 8) -> bytes:
    """A one-frame uncompressed TIFF header for width x height with one small strip."""
    strip = b"\x00" * 64
    entries = [
        (256, 4, 1, width),  # ImageWidth, LONG
        (257, 4, 1, height),  # ImageLength
        (258, 3, 1, bits),  # BitsPerSample (one value: the reader applies it to all)
        (259, 3, 1, 1),  # no compression
        (262, 3, 1, 2 if samples >= 3 else 1),  # RGB or BlackIsZero
        (273, 4, 1, 0),  # StripOffsets: patched below
        (277, 3, 1, samples),
        (278, 4, 1, height),  # RowsPerStrip
        (279, 4, 1, len(strip)),  # StripByteCounts
    ]
    if samples == 4:
        entries.append((338, 3, 1, 2))  # ExtraSamples: unassociated alpha
    ifd_size = 2 + 12 * len(entries) + 4
    strip_at = 8 + ifd_size
    body = struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        value = strip_at if tag == 273 else value
        body += struct.pack("<HHI", tag, kind, count)
        body += struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value)
    body += struct.pack("<I", 0)  # no next IFD
    return b"II*\x00" + struct.pack("<I", 8) + body + strip


def two_frame_tiff(width: int, height: int) -> bytes:
    """A small first page, then a second whose header declares width x height."""
    pages = [Image.new("L", (64, 64), 255), Image.new("L", (4, 4), 255)]
    data = bytearray(save(pages[0], "TIFF", save_all=True, append_images=pages[1:]))
    first = struct.unpack("<I", data[4:8])[0]
    entries = struct.unpack("<H", data[first : first + 2])[0]
    second = struct.unpack("<I", data[first + 2 + 12 * entries : first + 6 + 12 * entries])[0]
    for n in range(struct.unpack("<H", data[second : second + 2])[0]):
        at = second + 2 + 12 * n
        tag = struct.unpack("<H", data[at : at + 2])[0]
        if tag in (256, 257):  # ImageWidth, ImageLength: as LONGs
            data[at + 2 : at + 12] = struct.pack("<HII", 4, 1, width if tag == 256 else height)
    return bytes(data)


def many_pages_tiff(pages: int) -> bytes:
    """A TIFF of `pages` one-pixel pages, a directory of 102 bytes each, all drawing the one
    pixel at its end: a page limit's worth of work for its reader only if it counts them all."""
    entries = 8
    size = 2 + 12 * entries + 4
    pixel = 8 + pages * size
    directories = []
    for page in range(pages):
        after = 8 + (page + 1) * size if page + 1 < pages else 0
        body = struct.pack("<H", entries)
        for tag, kind, value in (
            (256, 3, 1),  # ImageWidth
            (257, 3, 1),  # ImageLength
            (258, 3, 8),  # BitsPerSample
            (259, 3, 1),  # no compression
            (262, 3, 1),  # BlackIsZero
            (273, 4, pixel),  # StripOffsets
            (278, 3, 1),  # RowsPerStrip
            (279, 4, 1),  # StripByteCounts
        ):
            body += struct.pack("<HHI", tag, kind, 1)
            body += struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value)
        directories.append(body + struct.pack("<I", after))
    return b"II*\x00" + struct.pack("<I", 8) + b"".join(directories) + b"\x80"


def hdr_bomb(width: int, height: int) -> bytes:
    """A Radiance HDR (run-length encoded scanlines) of width x height: a few bytes a row."""
    header = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %d +X %d\n" % (height, width)
    runs = b""
    left = width
    while left > 0:
        step = min(127, left)
        runs += bytes([128 + step, 0])
        left -= step
    row = bytes([2, 2, width >> 8, width & 0xFF]) + runs * 4
    return header + row * height


def pdf_bytes(document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def lying_count_pdf(pages: int) -> bytes:
    """A PDF whose page tree says /Count 1 but whose /Kids hold `pages` pages."""
    import pikepdf

    pdf = pikepdf.new()
    root = pdf.Root.Pages
    kids = [
        pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Page, MediaBox=[0, 0, 612, 792]))
        for _ in range(pages)
    ]
    for kid in kids:
        kid.Parent = root
    root.Kids = pikepdf.Array(kids)
    root.Count = 1
    return pdf_bytes(pdf)


def raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (object 1 the catalog) with a correct cross-reference table,
    written by hand for trees that PDF libraries refuse to write."""
    out = b"%PDF-1.7\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    return out + trailer % (len(objects) + 1, xref)


def self_containing_pdf() -> bytes:
    """A PDF whose page tree node lists itself among its kids, beside one real page."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
        ]
    )


def huge_page_pdf(width_pt: float, height_pt: float) -> bytes:
    """A one-page PDF whose page is width_pt x height_pt points."""
    import pypdfium2

    document = pypdfium2.PdfDocument.new()
    document.new_page(width_pt, height_pt).close()
    data = pdf_bytes(document)
    document.close()
    return data


def image_bomb_pdf(width: int, height: int) -> bytes:
    """A letter page drawing one image XObject of width x height gray pixels (flate, tiny)."""
    import pikepdf

    pdf = pikepdf.new()
    pixels = zlib.compress(b"\xff" * width * 64, 9)  # 64 rows; the rest is missing data
    image = pikepdf.Stream(pdf, pixels)
    image.Type, image.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    image.Width, image.Height = width, height
    image.ColorSpace, image.BitsPerComponent = pikepdf.Name.DeviceGray, 8
    image.Filter = pikepdf.Name.FlateDecode
    content = pikepdf.Stream(pdf, b"q 612 0 0 792 0 0 cm /Im0 Do Q")
    return letter_page_pdf(pdf, content, pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=image)))


def letter_page_pdf(pdf, content, resources) -> bytes:
    """`pdf` with one letter page drawn by `content` with `resources`, as bytes."""
    import pikepdf

    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page, MediaBox=[0, 0, 612, 792], Contents=content, Resources=resources
    )
    pdf.pages.append(pikepdf.Page(page))
    return pdf_bytes(pdf)


def nested_form(pdf, fanout: int, depth: int):
    """A form XObject of `pdf` that draws a form `fanout` times, `depth` forms deep, the last
    one a square."""
    import pikepdf

    form = pikepdf.Stream(pdf, b"0 0 1 1 re f")
    for level in range(depth + 1):
        if level:
            drawn = pikepdf.Stream(pdf, b"q 1 0 0 1 0.001 0 cm /X Do Q " * fanout)
            drawn.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(X=form))
            form = drawn
        form.Type, form.Subtype, form.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 9, 9]
    return form


def nested_forms_pdf(fanout: int, depth: int, annotation: bool = False) -> bytes:
    """A letter page drawing a form that draws a form `fanout` times, `depth` forms deep, the
    last one square: fanout ** depth squares from a kilobyte and a half; drawn by the page's
    content, or as the appearance of an annotation on it."""
    import pikepdf

    pdf = pikepdf.new()
    form = nested_form(pdf, fanout, depth)
    if not annotation:
        resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(X=form))
        return letter_page_pdf(pdf, pikepdf.Stream(pdf, b"/X Do"), resources)
    square = pikepdf.Dictionary(
        Type=pikepdf.Name.Annot,
        Subtype=pikepdf.Name.Square,
        Rect=[10, 10, 300, 300],
        AP=pikepdf.Dictionary(N=form),
    )
    pdf.add_blank_page(page_size=(612, 792)).Annots = pikepdf.Array([square])
    return pdf_bytes(pdf)


def type3_glyph_pdf(fanout: int, depth: int) -> bytes:
    """A letter page showing one glyph of a Type3 font whose procedure draws the forms of
    nested_forms_pdf: pdfium parses a glyph's procedure when it loads the page."""
    import pikepdf

    pdf = pikepdf.new()
    form = nested_form(pdf, fanout, depth)
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.Type3,
        FontBBox=[0, 0, 1000, 1000],
        FontMatrix=[0.001, 0, 0, 0.001, 0, 0],
        CharProcs=pikepdf.Dictionary(a=pikepdf.Stream(pdf, b"1000 0 d0 /X Do")),
        Encoding=pikepdf.Dictionary(Differences=[97, pikepdf.Name.a]),
        FirstChar=97,
        LastChar=97,
        Widths=[1000],
        Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(X=form)),
    )
    content = pikepdf.Stream(pdf, b"BT /T3 12 Tf 72 72 Td (a) Tj ET")
    return letter_page_pdf(pdf, content, pikepdf.Dictionary(Font=pikepdf.Dictionary(T3=font)))


def text_operators_pdf(operators: int) -> bytes:
    """A letter page whose one content stream shows two letters `operators` times, flate
    compressed: some 400 bytes of operators for each byte of the file."""
    import pikepdf

    pdf = pikepdf.new()
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    text = b"BT /F1 1 Tf " + b"0.001 0 Td (xy) Tj " * operators + b"ET"
    content = pikepdf.Stream(pdf, zlib.compress(text, 9))
    content.Filter = pikepdf.Name.FlateDecode
    return letter_page_pdf(pdf, content, pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)))


def deep_png(width: int, height: int) -> bytes:
    """A 16-bit RGBA PNG header (8 bytes per pixel decoded) with a few rows of data."""
    return png_bomb(width, height, depth=16, colour=6, rows=4)


TOO_LARGE = r"too large: .*(pixels exceeds the limit|over the limit)"


def image_bombs() -> list[Bomb]:
    """One bomb per accepted image format, each declaring far more than the pixel limit."""
    return [
        Bomb("PNG 30000x30000", png_bomb(30000, 30000), TOO_LARGE),
        Bomb("PNG 8000x8000", png_bomb(8000, 8000), TOO_LARGE),
        # every row there: Pillow's own limit lets it decode, ours must refuse it first
        Bomb("PNG 10000x10000, whole", png_bomb(10000, 10000, 8, rows=10000), TOO_LARGE),
        Bomb("JPEG 60000x60000", jpeg_bomb(60000, 60000), TOO_LARGE),
        Bomb("JPEG 8000x8000", jpeg_bomb(8000, 8000), TOO_LARGE),
        Bomb("JPEG 7000x7000, 1000 scans", jpeg_scans_bomb(7000, 1000), "JPEG has 10\\d\\d scans"),
        Bomb("WebP 16383x16383", webp_bomb(16383, 16383), TOO_LARGE),
        Bomb("WebP 8000x8000", webp_bomb(8000, 8000), TOO_LARGE),
        Bomb("BMP 30000x30000", bmp_bomb(30000, 30000), TOO_LARGE),
        Bomb("PNM 30000x30000", pnm_bomb(30000, 30000), TOO_LARGE),
        Bomb("JPEG 2000 40000x40000", jpeg2000_bomb(40000, 40000), TOO_LARGE),
        Bomb("TIFF 40000x40000", tiff_frame(40000, 40000), TOO_LARGE),
        Bomb("TIFF 6000x6000 16-bit RGBA", tiff_frame(6000, 6000, 4, 16), TOO_LARGE),
        Bomb("PNG 6000x6000 16-bit RGBA", deep_png(6000, 6000), TOO_LARGE),
        Bomb(
            "Radiance HDR 20000x20000 (RLE)",
            hdr_bomb(20000, 20000),
            "unsupported image format Radiance HDR",
        ),
    ]


def document_bombs() -> list[Bomb]:
    """Documents whose pages or page tree are out of proportion to their bytes."""
    return [
        Bomb(
            "TIFF, second frame 60000x60000",
            two_frame_tiff(60000, 60000),
            r"page 2: 60000x60000 = \d+ pixels exceeds",
            True,
        ),
        Bomb(
            "TIFF of 50000 one-pixel pages",
            many_pages_tiff(50000),
            r"TIFF has more than \d+ pages; at most \d+ per request",
            True,
        ),
        Bomb(
            "PDF page 200x200 inches",
            huge_page_pdf(14400, 14400),
            r"page 1: 40000x40000 pixels at 200 dpi exceeds",
            True,
        ),
        Bomb(
            "PDF /Count 1 with 5000 pages",
            lying_count_pdf(5000),
            "PDF has 5000 pages; at most 100 per request",
            True,
        ),
        Bomb("PDF page tree containing itself", self_containing_pdf(), "", True),
        Bomb(
            "PDF of forms drawn 100 x 100 x 100 times",
            nested_forms_pdf(100, 3),
            "page 1: its drawing holds more than 16 MB",
            True,
        ),
        Bomb(
            "PDF annotation of forms drawn 100 x 100 x 100 times",
            nested_forms_pdf(100, 3, annotation=True),
            "page 1: its drawing holds more than 16 MB",
            True,
        ),
        Bomb(
            "PDF Type3 glyph of forms drawn 100 x 100 x 100 times",
            type3_glyph_pdf(100, 3),
            "page 1: its drawing holds more than 16 MB",
            True,
        ),
        Bomb(
            "PDF of 2,000,000 text operators (93 KB)",
            text_operators_pdf(2_000_000),
            "page 1: its drawing holds more than 16 MB",
            True,
        ),
        Bomb("PDF drawing a 60000x60000 image", image_bomb_pdf(60000, 60000), "", True),
    ]


def blank_image(width: int, height: int, fmt: str) -> bytes:
    """A white image of width x height: the largest a limit accepts, sent for what it costs."""
    return save(Image.fromarray(np.full((height, width), 255, np.uint8)), fmt)
