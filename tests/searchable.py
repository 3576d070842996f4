"""A rendered image-only scan, and the checks every route to a searchable PDF must pass.

The scan has three pages at SCAN_DPI, stored as images only (no text): a white page, a page on a
grey, slightly blurred background, and a page whose image is stored a quarter turn sideways with
/Rotate 90 (it shows upright, as a scanner that turns pages writes them). `check_searchable` asks
of a PDF made from it what a reader would: the page count and sizes are the input's, every page
looks as before, and pdfium's text extraction finds every line on its own page, in reading
order, words apart, its text box over its ink.
"""

from __future__ import annotations

import ctypes
import io
import re
from dataclasses import dataclass

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image, ImageFilter

from tests.documents import make_pdf
from triton_ocr.tools.samples import Placed, render

SCAN_DPI = 150
GREY = (196, 196, 196)
PAGE_SIZE = (1000, 700)  # pixels: 6.7 x 4.7 inches at SCAN_DPI
MIN_IOU = 0.5
MAX_MEAN_DIFFERENCE = 3 / 255

SENTENCES = (
    ("The quick brown fox jumps over the lazy dog", "DejaVuSans.ttf"),
    ("Invoice 2024-0917 total 318.40 EUR", "DejaVuSerif.ttf"),
    ("Please remit payment within 30 days", "DejaVuSans.ttf"),
    ("Order number 48213 shipped on Monday", "DejaVuSerif.ttf"),
    ("Thank you for your business", "DejaVuSans.ttf"),
    ("Customer service is open until six", "DejaVuSerif.ttf"),
    ("Quantity 3 unit price 12.50 each", "DejaVuSans.ttf"),
    ("Call us at 555 0199 for help", "DejaVuSerif.ttf"),
    ("Serving models on CPU and GPU", "DejaVuSans.ttf"),
)


Box = tuple[int, int, int, int]  # left, top, right, bottom (pixels)


@dataclass(frozen=True)
class ScanPage:
    """One page of the scan as it shows: its image and, per line, the text and its ink box."""

    image: Image.Image
    lines: tuple[tuple[str, Box], ...]
    turned: bool = False  # stored a quarter turn clockwise, shown upright by /Rotate 90


def scan_pages() -> list[ScanPage]:
    """The three pages: white; grey and blurred; stored sideways under /Rotate 90."""
    pages = []
    for index in range(3):
        chosen = SENTENCES[3 * index : 3 * index + 3]
        placed = tuple(
            Placed(text, (80, 90 + 170 * row), 34, face=face)
            for row, (text, face) in enumerate(chosen)
        )
        background = GREY if index == 1 else (255, 255, 255)
        sample = render(placed, size=PAGE_SIZE, background=background)
        image = Image.open(io.BytesIO(sample.png)).convert("RGB")
        if index == 1:
            image = image.filter(ImageFilter.GaussianBlur(1.0))
        lines = tuple(zip(sample.texts, sample.ink_boxes, strict=True))
        pages.append(ScanPage(image, lines, turned=index == 2))
    return pages


def turned_clockwise(page: ScanPage) -> ScanPage:
    """The page's content turned a quarter clockwise (the top of its text faces right), its
    boxes turned with it."""
    height = page.image.height

    def turn(box: Box) -> Box:
        left, top, right, bottom = box
        return (height - bottom, left, height - top, right)

    return ScanPage(
        page.image.transpose(Image.Transpose.ROTATE_270),
        tuple((text, turn(box)) for text, box in page.lines),
    )


def scan_pdf(pages: list[ScanPage]) -> bytes:
    """The pages as an image-only PDF, each at SCAN_DPI; a turned page's image is stored
    sideways, its page dictionary turning it back (/Rotate 90)."""
    images = [
        page.image.transpose(Image.Transpose.ROTATE_90) if page.turned else page.image
        for page in pages
    ]
    pdf = pikepdf.open(io.BytesIO(make_pdf(images, resolution=SCAN_DPI)))
    for page, stored in zip(pages, pdf.pages, strict=True):
        if page.turned:
            stored.Rotate = 90
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


def normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def rendered(page: pdfium.PdfPage, dpi: float) -> np.ndarray:
    return page.render(scale=dpi / 72).to_numpy().astype(np.float32)


def to_pixels(page: pdfium.PdfPage, size: tuple[int, int], x: float, y: float) -> tuple[int, int]:
    """A point of the page's user space -> pixels of the page rendered at `size` (pdfium's own
    mapping: /Rotate and the crop box applied)."""
    px, py = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, *size, 0, x, y, px, py)
    return px.value, py.value


def line_box(
    page: pdfium.PdfPage,
    text: pdfium.PdfTextPage,
    line: str,
    size: tuple[int, int],
) -> tuple[float, float, float, float] | None:
    """The pixel box of the characters pdfium found for `line` on the page (None: not found)."""
    searcher = text.search(line, match_case=True)
    try:
        found = searcher.get_next()
    finally:
        searcher.close()
    if found is None:
        return None
    start, count = found
    xs, ys = [], []
    for index in range(start, start + count):
        left, bottom, right, top = text.get_charbox(index, loose=True)
        for x, y in ((left, bottom), (right, top)):
            px, py = to_pixels(page, size, x, y)
            xs.append(px)
            ys.append(py)
    return min(xs), min(ys), max(xs), max(ys)


def check_lines(result: bytes, page: ScanPage, number: int = 0) -> None:
    """Every line of `page` is found by pdfium on page `number`, its text box over its ink."""
    document = pdfium.PdfDocument(result)
    try:
        view = document[number]
        text = view.get_textpage()
        for word, ink in page.lines:
            box = line_box(view, text, word, page.image.size)
            assert box is not None, f"{word!r} not found"
            assert iou(box, ink) >= MIN_IOU, f"{word!r} lies off its ink: {box} vs {ink}"
    finally:
        document.close()


def check_searchable(source: bytes, result: bytes, pages: list[ScanPage], dpi: float) -> None:
    """Assert what every searchable PDF made from `source` (the scan of `pages`) must hold."""
    before, after = pdfium.PdfDocument(source), pdfium.PdfDocument(result)
    try:
        assert len(after) == len(before) == len(pages)
        for number, expected in enumerate(pages):
            old, new = before[number], after[number]
            assert new.get_size() == pytest.approx(old.get_size(), abs=0.01), (
                f"page {number + 1}: size"
            )
            difference = np.abs(rendered(old, dpi) - rendered(new, dpi)).mean() / 255
            assert difference < MAX_MEAN_DIFFERENCE, f"page {number + 1} looks changed"
            text = new.get_textpage()
            size = expected.image.size
            found = normalized(text.get_text_range())
            position = 0
            for line, ink in expected.lines:
                at = found.find(line, position)
                assert at >= 0, f"page {number + 1}: {line!r} not in reading order in {found!r}"
                position = at + len(line)
                box = line_box(new, text, line, size)
                assert box is not None, f"page {number + 1}: {line!r} has no text box"
                overlap = iou(box, ink)
                assert overlap >= MIN_IOU, (
                    f"page {number + 1}: {line!r} lies off its ink ({overlap:.2f}: {box} vs {ink})"
                )
    finally:
        after.close()
        before.close()
