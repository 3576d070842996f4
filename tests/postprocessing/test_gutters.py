"""Lines run across a narrow column gutter are cut at it, and nothing else is cut."""

from __future__ import annotations

import random

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

from triton_ocr.postprocessing.detection import TextBoxes
from triton_ocr.postprocessing.gutters import Part, cut_at_gutters, part_of, parts_of

WORDS = """the of and a to in is was that for on as with by at from his it an were are
newspaper column printed morning government council report station yesterday evening
committee members meeting question during county""".split()  # noqa: SIM905
LINE = 24  # pixels from one line to the next
COLUMN = 6.0  # line heights a column's lines run at least (the blocks' column_min_width)
FONT = ImageFont.load_default(16)
TOP, LEFT = 30, 20


def justified(draw: ImageDraw.ImageDraw, rng: random.Random, x: int, y: int, width: int) -> None:
    """A line of random words from x to x + width, the space between them stretched to fill it
    (a justified column's line)."""
    words: list[str] = []
    while draw.textlength(" ".join([*words, "county"]), font=FONT) < width:
        words.append(rng.choice(WORDS))
    sizes = [draw.textlength(w, font=FONT) for w in words]
    space = (width - sum(sizes)) / max(1, len(words) - 1)
    for word, size in zip(words, sizes, strict=True):
        draw.text((x, y), word, fill=20, font=FONT)
        x += size + space


def page(columns: int, column: int, gutter: int, lines: int, rule: bool = False, grid: int = 0):
    """A grey page of `columns` justified columns of `lines` lines each, `column` pixels wide
    and `gutter` apart (a rule down its middle when `rule`), and one box per row running
    across them all, as the detector joins them. With `grid`, each line is letters set `grid`
    pixels apart (a monospaced grid, as Chinese is set) instead of words."""
    rng = random.Random(7)
    width = LEFT * 2 + columns * column + (columns - 1) * gutter
    image = Image.new("L", (width, TOP * 2 + lines * LINE), 235)
    draw = ImageDraw.Draw(image)
    quads = []
    for row in range(lines):
        y = TOP + row * LINE
        for c in range(columns):
            x = LEFT + c * (column + gutter)
            if grid:
                for k in range(column // grid):
                    draw.text((x + k * grid, y), rng.choice("HMNWXKABDE"), fill=20, font=FONT)
            else:
                justified(draw, rng, x, y, column)
        right = LEFT + columns * column + (columns - 1) * gutter
        quads.append([[LEFT - 2, y - 1], [right, y - 1], [right, y + 19], [LEFT - 2, y + 19]])
    if rule:
        for c in range(1, columns):
            x = LEFT + c * column + (c - 1) * gutter + gutter // 2
            draw.line([(x, TOP), (x, TOP + lines * LINE)], fill=30)
    return np.asarray(image), np.array(quads, np.float32)


def found(quads: NDArray[np.float32]) -> TextBoxes:
    return TextBoxes(quads, np.ones(len(quads), np.float32), 0.3)


def cut(image, quads):
    return cut_at_gutters(found(quads), image, COLUMN)


def test_lines_across_a_narrow_gutter_are_cut_at_it():
    image, quads = page(columns=2, column=300, gutter=14, lines=20)
    done = cut(image, quads)
    assert len(done.found.quads) == 2 * len(quads) == len(done.extents)
    gutter_start, gutter_end = LEFT + 300, LEFT + 300 + 14
    lefts, rights = done.extents[0::2], done.extents[1::2]
    # the extents end at the gutter, the crops at its middle at most
    assert (lefts[:, 1, 0] <= gutter_end).all() and (lefts[:, 1, 0] > gutter_start - 40).all()
    assert (rights[:, 0, 0] >= gutter_start).all() and (rights[:, 0, 0] < gutter_end + 40).all()
    assert (lefts[:, 1, 0] < rights[:, 0, 0]).all()
    middle = (gutter_start + gutter_end) / 2
    assert (abs(done.found.quads[0::2, 1, 0] - middle) <= 8).all()
    assert np.allclose(done.found.scores, 1.0)


def test_three_columns_and_a_rule_in_the_gutter():
    image, quads = page(columns=3, column=260, gutter=12, lines=20, rule=True)
    assert len(cut(image, quads).found.quads) == 3 * len(quads)


def test_one_column_of_prose_is_left_whole():
    image, quads = page(columns=1, column=620, gutter=0, lines=20)
    done = cut(image, quads)
    assert len(done.found.quads) == len(quads) and np.array_equal(done.extents, quads)


def test_letters_in_a_grid_are_not_columns():
    """Letters set on a grid leave blank bands down the page between every two of them, no
    wider than the spaces in each line: no cut (a gutter as narrow in the same lines is)."""
    image, quads = page(columns=1, column=640, gutter=0, lines=20, grid=16)
    assert len(cut(image, quads).found.quads) == len(quads)


def test_too_few_lines_beside_the_band_and_headlines_are_not_cut():
    image, quads = page(columns=2, column=300, gutter=14, lines=5)
    assert len(cut(image, quads).found.quads) == len(quads)
    image, quads = page(columns=2, column=300, gutter=14, lines=20)
    tall = quads.copy()
    tall[5, 2:, 1] += 40  # one box set much taller than the others: a headline's
    assert len(cut(image, tall).found.quads) == 2 * len(quads) - 1


def test_a_box_centred_over_the_gutter_is_not_cut():
    """A byline over the columns whose space between words falls on the gutter starts where
    no line of the left column starts: it is read whole."""
    image, quads = page(columns=2, column=300, gutter=14, lines=20)
    quads[0, [0, 3], 0] += 200  # the first box starts mid-column, as a centred line does
    quads[0, [1, 2], 0] -= 200
    picture = Image.fromarray(image)
    draw = ImageDraw.Draw(picture)
    draw.rectangle([0, TOP - 2, picture.width, TOP + LINE - 3], fill=235)
    draw.text((LEFT + 210, TOP), "By Someone", fill=20, font=FONT)
    draw.text((LEFT + 318, TOP), "Somewhere", fill=20, font=FONT)
    image = np.asarray(picture)
    done = cut(image, quads)
    assert len(done.found.quads) == 2 * len(quads) - 1
    assert np.array_equal(done.found.quads[0], quads[0])


def test_parts_keep_the_gutter_for_the_layout_and_its_middle_for_the_crops():
    (part,) = parts_of(0, 100, [(90, 110)], line=20)  # a box reaching into a gutter
    assert part == Part(0, 90, 0, 100)
    left, right = parts_of(0, 200, [(90, 110)], line=20)
    assert left == Part(0, 90, 0, 100) and right == Part(110, 200, 100, 200)
    assert parts_of(0, 200, [(90, 110), (196, 210)], line=20) == [left, Part(110, 196, 100, 200)]


def test_a_level_quad_is_cut_into_parts_on_its_edges():
    quad = np.array([[0, 0], [100, 2], [100, 22], [0, 20]], np.float32)
    assert np.allclose(part_of(quad, 0, 40), [[0, 0], [40, 0.8], [40, 20.8], [0, 20]])
    assert np.allclose(part_of(quad, 50, 100), [[50, 1], [100, 2], [100, 22], [50, 21]])
