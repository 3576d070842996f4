"""Word boxes from the CTC columns of each line's best path, mapped back through its crop."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon

from triton_ocr.postprocessing.ctc import ctc_greedy_decode
from triton_ocr.postprocessing.geometry import (
    CropFrame,
    crop_frame,
    map_points,
    order_quad,
    to_original,
)
from triton_ocr.postprocessing.words import Words, line_words, split_units, text_words
from triton_ocr.preprocessing.crops import cut_crops
from triton_ocr.preprocessing.orientation import turn_over

LETTERS = "abcdefghijklmnopqrstuvwxyz"
ALPHABET = ["", *LETTERS, " ", "東", "京", "，"]
CLASS = {c: i for i, c in enumerate(ALPHABET)}


def box(x0, y0, x1, y1) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


def turned_by(quad: np.ndarray, degrees: float) -> np.ndarray:
    """`quad` rotated by `degrees` (clockwise on screen) about its centre."""
    a = math.radians(degrees)
    rotation = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    centre = quad.mean(axis=0)
    return ((quad - centre) @ rotation.T + centre).astype(np.float32)


AXIS = box(100, 50, 340, 90)
ROTATED = turned_by(AXIS, 25)
PERSPECTIVE = np.array([[100, 80], [420, 60], [430, 150], [95, 120]], np.float32)
VERTICAL = box(40, 20, 76, 260)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    pa, pb = Polygon(a), Polygon(b)
    return pa.intersection(pb).area / pa.union(pb).area


def spikes(marks: list[tuple[str, int]], steps: int) -> tuple[np.ndarray, np.ndarray]:
    """A best path of `steps` blanks with one step per (character, step) mark."""
    classes = np.zeros(steps, np.int64)
    scores = np.full(steps, 0.99, np.float32)
    for k, (character, step) in enumerate(marks):
        classes[step] = CLASS[character]
        scores[step] = 0.5 + 0.04 * k  # each character its own probability
    return classes, scores


# --- the crop frame ---------------------------------------------------------------------------


@pytest.mark.parametrize("quad", [AXIS, ROTATED, PERSPECTIVE, VERTICAL])
@pytest.mark.parametrize("margin", [0.0, 0.2])
def test_crop_frame_maps_there_and_back(quad, margin):
    frame = crop_frame(quad, margin)
    rng = np.random.default_rng(0)
    points = rng.uniform([0, 0], [frame.width, frame.height], size=(20, 2))
    np.testing.assert_allclose(
        map_points(frame.to_crop, to_original(frame, points)), points, atol=1e-6
    )
    inside = quad.mean(axis=0) + rng.uniform(-5, 5, size=(20, 2))
    np.testing.assert_allclose(
        to_original(frame, map_points(frame.to_crop, inside)), inside, atol=1e-6
    )
    assert -1e-9 <= frame.top < frame.bottom <= frame.height + 1e-9


def test_crop_frame_sizes_and_box_edges():
    frame = crop_frame(AXIS, 0.25)  # 240 x 40 grown by 10 above and below
    assert (frame.width, frame.height, frame.vertical) == (240, 60, False)
    assert (frame.top, frame.bottom) == pytest.approx((10, 50))
    frame = crop_frame(VERTICAL, 0.0)  # 36 x 240, turned: the quad's right edge on top
    assert (frame.width, frame.height, frame.vertical) == (240, 36, True)
    assert (frame.top, frame.bottom) == pytest.approx((0, 36))
    # tl, tr, br, bl -> bottom left, top left, top right, bottom right of the turned crop
    corners = map_points(frame.to_crop, VERTICAL)
    np.testing.assert_allclose(corners, [[0, 36], [0, 0], [240, 0], [240, 36]], atol=1e-6)


@pytest.mark.parametrize("quad", [box(30, 20, 150, 44), box(60, 10, 80, 130)])
def test_to_crop_moves_pixels_as_the_crop_does(quad):
    """A dark pixel of the original lands on the crop pixel `to_crop` says (pixel i covering
    [i, i + 1]), the vertical turn included: an off-by-one in the turn shows here."""
    image = np.full((160, 200, 3), 255, np.uint8)
    spots = [(35, 25), (140, 40), (70, 100), (62, 12), (79, 129), (100, 30)]
    for x, y in spots:
        if quad[0, 0] <= x < quad[2, 0] and quad[0, 1] <= y < quad[2, 1]:
            clean = image.copy()
            clean[y, x] = 0
            (crop,) = cut_crops(clean, [quad], 0.0)
            (row,), (col,) = np.nonzero(crop[:, :, 0] < 128)
            expected = map_points(crop_frame(quad, 0.0).to_crop, [[x + 0.5, y + 0.5]])[0]
            np.testing.assert_allclose(expected, [col + 0.5, row + 0.5], atol=1e-6)


# --- words of a text --------------------------------------------------------------------------


def words_of(text: str) -> list[str]:
    return [text[a:b] for a, b in split_units(list(text))]


def test_split_units_into_words():
    assert words_of("Total: 12.50 EUR") == ["Total:", "12.50", "EUR"]
    assert words_of("東京 Tower") == ["東", "京", "Tower"]
    assert words_of("ab東c") == ["ab", "東", "c"]
    assert words_of("  two\tspaces  ") == ["two", "spaces"]
    assert words_of("你好，世界。") == ["你", "好", "，", "世", "界", "。"]
    assert words_of("テストです") == list("テストです")
    assert words_of("한국어 OK") == ["한", "국", "어", "OK"]
    assert words_of("ＡＢ 1") == ["Ａ", "Ｂ", "1"]
    assert words_of("東\u3000京") == ["東", "京"]  # the ideographic space separates too
    assert split_units([]) == [] and split_units(list("   ")) == []
    assert split_units(list("Total: 12.50 EUR")) == [(0, 6), (7, 12), (13, 16)]
    assert split_units(["ab", "", "c d"]) == [(0, 1), (2, 3)]  # alphabet entries, not letters


# --- line_words on synthetic best paths ---------------------------------------------------------


def test_spikes_give_the_words_their_boxes_and_scores():
    # row 120 px wide (the crop 240: scale 2), steps of 4 px; characters 3 steps apart
    frame = crop_frame(AXIS, 0.0)
    marks = [("a", 2), ("b", 5), (" ", 8), ("c", 11), ("d", 14), ("e", 17), (" ", 20), ("f", 23)]
    classes, scores = spikes(marks, 35)  # 35 steps: 140 px of batch, 20 of them padding
    words = line_words(classes, scores, ALPHABET, 4.0, 120, frame, False)
    assert [w for w, _, _ in words] == ["ab", "cde", "f"]
    # centres (step + 0.5) * 4, pitch 12: "ab" spans row 4..28, "cde" 40..76, "f" 88..100
    for (_, quad, _), (x0, x1) in zip(words, [(4, 28), (40, 76), (88, 100)], strict=True):
        np.testing.assert_allclose(quad, box(100 + 2 * x0, 50, 100 + 2 * x1, 90), atol=1e-3)
    probabilities = scores[[s for _, s in marks]]
    expected = [probabilities[[0, 1]].mean(), probabilities[[3, 4, 5]].mean(), probabilities[7]]
    assert [s for _, _, s in words] == pytest.approx(expected)


def test_words_are_in_reading_order_and_clamped_to_the_row():
    frame = crop_frame(ROTATED, 0.1)
    marks = [("a", 0), ("b", 3), (" ", 6), ("c", 9), ("d", 12), (" ", 14), ("e", 16), ("f", 19)]
    classes, scores = spikes(marks, 20)
    words = line_words(classes, scores, ALPHABET, 6.0, 120, frame, False)
    assert [w for w, _, _ in words] == ["ab", "cd", "ef"]
    starts = [map_points(frame.to_crop, quad)[:, 0] for _, quad, _ in words]
    assert starts[0][0] == pytest.approx(0, abs=1e-3)  # "a" half a pitch before step 0: clamped
    assert starts[-1][1] == pytest.approx(frame.width, abs=1e-3)  # "f" past the row's end
    lefts = [s[0] for s in starts]
    assert lefts == sorted(lefts)
    for s in starts:  # tl, tr, br, bl: left, right, right, left in the crop
        assert s[0] < s[1]
        assert s[1] == pytest.approx(s[2], abs=1e-3) and s[0] == pytest.approx(s[3], abs=1e-3)


def test_cjk_characters_are_words_with_their_own_pitch():
    frame = crop_frame(AXIS, 0.0)
    # 東 and 京 6 steps apart, the Latin letters 3; one pair of CJK 4 apart overlaps
    marks = [("東", 3), ("京", 9), ("京", 13), (" ", 17), ("t", 20), ("o", 23), ("w", 26)]
    classes, scores = spikes(marks, 40)
    words = line_words(classes, scores, ALPHABET, 2.0, 120, frame, False)
    assert [w for w, _, _ in words] == ["東", "京", "京", "tow"]
    spans = [(q[0, 0] - 100) / 2 for _, q, _ in words], [(q[1, 0] - 100) / 2 for _, q, _ in words]
    widths = [x1 - x0 for x0, x1 in zip(*spans, strict=True)]
    # median CJK pitch 5 steps (10 px); the overlapping pair meets halfway between the two
    assert widths[0] == pytest.approx(10)
    assert spans[1][1] == pytest.approx(spans[0][2]) == pytest.approx(23)  # (9.5 + 13.5) steps
    assert widths[3] == pytest.approx(6 * 2 + 6)  # centres 6 steps apart + a pitch of 3 steps
    assert all(a <= b for a, b in zip(spans[1][:-1], spans[0][1:], strict=True))


def test_one_character_line_spans_the_row_and_maps_onto_the_quad():
    """A word reaching across the whole row is the line's own quad (the margin taken off)."""
    classes, scores = spikes([("a", 12)], 25)  # centre (12 + 0.5) * 4 = 50 of a 100 px row
    for quad in (AXIS, ROTATED):
        for margin in (0.0, 0.25):
            frame = crop_frame(quad, margin)
            ((_, word, _),) = line_words(classes, scores, ALPHABET, 4.0, 100, frame, False)
            np.testing.assert_allclose(word, quad, atol=0.01)
            ((_, back, _),) = line_words(classes, scores, ALPHABET, 4.0, 100, frame, True)
            np.testing.assert_allclose(back, np.roll(quad, 2, axis=0), atol=0.01)
    frame = crop_frame(PERSPECTIVE, 0.2)
    ((_, word, _),) = line_words(classes, scores, ALPHABET, 4.0, 100, frame, False)
    # inside the quad, its corners on the quad's top and bottom edges, near its corners (the
    # margin, added along the mean of the sides, does not follow a perspective box's sides)
    assert Polygon(PERSPECTIVE).buffer(0.01).contains(Polygon(word))
    for k, (start, end) in enumerate([(0, 1), (0, 1), (3, 2), (3, 2)]):
        edge = LineString([PERSPECTIVE[start], PERSPECTIVE[end]])
        assert edge.distance(Point(word[k])) < 0.01
    assert np.abs(word - PERSPECTIVE).max() < 2 and iou(word, PERSPECTIVE) > 0.98
    # a vertical line reads from its top: the word's tl is the quad's tr
    frame = crop_frame(VERTICAL, 0.0)
    ((_, word, _),) = line_words(classes, scores, ALPHABET, 4.0, 100, frame, False)
    np.testing.assert_allclose(word, np.roll(VERTICAL, -1, axis=0), atol=0.01)


