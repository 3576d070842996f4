"""Tables in every format (client side): parsed from the `ocr` table outputs, written as a GitHub
table (an HTML one where cells span) in Markdown, an `ocr_table` in hOCR and a table
`ComposedBlock` in ALTO, each line of a table written once, in its cell."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from lxml import etree
from markdown_it import MarkdownIt

from triton_ocr import contract
from triton_ocr.client import parse_ocr_outputs
from triton_ocr.client.results import Block, Cell, Document, Page, Table, TextLine

from .outputs import LINES, PAGES, WORDS, box, ocr_outputs
from .test_alto import ALTO, schema  # noqa: F401 (the schema fixture)

GFM = MarkdownIt("commonmark").enable("table")


def rect(x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[float, float], ...]:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def line(text: str, x: float, y: float, width: float = 80) -> TextLine:
    return TextLine(text, rect(x, y, x + width, y + 20), 0.9)


def table_page(spans: bool) -> Page:
    """A title, a 3 x 2 table (its header across both columns when `spans`) and a closing
    line, in blocks as the service reads them: the table's lines in one block."""
    title = line("Prices", 50, 20, 120)
    if spans:
        header = [line("Fruit and price", 60, 100, 200)]
    else:
        header = [line("Fruit", 60, 100), line("Price", 260, 100)]
    body = [line("Apple", 60, 140), line("0.40", 260, 140), line("Pear", 60, 180)]
    body += [line("0.55", 260, 180)]
    closing = line("Prices as of May.", 50, 260, 300)
    held = header + body
    blocks = (
        Block(rect(50, 20, 170, 40), (title,)),
        Block(rect(60, 100, 340, 200), tuple(held)),
        Block(rect(50, 260, 350, 280), (closing,)),
    )
    top = (
        [Cell(0, 0, 1, 2, rect(50, 95, 450, 125), "Fruit and price")]
        if spans
        else [
            Cell(0, 0, 1, 1, rect(50, 95, 250, 125), "Fruit"),
            Cell(0, 1, 1, 1, rect(250, 95, 450, 125), "Price"),
        ]
    )
    cells = (
        *top,
        Cell(1, 0, 1, 1, rect(50, 135, 250, 165), "Apple"),
        Cell(1, 1, 1, 1, rect(250, 135, 450, 165), "0.40"),
        Cell(2, 0, 1, 1, rect(50, 175, 250, 205), "Pear"),
        Cell(2, 1, 1, 1, rect(250, 175, 450, 205), "0.55"),
    )
    table = Table(rect(50, 95, 450, 205), 3, 2, cells)
    lines = (title, *held, closing)
    return Page(0, 600, 400, lines, blocks=blocks, tables=(table,))


def test_markdown_writes_a_table_where_its_lines_were():
    markdown = Document((table_page(spans=False),)).to_markdown()
    assert markdown.split("\n\n") == [
        "Prices",
        "| Fruit | Price |\n| --- | --- |\n| Apple | 0.40 |\n| Pear | 0.55 |",
        "Prices as of May.\n",
    ]
    kinds = [t.type for t in GFM.parse(markdown)]
    assert kinds.count("table_open") == 1 and kinds.count("td_open") == 4
    assert kinds.count("th_open") == 2


def test_markdown_writes_an_html_table_where_cells_span():
    markdown = Document((table_page(spans=True),)).to_markdown()
    table = markdown.split("\n\n")[1]
    assert table == (
        '<table>\n<tr><td colspan="2">Fruit and price</td></tr>\n'
        "<tr><td>Apple</td><td>0.40</td></tr>\n<tr><td>Pear</td><td>0.55</td></tr>\n</table>"
    )
    kinds = [t.type for t in GFM.parse(markdown)]
    assert kinds.count("html_block") == 1  # one block: no blank line splits it


def test_cell_text_is_escaped_in_both_tables():
    page = table_page(spans=False)
    cells = (Cell(0, 0, 1, 1, rect(50, 95, 250, 125), "a|b <i>"), *page.tables[0].cells[1:])
    tables = (Table(page.tables[0].polygon, 3, 2, cells),)
    gfm = Document((Page(0, 600, 400, page.lines, blocks=page.blocks, tables=tables),))
    assert "| a\\|b \\<i\\> |" in gfm.to_markdown()
    spanning = Cell(0, 0, 1, 2, rect(50, 95, 450, 125), "a<b")
    tables = (Table(page.tables[0].polygon, 3, 2, (spanning, *page.tables[0].cells[2:])),)
    html = Document((Page(0, 600, 400, page.lines, blocks=page.blocks, tables=tables),))
    assert '<td colspan="2">a&lt;b</td>' in html.to_markdown()


