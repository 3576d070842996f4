"""Tables from a page's pixels and the boxes of its text (postprocessing/tables.py), on rendered
pages whose lines and ink boxes are known: no network."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.samples import RULED_CELLS, RULED_XS, layout_page, receipt, ruled_table
from triton_ocr.postprocessing.geometry import quad_of, turned_back
from triton_ocr.postprocessing.rules import RULE_SIDE
from triton_ocr.postprocessing.tables import (
    Segment,
    Table,
    find_tables,
    lone_columns_joined,
    turned_table,
)
from triton_ocr.postprocessing.words import Words
from triton_ocr.tools.samples import Placed, Sample, font, render


def page_of(sample: Sample) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(sample.png, np.uint8), cv2.IMREAD_COLOR)


def lines_of(sample: Sample, blocks: list[int] | None = None):
    """The sample's lines as the pipeline hands them over: texts, quads, blocks."""
    quads = np.array([quad_of(box) for box in sample.ink_boxes], np.float32).reshape(-1, 4, 2)
    block = np.array(blocks if blocks is not None else [0] * len(quads), np.int32)
    return sample.texts, quads, block


def grid_texts(table: Table) -> list[list[str | None]]:
    """rows x columns of cell texts, None where a spanning cell covers the place."""
    places: list[list[str | None]] = [[None] * table.columns for _ in range(table.rows)]
    for cell in table.cells:
        places[cell.row][cell.column] = cell.text
    return places


@pytest.mark.parametrize("down", [True, False])
def test_a_ruled_table_with_a_spanning_header_cell(down):
    # down False: no rule between the columns below the header, so each body row is one merged
    # grid cell, but its texts stand apart in the header's columns: the cells are the columns'
    sample = ruled_table(down=down)
    texts, quads, blocks = lines_of(sample)
    (table,) = find_tables(page_of(sample), texts, quads, blocks, None)
    assert table.ruled and (table.rows, table.columns) == (5, 4)
    assert grid_texts(table) == [list(row) for row in RULED_CELLS]
    spanning = [c for c in table.cells if c.column_span > 1]
    assert [(c.row, c.column, c.row_span, c.column_span) for c in spanning] == [(0, 1, 1, 2)]
    # every cell's box lies between its rules
    assert abs(spanning[0].box[0] - RULED_XS[1]) <= 3 and abs(spanning[0].box[2] - RULED_XS[3]) <= 3
    assert abs(table.box[0] - RULED_XS[0]) <= 3 and abs(table.box[2] - RULED_XS[-1]) <= 3


def test_a_page_over_the_rule_side_is_looked_at_scaled_and_answered_in_its_pixels():
    """A 4x page (3,040 px wide, over RULE_SIDE): the same table, its boxes in the large page's
    pixels."""
    sample = ruled_table()
    texts, quads, blocks = lines_of(sample)
    page = page_of(sample)
    large = cv2.resize(page, None, fx=4, fy=4, interpolation=cv2.INTER_LINEAR)
    assert max(large.shape[:2]) > RULE_SIDE
    (table,) = find_tables(large, texts, quads * 4, blocks, None)
    (small,) = find_tables(page, texts, quads, blocks, None)
    assert grid_texts(table) == grid_texts(small) == [list(row) for row in RULED_CELLS]
    assert np.allclose(table.box, np.array(small.box) * 4, atol=8)


def test_without_the_rules_the_same_text_is_read_as_an_unruled_table():
    ruled = ruled_table()
    plain = render(ruled.lines, ruled.size)  # the same text, no rules
    texts, quads, blocks = lines_of(plain)
    (table,) = find_tables(page_of(plain), texts, quads, blocks, None)
    assert not table.ruled and table.columns == 4
    rows = grid_texts(table)
    assert ["North", "1,200", "1,350", "12"] in rows and ["East", "1,500", "1,610", "15"] in rows