@pytest.mark.parametrize("quad", [AXIS, ROTATED, PERSPECTIVE, VERTICAL])
def test_a_turned_row_gives_the_boxes_of_the_unturned_row_read_backwards(quad):
    """The recognizer reads a row turned 180 degrees; the same characters found in the unturned
    row lie at the mirrored steps, in the other order."""
    frame = crop_frame(quad, 0.15)
    row_width, step_width, steps = 117, 3.0, 39  # row steps exactly mirror: 39 * 3 = 117
    marks = [("a", 1), ("b", 4), ("c", 7), (" ", 10), ("d", 14), ("e", 17), (" ", 21), ("f", 25)]
    turned = line_words(*spikes(marks, steps), ALPHABET, step_width, row_width, frame, True)
    mirrored = [(c, steps - 1 - s) for c, s in reversed(marks)]
    plain = line_words(*spikes(mirrored, steps), ALPHABET, step_width, row_width, frame, False)
    assert [w for w, _, _ in turned] == ["abc", "de", "f"]
    assert [w for w, _, _ in plain] == ["f", "ed", "cba"]
    for (_, a, _), (_, b, _) in zip(turned, reversed(plain), strict=True):
        np.testing.assert_allclose(a, np.roll(b, 2, axis=0), atol=1e-3)  # tl <-> br


