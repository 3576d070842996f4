"""Images the project renders itself, with known text, for the demo and the tests."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONTS = Path("/usr/share/fonts/truetype/dejavu")  # Debian: fonts-dejavu-core and -extra


@dataclass(frozen=True)
class Placed:
    text: str
    xy: tuple[int, int]
    size: int
    angle: float = 0.0  # degrees, counter-clockwise
    face: str | None = None  # a font file in FONTS; None: Pillow's bundled font


@dataclass(frozen=True)
class Sample:
    png: bytes
    lines: tuple[Placed, ...]
    size: tuple[int, int]  # (width, height)
    ink_boxes: tuple[tuple[int, int, int, int], ...]  # per line: left, top, right, bottom

    @property
    def texts(self) -> list[str]:
        return [line.text for line in self.lines]


DEMO_LINES = (
    Placed("Triton OCR demo", (60, 40), 64),
    Placed("Invoice 2024-0917 total 318.40 EUR", (60, 150), 36),
    Placed("small print: serving models on CPU and GPU", (60, 230), 22),
    Placed("rotated line of text", (420, 430), 40, angle=12.0),
)


# Plain English lines in common faces at 16-30 px: words must come back apart.
ENGLISH_LINES = tuple(
    Placed(text, (30, 30 + 55 * i), size, face=face)
    for i, (face, size, text) in enumerate(
        [
            ("DejaVuSans.ttf", 16, "The quick brown fox jumps over the lazy dog"),
            ("DejaVuSerif.ttf", 18, "Invoice 2024-0917 total 318.40 EUR"),
            ("DejaVuSansMono.ttf", 20, "Please remit payment within 30 days"),
            ("DejaVuSans-Bold.ttf", 22, "Order number 48213 shipped on Monday"),
            ("DejaVuSerif-Italic.ttf", 24, "Thank you for your business"),
            ("DejaVuSansCondensed.ttf", 26, "Customer service is open until six"),
            ("DejaVuSans.ttf", 28, "small print: serving models on CPU and GPU"),
            ("DejaVuSerif.ttf", 30, "Quantity 3 unit price 12.50 each"),
        ]
    )
)


# The rendered grid: every face at every even size from 14 to 32 px, four sentences per page.
GRID_FACES = (
    "DejaVuSans.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSerif-Italic.ttf",
    "DejaVuSansCondensed.ttf",
)
GRID_SIZES = tuple(range(14, 33, 2))
GRID_SENTENCES = (
    "The quick brown fox jumps over the lazy dog",
    "Invoice 2024-0917 total 318.40 EUR",
    "Please remit payment within 30 days",
    "Order number 48213 shipped on Monday",
    "Thank you for your business",
    "Customer service is open until six",
    "small print: serving models on CPU and GPU",
    "Quantity 3 unit price 12.50 each",
    "Subtotal 45.00 tax 9.45 due now",
    "Call us at 555 0199 for help",
)


def english_grid(lines_per_page: int = 4) -> list[Sample]:
    """One page per face and size (60 pages, 240 lines), the sentences taken in turn, lines
    2.2 sizes apart: whether spaces survive across faces and small sizes."""
    pages = []
    for index, (face, size) in enumerate((f, s) for f in GRID_FACES for s in GRID_SIZES):
        texts = [
            GRID_SENTENCES[(index * lines_per_page + k) % len(GRID_SENTENCES)]
            for k in range(lines_per_page)
        ]
        pitch = int(size * 2.2)
        lines = tuple(
            Placed(text, (30, 20 + pitch * k), size, face=face) for k, text in enumerate(texts)
        )
        width = 60 + max(int(font(size, face).getlength(text)) for text in texts)
        pages.append(render(lines, size=(width, 40 + pitch * lines_per_page)))
    return pages


# A till receipt: a centred header, items on the left with their prices right-aligned on the same
# row (two texts: the gap between the columns is not a space), a total, a footer. Sans and Mono.
RECEIPT_ROWS = (
    ("CORNER CAFE BERLIN", None),
    ("2026-12-01 09:41 Till 3", None),
    ("2 x Espresso doppio", "7.80"),
    ("Cinnamon roll", "3.20"),
    ("1 x Oat milk latte", "4.90"),
    ("Still water 0.5 L", "2.50"),
    ("TOTAL EUR", "18.40"),
    ("Paid by card ending 4821", None),
    ("Thank you for your visit", None),
)


def receipt(face: str = "DejaVuSansMono.ttf", size: int = 20, width: int = 480) -> Sample:
    """RECEIPT_ROWS drawn like a till receipt in `face`: every text, item or price, must come
    back exactly as drawn, spaces included."""
    pitch, margin = int(size * 2), 24
    placed = []
    for row, (left, right) in enumerate(RECEIPT_ROWS):
        y = 20 + pitch * row
        if right is None:  # a line of its own, centred
            x = (width - int(font(size, face).getlength(left))) // 2
            placed.append(Placed(left, (max(x, margin), y), size, face=face))
            continue
        placed.append(Placed(left, (margin, y), size, face=face))
        x = width - margin - int(font(size, face).getlength(right)) - 8  # 8: the layer's pad
        placed.append(Placed(right, (x, y), size, face=face))
    return render(tuple(placed), size=(width, 40 + pitch * len(RECEIPT_ROWS)))


def font(size: int, face: str | None = None) -> ImageFont.FreeTypeFont:
    """Pillow's bundled scalable font (no system fonts needed), or a DejaVu face."""
    if face is None:
        return ImageFont.load_default(size=size)
    path = FONTS / face
    if not path.is_file():
        packages = "fonts-dejavu-core fonts-dejavu-extra"
        raise FileNotFoundError(f"{path} is missing: apt-get install {packages}")
    return ImageFont.truetype(str(path), size)