def test_a_table_ruled_down_its_columns_but_not_between_its_rows_is_read_by_its_rows():
    """Rules down every column, across only under the header and at the foot: the body is one
    band of the grid holding three rows, each opening with its label; the rows and columns
    are the text's (an unruled table), not one cell per column."""
    sample = ruled_table(across=False)
    texts, quads, blocks = lines_of(sample)
    (table,) = find_tables(page_of(sample), texts, quads, blocks, None)
    rows = grid_texts(table)
    assert not table.ruled and table.columns == 4
    for row in RULED_CELLS[2:]:
        assert list(row) in rows


def test_a_ruled_cell_of_several_lines_beside_its_label_stays_one_cell():
    """A fully ruled table whose cells hold a total and, under a blank line, a list: the lines
    after the first, side by side in two columns, open with no label, so they are the cells',
    not rows of their own."""
    size, xs, ys = 20, (40, 220, 460, 700), (40, 90, 260, 310)
    cells = (
        (("Groups",), ("Butter",), ("Margarine",)),
        (("Astra",), ("Total: 5%", "", "Bf (4.4%)"), ("Total: 47%", "", "Fruit (8.4%)", "Effi")),
        (("Cema",), ("Elles (6.7%)",), ("Primevere (1.3%)",)),
    )
    placed = [
        Placed(line, (xs[c] + 10, ys[r] + 10 + 30 * k), size)
        for r, row in enumerate(cells)
        for c, lines in enumerate(row)
        for k, line in enumerate(lines)
        if line
    ]
    sample = render(tuple(placed), size=(xs[-1] + 40, ys[-1] + 40))
    page = page_of(sample)
    for y in ys:
        cv2.line(page, (xs[0], y), (xs[-1], y), (0, 0, 0), 2)
    for x in xs:
        cv2.line(page, (x, ys[0]), (x, ys[-1]), (0, 0, 0), 2)
    texts, quads, blocks = lines_of(sample)
    (table,) = find_tables(page, texts, quads, blocks, None)
    assert table.ruled and (table.rows, table.columns) == (3, 3)
    assert grid_texts(table)[1] == ["Astra", "Total: 5% Bf (4.4%)", "Total: 47% Fruit (8.4%) Effi"]


def test_large_letters_are_not_rules():
    """Strokes of big type survive the opening (an I, a T's bar): no grid they make is a
    table, as they run through the text."""
    placed = (
        Placed("TITLE HEADLINE", (20, 20), 120),
        Placed("small print under it", (20, 200), 20),
    )
    sample = render(placed, (1400, 260))
    texts, quads, blocks = lines_of(sample)
    assert find_tables(page_of(sample), texts, quads, blocks, None) == []


def test_a_receipt_is_an_unruled_table_of_items_and_prices():
    sample = receipt()
    texts, quads, blocks = lines_of(sample)
    tables = find_tables(page_of(sample), texts, quads, blocks, None)
    assert tables and all(not t.ruled for t in tables)
    rows = [row for t in tables for row in grid_texts(t)]
    priced = [row for row in rows if len(row) == 2 and row[1] and row[1][-1].isdigit()]
    assert len(priced) >= 3


def test_columns_of_prose_are_not_a_table():
    for kind in ("two-columns", "three-columns"):
        sample = layout_page(kind)
        texts, quads, _ = lines_of(sample)
        # as the block code gives them: each column its block
        column = np.digitize(quads[:, 0, 0], np.unique(quads[:, 0, 0])[1:] - 1)
        for blocks in (column, np.zeros(len(texts), np.int32)):  # and read as one block
            found = find_tables(page_of(sample), texts, quads, blocks.astype(np.int32), None)
            assert found == [], kind


def test_a_header_and_one_row_of_many_columns_are_a_table_two_short_rows_are_not():
    """PubTabNet's one-row tables: a header and a row of six cells; two rows of three cells
    (a form's labels and values) are not enough to tell a table."""

    def grid(rows: list[tuple[str, ...]], xs: tuple[int, ...]) -> list[Table]:
        placed = tuple(
            Placed(text, (x, 30 + 40 * r), 20, face="DejaVuSans.ttf")
            for r, row in enumerate(rows)
            for x, text in zip(xs, row, strict=True)
        )
        sample = render(placed, (xs[-1] + 160, 40 + 40 * len(rows)))
        texts, quads, blocks = lines_of(sample)
        return find_tables(page_of(sample), texts, quads, blocks, None)

    wide = [
        ("Trait", "Count", "Mean", "Deviation", "Min", "Max"),
        ("SCS", "1058", "-0.10", "0.383", "-1.2", "1.07"),
    ]
    (table,) = grid(wide, (20, 140, 260, 380, 530, 640))
    assert grid_texts(table) == [list(row) for row in wide]
    assert grid([("Name", "Date", "Total"), ("Ada", "1 May", "12.00")], (20, 200, 380)) == []


