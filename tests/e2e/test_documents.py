"""Documents and word boxes against the real server: PDFs and multi-page TIFFs read page by page
through `ocr`, word boxes where the words are, and `triton-ocr read` over a mixed folder with
every output it writes (JSON Lines, hOCR, overlays) and --resume."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from fpdf.enums import TextMode
from PIL import Image, ImageDraw, ImageFont
from shapely.geometry import Polygon, box
from tritonclient.utils import InferenceServerException

from tests.conftest import ROOT
from tests.documents import (
    BORN_DIGITAL_COLUMNS,
    BORN_DIGITAL_HEADING,
    born_digital_pdf,
    encrypted_pdf,
    make_pdf,
    make_tiff,
    text_page,
)
from tests.e2e.conftest import Endpoints
from tests.samples import word_ink_boxes
from triton_ocr import contract
from triton_ocr.client import AsyncOcrClient, OcrClient
from triton_ocr.client.hocr import bbox_of
from triton_ocr.tools.evaluation.metrics import normalize
from triton_ocr.tools.reliability.payloads import connect, many_pages_pdf
from triton_ocr.tools.samples import Placed, render

CLI = Path(sys.executable).parent / "triton-ocr"
INVALID = ("400", "StatusCode.INVALID_ARGUMENT")


def page_sample(number: int):
    """A page with two lines of known text (DejaVu Sans, as the eval set's renders)."""
    lines = (
        Placed(f"Report page {number} of the audit", (40, 40), 30, face="DejaVuSans.ttf"),
        Placed(f"Invoice 2024-09{number}7 total 318.40 EUR", (40, 120), 30, face="DejaVuSans.ttf"),
    )
    return render(lines, size=(760, 220))


def image_of(sample) -> Image.Image:
    return Image.open(io.BytesIO(sample.png)).convert("RGB")


def encoded(image: Image.Image, fmt: str) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, quality=95) if fmt == "JPEG" else image.save(buffer, fmt)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """A mixed folder: a PNG, a JPEG, a 3-page PDF (text rendered, then saved as PDF) and a
    2-page TIFF; name -> the texts of each page."""
    root = tmp_path_factory.mktemp("scans")
    (root / "sub").mkdir()
    samples = {n: page_sample(n) for n in range(1, 8)}
    files = {
        "one.png": ([1], lambda s: s[0].png),
        "sub/two.jpg": ([2], lambda s: encoded(image_of(s[0]), "JPEG")),
        "report.pdf": ([3, 4, 5], lambda s: make_pdf([image_of(x) for x in s], 200)),
        "fax.tiff": ([6, 7], lambda s: make_tiff([image_of(x) for x in s])),
    }
    expected = {}
    for name, (numbers, make) in files.items():
        (root / name).write_bytes(make([samples[n] for n in numbers]))
        expected[name] = [[normalize(t) for t in samples[n].texts] for n in numbers]
    return root, expected


def page_texts(document) -> list[list[str]]:
    return [[normalize(line.text) for line in page.lines] for page in document.pages]


def test_ocr_reads_every_page_of_pdfs_and_tiffs(server: Endpoints, folder):
    root, expected = folder
    names = list(expected)
    with OcrClient(server.grpc, "grpc") as client:
        documents = client.read_documents([root / name for name in names])
    for name, document in zip(names, documents, strict=True):
        assert page_texts(document) == expected[name], name
        assert [p.number for p in document.pages] == list(range(len(expected[name])))
        assert all((p.width, p.height) == (760, 220) for p in document.pages), name


def test_pdf_dpi_is_a_request_parameter(server: Endpoints, folder):
    root, expected = folder
    with OcrClient(server.http) as client:
        document = client.read_document(root / "report.pdf", pdf_dpi=400)
        with pytest.raises(
            InferenceServerException,
            match="pdf_dpi=601 is out of range: it must be between 36 and 600",
        ):
            client.read_document(root / "report.pdf", pdf_dpi=601)
    assert [(p.width, p.height) for p in document.pages] == [(1520, 440)] * 3
    assert page_texts(document) == expected["report.pdf"]


