"""OCRmyPDF with the triton-ocr plugin, end to end: the real `ocrmypdf` command, the real server.

One run of the scan (tests/searchable.py) is shared by the checks of what it made; the other
runs are short ones that fail early or read one page. A `tesseract` that records its calls and
fails stands first on PATH in every run: none may call it.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pikepdf
import pypdfium2 as pdfium
import pytest
import tritonclient.http as httpclient

from tests.e2e.conftest import Endpoints
from tests.searchable import (
    SCAN_DPI,
    check_lines,
    check_searchable,
    normalized,
    scan_pages,
    scan_pdf,
    turned_clockwise,
)
from triton_ocr import contract
from triton_ocr.config.repository import AlphabetSource, Repository
from triton_ocr.export.ppocr import export_ppocr
from triton_ocr.serving.flags import free_ports

pytest.importorskip("ocrmypdf", reason="OCRmyPDF 17 needs Python 3.11+")
from ocrmypdf.exceptions import ExitCode  # noqa: E402
from ocrmypdf.hocrtransform import HocrParser  # noqa: E402

from triton_ocr import ocrmypdf as plugin  # noqa: E402

# The command users run (its workers fork from the main process; `python -m ocrmypdf` would
# use a fork server instead).
OCRMYPDF = str(Path(sys.executable).with_name("ocrmypdf"))
# No PDF/A (Ghostscript's part, not the plugin's) and no optimisation: quicker, and the same
# with or without Ghostscript on the machine.
QUICK = ["--output-type", "pdf", "--optimize", "0"]
TEXT_PAGE = "Born digital text stays as it was"
# Letters each language needs beyond a-z (or a sample of its script), to check PACK_LANGUAGES
# against the alphabets of the exported recognizers.
LETTERS = {
    "eng": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "chi_sim": "简体中文学习说话这样实际国语",
    "chi_tra": "繁體中文學習說話這樣實際國語",
    "cat": "àçèéíïòóúüÀÇÈÉÍÏÒÓÚÜ",
    "ces": "áčďéěíňóřšťúůýžÁČĎÉĚÍŇÓŘŠŤÚŮÝŽ",
    "dan": "æøåÆØÅ",
    "deu": "äöüßÄÖÜ",
    "fin": "äöåÄÖÅ",
    "fra": "àâçéèêëîïôùûüÿœæÀÂÇÉÈÊËÎÏÔÙÛÜŒÆ",
    "hun": "áéíóöőúüűÁÉÍÓÖŐÚÜŰ",
    "ita": "àèéìíòóùúÀÈÉÌÒÙ",
    "nld": "ëïéèáóúÉË",
    "nor": "æøåÆØÅ",
    "pol": "ąćęłńóśźżĄĆĘŁŃÓŚŹŻ",
    "por": "ãõáâàçéêíóôúÃÕÁÂÀÇÉÊÍÓÔÚ",
    "ron": "ăâîșțşţĂÂÎȘȚ",
    "spa": "áéíñóúüÁÉÍÑÓÚÜ¿",
    "swe": "åäöÅÄÖ",
    "tur": "çğıöşüÇĞİÖŞÜ",
}


@dataclass(frozen=True)
class Run:
    returncode: int
    stderr: str
    tesseract_calls: list[str]  # the arguments of each call of the fake tesseract
    ocr_calls: int  # requests the server's `ocr` model took during the run


def fake_tesseract(folder: Path) -> Path:
    """A folder holding a `tesseract` that writes down each call and fails."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "tesseract"
    program.write_text(f'#!/bin/sh\necho "$@" >> {folder / "calls"}\nexit 1\n')
    program.chmod(0o755)
    return folder


def ocr_requests(server: Endpoints) -> int:
    """Requests the `ocr` model has taken (succeeded or failed), from Triton's statistics."""
    client = httpclient.InferenceServerClient(server.http)
    try:
        stats = client.get_inference_statistics(contract.OCR_MODEL)["model_stats"][0]
    finally:
        client.close()
    done = stats["inference_stats"]
    return int(done["success"]["count"]) + int(done["fail"]["count"])


