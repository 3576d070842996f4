"""A born-digital PDF page's text layer: its lines and words where pdfium finds them, in the
pixels of the page as it is rendered, and whether the page is read from it rather than OCRed.

pdfium gives each character of the page's text (in the order of its content, with the spaces
and line ends it infers) with its box (loose: the font's ascent to descent, so a line's box does
not depend on its letters) and the text object it belongs to, whose render mode says whether it
is drawn (OCR text laid under a scan, OCRmyPDF's or Tesseract's, is invisible) and whose font
names the face it is set in (a heading in the body's size is often only in another face). A
line ends at a line end, a jump to another baseline, or a gap of several character heights
(columns side by side); a word at a space, and a CJK character is a word of its own, as in the
OCR's words.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from numpy.typing import NDArray

from triton_ocr.postprocessing.geometry import quad_of
from triton_ocr.postprocessing.words import is_cjk
from triton_ocr.settings import PDF_TEXT_MODES

# auto: a page whose images cover at least this share of it is OCRed too (a scan, or a page
# that is mostly a picture of text), its drawn text read from the layer
IMAGE_SHARE = 0.5
# a gap between two characters of more than this many character heights ends a line (columns)
LINE_GAP = 2.0
# a character whose middle is off the line's by more than this share of its height starts a line
BASELINE_SHIFT = 0.5
# a page whose text layer holds more characters than this is OCRed (auto) or refused (layer):
# they are read one by one, and no page of a document holds a tenth of it
MAX_CHARS = 200_000
# pdfium's codes for the hyphen that splits a word at a line end (the glyph drawn is a hyphen):
# 2 from FPDFText_GetUnicode, U+FFFE in its text ranges
LINE_END_HYPHEN = (0x02, 0xFFFE)
HIDDEN = (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, pdfium_c.FPDF_TEXTRENDERMODE_CLIP)
SUBSET_PREFIX = re.compile(r"^[A-Z]{6}\+")  # an embedded subset's tag, ABCDEF+Name


@dataclass(frozen=True)
class LayerWord:
    text: str
    quad: NDArray[np.float32]  # [4, 2] tl, tr, br, bl, rendered page pixels
    spaced: bool = True  # a space stood before it (Korean spaces its words; Chinese does not)


@dataclass(frozen=True)
class LayerLine:
    words: tuple[LayerWord, ...]
    quad: NDArray[np.float32]
    font: str = ""  # the font every character of the line is set in ("" when they differ)

    @property
    def text(self) -> str:
        """The words with one space between, none between CJK characters the page sets
        without one."""
        text = ""
        for word in self.words:
            glued = text and not word.spaced and (is_cjk(text[-1]) or is_cjk(word.text[0]))
            text += word.text if not text or glued else " " + word.text
        return text


@dataclass(frozen=True)
class TextLayer:
    lines: tuple[LayerLine, ...]  # in the page's text order
    size: tuple[int, int]  # (width, height) of the rendered page, pixels
    # the page is mostly pictures: it is OCRed too, and OCR's lines are kept where none of
    # these lie (pipeline.with_layer)
    ocr_too: bool = False


@dataclass(frozen=True)
class Char:
    text: str
    box: tuple[float, float, float, float]  # left, top, right, bottom in rendered pixels
    hidden: bool
    font: str = ""  # its font's PostScript name ("" when pdfium has none)


def device_mapping(page: pdfium.PdfPage, width: int, height: int) -> NDArray[np.float64]:
    """The affine map [2, 3] from page space (points) to the rendered page's pixels, the page's
    /Rotate and crop box as pdfium renders them (FPDF_PageToDevice, sampled at three points
    far apart so that its whole-pixel answers cost nothing)."""
    far = 10_000.0
    points = ((0.0, 0.0), (far, 0.0), (0.0, far))
    mapped = []
    for x, y in points:
        dx, dy = ctypes.c_int(), ctypes.c_int()
        pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, width, height, 0, x, y, dx, dy)
        mapped.append((dx.value, dy.value))
    (ox, oy), (ax, ay), (bx, by) = mapped
    return np.array(
        [[(ax - ox) / far, (bx - ox) / far, ox], [(ay - oy) / far, (by - oy) / far, oy]]
    )


def page_chars(
    textpage: pdfium.PdfTextPage, count: int, mapping: NDArray[np.float64]
) -> list[Char]:
    """The page's `count` characters with their loose boxes in rendered pixels (a character
    pdfium gives no box gets an empty one) and their fonts."""
    raw = textpage.raw
    rect = pdfium_c.FS_RECTF()
    hidden: list[bool] = []
    fonts: list[str] = []
    # each text object's font, asked once (an object holds many characters), by its address
    named: dict[bytes, str] = {}
    corners, boxed = np.zeros((count, 2, 3), np.float64), np.zeros(count, bool)
    codes = [pdfium_c.FPDFText_GetUnicode(raw, i) for i in range(count)]
    texts = characters(codes)
    for i in range(count):
        obj = pdfium_c.FPDFText_GetTextObject(raw, i)
        hidden.append(bool(obj) and pdfium_c.FPDFTextObj_GetTextRenderMode(obj) in HIDDEN)
        key = bytes(obj)  # the pointer's own bytes: no ctypes.cast per character
        if key not in named:
            named[key] = font_name(obj) if obj else ""
        fonts.append(named[key])
        if pdfium_c.FPDFText_GetLooseCharBox(raw, i, rect):
            corners[i] = ((rect.left, rect.top, 1.0), (rect.right, rect.bottom, 1.0))
            boxed[i] = True
    mapped = (corners @ mapping.T) * boxed[:, None, None]  # [count, 2 corners, (x, y)]
    low, high = mapped.min(axis=1), mapped.max(axis=1)
    return [
        Char(text, (float(x0), float(y0), float(x1), float(y1)), concealed, font)
        for text, concealed, font, (x0, y0), (x1, y1) in zip(
            texts, hidden, fonts, low, high, strict=True
        )
        if text  # the second half of a surrogate pair
    ]


def font_name(text_object: object) -> str:
    """A text object's font's PostScript name without a subset's tag (the same face embedded
    twice is one font), "" when pdfium gives none."""
    font = pdfium_c.FPDFTextObj_GetFont(text_object)
    if not font:
        return ""
    size = pdfium_c.FPDFFont_GetBaseFontName(font, None, 0)
    if size <= 1:
        return ""
    buffer = ctypes.create_string_buffer(size)
    pdfium_c.FPDFFont_GetBaseFontName(font, buffer, size)
    return SUBSET_PREFIX.sub("", buffer.value.decode("utf-8", "replace"))


def characters(codes: list[int]) -> list[str]:
    """pdfium's UTF-16 code units, one per character index -> each index's text: a character
    beyond the BMP comes as a surrogate pair, whole at its first index and "" at its second;
    a lone surrogate (a broken file) is U+FFFD, which UTF-8 can carry; pdfium's line-end
    hyphen is the hyphen drawn."""
    texts = [""] * len(codes)
    i = 0
    while i < len(codes):
        code, following = codes[i], codes[i + 1] if i + 1 < len(codes) else 0
        if 0xD800 <= code <= 0xDBFF and 0xDC00 <= following <= 0xDFFF:
            texts[i] = chr(0x10000 + ((code - 0xD800) << 10) + (following - 0xDC00))
            i += 2
            continue
        if code in LINE_END_HYPHEN:
            texts[i] = "-"
        else:
            texts[i] = "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)
        i += 1
    return texts


def box_quad(boxes: list[tuple[float, float, float, float]]) -> NDArray[np.float32]:
    """The upright box around `boxes` (left, top, right, bottom) as a quad."""
    return quad_of(
        (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
    )


def layer_lines(chars: list[Char], hidden_too: bool) -> tuple[LayerLine, ...]:
    """The characters -> lines of words (see the module's docstring); hidden characters are
    left out unless `hidden_too`, and end a word where they stood."""
    lines: list[LayerLine] = []
    words: list[LayerWord] = []
    word: list[Char] = []
    line: list[Char] = []  # the characters of the words so far
    last: Char | None = None
    spaced = True  # whether a space came since the last word

    def end_word() -> None:
        nonlocal spaced
        if word:
            text = "".join(c.text for c in word)
            words.append(LayerWord(text, box_quad([c.box for c in word]), spaced))
            line.extend(word)
            word.clear()
            spaced = False

    def end_line() -> None:
        end_word()
        if words:
            fonts = {c.font for c in line}
            font = fonts.pop() if len(fonts) == 1 else ""
            lines.append(LayerLine(tuple(words), box_quad([c.box for c in line]), font))
            words.clear()
            line.clear()

    for char in chars:
        if char.text in "\r\n":
            end_line()
            last = None
            continue
        if char.text.isspace() or (char.hidden and not hidden_too):
            end_word()
            spaced = True
            continue
        left, top, right, bottom = char.box
        height = max(bottom - top, 1.0)
        if last is not None:
            last_middle = (last.box[1] + last.box[3]) / 2
            gap = left - last.box[2]
            shifted = abs((top + bottom) / 2 - last_middle) > BASELINE_SHIFT * height
            if shifted or gap > LINE_GAP * height:
                end_line()
        if is_cjk(char.text):
            end_word()
            word.append(char)
            end_word()
        else:
            word.append(char)
        last = char
    end_line()
    return tuple(lines)


def image_share(page: pdfium.PdfPage) -> float:
    """The share of the page its images cover (their boxes, clipped to the page, summed)."""
    left, bottom, right, top = (float(v) for v in page.get_bbox())
    area = max((right - left) * (top - bottom), 1e-6)
    covered = 0.0
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]):
        x0, y0, x1, y1 = (float(v) for v in image.get_bounds())
        width = max(0.0, min(x1, right) - max(x0, left))
        height = max(0.0, min(y1, top) - max(y0, bottom))
        covered += width * height
    return min(covered / area, 1.0)


def read_text_layer(page: pdfium.PdfPage, width: int, height: int, mode: str) -> TextLayer | None:
    """The page's text layer at `width` x `height` rendered pixels, or None where the page is
    read by OCR alone: always with `mode` "ocr"; with "auto" when no text is drawn on it (none,
    or OCR text under a scan). With "auto", a page whose images cover IMAGE_SHARE of it or more
    gives its drawn lines to be read beside OCR (`ocr_too`). "layer" reads the layer as it is,
    hidden text too, and no OCR (a page without any text gives no lines)."""
    if mode not in PDF_TEXT_MODES:
        raise ValueError(f"pdf_text must be one of {', '.join(PDF_TEXT_MODES)}, not {mode!r}")
    if mode == "ocr":
        return None
    textpage = page.get_textpage()
    try:
        count = max(pdfium_c.FPDFText_CountChars(textpage.raw), 0)
        if count > MAX_CHARS:
            if mode == "layer":
                raise ValueError(
                    f"its text layer holds {count} characters; at most {MAX_CHARS} are read"
                )
            return None
        chars = page_chars(textpage, count, device_mapping(page, width, height))
    finally:
        textpage.close()
    if mode == "layer":
        return TextLayer(layer_lines(chars, hidden_too=True), (width, height))
    if not any(not c.hidden and not c.text.isspace() for c in chars):
        return None
    pictures = image_share(page) >= IMAGE_SHARE
    return TextLayer(layer_lines(chars, hidden_too=False), (width, height), ocr_too=pictures)
