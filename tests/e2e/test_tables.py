"""Tables through the real server (`ocr` with tables=true): a ruled table with a spanning header
cell, the same page turned, an unruled grid, a born-digital PDF's table read from its text layer,
and none found or paid for without the parameter."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from tritonclient.utils import InferenceServerException

from tests.documents import table_pdf
from tests.e2e.conftest import Endpoints
from tests.samples import RULED_CELLS, layout_page, ruled_table
from triton_ocr.client import OcrClient
from triton_ocr.client.results import Table

TURNS = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}


def texts(table: Table) -> list[list[str | None]]:
    return [[cell.text if cell else None for cell in row] for row in table.grid()]


def inside(inner: tuple, outer: tuple, slack: float = 2.0) -> bool:
    (x0, y0), (x1, y1) = np.min(inner, axis=0), np.max(inner, axis=0)
    (a0, b0), (a1, b1) = np.min(outer, axis=0), np.max(outer, axis=0)
    return a0 - slack <= x0 and b0 - slack <= y0 and x1 <= a1 + slack and y1 <= b1 + slack


@pytest.mark.parametrize("degrees", [0, 90, 270])
def test_a_ruled_table_keeps_its_cells_and_spans_on_a_turned_page(server: Endpoints, degrees):
    """The page turned upright finds the same table; its boxes come back on the page as sent,
    each cell in its table, each line of a cell in it."""
    png = ruled_table().png
    if degrees:
        image = cv2.rotate(cv2.imdecode(np.frombuffer(png, np.uint8), 1), TURNS[degrees])
        png = cv2.imencode(".png", image)[1].tobytes()
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(png, tables=True).pages
    assert page.rotation == degrees
    (table,) = page.tables
    assert texts(table) == [list(row) for row in RULED_CELLS]
    assert [(c.row, c.column, c.column_span) for c in table.cells if c.column_span > 1] == [
        (0, 1, 2)
    ]
    assert all(inside(cell.polygon, table.polygon) for cell in table.cells)
    north = next(line for line in page.lines if line.text == "North")
    cell = next(cell for cell in table.cells if cell.text == "North")
    assert inside(north.polygon, cell.polygon, slack=4)


def test_tables_are_found_only_when_asked(server: Endpoints):
    png = ruled_table().png
    with OcrClient(server.grpc, "grpc") as client:
        plain = client.read_document(png)
        asked = client.read_document(png, tables=True)
        with pytest.raises(
            InferenceServerException, match="parameter 'tables': cannot read 'maybe' as bool"
        ):
            client.read_document(png, tables="maybe")
    assert plain[0].tables == () and len(asked[0].tables) == 1
    # the same lines either way, and no words unless asked for
    assert [line.text for line in plain[0].lines] == [line.text for line in asked[0].lines]
    assert all(not line.words for line in asked[0].lines)


def test_an_unruled_grid_is_a_table_of_its_rows_and_columns(server: Endpoints):
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(layout_page("grid").png, tables=True).pages
    (table,) = page.tables
    assert texts(table) == [
        ["Item", "Qty", "Price", "Total"],
        ["Apples", "3", "0.40", "1.20"],
        ["Bread", "1", "2.10", "2.10"],
        ["Cheese", "2", "3.75", "7.50"],
        ["Olive oil", "1", "6.90", "6.90"],
    ]


def test_a_born_digital_table_is_read_from_the_layer_with_its_rules(server: Endpoints):
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(table_pdf(), tables=True, word_boxes=True).pages
    assert page.read_from == "layer"
    (table,) = page.tables
    assert texts(table) == [list(row) for row in RULED_CELLS]
    assert all(line.words for line in page.lines)  # asked for: kept
