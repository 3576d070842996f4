"""A PDF page's text layer (preprocessing/text_layer.py): read where it is drawn, its words
where pdfium puts them on the rendered page, OCR where it is not drawn or the page is a
picture."""

from __future__ import annotations

import io

import numpy as np
import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from fpdf.enums import TextMode
from PIL import Image

from tests.conftest import ROOT
from tests.documents import BORN_DIGITAL_COLUMNS, BORN_DIGITAL_HEADING, born_digital_pdf
from triton_ocr.preprocessing import text_layer
from triton_ocr.preprocessing.documents import open_pages
from triton_ocr.preprocessing.header import ImageDecodeError
from triton_ocr.preprocessing.text_layer import read_text_layer
from triton_ocr.settings import Documents, ImageLimits

LIMITS = ImageLimits(max_image_pixels=50_000_000, max_image_bytes=33_554_432)
DOCS = Documents(pdf_dpi=200, max_pdf_dpi=600, max_pages=100)
LINES = [BORN_DIGITAL_HEADING, *(line for column in BORN_DIGITAL_COLUMNS for line in column)]


def layer_of(data: bytes, mode: str = "auto", dpi: int = 200):
    with open_pages(data, LIMITS, DOCS, dpi) as pages:
        return pages.text_layer(0, mode), pages.page(0)


def test_a_drawn_text_layer_gives_its_lines_and_words_as_pdfium_reads_them():
    data = born_digital_pdf()
    layer, image = layer_of(data)
    assert layer is not None and layer.size == (image.shape[1], image.shape[0])
    # columns side by side on one baseline are separate lines, in the page's text order
    assert [line.text for line in layer.lines] == LINES
    document = pdfium.PdfDocument(data)
    pdfium_words = document[0].get_textpage().get_text_range().split()
    document.close()
    assert [w.text for line in layer.lines for w in line.words] == pdfium_words


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_each_word_box_holds_its_ink_on_the_rendered_page(rotate):
    layer, image = layer_of(born_digital_pdf(rotate=rotate))
    assert layer is not None
    ink = (image < 128).all(axis=2)
    assert ink.sum() > 1000
    covered = np.zeros_like(ink)
    for line in layer.lines:
        for word in line.words:
            (left, top), (right, bottom) = word.quad.min(axis=0), word.quad.max(axis=0)
            assert 0 <= left < right <= image.shape[1] and 0 <= top < bottom <= image.shape[0]
            box = ink[int(top) : int(np.ceil(bottom)), int(left) : int(np.ceil(right))]
            assert box.any(), word.text
            covered[int(top) : int(np.ceil(bottom)), int(left) : int(np.ceil(right))] = True
    assert (ink & covered).sum() >= 0.98 * ink.sum()  # every drawn letter is in a word's box


def test_invisible_text_under_a_scan_is_ocred_unless_the_layer_is_asked_for():
    picture = Image.new("RGB", (400, 560), "white")
    hidden = born_digital_pdf(TextMode.INVISIBLE, picture)
    assert layer_of(hidden)[0] is None
    forced = layer_of(hidden, "layer")[0]
    assert forced is not None and [line.text for line in forced.lines] == LINES


def test_a_page_that_is_mostly_a_picture_is_ocred_too_and_ocr_is_always_ocr():
    picture = Image.new("RGB", (400, 560), "gray")
    both = layer_of(born_digital_pdf(picture=picture))[0]
    assert both is not None and both.ocr_too and [line.text for line in both.lines] == LINES
    drawn = layer_of(born_digital_pdf())[0]
    assert drawn is not None and not drawn.ocr_too
    assert layer_of(born_digital_pdf(), "ocr")[0] is None


def test_a_page_without_text_is_ocred_and_a_forced_layer_is_empty():
    blank = born_digital_pdf(TextMode.INVISIBLE)  # nothing drawn
    assert layer_of(blank)[0] is None
    document = pdfium.PdfDocument.new()
    document.new_page(200, 100)
    page = document[0]
    empty = read_text_layer(page, 556, 278, "layer")
    assert empty is not None and empty.lines == ()
    with pytest.raises(ValueError, match="pdf_text must be one of auto, layer, ocr"):
        read_text_layer(page, 556, 278, "both")
    page.close()
    document.close()