def test_a_born_digital_page_is_read_from_its_text_layer(server: Endpoints):
    """pdf_text auto: the page's drawn text comes back as its layer holds it, in reading order,
    its words where pdfium puts them on the rendered page, read_from "layer"; pdf_text=ocr
    reads the same page by OCR; a scan with OCR text under it is OCRed; a bad pdf_text is
    refused naming its choices."""
    data = born_digital_pdf()
    document_pdf = pdfium.PdfDocument(data)
    exact = document_pdf[0].get_textpage().get_text_range().split()
    document_pdf.close()
    with OcrClient(server.grpc, "grpc") as client:
        layer = client.read_document(data, word_boxes=True)
        ocr = client.read_document(data, pdf_text="ocr")
        scan = client.read_document(
            born_digital_pdf(TextMode.INVISIBLE, text_page("Scanned", (595, 842), 48))
        )
        with pytest.raises(
            InferenceServerException,
            match="pdf_text='both' is out of range: it must be 'auto' or 'layer' or 'ocr'",
        ):
            client.read_document(data, pdf_text="both")
    (page,) = layer.pages
    assert page.read_from == "layer" and [line.score for line in page.lines] == [1.0] * 7
    assert [w.text for line in page.lines for w in line.words] == exact
    assert [line.text for line in page.lines] == [
        BORN_DIGITAL_HEADING,
        *(line for column in BORN_DIGITAL_COLUMNS for line in column),
    ]
    assert len(page.blocks) == 3 and (page.width, page.height) == (ocr[0].width, ocr[0].height)
    assert ocr[0].read_from == "ocr" and "born-digital" in ocr[0].text
    assert scan[0].read_from == "ocr" and "Scanned" in scan[0].text
    # a page that is a picture with drawn text over it: both, the drawn lines exact, OCR's
    # where none lie, nothing twice
    picture = Image.new("RGB", (595, 842), "white")
    ImageDraw.Draw(picture).text((60, 650), "Scanned words", "black", ImageFont.load_default(40))
    with OcrClient(server.grpc, "grpc") as client:
        (both,) = client.read_document(born_digital_pdf(picture=picture)).pages
    assert both.read_from == "both"
    assert [line.text for line in both.lines] == [
        BORN_DIGITAL_HEADING,
        *(line for column in BORN_DIGITAL_COLUMNS for line in column),
        "Scanned words",
    ]


def test_a_real_report_is_read_from_its_layers_characters_beyond_the_bmp_too(server: Endpoints):
    """A real Korean report (4 pages): every page from its layer, pdfium's characters on each,
    its private-use glyphs beyond the BMP (UTF-16 surrogate pairs in pdfium) in the text."""
    from triton_ocr.tools.evaluation.born_digital import pdfium_pages, plain

    data = (ROOT / "tests/data/born_digital/normal_4pages.pdf").read_bytes()
    with OcrClient(server.grpc, "grpc") as client:
        document = client.read_document(data)
    assert [page.read_from for page in document.pages] == ["layer"] * 4
    for page, truth in zip(document.pages, pdfium_pages(data), strict=True):
        assert sorted(plain(page.text)) == sorted(plain(truth))
    assert "\U000f0854" in document.pages[3].text


def test_a_layer_pages_plate_of_photos_is_a_figure(server: Endpoints):
    """A real handbook page read from its layer: its plate of five photos in a frame is looked
    for on the page rendered small, and comes back as a figure block with no lines where it
    lies at the request's DPI; the paper page beside it has none."""
    from triton_ocr.tools.evaluation.markdown import figure_scores, pictures

    handbook = (ROOT / "tests/data/born_digital/amt_handbook_sample.pdf").read_bytes()
    paper = (ROOT / "tests/data/born_digital/2305.03393v1-pg9.pdf").read_bytes()
    with OcrClient(server.grpc, "grpc") as client:
        document = client.read_document(handbook)
        plain_page = client.read_document(paper)
        half = client.read_document(handbook, pdf_dpi=100)
    assert document.pages[0].read_from == "layer"
    plate = (190.0, 1470.0, 900.0, 1925.0)  # Figure 7-26's frame at 200 dpi
    assert figure_scores([plate], pictures(document))["figures"] == [1, 1]
    assert figure_scores([tuple(v / 2 for v in plate)], pictures(half))["figures"] == [1, 1]
    assert pictures(plain_page) == []


