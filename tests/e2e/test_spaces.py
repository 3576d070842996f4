"""Words stay apart: a page of plain English lines in common faces at 16-30 px comes back
exactly as rendered, spaces included, through both entry points (crops take room above and
below each box: crop_margin)."""

from __future__ import annotations

import pytest

from triton_ocr.client import OcrClient
from triton_ocr.samples import ENGLISH_LINES, render

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


def test_crop_margin_changes_the_crops_not_the_polygons(server):
    with OcrClient(server.grpc, "grpc") as client:
        (tight,) = client.read_many([PAGE.png], crop_margin=0)
        (default,) = client.read_many([PAGE.png])
    assert [line.polygon for line in tight] == [line.polygon for line in default]
    assert [line.text for line in tight] != [line.text for line in default]  # words run together
