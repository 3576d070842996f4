"""Words stay apart (the default pack): plain English lines in common faces come back exactly as
rendered, spaces included, through both entry points: a page at 16-30 px, till receipts (items
and right-aligned prices), and the grid of six DejaVu faces at every even size from 14 to 32 px
(samples.english_grid)."""

from __future__ import annotations

import pytest

from tests.samples import ENGLISH_LINES, english_grid, receipt
from triton_ocr.client import OcrClient
from triton_ocr.tools.samples import render

PAGE = render(ENGLISH_LINES, size=(900, 500))


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_ensemble_reads_english_lines_with_their_spaces(server, protocol):
    with OcrClient(server.http if protocol == "http" else server.grpc, protocol) as client:
        lines = client.read(PAGE.png)
    assert [line.text for line in lines] == PAGE.texts


def test_ocr_reads_english_lines_with_their_spaces(server):
    with OcrClient(server.grpc, "grpc") as client:
        (lines,) = client.read_many([PAGE.png])
    assert [line.text for line in lines] == PAGE.texts


def texts_of_both_entry_points(grpc: str, png: bytes) -> tuple[list[str], list[str]]:
    """The lines `ensemble_model` and `ocr` read from one image (another pack's server)."""
    with OcrClient(grpc, "grpc") as client:
        through_ensemble = client.read(png)
        (through_ocr,) = client.read_many([png])
    return [line.text for line in through_ensemble], [line.text for line in through_ocr]


def grid_misses(client: OcrClient, per_request: int = 10) -> list[str]:
    """The grid's lines that `ocr` did not read exactly, several pages per request."""
    pages = english_grid()
    misses = []
    for start in range(0, len(pages), per_request):
        batch = pages[start : start + per_request]
        for page, lines in zip(batch, client.read_many([p.png for p in batch]), strict=True):
            read = [line.text for line in lines]
            misses += [
                f"{p.face} {p.size}px: {p.text!r} not in {read}"
                for p in page.lines
                if p.text not in read
            ]
    return misses


def test_every_grid_line_reads_exactly(server):
    with OcrClient(server.grpc, "grpc") as client:
        assert grid_misses(client) == []


RECEIPTS = {
    "mono-20": receipt("DejaVuSansMono.ttf", 20),
    "sans-18": receipt("DejaVuSans.ttf", 18),
    "serif-16": receipt("DejaVuSerif.ttf", 16, width=400),
}


@pytest.mark.parametrize("name", RECEIPTS)
def test_receipts_read_item_by_item_with_their_spaces(server, name):
    """Every item, price and line of a till receipt comes back exactly as printed: the words of
    an item stay apart, and the gap before its price separates two texts."""
    sample = RECEIPTS[name]
    with OcrClient(server.grpc, "grpc") as client:
        through_ensemble = [line.text for line in client.read(sample.png)]
        through_ocr = [line.text for line in client.read_many([sample.png])[0]]
    assert sorted(through_ensemble) == sorted(sample.texts)
    assert sorted(through_ocr) == sorted(sample.texts)
