"""The ppocr-v6 pack (PP-OCRv6 small from the rapidocr 3.10.0 wheel), exported with the CLI and
served by the real Triton with `--pack ppocr-v6` beside the default pack's files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from triton_ocr import packs
from triton_ocr.client import OcrClient
from triton_ocr.postprocessing.alphabet import load_alphabet
from triton_ocr.samples import ENGLISH_LINES, render
from triton_ocr.server import ServerOptions, free_ports, running_server

PACK = "ppocr-v6"
CLI = str(Path(sys.executable).parent / "triton-ocr")
PAGES = [render(), render(ENGLISH_LINES, size=(900, 500))]


@pytest.fixture(scope="module")
def v6_server(repository, tmp_path_factory):
    subprocess.run([CLI, "export", PACK, "--repository", str(repository)], check=True, timeout=600)
    http, grpc, metrics = free_ports(3)
    log = tmp_path_factory.mktemp("triton-v6") / "server.log"
    with running_server(
        ServerOptions(repository, "127.0.0.1", http, grpc, metrics, pack=PACK), log_file=log
    ):
        yield f"127.0.0.1:{grpc}"


def test_the_files_sit_beside_the_default_packs(repository, v6_server):
    for model in ("text_detection", "text_recognition"):
        assert packs.model_file(repository, model, PACK) != packs.model_file(repository, model)
        assert packs.model_file(repository, model, PACK).is_file()


def test_the_alphabet_has_the_accented_latin_letters(repository, v6_server):
    recognizer = packs.model_file(repository, "text_recognition", PACK)
    alphabet = load_alphabet(recognizer.parent.parent, recognizer.name, "character", True)
    assert len(alphabet) == 18710  # blank + 18,708 characters + space: the recognizer's classes
    assert {"ã", "ç", "ü", "é", "ß"} <= set(alphabet)


@pytest.mark.parametrize("page", range(len(PAGES)))
def test_both_entry_points_read_the_lines_with_their_spaces(v6_server, page):
    sample = PAGES[page]
    with OcrClient(v6_server, "grpc") as client:
        through_ensemble = client.read(sample.png)
        (through_ocr,) = client.read_many([sample.png])
    assert [line.text for line in through_ensemble] == sample.texts
    assert [line.text for line in through_ocr] == sample.texts
