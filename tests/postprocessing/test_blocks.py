"""Lines into blocks in reading order: columns, headlines, sidebars, receipts, grids."""

from __future__ import annotations

import numpy as np

from triton_ocr.postprocessing.blocks import block_boxes, page_layout
from triton_ocr.settings import Blocks

BLOCKS = Blocks(column_gap=0.1, column_min_width=6, paragraph_gap=0.6)
H = 20  # line height in pixels


def quad(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def column(name: str, x0: float, x1: float, y0: float, rows: int, pitch: float = 26) -> list:
    return [(f"{name}{k}", quad(x0, y0 + k * pitch, x1, y0 + k * pitch + H)) for k in range(rows)]


def read(lines: list, shuffle: int = 0) -> tuple[list[str], list[int]]:
    """The names in reading order and their blocks, whatever order the boxes came in."""
    order = np.random.default_rng(shuffle).permutation(len(lines)) if shuffle else range(len(lines))
    names = [lines[i][0] for i in order]
    quads = np.array([lines[i][1] for i in order], np.float32)
    layout = page_layout(quads, BLOCKS)
    return [names[i] for i in layout.order], layout.block.tolist()


def test_two_columns_read_one_after_the_other_even_when_their_rows_align():
    page = column("L", 40, 440, 40, 8) + column("R", 480, 880, 40, 8)
    names, blocks = read(page, shuffle=1)
    assert names == [f"L{k}" for k in range(8)] + [f"R{k}" for k in range(8)]
    assert blocks == [0] * 8 + [1] * 8


def test_boxes_of_neighbouring_columns_may_touch_or_overlap():
    """The detector's boxes grow past the ink: a narrow gutter leaves boxes overlapping, and
    two lines across it may even merge into one box (which holds text of both columns, so it
    goes to the side of its centre)."""
    page = column("L", 40, 446, 40, 10) + column("R", 449, 860, 40, 10)
    page[3] = ("L3", quad(40, 40 + 3 * 26, 452, 40 + 3 * 26 + H))  # overlaps R3's box
    merged = ("M", quad(40, 40 + 10 * 26, 860, 40 + 10 * 26 + H))
    page += (
        [merged] + column("l", 40, 446, 40 + 11 * 26, 3) + column("r", 449, 860, 40 + 11 * 26, 3)
    )
    names, _ = read(page, shuffle=2)
    left = [f"L{k}" for k in range(10)] + [f"l{k}" for k in range(3)]
    assert [n for n in names if n != "M"] == left + [f"R{k}" for k in range(10)] + [
        f"r{k}" for k in range(3)
    ]


def test_three_columns_and_a_headline_spanning_two_of_them():
    page = [("masthead", quad(40, 10, 1200, 40))]
    page += column("A", 40, 400, 80, 12)
    page += [("headline", quad(440, 80, 1200, 130))]  # tall: set larger than body text
    page += column("B", 440, 800, 160, 9) + column("C", 840, 1200, 160, 9)
    names, blocks = read(page, shuffle=3)
    expected = ["masthead", *[f"A{k}" for k in range(12)], "headline"]
    assert names == expected + [f"B{k}" for k in range(9)] + [f"C{k}" for k in range(9)]
    assert len(set(blocks)) == 5


def test_a_full_width_paragraph_above_the_columns_reads_first():
    page = (
        column("P", 40, 880, 40, 3) + column("L", 40, 440, 160, 6) + column("R", 480, 880, 160, 6)
    )
    names, _ = read(page, shuffle=4)
    assert names == [f"P{k}" for k in range(3)] + [f"L{k}" for k in range(6)] + [
        f"R{k}" for k in range(6)
    ]


def test_a_running_header_first_and_a_page_number_last():
    page = [("header-left", quad(40, 10, 160, 30)), ("header-right", quad(760, 10, 880, 30))]
    page += column("L", 40, 440, 60, 6) + column("R", 480, 880, 60, 6)
    page += [("page number", quad(440, 260, 480, 280))]
    names, _ = read(page, shuffle=5)
    assert names[:2] == ["header-left", "header-right"] and names[-1] == "page number"
    assert names[2:-1] == [f"L{k}" for k in range(6)] + [f"R{k}" for k in range(6)]


def test_a_caption_across_the_gutter_does_not_join_the_columns():
    page = column("L", 40, 440, 40, 12) + column("R", 470, 870, 40, 12)
    page += [("caption", quad(400, 40 + 12 * 26 + 20, 510, 40 + 12 * 26 + 40))]
    names, _ = read(page, shuffle=6)
    columns = [n for n in names if n != "caption"]
    assert columns == [f"L{k}" for k in range(12)] + [f"R{k}" for k in range(12)]


def test_receipt_prices_stay_on_their_items_row():
    rows = [(f"item{k}", quad(20, 40 + 26 * k, 220 + 10 * k, 60 + 26 * k)) for k in range(6)]
    prices = [(f"price{k}", quad(400, 40 + 26 * k, 450, 60 + 26 * k)) for k in range(6)]
    names, blocks = read(rows + prices, shuffle=7)
    assert names == [n for k in range(6) for n in (f"item{k}", f"price{k}")]
    assert len(set(blocks)) == 1


def test_a_grid_reads_row_by_row():
    cells = [
        (f"r{r}c{c}", quad(40 + 160 * c, 40 + 50 * r, 120 + 160 * c, 60 + 50 * r))
        for r in range(5)
        for c in range(4)
    ]
    names, _ = read(cells, shuffle=8)
    assert names == [f"r{r}c{c}" for r in range(5) for c in range(4)]


def test_paragraphs_are_blocks_of_their_own():
    page = column("P", 40, 600, 40, 4) + column("Q", 40, 600, 40 + 4 * 26 + 20, 3)
    names, blocks = read(page)
    assert names == [f"P{k}" for k in range(4)] + [f"Q{k}" for k in range(3)]
    assert blocks == [0] * 4 + [1] * 3


def test_no_lines_no_blocks_and_block_boxes_hold_their_lines():
    empty = page_layout(np.zeros((0, 4, 2), np.float32), BLOCKS)
    assert empty.order.size == 0 and empty.block.size == 0
    quads = np.array([quad(10, 10, 50, 30), quad(20, 40, 90, 60)], np.float32)
    (box,) = block_boxes(quads, np.array([0, 0]), 1)
    assert box.tolist() == quad(10, 10, 90, 60)


def test_a_headline_close_over_the_columns_still_reads_first():
    """A big headline sits a hair above the columns (the detector's boxes of large text grow
    into the gap): it is cut off at the narrowest gap across the page."""
    page = [("headline", quad(40, 20, 860, 80))]  # three line heights tall
    page += column("L", 40, 440, 83, 8) + column("R", 480, 860, 83, 8)
    names, _ = read(page, shuffle=9)
    assert names == ["headline"] + [f"L{k}" for k in range(8)] + [f"R{k}" for k in range(8)]


def test_a_headline_whose_box_overlaps_the_columns_reads_first():
    """Close-set columns under a headline: the first lines' boxes reach up into the
    headline's, so no gap runs across the page under it; it is cut off at its own edge."""
    page = [("headline", quad(40, 20, 860, 80))]
    page += column("L", 40, 440, 76, 8) + column("R", 448, 860, 76, 8)
    names, _ = read(page, shuffle=11)
    assert names == ["headline"] + [f"L{k}" for k in range(8)] + [f"R{k}" for k in range(8)]


def test_a_pull_quote_set_into_the_columns_does_not_join_them():
    """Both columns run beside the quote, so it spans nothing: the columns read one after the
    other (the quote goes with the side of its centre)."""
    page = column("l", 40, 200, 40, 4) + column("r", 700, 860, 40, 4)  # narrowed by the quote
    page += [(f"quote{k}", quad(240, 40 + 30 * k, 660, 64 + 30 * k)) for k in range(3)]
    page += column("L", 40, 440, 40 + 4 * 26, 8) + column("R", 480, 860, 40 + 4 * 26, 8)
    names, _ = read(page, shuffle=10)
    left = [f"l{k}" for k in range(4)] + [f"L{k}" for k in range(8)]
    right = [f"r{k}" for k in range(4)] + [f"R{k}" for k in range(8)]
    assert [n for n in names if not n.startswith("quote")] == left + right


def offset_columns(offset: float, pitch: float, left_rows: int, right_rows: int) -> list:
    """A headline over two columns, the right one set `offset` lower, lines `pitch` apart."""
    page = [("headline", quad(40, 10, 700, 50))]
    page += column("L", 40, 440, 90, left_rows, pitch)
    return page + column("R", 480, 880, 90 + offset, right_rows, pitch)


def test_columns_set_off_by_up_to_a_line_and_spaced_up_to_three_lines_read_apart():
    """Typed letters, forms and double-spaced manuscripts: each line a paragraph of its own, the
    first and last rows of the columns are not a running header or footer across the page."""
    for offset in (0, 0.25 * H, 0.5 * H, 0.75 * H, H):
        for pitch in (1.3 * H, 2 * H, 3 * H, 4 * H):
            for left_rows, right_rows in ((8, 8), (8, 7), (7, 8)):
                page = offset_columns(offset, pitch, left_rows, right_rows)
                names, blocks = read(page, shuffle=4)
                left, right = (
                    [f"L{k}" for k in range(left_rows)],
                    [f"R{k}" for k in range(right_rows)],
                )
                assert names == ["headline", *left, *right], (offset, pitch, left_rows, right_rows)
                columns = blocks[1 : 1 + left_rows], blocks[1 + left_rows :]
                assert not set(columns[0]) & set(columns[1]) and blocks[0] not in blocks[1:]


def test_a_header_of_two_pieces_over_the_columns_still_reads_first():
    """A running header whose pieces are short (a title and a page number) stays a band."""
    page = [("title", quad(40, 10, 200, 30)), ("page", quad(820, 10, 880, 30))]
    page += column("L", 40, 440, 70, 8) + column("R", 480, 880, 70, 8)
    names, _ = read(page, shuffle=5)
    assert names == ["title", "page", *[f"L{k}" for k in range(8)], *[f"R{k}" for k in range(8)]]


def test_a_first_row_merged_across_the_gutter_does_not_join_the_columns_below_it():
    """The detector may merge the first lines of two columns into one box whose bottom the next
    lines' boxes overlap by a hair: it is not set apart from the columns, so it spans nothing
    and the columns still read one after the other."""
    page = [("M", quad(40, 40, 860, 40 + H))]
    page += column("L", 40, 446, 40 + H - 2, 9) + column("R", 449, 860, 40 + H - 2, 9)
    names, _ = read(page, shuffle=11)
    assert [n for n in names if n != "M"] == [f"L{k}" for k in range(9)] + [
        f"R{k}" for k in range(9)
    ]
