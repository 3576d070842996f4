"""The tests' rendered pages, each with known text and where it lies: plain English lines,
a grid of faces and sizes, a receipt, multi-column layouts, a blank page (all drawn by
triton_ocr.tools.samples.render)."""

from __future__ import annotations

import io
from dataclasses import replace

import cv2
import numpy as np
from PIL import Image, ImageDraw

from triton_ocr.tools.samples import Placed, Sample, font, render

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


# Pages laid out as people read them: every Sample's lines are in reading order.
ARTICLE = (
    "Serving models close to the data keeps every page private and the answers quick",
    "The detector finds each line of text and the recognizer reads it in one pass",
    "Pages that arrive turned by a quarter are set upright before anything else is done",
    "Columns are read from the left to the right and each one from the top to the bottom",
    "A headline that spans the columns is read before the text under it begins",
    "Receipts keep every price on the row of the item it belongs to for the reader",
    "Tables read row by row so that each value stays beside the name it belongs to",
    "The service answers with blocks of lines so that paragraphs stay together on the page",
    "Throughput is measured on the same machine for every peer in one run side by side",
)


def wrapped(words: list[str], width: int, face: str, size: int) -> list[str]:
    """Words set into lines no wider than `width` pixels (greedy, as a typesetter's first fit)."""
    f, lines, current = font(size, face), [], ""
    for word in words:
        trial = f"{current} {word}".strip()
        if current and f.getlength(trial) + 8 > width:
            lines.append(current)
            trial = word
        current = trial
    return [*lines, current] if current else lines


def column(text: str, x: int, y: int, width: int, face: str, size: int, pitch: int) -> list[Placed]:
    lines = wrapped(text.split(), width, face, size)
    return [Placed(line, (x, y + pitch * k), size, face=face) for k, line in enumerate(lines)]


def layout_page(kind: str, face: str = "DejaVuSerif.ttf", size: int = 20) -> Sample:
    """A rendered page of `kind` (LAYOUTS), its lines in the order a person reads them."""
    pitch, gutter, margin = int(size * 1.5), 2 * size, 40
    body = " ".join(f"{s}." for s in ARTICLE)
    placed: list[Placed] = []
    if kind in ("two-columns", "three-columns", "headline"):
        count = 3 if kind == "three-columns" else 2
        width = 1200 if count == 3 else 960
        column_width = (width - 2 * margin - gutter * (count - 1)) // count
        top = margin
        if kind == "headline":
            placed.append(Placed("Journal of Served Models", (margin, 16), 14, face=face))
            placed.append(Placed("Page 7", (width - margin - 60, 16), 14, face=face))
            placed.append(Placed("Reading pages the way people do", (margin, 60), 36, face=face))
            top = 140
        words = body.split()
        share = len(words) // count + 1
        bottom = top
        for k in range(count):
            x = margin + k * (column_width + gutter)
            text = " ".join(words[k * share : (k + 1) * share])
            lines = column(text, x, top, column_width, face, size, pitch)
            placed += lines
            bottom = max(bottom, lines[-1].xy[1] + pitch)
        if kind == "headline":
            placed.append(Placed("Printed in Berlin", (margin, bottom + 40), 14, face=face))
            bottom += 40
        return render(tuple(placed), size=(width, bottom + margin))
    if kind == "sidebar":
        width, side = 1000, 260
        main = column(body, margin, margin, width - 2 * margin - side - gutter, face, size, pitch)
        note = "In short: pages are turned upright, columns are kept apart, receipts stay in rows."
        aside = column(note, width - margin - side, margin, side, face, size - 2, pitch)
        placed = main + aside
        height = max(p.xy[1] for p in placed) + pitch + margin
        return render(tuple(placed), size=(width, height))
    if kind == "grid":
        header = ("Item", "Qty", "Price", "Total")
        rows = [header, ("Apples", "3", "0.40", "1.20"), ("Bread", "1", "2.10", "2.10")]
        rows += [("Cheese", "2", "3.75", "7.50"), ("Olive oil", "1", "6.90", "6.90")]
        xs = (margin, 300, 460, 620)
        for r, row in enumerate(rows):
            for x, cell in zip(xs, row, strict=True):
                placed.append(Placed(cell, (x, margin + 2 * pitch * r), size, face=face))
        return render(tuple(placed), size=(800, margin * 2 + 2 * pitch * len(rows)))
    if kind == "receipt":
        return receipt()
    raise ValueError(f"unknown layout {kind!r}; choose from {list(LAYOUTS)}")


LAYOUTS = ("two-columns", "three-columns", "headline", "sidebar", "grid", "receipt")