def merged_cells(rows, xs, merge: tuple[int, int]):
    """A table rendered with the cells of columns `merge` in every row but the first read as
    one line of two words (the detector ran them together): its texts, quads and words."""
    placed = tuple(
        Placed(text, (x, 30 + 40 * r), 20, face="DejaVuSans.ttf")
        for r, row in enumerate(rows)
        for x, text in zip(xs, row, strict=True)
    )
    sample = render(placed, (xs[-1] + 200, 40 + 40 * len(rows)))
    boxes, texts = list(sample.ink_boxes), list(sample.texts)
    lines, words, owners = [], [], []
    for k, (box, text) in enumerate(zip(boxes, texts, strict=True)):
        r, c = divmod(k, len(xs))
        if r and c == merge[1]:
            continue  # joined to the cell before it
        if r and c == merge[0]:
            right = boxes[k + 1]
            merged = (box[0], min(box[1], right[1]), right[2], max(box[3], right[3]))
            lines.append((f"{text} {texts[k + 1]}", merged))
            words += [(text, box), (texts[k + 1], right)]
            owners += [len(lines) - 1] * 2
        else:
            lines.append((text, box))
            words.append((text, box))
            owners.append(len(lines) - 1)
    quads = np.array([quad_of(b) for _, b in lines], np.float32)
    found = Words(
        [t for t, _ in words],
        np.array([quad_of(b) for _, b in words], np.float32),
        np.ones(len(words), np.float32),
        np.array(owners, np.int32),
    )
    blocks = np.zeros(len(lines), np.int32)
    return page_of(sample), [t for t, _ in lines], quads, blocks, found


def test_two_columns_the_detector_ran_together_are_parted_where_their_words_are():
    """Numbers in two close columns read as one line in every row: the words' common gap
    parts them, as the header's separate words do."""
    rows = [("State", "no.", "Rate", "Share")]
    rows += [("Ohio", "19,820", "154.0", "12%"), ("Iowa", "5,469", "141.6", "8%")]
    rows += [("Texas", "25,933", "132.2", "31%"), ("Utah", "1,302", "99.1", "2%")]
    page, texts, quads, blocks, words = merged_cells(rows, (20, 160, 243, 420), (1, 2))
    (table,) = find_tables(page, texts, quads, blocks, words)
    assert grid_texts(table) == [list(row) for row in rows]


def test_a_line_run_across_two_cells_is_cut_between_its_words():
    """The detector's line over "Apples 3" (two cells close together) splits at the gutter the
    other rows leave, its words going to their columns."""
    rows = [("Item", "Qty", "Price"), ("Apples", "3", "0.40"), ("Bread", "1", "2.10")]
    rows += [("Cheese", "2", "3.75"), ("Olives", "1", "6.90")]
    xs = (40, 200, 320)
    placed = tuple(
        Placed(text, (x, 30 + 40 * r), 20, face="DejaVuSans.ttf")
        for r, row in enumerate(rows)
        for x, text in zip(xs, row, strict=True)
    )
    sample = render(placed, (460, 260))
    boxes = list(sample.ink_boxes)
    # the first two cells of row 1 come as one line, with its two words
    texts = [t for k, t in enumerate(sample.texts) if k != 4]
    texts[3] = "Apples 3"
    merged = (
        boxes[3][0],
        min(boxes[3][1], boxes[4][1]),
        boxes[4][2],
        max(boxes[3][3], boxes[4][3]),
    )
    line_boxes = [*boxes[:3], merged, *boxes[5:]]
    quads = np.array([quad_of(b) for b in line_boxes], np.float32)
    words = Words(
        ["Apples", "3"],
        np.array([quad_of(boxes[3]), quad_of(boxes[4])], np.float32),
        np.ones(2, np.float32),
        np.array([3, 3], np.int32),
    )
    blocks = np.zeros(len(texts), np.int32)
    (table,) = find_tables(page_of(sample), texts, quads, blocks, words)
    assert grid_texts(table) == [list(row) for row in rows]