def test_text_words_takes_the_kept_lines():
    frames = [crop_frame(AXIS, 0.0), crop_frame(ROTATED, 0.1), crop_frame(VERTICAL, 0.0)]
    paths = [
        spikes([("a", 2)], 30),
        spikes([("b", 2), ("c", 5), (" ", 8), ("d", 11)], 30),
        spikes([("東", 3), ("京", 9)], 30),
    ]
    best_class = np.stack([c for c, _ in paths])
    best_score = np.stack([s for _, s in paths])
    # crop 0 dropped by the text filter: lines 0 and 1 are crops 1 and 2
    per_line = ([frames[1], frames[2]], [120, 100], np.array([4.0, 3.0]), np.array([True, False]))
    words = text_words(best_class, best_score, [1, 2], *per_line, ALPHABET)
    assert words.texts == ["bc", "d", "東", "京"]
    assert words.lines.tolist() == [0, 0, 1, 1] and words.lines.dtype == np.int32
    assert words.quads.shape == (4, 4, 2) and words.quads.dtype == np.float32
    assert words.scores.dtype == np.float32
    for crop, line, picked in ((1, 0, slice(0, 2)), (2, 1, slice(2, 4))):
        alone = line_words(
            best_class[crop],
            best_score[crop],
            ALPHABET,
            per_line[2][line],
            per_line[1][line],
            per_line[0][line],
            per_line[3][line],
        )
        np.testing.assert_array_equal(words.quads[picked], np.stack([q for _, q, _ in alone]))
        assert words.scores[picked] == pytest.approx([s for _, _, s in alone])
    empty = text_words(best_class, best_score, [], [], [], [], [], ALPHABET)
    assert empty.texts == [] and empty.quads.shape == (0, 4, 2) and empty.lines.shape == (0,)
    assert Words.empty().scores.shape == (0,)
    blank = np.zeros((1, 5), np.int64), np.zeros((1, 5))
    silent = text_words(*blank, [0], frames[:1], [60], [2.0], [False], ALPHABET)
    assert silent.texts == [] and silent.quads.shape == (0, 4, 2)
    per_crop = (frames, [60, 120, 100], [2.0] * 3, [False] * 3)
    with pytest.raises(ValueError, match="per kept line"):  # per-crop lists: a caller's slip
        text_words(best_class, best_score, [1, 2], *per_crop, ALPHABET)