def run_ocrmypdf(server: Endpoints, folder: Path, *args: str | Path) -> Run:
    """The real `ocrmypdf` command with the plugin (gRPC unless `args` say otherwise)."""
    tools = fake_tesseract(folder / "fake-bin")
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    before = ocr_requests(server)
    command = [OCRMYPDF, "--plugin", "triton_ocr.ocrmypdf"]
    command += ["--triton-url", server.grpc, "--triton-protocol", "grpc", *map(str, args)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    calls = tools / "calls"
    return Run(
        done.returncode,
        done.stderr,
        calls.read_text().splitlines() if calls.exists() else [],
        ocr_requests(server) - before,
    )


@pytest.fixture(scope="module")
def scan(server, tmp_path_factory) -> SimpleNamespace:
    """The three-page scan OCRed once: its pages, the input, the output, the sidecar, the run."""
    folder = tmp_path_factory.mktemp("ocrmypdf")
    pages = scan_pages()
    source = folder / "scan.pdf"
    source.write_bytes(scan_pdf(pages))
    output, sidecar = folder / "out.pdf", folder / "out.txt"
    run = run_ocrmypdf(server, folder, *QUICK, "-j", "2", "--sidecar", sidecar, source, output)
    assert run.returncode == 0, run.stderr
    return SimpleNamespace(pages=pages, source=source, output=output, sidecar=sidecar, run=run)


def test_the_scan_becomes_searchable(scan):
    """Pages unchanged in size and look (the page stored sideways under /Rotate too), every
    line found in reading order over its ink."""
    check_searchable(scan.source.read_bytes(), scan.output.read_bytes(), scan.pages, SCAN_DPI)


def test_the_text_comes_from_the_service(scan, server):
    assert scan.run.tesseract_calls == []
    assert scan.run.ocr_calls == len(scan.pages)  # one `ocr` request per page
    with pikepdf.open(scan.output) as pdf:
        creator = str(pdf.docinfo["/Creator"])
    assert f"triton-ocr {plugin.__version__} (ppocr-v6 pack on Triton" in creator
    sidecar = scan.sidecar.read_text().split("\f")
    assert len(sidecar) == len(scan.pages)
    for text, page in zip(sidecar, scan.pages, strict=True):
        assert [normalized(row) for row in text.splitlines() if row.strip()] == [
            line for line, _ in page.lines
        ]


def test_a_page_scanned_sideways_is_read_as_it_lies(server, tmp_path):
    """Without --rotate-pages OCRmyPDF turns no page: the service reads the sideways text
    (page_orientation auto) and its lines run down the page, over their ink."""
    sideways = turned_clockwise(scan_pages()[2])
    source = tmp_path / "sideways.pdf"
    source.write_bytes(scan_pdf([sideways]))
    output = tmp_path / "searchable.pdf"
    run = run_ocrmypdf(server, tmp_path, *QUICK, source, output)
    assert run.returncode == 0, run.stderr
    assert run.ocr_calls == 1
    check_searchable(source.read_bytes(), output.read_bytes(), [sideways], SCAN_DPI)


def test_rotate_pages_turns_a_page_scanned_sideways_upright(server, tmp_path):
    """The service's page turn is OCRmyPDF's orientation: with --rotate-pages the sideways page
    is shown upright (/Rotate set, so its shown size swaps), each line level over its ink."""
    page = scan_pages()[0]
    source = tmp_path / "sideways.pdf"
    source.write_bytes(scan_pdf([turned_clockwise(page)]))
    output = tmp_path / "upright.pdf"
    run = run_ocrmypdf(server, tmp_path, *QUICK, "--rotate-pages", source, output)
    assert run.returncode == 0, run.stderr
    assert "page is facing ⇨, confidence 15.00 - will rotate" in run.stderr
    assert run.ocr_calls == 2  # the preview's orientation, then the page turned upright
    pdf = pdfium.PdfDocument(output)
    try:
        shown = pdf[0]
        width, height = shown.get_size()
        assert shown.get_rotation() != 0 and width > height
        found = normalized(shown.get_textpage().get_text_range())
        assert found == " ".join(line for line, _ in page.lines)
    finally:
        pdf.close()
    check_lines(output.read_bytes(), page)


def test_forked_workers_read_over_http(server, tmp_path):
    """OCRmyPDF's process workers (--no-use-threads, forked from the main process, which asked
    the service about itself) read their pages over HTTP too."""
    page = scan_pages()[1]
    source = tmp_path / "grey.pdf"
    source.write_bytes(scan_pdf([page]))
    output = tmp_path / "searchable.pdf"
    args = ["--triton-url", server.http, "--triton-protocol", "http", "--no-use-threads"]
    run = run_ocrmypdf(server, tmp_path, *QUICK, *args, source, output)
    assert run.returncode == 0, run.stderr
    assert run.ocr_calls == 1
    check_searchable(source.read_bytes(), output.read_bytes(), [page], SCAN_DPI)


def mixed_pdf(scan_page: bytes) -> bytes:
    """A born-digital text page (Helvetica, visible) followed by an image-only scan page."""
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont="/Helvetica"
        )
    )
    content = f"BT /F1 24 Tf 72 300 Td ({TEXT_PAGE}) Tj ET".encode()
    page = pdf.add_blank_page(page_size=(612, 396))
    page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.Contents = pdf.make_stream(content)
    with pikepdf.open(io.BytesIO(scan_page)) as scan:
        pdf.pages.append(scan.pages[0])
        buffer = io.BytesIO()
        pdf.save(buffer)
    return buffer.getvalue()


