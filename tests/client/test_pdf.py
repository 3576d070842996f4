"""The searchable-PDF writer on its own (client/pdf.py): what it does with given word boxes,
images and PDFs, read back with pdfium and pikepdf (the service's side: tests/e2e/)."""

from __future__ import annotations

import io

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageOps

from tests.documents import encrypted_pdf, make_pdf
from triton_ocr.client import pdf
from triton_ocr.client.results import Document, Page, TextLine, Word


def box(left: float, top: float, right: float, bottom: float):
    return ((left, top), (right, top), (right, bottom), (left, bottom))


def extracted(data: bytes, number: int = 0) -> str:
    document = pdfium.PdfDocument(data)
    try:
        return document[number].get_textpage().get_text_range()
    finally:
        document.close()


def blank_png(size=(600, 200), dpi=(100, 100), mode="RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, "white").save(buffer, "PNG", dpi=dpi)
    return buffer.getvalue()


def written(data: bytes, lines: tuple[TextLine, ...], size=(600, 200)) -> bytes:
    job = pdf.prepare(data)
    return pdf.searchable_pdf(job, Document((Page(0, *size, lines=lines),)))


def test_any_unicode_text_comes_back_as_written():
    # beyond the Basic Multilingual Plane and over 100 characters: several bfchar sections
    texts = ["naïve café 中文 𝛑 ∑", "".join(chr(0x4E00 + k) for k in range(150))]
    lines = tuple(
        TextLine(text, box(10, 20 + 60 * row, 590, 60 + 60 * row), 0.9)
        for row, text in enumerate(texts)
    )
    result = extracted(written(blank_png(), lines))
    assert [line.strip() for line in result.splitlines()] == texts


def test_words_are_drawn_apart_even_when_their_boxes_abut():
    words = (Word("abutting", box(10, 20, 200, 60), 0.9), Word("boxes", box(200, 20, 320, 60), 0.9))
    line = TextLine("abutting boxes", box(10, 20, 320, 60), 0.9, words)
    assert extracted(written(blank_png(), (line,))).strip() == "abutting boxes"


def test_an_image_page_has_the_images_size_at_its_dpi_and_keeps_a_jpeg_as_it_is():
    buffer = io.BytesIO()
    Image.new("RGB", (300, 150), (200, 30, 30)).save(buffer, "JPEG", dpi=(150, 150))
    jpeg = buffer.getvalue()
    source = pdf.prepare(jpeg).source
    with pikepdf.open(io.BytesIO(source)) as document:
        page = document.pages[0]
        assert [float(v) for v in page.mediabox] == pytest.approx([0, 0, 144, 72])
        (image,) = page.Resources.XObject.values()
        assert image.read_raw_bytes() == jpeg  # embedded, not re-encoded
    # no DPI stated: 96 (img2pdf's default); alpha: over white, as the server reads it
    source = pdf.prepare(blank_png((96, 48), dpi=None, mode="RGBA")).source
    with pikepdf.open(io.BytesIO(source)) as document:
        assert [float(v) for v in document.pages[0].mediabox] == pytest.approx([0, 0, 72, 36])


def test_a_jpeg_holding_more_pictures_is_one_page_of_its_first():
    """An MPO (a camera's photo and its large preview): the server reads the first picture, so
    the searchable PDF has that one page."""
    buffer = io.BytesIO()
    first, more = Image.new("RGB", (300, 150), (200, 30, 30)), Image.new("RGB", (40, 20))
    first.save(buffer, "MPO", dpi=(150, 150), save_all=True, append_images=[more])
    assert pdf.split_pages(buffer.getvalue())[0] == 1
    with pikepdf.open(io.BytesIO(pdf.prepare(buffer.getvalue()).source)) as document:
        (page,) = document.pages
        assert [float(v) for v in page.mediabox] == pytest.approx([0, 0, 144, 72])


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_turned_and_mirrored_images_show_as_the_server_reads_them(orientation):
    picture = Image.new("RGB", (120, 60), "white")
    picture.paste((255, 0, 0), (0, 0, 20, 20))  # a corner to tell the turns and flips apart
    exif = Image.Exif()
    exif[274] = orientation
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", exif=exif, dpi=(72, 72))
    upright = np.asarray(ImageOps.exif_transpose(Image.open(buffer)).convert("RGB"))
    document = pdfium.PdfDocument(pdf.prepare(buffer.getvalue()).source)
    shown = np.asarray(document[0].render(scale=1).to_pil().convert("RGB"))
    document.close()
    assert shown.shape == upright.shape
    assert np.abs(shown.astype(int) - upright).mean() < 1


def text_pdf(content: bytes) -> bytes:
    document = pikepdf.new()
    page = document.add_blank_page(page_size=(300, 100))
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.Contents = document.make_stream(content)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


LAYERED = (
    b"BT /F1 12 Tf 10 70 Td (visible words) Tj ET "
    b"BT 3 Tr /F1 12 Tf 10 40 Td (hidden guess) Tj ET "
    b"BT 0 Tr /F1 12 Tf 10 10 Td (still visible) Tj ET"
)


def test_stripping_text_removes_what_is_asked_and_keeps_the_rest():
    data = text_pdf(LAYERED)
    with pikepdf.open(io.BytesIO(data)) as document:
        pdf.strip_text(document, document.pages[0], invisible_only=True)
        buffer = io.BytesIO()
        document.save(buffer)
    text = extracted(buffer.getvalue())
    assert "visible words" in text and "still visible" in text and "hidden" not in text
    with pikepdf.open(io.BytesIO(data)) as document:
        pdf.strip_text(document, document.pages[0], invisible_only=False)
        operators = {str(op) for _, op in pikepdf.parse_content_stream(document.pages[0])}
        assert operators.isdisjoint(pdf.SHOW_TEXT) and "Tf" in operators


def test_redo_removes_an_earlier_layer_drawn_in_a_form():
    line = TextLine("an earlier guess", box(10, 20, 300, 60), 0.9)
    earlier = written(blank_png(), (line,))
    assert "earlier guess" in extracted(earlier)
    redo = pdf.prepare(earlier, "redo")
    again = TextLine("the new reading", box(10, 20, 300, 60), 0.9)
    document = pdf.renumbered(redo, Document((Page(0, 600, 200, lines=(again,)),)))
    assert extracted(pdf.searchable_pdf(redo, document)).strip() == "the new reading"


def test_pages_with_text_are_neither_sent_nor_changed_by_default():
    image_only = make_pdf([Image.new("RGB", (200, 100), "white")], resolution=72)
    with_text = text_pdf(LAYERED)
    job = pdf.prepare(with_text)
    assert job.send is None and pdf.searchable_pdf(job, Document(())) == with_text
    job = pdf.prepare(image_only)
    assert job.send == image_only and job.pages == (0,)
    # redo sends every page with its text hidden; force sends the input as it is
    redo = pdf.prepare(with_text, "redo")
    assert redo.pages == (0,) and extracted(redo.send).strip() == ""
    assert pdf.prepare(with_text, "force").send == with_text


def test_a_pdf_pikepdf_cannot_open_is_sent_as_it_is():
    broken = b"%PDF-1.7\nnot a pdf at all"
    job = pdf.prepare(broken)
    assert job.send == broken and job.source is None
    with pytest.raises(ValueError, match="cannot open the PDF"):
        pdf.searchable_pdf(job, Document((Page(0, 10, 10),)))


def test_unknown_modes_are_refused():
    with pytest.raises(ValueError, match="mode must be one of"):
        pdf.prepare(blank_png(), "sometimes")


def test_an_owner_protected_pdf_keeps_its_protection():
    protected = encrypted_pdf(user="")  # opens without a password; an owner's restrictions
    job = pdf.prepare(protected)
    line = TextLine("still protected", box(10, 10, 150, 40), 0.9)
    document = pdf.renumbered(job, Document((Page(0, 200, 100, lines=(line,)),)))
    result = pdf.searchable_pdf(job, document)
    with pikepdf.open(io.BytesIO(result)) as written_pdf:
        assert written_pdf.is_encrypted
    assert extracted(result).strip() == "still protected"


def test_resume_with_pdf_output_wants_the_pdf_too(tmp_path):
    from triton_ocr.client.inputs import OUT_SUFFIXES, outputs_done

    for suffix in OUT_SUFFIXES:  # an earlier run without --format pdf
        (tmp_path / f"scan{suffix}").write_text("x")
    assert outputs_done(tmp_path, "scan") and not outputs_done(tmp_path, "scan", pdf=True)
    (tmp_path / "scan.pdf").write_bytes(b"%PDF")
    assert outputs_done(tmp_path, "scan", pdf=True)


def test_split_pages_gives_each_page_as_it_renders_in_its_document():
    """The gateway's jsonl reads a PDF a page per request: each page alone must render as it
    does in the document, attributes it inherits from the page tree (/Rotate, MediaBox) too."""
    source = pikepdf.new()
    for _ in range(3):
        source.add_blank_page(page_size=(200, 300))
    source.Root.Pages.MediaBox = pikepdf.Array([0, 0, 400, 500])
    source.Root.Pages.Rotate = 90
    for page in source.pages:
        del page.obj.MediaBox
    buffer = io.BytesIO()
    source.save(buffer)
    count, apart = pdf.split_pages(buffer.getvalue())
    assert count == 3 and apart is not None
    singles = list(apart)
    assert len(singles) == 3
    whole = pdfium.PdfDocument(buffer.getvalue())
    for number, single in enumerate(singles):
        alone = pdfium.PdfDocument(single)
        assert len(alone) == 1
        assert (alone[0].get_size(), alone[0].get_rotation()) == ((500, 400), 90)
        assert (whole[number].get_size(), whole[number].get_rotation()) == ((500, 400), 90)
        alone.close()
    whole.close()


def test_split_pages_counts_what_it_does_not_split():
    frames = [Image.new("L", (50, 40), "white") for _ in range(3)]
    tiff = io.BytesIO()
    frames[0].save(tiff, "TIFF", save_all=True, append_images=frames[1:])
    one_page = make_pdf([Image.new("RGB", (100, 100), "white")])
    assert pdf.split_pages(tiff.getvalue()) == (3, None)  # the server reads a TIFF's frames
    assert pdf.split_pages(blank_png()) == (1, None)
    assert pdf.split_pages(one_page) == (1, None)
    assert pdf.split_pages(b"%PDF-1.7 broken") == (1, None)  # the service says why