# --- image level: marks drawn along a line, found again in the crop ------------------------------

WORD_LENGTHS = (4, 3, 5)
TOP, BOTTOM = 20, 60  # the characters' band in the flat canvas
FLAT_WIDTH = 440


def flat_layout(rng: np.random.Generator) -> list[list[tuple[int, int]]]:
    """Per word, per character: its [x0, x1) in the flat canvas (FLAT_WIDTH x 80)."""
    words, x = [], 30
    for length in WORD_LENGTHS:
        chars = []
        for _ in range(length):
            width = int(rng.integers(15, 23))  # about half as wide as tall, as letters are
            chars.append((x, x + width))
            x += width + int(rng.integers(5, 9))
        words.append(chars)
        x += int(rng.integers(18, 22))
    return words


def homography(kind: str) -> tuple[np.ndarray, tuple[int, int]]:
    """Flat canvas -> image, and the image's (width, height)."""
    if kind == "perspective":
        flat = box(0, 0, FLAT_WIDTH, 80)
        seen = np.array([[70, 130], [620, 60], [645, 250], [60, 215]], np.float32)
        return cv2.getPerspectiveTransform(flat, seen), (720, 320)
    degrees = {"rotated": 25, "vertical": 93, "upside down": 200}[kind]
    a = math.radians(degrees)
    rotate = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    to_origin = np.array([[1, 0, -FLAT_WIDTH / 2], [0, 1, -40], [0, 0, 1]], np.float64)
    to_centre = np.array([[1, 0, 300], [0, 1, 300], [0, 0, 1]], np.float64)
    return to_centre @ rotate @ to_origin, (600, 600)