def page_texts(data: bytes) -> list[str]:
    pdf = pdfium.PdfDocument(data)
    try:
        return [normalized(page.get_textpage().get_text_range()) for page in pdf]
    finally:
        pdf.close()


def test_pages_with_text_follow_ocrmypdfs_rules(server, tmp_path):
    """By default a page with text stops the run (PriorOcrFoundError's exit code); with
    --skip-text it is kept as it was and only the scanned page goes to the service."""
    scanned = scan_pages()[0]
    source = tmp_path / "mixed.pdf"
    source.write_bytes(mixed_pdf(scan_pdf([scanned])))

    refused = run_ocrmypdf(server, tmp_path, *QUICK, source, tmp_path / "refused.pdf")
    assert refused.returncode == ExitCode.already_done_ocr, refused.stderr
    assert "page 1 already has text" in refused.stderr
    assert refused.ocr_calls == 0

    output = tmp_path / "skipped.pdf"
    run = run_ocrmypdf(server, tmp_path, *QUICK, "--skip-text", source, output)
    assert run.returncode == 0, run.stderr
    assert run.ocr_calls == 1 and run.tesseract_calls == []
    kept, read = page_texts(output.read_bytes())
    assert kept == TEXT_PAGE  # no OCR text added to the text page
    assert read == " ".join(line for line, _ in scanned.lines)
    with pikepdf.open(source) as before, pikepdf.open(output) as after:
        assert after.pages[0].Contents.read_bytes() == before.pages[0].Contents.read_bytes()


def test_a_wrong_address_fails_before_any_page(server, tmp_path):
    (port,) = free_ports(1)
    source = tmp_path / "scan.pdf"
    source.write_bytes(scan_pdf(scan_pages()[:1]))
    run = run_ocrmypdf(
        server, tmp_path, *QUICK, "--triton-url", f"127.0.0.1:{port}", source, tmp_path / "o.pdf"
    )
    assert run.returncode == ExitCode.missing_dependency, run.stderr
    assert f"no triton-ocr service answers at 127.0.0.1:{port} (grpc)" in run.stderr
    assert run.tesseract_calls == [] and not (tmp_path / "o.pdf").exists()


