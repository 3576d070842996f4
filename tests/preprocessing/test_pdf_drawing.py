"""A PDF page's drawing measured before pdfium parses it: forms counted as often as they are
drawn, compressed streams decompressed no further than the allowance."""

import io

import pikepdf
import pypdfium2 as pdfium
import pytest

from triton_ocr.preprocessing.documents import open_pages
from triton_ocr.preprocessing.header import ImageDecodeError
from triton_ocr.preprocessing.pdf_drawing import drawing_bytes
from triton_ocr.settings import Documents, ImageLimits
from triton_ocr.tools.reliability.bombs import (
    nested_forms_pdf,
    text_operators_pdf,
    type3_glyph_pdf,
)

LIMITS = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=50_000_000)
DOCS = Documents(pdf_dpi=72, max_pdf_dpi=600, max_pages=100)


def page_drawing(content: bytes, form: bytes, name: str = "/X") -> pikepdf.Pdf:
    """A one-page PDF whose page draws with `content`, its resources naming one form."""
    pdf = pikepdf.new()
    drawn = pikepdf.Stream(pdf, form)
    drawn.Type, drawn.Subtype, drawn.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 9, 9]
    xobjects = pikepdf.Dictionary({name: drawn})
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=[0, 0, 200, 200],
                Contents=pikepdf.Stream(pdf, content),
                Resources=pikepdf.Dictionary(XObject=xobjects),
            )
        )
    )
    return pdf


def test_a_form_counts_each_time_it_is_drawn():
    pdf = page_drawing(b"/X Do /X Do q /X Do Q", b"0 0 1 1 re f")
    assert drawing_bytes(pdf.pages[0].obj, 1000) == 21 + 3 * 12


def test_a_form_named_with_escapes_is_the_form_it_names():
    pdf = page_drawing(b"/X#41 Do /XA Do", b"0 0 1 1 re f", name="/XA")
    assert drawing_bytes(pdf.pages[0].obj, 1000) == 15 + 2 * 12


def test_a_form_drawn_within_itself_counts_once():
    pdf = page_drawing(b"/X Do", b"/X Do")
    form = pdf.pages[0].obj.Resources.XObject.X
    form.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(X=form))
    assert drawing_bytes(pdf.pages[0].obj, 1000) == 5 + 5


def test_nested_forms_are_multiplied_not_expanded():
    with pikepdf.open(io.BytesIO(nested_forms_pdf(10, 3))) as pdf:
        # the page's "/X Do", forms of 10 draws of 29 bytes drawn 1, 10 and 100 times, and
        # the square's 12 bytes drawn 1000 times
        assert drawing_bytes(pdf.pages[0].obj, 10**9) == 5 + 111 * 290 + 1000 * 12
        assert drawing_bytes(pdf.pages[0].obj, 1000) == 1001


def test_a_compressed_stream_is_decompressed_no_further_than_the_allowance():
    with pikepdf.open(io.BytesIO(text_operators_pdf(2_000_000))) as pdf:
        assert drawing_bytes(pdf.pages[0].obj, 4096) == 4097


def test_an_annotation_s_appearance_counts_with_the_page():
    with pikepdf.open(io.BytesIO(nested_forms_pdf(10, 3, annotation=True))) as pdf:
        # as drawn by the page, less the page's own "/X Do"
        assert drawing_bytes(pdf.pages[0].obj, 10**9) == 111 * 290 + 1000 * 12


def test_a_type3_glyph_s_procedure_counts_once():
    with pikepdf.open(io.BytesIO(type3_glyph_pdf(10, 3))) as pdf:
        # the page's text, the glyph's procedure, and the forms it draws
        drawn = 111 * 290 + 1000 * 12
        assert drawing_bytes(pdf.pages[0].obj, 10**9) == 31 + 15 + drawn


BOMBS = [
    nested_forms_pdf(100, 3),
    nested_forms_pdf(100, 3, annotation=True),
    type3_glyph_pdf(100, 3),
    text_operators_pdf(2_000_000),
]


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_page_drawing_too_much_is_refused_before_pdfium_loads_it(bomb, monkeypatch):
    loads = []
    get_page = pdfium.PdfDocument.get_page

    def counted(document, index):
        loads.append(index)
        return get_page(document, index)

    monkeypatch.setattr(pdfium.PdfDocument, "get_page", counted)
    with open_pages(bomb, LIMITS, DOCS, dpi=72) as pages:
        with pytest.raises(ImageDecodeError, match="^page 1: its drawing holds more than 16 MB"):
            pages.page(0)
        with pytest.raises(ImageDecodeError, match="^page 1: its drawing"):
            pages.text_layer(0, "auto")
    assert loads == []


def test_a_page_within_the_allowance_is_read():
    with open_pages(nested_forms_pdf(10, 3), LIMITS, DOCS, dpi=72) as pages:
        assert pages.page(0).shape == (792, 612, 3)