def dark_column_runs(row: np.ndarray) -> list[tuple[int, int]]:
    """[a, b) column ranges where the row is mostly dark (a drawn mark)."""
    dark = (row < 128).mean(axis=0) > 0.3
    edges = np.flatnonzero(np.diff(np.concatenate([[0], dark.astype(int), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


@pytest.mark.parametrize("kind", ["rotated", "perspective", "vertical", "upside down"])
def test_word_boxes_cover_the_drawn_words(kind):
    rng = np.random.default_rng(len(kind))
    layout = flat_layout(rng)
    canvas = np.full((80, FLAT_WIDTH), 255, np.uint8)
    for word in layout:
        for x0, x1 in word:
            canvas[TOP:BOTTOM, x0:x1] = 0
    matrix, size = homography(kind)
    image = cv2.warpPerspective(canvas, matrix, size, flags=cv2.INTER_LINEAR, borderValue=255)
    image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    first, last = layout[0][0][0], layout[-1][-1][1]
    # the detector's box hugs the text, its corners in image order (tl: smallest x + y)
    line = order_quad(map_points(matrix, box(first - 3, TOP, last + 3, BOTTOM)))
    margin = 0.15
    (crop,) = cut_crops(image, [line], margin)
    frame = crop_frame(line, margin)
    assert crop.shape[:2] == (frame.height, frame.width)
    # the recognizer's row: height 48, then turned over when the classifier says so
    row_width = math.ceil(48 * crop.shape[1] / crop.shape[0])
    gray = cv2.resize(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY), (row_width, 48))
    batch_width = -(-(row_width + 20) // 32) * 32  # padded, as batches are
    batch = np.full((1, 1, 48, batch_width), 255, np.float32)
    batch[0, 0, :, :row_width] = gray
    turned = kind == "upside down"
    row = turn_over(batch, [row_width], [turned])[0, 0, :, :row_width]
    found = dark_column_runs(row)
    assert len(found) == sum(WORD_LENGTHS)  # every mark seen, in reading order
    # the best path: one step per 8 row pixels, a spike at each mark's centre and each gap's
    steps = batch_width // 8
    step_width = batch_width / steps
    marks, k = [], 0
    for w, length in enumerate(WORD_LENGTHS):
        if w:
            gap = (found[k - 1][1] + found[k][0]) / 2
            marks.append((" ", int(gap // step_width)))
        for _ in range(length):
            a, b = found[k]
            marks.append((LETTERS[k], int((a + b) / 2 // step_width)))
            k += 1
    classes, scores = spikes(marks, steps)
    ((text, _),) = ctc_greedy_decode(classes[None], scores[None], ALPHABET)
    assert text == " ".join(
        LETTERS[sum(WORD_LENGTHS[:w]) : sum(WORD_LENGTHS[: w + 1])] for w in range(3)
    )
    words = line_words(classes, scores, ALPHABET, step_width, row_width, frame, turned)
    assert [w for w, _, _ in words] == text.split()
    for (_, quad, _), word in zip(words, layout, strict=True):
        truth = map_points(matrix, box(word[0][0], TOP, word[-1][1], BOTTOM))
        assert iou(quad, truth) >= 0.7, (kind, quad, truth)
        # tl, tr in the reading direction: the word's start and end at its top
        height = np.linalg.norm(truth[0] - truth[3])
        assert np.linalg.norm(quad[0] - truth[0]) < 0.3 * height
        assert np.linalg.norm(quad[1] - truth[1]) < 0.3 * height


def test_crop_frame_is_a_dataclass_of_the_crop():
    frame = crop_frame(ROTATED, 0.1)
    assert isinstance(frame, CropFrame) and frame.to_crop.shape == (3, 3)
    with pytest.raises(AttributeError):
        frame.width = 3  # frozen