def one_table(rows, xs, closer) -> Table:
    """The one table found on a page of `rows` (None: no text) set at `xs` in 20-pixel type,
    each row 42 pixels under the one before, 22 where `closer(row)` (a cell's next line)."""
    ys, y = [], 30
    for row in rows:
        y += 22 if closer(row) else 42
        ys.append(y)
    placed = tuple(
        Placed(text, (x, top), 20, face="DejaVuSans.ttf")
        for row, top in zip(rows, ys, strict=True)
        for x, text in zip(xs, row, strict=True)
        if text
    )
    sample = render(placed, (600, ys[-1] + 60))
    texts, quads, blocks = lines_of(sample)
    (table,) = find_tables(page_of(sample), texts, quads, blocks, None)
    return table


def test_a_cells_next_line_and_a_section_label_stay_in_one_table():
    rows = [
        ("Code", "Status", "Amount"),
        ("A1", "Paid in full", "10.00"),
        ("A2", "Paid in part, the rest", "20.00"),
        (None, "due in May", None),  # the cell above goes on
        ("Refunds", None, None),  # a section's label
        ("B1", "Refunded", "5.00"),
        ("B2", "Refunded", "7.50"),
    ]
    table = one_table(rows, (40, 160, 460), lambda row: row[0] is None)
    got = grid_texts(table)
    assert got[0] == ["Code", "Status", "Amount"]
    assert ["A2", "Paid in part, the rest due in May", "20.00"] in got
    assert ["Refunds", "", ""] in got and got[-1] == ["B2", "Refunded", "7.50"]
    assert table.rows == 6


def test_a_row_label_broken_where_its_next_word_would_not_fit_is_one_cell():
    rows = [
        ("Measure", "2019", "2020"),
        ("Median household income", "49.5", "51.3"),
        ("Households below poverty", "12", "13"),  # the label column's widest line
        ("Between-state income", "0.06", "0.07"),
        ("inequality (Gini index)", None, None),  # "inequality" would not have fit above
        ("Total", "5", "6"),
        ("Women", None, None),  # as close under, but it would have fit: a label of its own
        ("Under 20", "1", "2"),
    ]
    table = one_table(rows, (40, 380, 480), lambda row: row[1] is None)
    got = grid_texts(table)
    assert ["Between-state income inequality (Gini index)", "0.06", "0.07"] in got
    assert ["Total", "5", "6"] in got and ["Women", "", ""] in got
    assert table.rows == 7


def test_header_cells_of_two_lines_are_one_cell_each():
    # before the body (its first row with a label and half the columns), a row close under
    # another with text only in its columns goes on that row's cells, set apart or not
    rows = [
        (None, None, None, "2019", "2020", "2021", "2022"),
        ("Area", "Lot", "Lot", None, None, None, None),
        (None, "type", "size", None, None, None, None),
        ("North", "A", "25", "1", "2", "3", "4"),
        ("South", "B", "50", "5", "6", "7", "8"),
        ("East", "A", "25", "9", "10", "11", "12"),
    ]
    table = one_table(rows, (20, 110, 200, 290, 360, 430, 500), lambda row: row[0] is None)
    got = grid_texts(table)
    assert ["Area", "Lot type", "Lot size", "", "", "", ""] in got
    assert got[-1] == ["East", "A", "25", "9", "10", "11", "12"] and table.rows == 5


