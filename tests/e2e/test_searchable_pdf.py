"""`triton-ocr read --format pdf` against the real server: searchable PDFs from scans, images and
PDFs that already have text (--skip-text, --redo-ocr, --force-ocr), and the errors of PDFs it
cannot read."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image

from tests.documents import encrypted_pdf, make_pdf
from tests.searchable import (
    SCAN_DPI,
    check_lines,
    check_searchable,
    normalized,
    scan_pages,
    scan_pdf,
    turned_clockwise,
)
from triton_ocr.client.client import ReadOptions, read_files
from triton_ocr.tools.samples import Placed, render


def read_to_pdf(server, tmp_path: Path, name: str, data: bytes, **options) -> tuple[int, Path]:
    source = tmp_path / name
    source.write_bytes(data)
    out = tmp_path / "out"
    code = read_files(
        ReadOptions([source], url=server.http, output="pdf", out=out, progress=False, **options)
    )
    return code, out / f"{Path(name).stem}.pdf"


def page_texts(data: bytes) -> list[str]:
    document = pdfium.PdfDocument(data)
    try:
        return [normalized(page.get_textpage().get_text_range()) for page in document]
    finally:
        document.close()


@pytest.fixture(scope="module")
def scan():
    pages = scan_pages()
    return pages, scan_pdf(pages)


def test_a_scanned_pdf_becomes_searchable_with_its_pages_unchanged(server, tmp_path, scan):
    pages, source = scan
    code, result = read_to_pdf(server, tmp_path, "scan.pdf", source)
    assert code == 0
    check_searchable(source, result.read_bytes(), pages, SCAN_DPI)
    # beside the PDF, the other outputs of --out, pages numbered as in the scan
    assert (result.parent / "scan.json").is_file()


def test_an_image_becomes_a_page_at_its_own_resolution(server, tmp_path, scan):
    pages, _ = scan
    first = pages[0]
    buffer = io.BytesIO()
    first.image.save(buffer, "PNG", dpi=(200, 200))
    code, result = read_to_pdf(server, tmp_path, "page.png", buffer.getvalue())
    assert code == 0
    data = result.read_bytes()
    document = pdfium.PdfDocument(data)
    width, height = document[0].get_size()
    assert (width, height) == pytest.approx(
        (first.image.width * 72 / 200, first.image.height * 72 / 200), abs=0.01
    )
    document.close()
    check_searchable(make_pdf([first.image], resolution=200), data, [first], 200)


def test_sideways_content_gets_text_along_its_lines(server, tmp_path, scan):
    """A page scanned a quarter turn: the service reads it turned back, and every word's text
    runs down the page over its ink, where a reader selects it."""
    pages, _ = scan
    sideways = turned_clockwise(pages[0])
    buffer = io.BytesIO()
    sideways.image.save(buffer, "PNG", dpi=(SCAN_DPI, SCAN_DPI))
    code, result = read_to_pdf(server, tmp_path, "sideways.png", buffer.getvalue())
    assert code == 0
    assert '"rotation": 90' in (result.parent / "sideways.json").read_text()
    check_lines(result.read_bytes(), sideways)


def native_text_page(pdf: pikepdf.Pdf, text: str, invisible: bool, picture: Image.Image) -> None:
    """A page with an image of words and, over it, `text` in Helvetica: visible (a born-digital
    page) or in render mode 3 (an earlier OCR's layer)."""
    width, height = picture.size[0] * 72 / SCAN_DPI, picture.size[1] * 72 / SCAN_DPI
    grey = picture.convert("L")
    image = pikepdf.Stream(
        pdf,
        zlib.compress(grey.tobytes()),
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Image,
        Width=grey.width,
        Height=grey.height,
        ColorSpace=pikepdf.Name.DeviceGray,
        BitsPerComponent=8,
        Filter=pikepdf.Name.FlateDecode,
    )
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    mode = 3 if invisible else 0
    content = (
        f"q {width} 0 0 {height} 0 0 cm /Im Do Q "
        f"BT {mode} Tr /F1 14 Tf 30 {height - 24} Td ({text}) Tj ET"
    ).encode()
    page = pdf.add_blank_page(page_size=(width, height))
    page.Resources = pikepdf.Dictionary(
        XObject=pikepdf.Dictionary(Im=image), Font=pikepdf.Dictionary(F1=font)
    )
    page.Contents = pdf.make_stream(content)


@pytest.fixture(scope="module")
def mixed(scan) -> bytes:
    """Three pages: an image-only scan page; a born-digital page (visible text "Native words
    stay here") over an image of words; an earlier OCR's page (invisible "stale guess")."""
    pages, _ = scan
    words = render(
        (Placed("Printed words in the picture", (60, 120), 36, face="DejaVuSans.ttf"),),
        size=(1000, 260),
    )
    picture = Image.open(io.BytesIO(words.png))
    pdf = pikepdf.open(io.BytesIO(make_pdf([pages[0].image], resolution=SCAN_DPI)))
    native_text_page(pdf, "Native words stay here", invisible=False, picture=picture)
    native_text_page(pdf, "stale guess", invisible=True, picture=picture)
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


def test_skip_text_leaves_pages_with_text_as_they_are(server, tmp_path, scan, mixed):
    pages, _ = scan
    code, result = read_to_pdf(server, tmp_path, "mixed.pdf", mixed)
    assert code == 0
    texts = page_texts(result.read_bytes())
    assert all(line in texts[0] for line, _ in pages[0].lines)  # the scan page was read
    assert texts[1:] == page_texts(mixed)[1:]  # the others keep their own text, nothing added
    with pikepdf.open(result) as out, pikepdf.open(io.BytesIO(mixed)) as original:
        for number in (1, 2):
            assert out.pages[number].Contents.read_bytes() == (
                original.pages[number].Contents.read_bytes()
            )
    # only the page without text was sent: the other outputs list that page alone
    assert '"page": 1' in (result.parent / "mixed.json").read_text()
    assert '"page": 2' not in (result.parent / "mixed.json").read_text()


def test_redo_ocr_replaces_the_old_layer_and_keeps_the_visible_text(server, tmp_path, mixed):
    code, result = read_to_pdf(server, tmp_path, "mixed.pdf", mixed, pdf_text="redo")
    assert code == 0
    texts = page_texts(result.read_bytes())
    assert "Native words stay here" in texts[1]
    assert texts[1].count("Native words") == 1  # the visible text was not read a second time
    assert "Printed words in the picture" in texts[1]
    assert "stale guess" not in texts[2]
    assert "Printed words in the picture" in texts[2]


def test_force_ocr_rasterises_every_page_and_reads_it(server, tmp_path, mixed):
    code, result = read_to_pdf(server, tmp_path, "mixed.pdf", mixed, pdf_text="force")
    assert code == 0
    data = result.read_bytes()
    texts = page_texts(data)
    assert "Native words stay here" in texts[1]  # read from its rendering now
    assert "stale guess" not in texts[2]
    with pikepdf.open(io.BytesIO(data)) as out, pikepdf.open(io.BytesIO(mixed)) as original:
        for new, old in zip(out.pages, original.pages, strict=True):
            assert new.mediabox == old.mediabox
            assert "/F1" not in new.Resources.get("/Font", {})  # no font of its own is left
    before, after = pdfium.PdfDocument(mixed), pdfium.PdfDocument(data)
    try:  # each page still looks as it did (anti-aliased text edges differ a little)
        for old, new in zip(before, after, strict=True):
            old_pixels = old.render(scale=SCAN_DPI / 72).to_numpy().astype(float)
            new_pixels = new.render(scale=SCAN_DPI / 72).to_numpy().astype(float)
            assert abs(old_pixels - new_pixels).mean() < 3
    finally:
        after.close()
        before.close()


def test_encrypted_and_broken_pdfs_get_the_errors_they_get_without_pdf(server, tmp_path, capsys):
    for name, data in (("locked.pdf", encrypted_pdf()), ("broken.pdf", b"%PDF-1.7\nnot a pdf")):
        code, result = read_to_pdf(server, tmp_path, name, data)
        as_pdf = capsys.readouterr().err
        source = tmp_path / name
        plain = read_files(ReadOptions([source], url=server.http, progress=False))
        as_text = capsys.readouterr().err
        assert code == plain == 1 and not result.exists()
        assert as_pdf.splitlines()[0] == as_text.splitlines()[0], (as_pdf, as_text)