def test_the_grpc_port_over_http_says_what_to_pass(server, tmp_path):
    """Triton's gRPC port (8001, the one its users know) with the default protocol, HTTP."""
    source = tmp_path / "scan.pdf"
    source.write_bytes(scan_pdf(scan_pages()[:1]))
    args = ["--triton-url", server.grpc, "--triton-protocol", "http", source, tmp_path / "o.pdf"]
    started = time.monotonic()
    run = run_ocrmypdf(server, tmp_path, *QUICK, *args)
    assert time.monotonic() - started < 10  # OCRmyPDF's own start included
    assert run.returncode == ExitCode.missing_dependency, run.stderr
    assert "Traceback" not in run.stderr
    assert f"{server.grpc} speaks gRPC (HTTP/2), not HTTP/1.1: pass --triton-protocol grpc" in (
        run.stderr
    )
    assert run.tesseract_calls == [] and not (tmp_path / "o.pdf").exists()


def test_a_refused_request_names_the_page_and_the_reason(server, tmp_path):
    """A request the server refuses (over HTTP here) stops the run with its message."""
    source = tmp_path / "scan.pdf"
    source.write_bytes(scan_pdf(scan_pages()[:1]))
    args = ["--triton-url", server.http, "--triton-protocol", "http"]
    run = run_ocrmypdf(
        server,
        tmp_path,
        *QUICK,
        *args,
        "--triton-param",
        "text_score=5",
        source,
        tmp_path / "o.pdf",
    )
    assert run.returncode == ExitCode.child_process_error, run.stderr
    assert f"the triton-ocr service at {server.http} (http) could not read page 1" in run.stderr
    assert "text_score" in run.stderr and "out of range" in run.stderr


def test_a_language_the_pack_does_not_read_is_refused(server, tmp_path):
    source = tmp_path / "scan.pdf"
    source.write_bytes(scan_pdf(scan_pages()[:1]))
    run = run_ocrmypdf(server, tmp_path, *QUICK, "-l", "eng+rus", source, tmp_path / "o.pdf")
    assert run.returncode == ExitCode.bad_args, run.stderr
    assert "serves the ppocr-v6 pack, which does not read rus" in run.stderr
    assert run.ocr_calls == 0


def test_generate_hocr_writes_the_pages_lines(server, tmp_path):
    """The hOCR route (OCRmyPDF's pdf-to-hOCR API): hOCR OCRmyPDF's own parser reads back."""
    page = scan_pages()[0]
    image = tmp_path / "page.png"
    page.image.save(image, dpi=(SCAN_DPI, SCAN_DPI))
    options = SimpleNamespace(triton=plugin.TritonOptions(url=server.grpc, protocol="grpc"))
    hocr, text = tmp_path / "page.hocr", tmp_path / "page.txt"
    plugin.TritonOcrEngine.generate_hocr(image, hocr, text, options)
    tree = HocrParser(hocr).parse()
    assert [line.get_text_recursive() for line in tree.lines] == [t for t, _ in page.lines]
    assert text.read_text().split() == " ".join(t for t, _ in page.lines).split()


@pytest.mark.parametrize("pack", ["ppocr-v6", "ppocr-v6-tiny", "ppocr"])
def test_each_language_listed_for_a_pack_is_in_its_alphabet(repository, pack):
    """PACK_LANGUAGES claims no language whose letters the pack's recognizer lacks."""
    export_ppocr(repository, pack)  # the default pack is there already; ppocr maybe not yet
    repo = Repository(repository, pack)
    alphabet = set(repo.alphabet(repo.step(contract.GROUPED_RECOGNITION)[AlphabetSource]))
    missing = {
        language: "".join(letter for letter in LETTERS[language] if letter not in alphabet)
        for language in plugin.PACK_LANGUAGES[pack]
    }
    assert {language: gap for language, gap in missing.items() if gap} == {}