def test_word_boxes_fall_on_the_rendered_words(server: Endpoints):
    lines = (
        Placed("Invoice 2024-0917 total 318.40 EUR", (40, 40), 30, face="DejaVuSans.ttf"),
        Placed("Please remit payment within 30 days", (60, 130), 24, face="DejaVuSerif.ttf"),
        Placed("Order number 48213 shipped", (40, 210), 36, face="DejaVuSansMono.ttf"),
    )
    sample = render(lines, size=(820, 290))
    truth = word_ink_boxes(sample)
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(sample.png, word_boxes=True).pages
        assert all(line.words == () for line in client.read_document(sample.png).pages[0].lines)
    words = [word for line in page.lines for word in line.words]
    # all of them, in reading order
    assert [normalize(w.text) for w in words] == [normalize(w) for w, _ in truth]
    for line in page.lines:  # a line's words are its text, split at the spaces
        assert " ".join(w.text for w in line.words) == " ".join(line.text.split())
    # The word boxes take their line's height (the detector's box, roomier than the ink), so
    # IoU with the tight ink boxes is bounded by the height ratio; they must hold the ink and
    # match it along the line.
    ink = [box(*b) for _, b in truth]
    found = [Polygon(w.polygon) for w in words]
    overlaps = [f.intersection(i).area / f.union(i).area for f, i in zip(found, ink, strict=True)]
    held = [f.intersection(i).area / i.area for f, i in zip(found, ink, strict=True)]
    along = [interval_iou(f.bounds[0::2], i.bounds[0::2]) for f, i in zip(found, ink, strict=True)]
    print("IoU", np.round(overlaps, 2), "ink held", np.round(held, 2), "x", np.round(along, 2))
    assert min(overlaps) >= 0.45 and float(np.mean(overlaps)) >= 0.55
    assert min(held) >= 0.75 and min(along) >= 0.7 and float(np.mean(along)) >= 0.85
    assert all(0 < w.score <= 1 for w in words)


def test_documents_are_refused_clearly_and_the_server_stays_up(server: Endpoints):
    module, client = connect("grpc", server.grpc)
    refusals = {
        "encrypted PDF": (encrypted_pdf(), "image 0: encrypted PDF: it needs a password"),
        "10000 pages": (many_pages_pdf(10_000), "PDF has 10000 pages; at most 100 per request"),
        "empty PDF": (make_pdf_without_pages(), "empty PDF"),
    }
    try:
        for name, (data, message) in refusals.items():
            with pytest.raises(InferenceServerException) as error:
                client.infer(contract.OCR_MODEL, [ocr_input(module, [data])])
            assert str(error.value.status()) in INVALID, name
            assert message in str(error.value), (name, str(error.value))
        pages = [make_pdf([image_of(page_sample(1))] * 60, 200)] * 2  # 120 pages, 100 allowed
        with pytest.raises(InferenceServerException, match="the request holds 120 pages; at most"):
            client.infer(contract.OCR_MODEL, [ocr_input(module, pages)])
        ensemble = np.frombuffer(encrypted_pdf(), np.uint8).reshape(1, -1)
        tensor = module.InferInput(contract.INPUT_IMAGE, list(ensemble.shape), "UINT8")
        tensor.set_data_from_numpy(ensemble)
        with pytest.raises(InferenceServerException, match="send documents .* to the `ocr` model"):
            client.infer(contract.ENSEMBLE_MODEL, [tensor])
    finally:
        client.close()
    with OcrClient(server.http) as ocr:  # still up, still reading
        assert [normalize(t.text) for t in ocr.read(page_sample(1).png)] == [
            normalize(t) for t in page_sample(1).texts
        ]
        with pytest.raises(ValueError, match="send documents .* `ocr` model"):
            ocr.read(encrypted_pdf())  # the client says so before sending


def interval_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    overlap = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


def make_pdf_without_pages() -> bytes:
    import pypdfium2

    document = pypdfium2.PdfDocument.new()
    buffer = io.BytesIO()
    document.save(buffer)
    document.close()
    return buffer.getvalue()


def ocr_input(module, items: list[bytes]):
    tensor = module.InferInput(contract.OCR_INPUT_IMAGES, [1, len(items)], "BYTES")
    tensor.set_data_from_numpy(np.array(items, dtype=np.object_).reshape(1, -1))
    return tensor


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_async_client_reads_documents(server: Endpoints, folder, protocol):
    import asyncio

    root, expected = folder
    url = server.http if protocol == "http" else server.grpc

    async def read_all():
        async with AsyncOcrClient(url, protocol) as client:
            return await asyncio.gather(
                client.read_document(root / "report.pdf", word_boxes=True),
                client.read(root / "one.png"),
                client.read_many([root / "one.png", root / "fax.tiff"]),
            )

    document, lines, many = asyncio.run(read_all())
    assert page_texts(document) == expected["report.pdf"]
    assert all(line.words for page in document.pages for line in page.lines)
    assert [normalize(line.text) for line in lines] == expected["one.png"][0]
    assert [[normalize(x.text) for x in found] for found in many] == [
        expected["one.png"][0],
        expected["fax.tiff"][0] + expected["fax.tiff"][1],
    ]