def render(
    lines: tuple[Placed, ...] = DEMO_LINES,
    size: tuple[int, int] = (1000, 560),
    background: tuple[int, int, int] = (255, 255, 255),
    ink: tuple[int, int, int] = (20, 20, 20),
) -> Sample:
    """Draw `lines` onto a canvas; rotated lines are drawn on their own layer and pasted."""
    canvas = Image.new("RGB", size, background)
    ink_boxes = []
    for line in lines:
        f = font(line.size, line.face)
        left, top, right, bottom = f.getbbox(line.text)
        layer = Image.new("L", (right + 8, bottom + 8), 0)
        ImageDraw.Draw(layer).text((4, 4), line.text, font=f, fill=255)
        if line.angle:
            layer = layer.rotate(line.angle, expand=True, resample=Image.BICUBIC)
        canvas.paste(Image.new("RGB", layer.size, ink), line.xy, layer)
        left, top, right, bottom = layer.getbbox()
        ink_boxes.append(
            (left + line.xy[0], top + line.xy[1], right + line.xy[0], bottom + line.xy[1])
        )
    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG")
    return Sample(buffer.getvalue(), lines, size, tuple(ink_boxes))


def word_ink_boxes(sample: Sample) -> list[tuple[str, tuple[int, int, int, int]]]:
    """Each word of the sample's unrotated lines with its ink box (left, top, right, bottom in
    the image): where word boxes must fall."""
    found = []
    for line in sample.lines:
        if line.angle:
            raise ValueError("word_ink_boxes takes unrotated lines only")
        f = font(line.size, line.face)
        start = 0
        for word in line.text.split():
            start = line.text.index(word, start)
            x = line.xy[0] + 4 + f.getlength(line.text[:start])  # 4: the layer's pad (render)
            left, top, right, bottom = f.getbbox(word)
            y = line.xy[1] + 4
            found.append((word, (int(x + left), y + top, int(x + right), y + bottom)))
            start += len(word)
    return found


def render_blank(size: tuple[int, int] = (640, 480)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (255, 255, 255)).save(buffer, format="PNG")
    return buffer.getvalue()