def test_hocr_puts_each_line_of_a_table_in_its_cell_once():
    page = table_page(spans=True)
    hocr = Document((page,)).to_hocr()
    root = ET.fromstring(hocr)
    ns = "{http://www.w3.org/1999/xhtml}"
    (table,) = [e for e in root.iter(f"{ns}table") if e.get("class") == "ocr_table"]
    assert table.get("title") == "bbox 50 95 450 205"
    rows = table.findall(f"{ns}tr")
    assert [len(r.findall(f"{ns}td")) for r in rows] == [1, 2, 2]
    assert rows[0].find(f"{ns}td").get("colspan") == "2"
    in_cells = [
        "".join(w.text for w in td.iter() if w.get("class") == "ocrx_word")
        for r in rows
        for td in r.findall(f"{ns}td")
    ]
    assert in_cells == ["Fruit and price", "Apple", "0.40", "Pear", "0.55"]
    written = [e for e in root.iter() if e.get("class") == "ocr_line"]
    assert len(written) == len(page.lines)  # every line once
    assert "ocr_table" in re.search(r"ocr-capabilities' content='([^']*)", hocr).group(1)


def test_alto_writes_a_table_as_a_composed_block_of_cells(schema):  # noqa: F811
    page = table_page(spans=False)
    alto = Document((page,)).to_alto()
    root = etree.fromstring(alto.encode())
    schema.assertValid(root)
    (composed,) = root.iter(f"{ALTO}ComposedBlock")
    assert composed.get("TYPE") == "table"
    cells = composed.findall(f"{ALTO}TextBlock")
    contents = [" ".join(s.get("CONTENT") for s in c.iter(f"{ALTO}String")) for c in cells]
    assert contents == ["Fruit", "Price", "Apple", "0.40", "Pear", "0.55"]
    assert len(list(root.iter(f"{ALTO}TextLine"))) == len(page.lines)


def table_outputs(pages: list[int]) -> dict[str, np.ndarray]:
    """Two tables (on the given pages among those read): a 1 x 2 and a 2 x 1 with a span."""
    return {
        contract.OCR_OUTPUT_TABLE_PAGE: np.array(pages, np.int32),
        contract.OCR_OUTPUT_TABLE_POLYGONS: np.array(
            [box(10, 10, 200, 40), box(10, 50, 200, 90)], np.float32
        ),
        contract.OCR_OUTPUT_TABLE_GRID: np.array([[1, 2], [2, 1]], np.int32),
        contract.OCR_OUTPUT_CELL_TABLE: np.array([0, 0, 1], np.int32),
        contract.OCR_OUTPUT_CELL_GRID: np.array(
            [[0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 2, 1]], np.int32
        ),
        contract.OCR_OUTPUT_CELL_POLYGONS: np.array(
            [box(10, 10, 100, 40), box(100, 10, 200, 40), box(10, 50, 200, 90)], np.float32
        ),
        contract.OCR_OUTPUT_CELL_TEXT: np.array([b"a", "b \u00e9".encode(), b""], np.object_),
    }


def test_tables_are_parsed_onto_their_pages():
    outputs = {**ocr_outputs(LINES, PAGES, WORDS), **table_outputs([0, 3])}
    first, second = parse_ocr_outputs(outputs, 2)
    (one,) = first.pages[0].tables
    assert (one.rows, one.columns) == (1, 2) and [c.text for c in one.cells] == ["a", "b \u00e9"]
    (other,) = second.pages[0].tables  # the 4th page read is item 1's image
    assert [(c.row_span, c.text) for c in other.cells] == [(2, "")]
    assert other.grid() == [[other.cells[0]], [None]]
    assert first.to_dict()["pages"][0]["tables"][0]["cells"][1] == {
        "row": 0,
        "column": 1,
        "row_span": 1,
        "column_span": 1,
        "polygon": [[100.0, 10.0], [200.0, 10.0], [200.0, 40.0], [100.0, 40.0]],
        "text": "b \u00e9",
    }
    # none asked for: empty outputs, and from a server without them
    empty = {name: value[:0] for name, value in table_outputs([0, 0]).items()}
    assert all(not p.tables for d in parse_ocr_outputs({**outputs, **empty}, 2) for p in d)
    assert all(
        not p.tables for d in parse_ocr_outputs(ocr_outputs(LINES, PAGES, WORDS), 2) for p in d
    )


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({contract.OCR_OUTPUT_TABLE_PAGE: np.array([0, 9], np.int32)}, "table_page"),
        ({contract.OCR_OUTPUT_TABLE_PAGE: np.array([3, 0], np.int32)}, "page order"),
        ({contract.OCR_OUTPUT_CELL_TABLE: np.array([0, 1, 0], np.int32)}, "table by table"),
        ({contract.OCR_OUTPUT_CELL_TEXT: np.array([b"a"], np.object_)}, "cell texts"),
        (
            {contract.OCR_OUTPUT_CELL_GRID: np.array([[0, 0, 1, 1], [0, 1, 1, 2], [0, 0, 2, 1]])},
            "outside its table",
        ),
    ],
)
def test_tables_that_do_not_hold_together_are_refused(change, says):
    outputs = {**ocr_outputs(LINES, PAGES, WORDS), **table_outputs([0, 3]), **change}
    with pytest.raises(ValueError, match=says):
        parse_ocr_outputs(outputs, 2)
