"""Figures: pictures on document pages, found from the page's pixels beside its text, and set
among the blocks in reading order."""

from __future__ import annotations

import numpy as np

from triton_ocr.pipeline import with_block_types
from triton_ocr.postprocessing.figures import figure_places, find_figures
from triton_ocr.postprocessing.geometry import turned_back
from triton_ocr.postprocessing.recognition import Texts

rng = np.random.default_rng(7)


def page_with_text(height: int = 1000, width: int = 800, paper: int = 245):
    """A light page with ten lines of dark 'text' (bars of strokes) down its left half, and
    their quads."""
    page = np.full((height, width, 3), paper, np.uint8)
    quads = []
    for k in range(10):
        y = 60 + 40 * k
        for x in range(60, 380, 12):
            page[y : y + 20, x : x + 6] = 30
        quads.append([[58, y - 2], [382, y - 2], [382, y + 22], [58, y + 22]])
    return page, np.array(quads, np.float32)


def photo(page: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> None:
    """A halftone-like picture: mid and dark greys, noisy."""
    region = rng.integers(20, 160, (y1 - y0, x1 - x0, 1)).astype(np.uint8)
    page[y0:y1, x0:x1] = region


def test_a_picture_on_a_page_is_found_and_the_text_is_not():
    page, quads = page_with_text()
    assert find_figures(page, quads) == []
    photo(page, 450, 500, 750, 800)
    (found,) = find_figures(page, quads)
    assert np.allclose(found, (450, 500, 750, 800), atol=8), found


def test_rules_and_a_table_grid_are_no_figure():
    page, quads = page_with_text()
    for y in (550, 650, 750, 850):
        page[y : y + 2, 60:740] = 0
    for x in (60, 300, 520, 740):
        page[550:852, x : x + 2] = 0
    assert find_figures(page, quads) == []


def test_a_thick_frame_around_a_sidebar_is_no_figure():
    page, quads = page_with_text()
    page[480:820, 420:760] = 0
    page[500:800, 440:740] = 245  # a frame 20 pixels thick
    assert find_figures(page, quads) == []


def test_a_scene_and_a_sheet_photographed_on_a_table_give_no_figure():
    page, quads = page_with_text()
    scene = rng.integers(0, 255, page.shape).astype(np.uint8)
    assert find_figures(scene, quads) == []  # no paper
    # the sheet in the middle, a dark table beyond it on both sides: nothing on the sheet
    table = page.copy()
    table[:, :40] = rng.integers(40, 90, (1000, 40, 3))
    table[:, 700:] = rng.integers(40, 90, (1000, 100, 3))
    assert find_figures(table, quads) == []
    # a grey table along the left edge (neither paper nor ink) with something dark on it at
    # the edge, beside the sheet: the paper does not reach that edge, so it is off the sheet
    beside = page.copy()
    beside[:, :50] = 215
    photo(beside, 0, 500, 140, 800)
    assert find_figures(beside, quads) == []
    # a picture that runs off the page where the paper reaches the same edge (a bleed) is one
    photo(page, 0, 600, 300, 1000)
    assert len(find_figures(page, quads)) == 1


def test_too_few_lines_no_figure():
    page, quads = page_with_text()
    photo(page, 450, 500, 750, 800)
    assert find_figures(page, quads[:2]) == []


def test_a_figure_goes_before_the_first_block_under_it_that_shares_its_width():
    blocks = [(0, 0, 800, 50), (0, 60, 390, 900), (410, 60, 800, 400), (410, 700, 800, 900)]
    assert figure_places(blocks, [(420, 420, 790, 680)]) == [3]
    assert figure_places(blocks, [(420, 950, 790, 990)]) == [4]
    assert figure_places(blocks, [(420, 420, 790, 680), (0, 0, 800, 40)]) == [3, 0]


def texts_on(page: np.ndarray, quads: np.ndarray, first_block: int = 5) -> Texts:
    count = len(quads)
    return Texts(
        [f"line {k}" for k in range(count)],
        quads,
        np.ones(count, np.float32),
        line_block=np.array([0] * first_block + [1] * (count - first_block), np.int32),
    )


def test_a_figure_is_a_block_without_text_in_reading_order_on_a_turned_page_too():
    page, quads = page_with_text()
    photo(page, 60, 500, 380, 800)  # under the lines, in their column
    upright = texts_on(page, quads).with_figures(find_figures(page, quads))
    (typed,) = with_block_types([upright], [(800, 1000)])
    assert typed.block_types == ("paragraph", "paragraph", "figure")
    assert typed.line_block.tolist() == [0] * 5 + [1] * 5
    assert np.allclose(typed.block_quads[2][[0, 2]], [[60, 500], [380, 800]], atol=8)
    # the same page sent turned 90 degrees clockwise: found upright, boxed on the page as sent
    sent = upright.turned_back(90, (1000, 800))
    (typed_sent,) = with_block_types([sent], [(1000, 800)])
    assert typed_sent.block_types == typed.block_types
    expected = turned_back(typed.block_quads[2], 90, (1000, 800))
    assert np.allclose(
        [typed_sent.block_quads[2].min(0), typed_sent.block_quads[2].max(0)],
        [expected.min(0), expected.max(0)],
        atol=1,
    )


def test_a_few_lines_read_in_a_figure_are_the_figures_a_column_is_not():
    page, quads = page_with_text()
    photo(page, 40, 30, 400, 260)  # over the first five lines
    found = find_figures(page, quads[5:])  # as if only the lower lines were text
    (typed,) = with_block_types([texts_on(page, quads, 2).with_figures(found)], [(800, 1000)])
    assert typed.block_types == ("figure", "figure", "paragraph")  # the picture, its text
    assert typed.line_block.tolist() == [1] * 2 + [2] * 8
    # a block of five lines, all inside the picture's box, is text beside or over it
    (typed,) = with_block_types([texts_on(page, quads, 5).with_figures(found)], [(800, 1000)])
    assert typed.block_types == ("figure", "paragraph", "paragraph")