def test_images_and_tiffs_have_no_text_layer():
    buffer = io.BytesIO()
    Image.new("RGB", (60, 40), "white").save(buffer, "PNG")
    with open_pages(buffer.getvalue(), LIMITS, DOCS, 200) as pages:
        assert pages.text_layer(0, "layer") is None


def test_a_word_split_at_a_line_end_keeps_its_hyphen_on_its_line():
    """pdfium marks the hyphen (code 2, U+FFFE in its text) and joins the lines in its own
    text; the layer keeps the lines apart, the hyphen drawn at the first one's end."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.text(72, 100, "the service reads infor-")
    pdf.text(72, 116, "mation from pages")
    layer, _ = layer_of(bytes(pdf.output()))
    assert [line.text for line in layer.lines] == ["the service reads infor-", "mation from pages"]


def test_a_text_layer_too_long_to_read_is_ocred_or_refused(monkeypatch):
    """Characters are read one by one: a page beyond MAX_CHARS is OCRed (auto), whose render
    can be stopped, or refused naming the count (layer)."""
    monkeypatch.setattr(text_layer, "MAX_CHARS", 10)
    assert layer_of(born_digital_pdf())[0] is None
    with pytest.raises(ImageDecodeError, match=r"page 1: its text layer holds \d+ characters"):
        layer_of(born_digital_pdf(), "layer")


def test_characters_beyond_the_bmp_are_whole_and_a_lone_surrogate_is_replaced():
    """pdfium gives UTF-16 code units: a pair is one character (a real Korean report's private
    use glyphs come so, and a lone half cannot be sent as UTF-8)."""
    codes = [ord("a"), 0xDB82, 0xDC54, ord("b"), 0xDB82, ord("c"), 0xDC55, 0xFFFE, 0x02]
    expected = ["a", "\U000f0854", "", "b", "\ufffd", "c", "\ufffd", "-", "-"]
    assert text_layer.characters(codes) == expected
    data = (ROOT / "tests/data/born_digital/normal_4pages.pdf").read_bytes()
    with open_pages(data, LIMITS, DOCS, 72) as pages:
        layer = pages.text_layer(3, "auto")
    assert layer is not None
    text = "".join(line.text for line in layer.lines)
    assert "\U000f0854" in text and text.encode("utf-8")


def test_each_line_names_its_font_and_cjk_text_keeps_the_spaces_the_page_sets():
    """A line set in one face names it (a subset's tag left out), a line in mixed faces none;
    Korean spaces its words and Chinese does not, so a space is kept where the page has one."""
    data = (ROOT / "tests/data/born_digital/multi_page.pdf").read_bytes()
    layer, _ = layer_of(data)
    assert layer is not None
    assert [(line.font, line.text) for line in layer.lines[:2]] == [
        ("TimesNewRomanPS-BoldMT", "The Evolution of the Word Processor"),
        ("TimesNewRomanPSMT", layer.lines[1].text),
    ]
    korean, _ = layer_of((ROOT / "tests/data/born_digital/normal_4pages.pdf").read_bytes())
    assert korean is not None
    lines = {line.text: line.font for line in korean.lines}
    assert lines["1 들어가며"] == "KoPubDotumBold"
    assert lines["코로나-19 관련 보험약관상"] == "KoPubDotumBold"

    def chars(text: str, font: str = "F") -> list[text_layer.Char]:
        return [
            text_layer.Char(c, (10.0 * k, 0.0, 10.0 * k + 9, 12.0), False, font)
            for k, c in enumerate(text)
        ]

    (line,) = text_layer.layer_lines(chars("中文PDF文件 관련 보험"), hidden_too=False)
    assert line.text == "中文PDF文件 관련 보험" and line.font == "F"
    mixed = chars("Bold", "F-Bold") + chars("Bold text")[4:]
    (line,) = text_layer.layer_lines(mixed, hidden_too=False)
    assert line.text == "Bold text" and line.font == ""