def test_a_heads_word_boxed_apart_is_not_a_column_of_its_own():
    # made-up boxes: the head "% Pos" over a column of figures came as two pieces, a gutter
    # apart, so the gutters gave "%" a column that no other row has text in
    def piece(text: str, x0: float, x1: float, row: int) -> Segment:
        return Segment((x0, 40.0 * row, x1, 40.0 * row + 20), text, row, 0)

    run = [[piece("Item", 40, 90, 0), piece("N", 300, 315, 0)]]
    run[0] += [piece("%", 390, 406, 0), piece("Pos", 445, 485, 0)]
    for r, (item, n, value) in enumerate([("Apples", "109", "0.9"), ("Pears", "93", "1.1")], 1):
        run.append([piece(item, 40, 110, r), piece(n, 300, 335, r), piece(value, 450, 480, r)])
    cuts = [200.0, 362.0, 425.0]  # Item | N | % | Pos
    assert lone_columns_joined(run, cuts) == [200.0, 362.0]  # "%" joins "Pos", the nearer
    # a column with text in two rows or more is a column
    run[1].append(piece("x", 392, 402, 1))
    assert lone_columns_joined(run, cuts) == cuts


def test_a_table_turned_back_keeps_its_rows_and_columns():
    sample = ruled_table()
    texts, quads, blocks = lines_of(sample)
    (table,) = find_tables(page_of(sample), texts, quads, blocks, None)
    w, h = sample.size
    moved = turned_table(table, lambda points: turned_back(points, 90, (h, w)))
    assert (moved.rows, moved.columns) == (table.rows, table.columns)
    # the upright page's top edge was the sent page's right edge: x runs down from h - y
    x0, y0, x1, y1 = table.box
    assert moved.box == (h - y1, x0, h - y0, x1)
    assert [c.text for c in moved.cells] == [c.text for c in table.cells]


def test_columns_of_figures_set_close_are_still_cells():
    """A statistics table's figures, their columns a fifth of a line height apart (less than a
    space between words): each row's figures still stand in cells of their own."""
    rows = [("Ohio", f"1{k},820", f"15{k}.0", f"(15{k}.8-156.1)") for k in range(5)]
    face, size, gap = "DejaVuSans.ttf", 20, 2
    widths = [font(size, face).getlength(text) for text in rows[0][1:]]
    xs = [20, 200]
    for width in widths[:-1]:
        xs.append(int(xs[-1] + width + gap))
    table = one_table(rows, tuple(xs), lambda row: False)
    assert grid_texts(table) == [list(row) for row in rows]


def test_a_header_of_groups_over_columns_and_a_label_beside_both_rows():
    """A statistics table's header: each year centred over its "N" and "% Pos" columns spans
    both, and "Country", set between the years' row and theirs, spans both rows."""
    face = "DejaVuSans.ttf"
    placed = [Placed("Country", (20, 47), 20, face=face)]
    for x, year in ((200, "2007"), (380, "2006")):
        placed.append(Placed(year, (x + 38, 30), 20, face=face))
        placed += [Placed("N", (x + 10, 64), 20, face=face)]
        placed += [Placed("% Pos", (x + 70, 64), 20, face=face)]
    body = [
        ("Austria", "1,109", "0.9", "1,093", "1.1"),
        ("Germany", "1,123", "0.8", "2,290", "0.7"),
    ]
    body += [("Spain", "3,036", "0", "4,040", "0")]
    for r, row in enumerate(body):
        for x, text in zip((20, 200, 270, 380, 450), row, strict=True):
            placed.append(Placed(text, (x, 110 + 34 * r), 20, face=face))
    sample = render(tuple(placed), (600, 230))
    texts, quads, blocks = lines_of(sample)
    (table,) = find_tables(page_of(sample), texts, quads, blocks, None)
    assert grid_texts(table)[:2] == [
        ["Country", "2007", None, "2006", None],
        [None, "N", "% Pos", "N", "% Pos"],
    ]
    assert grid_texts(table)[2:] == [list(row) for row in body]
    spans = {c.text: (c.row, c.column, c.row_span, c.column_span) for c in table.cells}
    assert spans["Country"] == (0, 0, 2, 1)
    assert spans["2007"] == (0, 1, 1, 2) and spans["2006"] == (0, 3, 1, 2)