def sectioned_page(
    face: str = "DejaVuSerif.ttf", size: int = 20, style: str = "bold"
) -> tuple[Sample, list[str]]:
    """A report's page: section heads at the body's size, each right over its paragraph (one
    line pitch, no gap), and the heads' texts. A statute's head ends with a full stop. `style`:
    the heads set in the face's bold; or `spaced`, letter-spaced in the regular face (a space
    between letters, three between words), or `italic`, in its italic face, each under an
    opening paragraph (a line so set at the page's top is a running head)."""
    faces = {
        "bold": face.replace(".ttf", "-Bold.ttf"),
        "spaced": face,
        "italic": face.replace(".ttf", "-Italic.ttf" if "Serif" in face else "-Oblique.ttf"),
    }
    pitch, margin, width = int(size * 1.5), 40, 900
    heads = ["Scope of the service", "§ 2.1 Pages and their text.", "Results"]
    placed: list[Placed] = []
    y = margin
    if style != "bold":
        placed += column(
            " ".join(f"{s}." for s in ARTICLE[6:9]),
            margin,
            y,
            width - 2 * margin,
            face,
            size,
            pitch,
        )
        y = placed[-1].xy[1] + 2 * pitch
    for k, head in enumerate(heads):
        shown = "   ".join(" ".join(w) for w in head.split()) if style == "spaced" else head
        placed.append(Placed(shown, (margin, y), size, face=faces[style]))
        text = " ".join(f"{s}." for s in ARTICLE[3 * k : 3 * k + 3])
        lines = column(text, margin, y + pitch, width - 2 * margin, face, size, pitch)
        placed += lines
        y = lines[-1].xy[1] + 2 * pitch
    return render(tuple(placed), size=(width, y + margin)), heads


def bent_page(drop: float = 1.5, face: str = "DejaVuSans.ttf", size: int = 22) -> Sample:
    """A paragraph as a photo of a page bowing towards its edge shows it: level over its left
    third, then each line curving down to `drop` line pitches lower at the right edge (its
    straight box would reach into the next line). Its lines are those of the flat page; the
    sample's ink boxes are the flat page's."""
    pitch, margin, width = int(size * 1.5), 40, 900
    text = " ".join(f"{s}." for s in ARTICLE)
    lines = column(text, margin, margin, width - 2 * margin, face, size, pitch)
    height = lines[-1].xy[1] + 2 * pitch + margin + int(drop * pitch)
    flat = render(tuple(lines), size=(width, height))
    page = np.asarray(Image.open(io.BytesIO(flat.png)).convert("RGB"))
    xs = np.arange(width, dtype=np.float32)
    down = drop * pitch * (np.clip(xs - width * 0.3, 0, None) / (width * 0.7)) ** 2
    rows = np.arange(height, dtype=np.float32)[:, None] - down[None, :]
    bent = cv2.remap(
        page, np.tile(xs, (height, 1)), rows, cv2.INTER_LINEAR, borderValue=(255, 255, 255)
    )
    out = io.BytesIO()
    Image.fromarray(bent).save(out, "PNG")
    return replace(flat, png=out.getvalue())


# A ruled table: rows of cells (None: covered by the cell to its left, which spans it; "": an
# empty cell), the header's "Sales" across two columns
RULED_CELLS = (
    ("Region", "Sales", None, "Staff"),
    ("", "2024", "2025", ""),
    ("North", "1,200", "1,350", "12"),
    ("South", "980", "1,020", "9"),
    ("East", "1,500", "1,610", "15"),
)
RULED_XS = (40, 260, 420, 580, 720)  # the column rules


def ruled_table(
    face: str = "DejaVuSerif.ttf", size: int = 20, down: bool = True, across: bool = True
) -> Sample:
    """RULED_CELLS in a grid of rules one pixel short of 2 wide, no rule inside the spanning
    header cell; its lines in reading order, row by row. `down` False: the rules between
    columns are drawn in the header rows only (a table ruled across, its columns set by its
    header). `across` False: rules across at the top, under the header and at the foot only
    (a table ruled down, its rows not ruled)."""
    pitch, top = 2 * size + 10, 40
    ys = [top + pitch * r for r in range(len(RULED_CELLS) + 1)]
    placed = [
        Placed(text, (RULED_XS[c] + 10, ys[r] + size // 3), size, face=face)
        for r, row in enumerate(RULED_CELLS)
        for c, text in enumerate(row)
        if text
    ]
    sample = render(tuple(placed), size=(RULED_XS[-1] + 40, ys[-1] + 40))
    image = Image.open(io.BytesIO(sample.png))
    draw = ImageDraw.Draw(image)
    for y in ys if across else (ys[0], ys[2], ys[-1]):
        draw.line([(RULED_XS[0], y), (RULED_XS[-1], y)], fill=(0, 0, 0), width=2)
    for c, x in enumerate(RULED_XS):
        inner = 0 < c < len(RULED_XS) - 1
        bottom = ys[-1] if down or not inner else ys[2]
        draw.line([(x, ys[1] if c == 2 else ys[0]), (x, bottom)], fill=(0, 0, 0), width=2)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return replace(sample, png=buffer.getvalue())


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