def run_read(*arguments: str, cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CLI), "read", *arguments],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_read_a_mixed_folder_to_jsonl_with_words_and_overlays(server: Endpoints, folder, tmp_path):
    root, expected = folder
    overlays = tmp_path / "overlays"
    done = run_read(
        str(root), "--url", server.http, "--jsonl", "--words", "--concurrency", "2",
        "--overlay", str(overlays), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    by_file = {}
    for record in records:
        by_file.setdefault(Path(record["file"]).relative_to(root).as_posix(), []).append(record)
    assert sorted(by_file) == sorted(expected)
    for name, pages in by_file.items():
        pages.sort(key=lambda r: r["page"])
        assert [r["page"] for r in pages] == list(range(1, len(expected[name]) + 1))
        assert [[normalize(x["text"]) for x in r["lines"]] for r in pages] == expected[name]
        for record in pages:
            assert (record["width"], record["height"]) == (760, 220)
            assert all(line["words"] for line in record["lines"])
    assert done.stderr.splitlines()[-1].startswith("4 files, 7 pages, 14 lines, 0 failed")
    drawn = sorted(p.relative_to(overlays).as_posix() for p in overlays.rglob("*.png"))
    assert drawn == sorted(
        ["one-p1.png", "sub/two-p1.png", "report-p1.png", "report-p2.png", "report-p3.png"]
        + ["fax-p1.png", "fax-p2.png"]
    ) or drawn == sorted(  # folder names appear only where names would clash
        [
            *("one-p1.png", "two-p1.png", "report-p1.png", "report-p2.png", "report-p3.png"),
            *("fax-p1.png", "fax-p2.png"),
        ]
    )
    for path in overlays.rglob("*.png"):
        with Image.open(path) as picture:
            assert picture.size == (2 * 760, 220)  # the page, and the text read beside it
            drawn = np.asarray(picture.convert("RGB"), int)
            assert (drawn[:, :760] != 255).any(axis=2).mean() > 0.15  # the page, boxes drawn
            assert (drawn[:, 762:] < 128).all(axis=2).sum() > 500  # the text, written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["overlays"]  # nothing else written


def test_read_writes_hocr_and_json_that_agree_and_resumes(server: Endpoints, folder, tmp_path):
    root, expected = folder
    out = tmp_path / "out"
    first = run_read(str(root), "--url", server.grpc, "--protocol", "grpc", "--words",
                     "--format", "hocr", "--out", str(out), cwd=tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""  # hOCR goes to the files only
    for name in ("one", "two", "report", "fax"):
        document = json.loads((out / f"{name}.json").read_text())
        hocr = ElementTree.parse(out / f"{name}.hocr").getroot()
        spans = {
            kind: [e for e in hocr.iter() if e.get("class") == kind]
            for kind in ("ocr_page", "ocr_line", "ocrx_word")
        }
        pages = document["pages"]
        assert len(spans["ocr_page"]) == len(pages)
        lines = [line for page in pages for line in page["lines"]]
        words = [word for line in lines for word in line["words"]]
        assert [title_bbox(e) for e in spans["ocr_line"]] == [
            bbox_of(line["polygon"], 760, 220) for line in lines
        ]
        assert [title_bbox(e) for e in spans["ocrx_word"]] == [
            bbox_of(word["polygon"], 760, 220) for word in words
        ]
        assert ["".join(e.itertext()) for e in spans["ocrx_word"]] == [w["text"] for w in words]
        assert (out / f"{name}.txt").read_text().split() == " ".join(
            line["text"] for line in lines
        ).split()
        # ALTO beside them, word for word (its schema is checked in tests/client/test_alto.py)
        alto = ElementTree.parse(out / f"{name}.alto.xml").getroot()
        strings = [
            e.get("CONTENT") for e in alto.iter("{http://www.loc.gov/standards/alto/ns-v4#}String")
        ]
        assert strings == [w["text"] for w in words]
        # Markdown beside them: its words are the lines' (the rendered pages have no running
        # heads), a page marker before each page but the first
        markdown = (out / f"{name}.md").read_text()
        shown = re.sub(r"<!-- page \d+ -->", " ", markdown).replace("\\\n", " ")
        assert shown.split() == " ".join(line["text"] for line in lines).split()
        assert markdown.count("<!-- page ") == len(pages) - 1
    # a second run with --resume reads only what is missing
    (out / "report.hocr").unlink()
    again = run_read(str(root), "--url", server.http, "--out", str(out), "--resume", "--json",
                     cwd=tmp_path)  # fmt: skip
    assert again.returncode == 0, again.stderr
    (record,) = [json.loads(line) for line in again.stdout.splitlines()]
    assert record["file"] == str(root / "report.pdf")
    assert "(3 done before, skipped)" in again.stderr.splitlines()[-1]
    assert (out / "report.hocr").is_file()
    # read again without --words, its ALTO still holds words: no String with a space
    document = json.loads((out / "report.json").read_text())
    words = [w["text"] for p in document["pages"] for line in p["lines"] for w in line["words"]]
    alto = ElementTree.parse(out / "report.alto.xml").getroot()
    strings = [
        e.get("CONTENT") for e in alto.iter("{http://www.loc.gov/standards/alto/ns-v4#}String")
    ]
    assert words and strings == words and not any(" " in s for s in strings)


def test_resume_reads_the_jsonl_file_stdout_extends(server: Endpoints, folder, tmp_path):
    root, _ = folder
    results = tmp_path / "results.jsonl"
    with results.open("a") as stdout:
        first = run_read(str(root / "one.png"), str(root / "fax.tiff"), "--url", server.http,
                         "--jsonl", cwd=tmp_path, stdout=stdout)  # fmt: skip
    assert first.returncode == 0, first.stderr
    with results.open("a") as stdout:
        second = run_read(str(root), "--url", server.http, "--jsonl", "--resume",
                          cwd=tmp_path, stdout=stdout)  # fmt: skip
    assert second.returncode == 0, second.stderr
    records = [json.loads(line) for line in results.read_text().splitlines()]
    files = [Path(r["file"]).name for r in records]
    assert sorted(files) == sorted(
        ["one.png", "fax.tiff", "fax.tiff", "two.jpg"] + ["report.pdf"] * 3
    )
    assert "(2 done before, skipped)" in second.stderr.splitlines()[-1]


def title_bbox(element) -> tuple[int, int, int, int]:
    title = element.get("title", "")
    part = next(p.strip() for p in title.split(";") if p.strip().startswith("bbox "))
    return tuple(int(v) for v in part.split()[1:])


def with_huge_page(pdf: bytes, page: int) -> bytes:
    """`pdf` with page `page` (0-based) made 200 x 200 inches: 40000 x 40000 px at 200 dpi."""
    import pikepdf

    document = pikepdf.open(io.BytesIO(pdf))
    document.pages[page].MediaBox = [0, 0, 14400, 14400]
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_a_bad_page_fails_alone_and_read_exits_1(server: Endpoints, tmp_path):
    """A document with a page that cannot be read answers with its other pages and an error
    for that page, in the client, the JSON and the exit code of `triton-ocr read`."""
    samples = [page_sample(n) for n in (1, 2, 3)]
    pdf = with_huge_page(make_pdf([image_of(s) for s in samples]), 1)
    with OcrClient(server.grpc, "grpc") as client:
        document = client.read_document(pdf)
    assert len(document) == 3
    assert [bool(p.error) for p in document] == [False, True, False]
    assert document[1].error.startswith("page 2: 40000x40000 pixels at 200 dpi exceeds the limit")
    assert (document[1].width, document[1].height) == (40000, 40000) and document[1].lines == ()
    expected = [[normalize(t) for t in s.texts] for s in samples]
    assert page_texts(document)[0] == expected[0] and page_texts(document)[2] == expected[2]
    (tmp_path / "scan.pdf").write_bytes(pdf)
    done = run_read("--url", server.http, "--json", "scan.pdf", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    pages = json.loads(done.stdout)["pages"]
    assert [p.get("error", "")[:7] for p in pages] == ["", "page 2:", ""]
    assert "error: scan.pdf: page 2: 40000x40000" in done.stderr
    assert "1 failed (1 pages not read)" in done.stderr
