"""The pipeline's stages chained with fake networks (read_image), and each stage alone."""

import asyncio
import dataclasses

import numpy as np
import pytest

from tests.conftest import REPOSITORY
from tests.samples import render_blank
from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.config.repository import Repository
from triton_ocr.config.requests import with_overrides
from triton_ocr.pipeline import (
    BestPath,
    answered,
    locate,
    prepare_image,
    read_image,
    read_lines,
    recognize_rows,
    with_layer,
)
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.postprocessing.words import Words
from triton_ocr.preprocessing.text_layer import LayerLine, LayerWord, TextLayer
from triton_ocr.settings import Grouping, Orientation, PipelineSettings, TextFilter
from triton_ocr.tools.samples import render

ALPHABET = ["", "a", "b"]


def settings(pack: str = DEFAULT_PACK, group_size: int = 2) -> PipelineSettings:
    """The pack's settings (a tiny alphabet: the tests need no exported model)."""
    s = Repository(REPOSITORY, pack).pipeline_settings(alphabet=ALPHABET)
    return dataclasses.replace(s, grouping=Grouping(group_size, 3200))


def upright(inputs: list[np.ndarray]) -> list[np.ndarray]:
    """A stand-in orientation classifier: every crop upright, surely."""
    return [np.tile(np.float32([1.0, 0.0]), (len(x), 1)) for x in inputs]


def upright_page(looks: np.ndarray) -> np.ndarray:
    """A stand-in page classifier: the page upright, surely (look k sees it turned k quarters)."""
    return np.eye(4, dtype=np.float32)[: len(looks)]


def dark_is_text(tensor: np.ndarray) -> list[np.ndarray]:
    """A stand-in DB detector: probability 1 where the page ([1, H, W, 3] BGR uint8) is dark."""
    return [(tensor.mean(axis=3) < 128).astype(np.float32)[:, None]]


def test_groups_are_sorted_by_width_and_results_return_in_crop_order():
    widths = [960, 96, 480, 144, 240]
    rows = [np.ones((3, 48, w), np.float32) for w in widths]
    calls = []

    async def recognize(batches):
        results = []
        for batch in batches:
            calls.append(batch.shape)
            # each row "reads" as 'a' repeated (its own width // 100 + 1) times
            steps = np.zeros((len(batch), 32), np.int64)
            for row in range(len(batch)):
                used = int((batch[row, 0, 0] != 0).sum())
                steps[row, : 2 * (used // 100 + 1) : 2] = 1
            results.append((steps, np.full(steps.shape, 0.9, np.float32)))
        return results

    async def no_classifier(inputs):
        raise AssertionError("orientation is off")

    off = Orientation(classify_orientation=False, orientation_threshold=0.9)
    best = asyncio.run(
        recognize_rows(rows, widths, widths, Grouping(2, 3200), off, None, recognize, no_classifier)
    )
    assert len(calls) == 3  # 5 crops in groups of 2
    assert [shape[0] for shape in calls] == [2, 2, 1]
    batch_widths = [shape[3] for shape in calls]
    assert batch_widths == sorted(batch_widths)  # narrow rows padded together, wide ones together
    quads = np.zeros((5, 4, 2), np.float32)
    texts = read_lines(best, quads, ALPHABET, TextFilter(0.5, 0.02)).texts
    assert texts == ["a" * n for n in (10, 1, 5, 2, 3)]  # in the callers' order


def test_read_lines_ignores_padding_rows_and_weak_or_empty_texts():
    best = BestPath(
        np.array([[1, 0, 2], [0, 0, 0], [2, 2, 0], [1, 1, 1]], np.int64),
        np.array([[0.9, 0, 0.9], [0, 0, 0], [0.2, 0.2, 0], [0.9, 0.9, 0.9]], np.float32),
    )
    quads = np.arange(3 * 8, dtype=np.float32).reshape(3, 4, 2)  # the 4th row is padding
    out = read_lines(best, quads, ALPHABET, TextFilter(0.5, 0.02))
    assert out.texts == ["ab"]
    np.testing.assert_array_equal(out.quads, quads[:1])


def test_read_image_skips_the_recognizer_when_nothing_is_found():
    def recognize(batches):
        raise AssertionError("the recognizer must not be called without crops")

    out = read_image(render_blank(), settings(), dark_is_text, recognize, upright, upright_page)
    assert out.texts == []


def test_read_image_recognizes_each_found_box():
    seen = []

    def recognize(batches):
        seen.extend(len(batch) for batch in batches)
        results = []
        for batch in batches:
            best = np.zeros((len(batch), 4), np.int64)
            best[:, 0] = 2  # every crop reads "b"
            results.append((best, np.ones(best.shape, np.float32)))
        return results

    out = read_image(render().png, settings(), dark_is_text, recognize, upright, upright_page)
    assert sum(seen) == len(out.texts) > 0 and set(out.texts) == {"b"}


def one_b_per_crop(seen):
    def recognize(batches):
        seen.extend(batch.shape for batch in batches)
        results = []
        for batch in batches:
            best = np.zeros((len(batch), 4), np.int64)
            best[:, 0] = 2
            results.append((best, np.ones(best.shape, np.float32)))
        return results

    return recognize


def png(image: np.ndarray) -> bytes:
    import cv2

    return cv2.imencode(".png", image)[1].tobytes()


def test_a_small_wide_image_without_detections_is_read_as_one_line():
    seen = []
    crop = png(np.full((20, 60, 3), 255, np.uint8))  # nothing dark: the detector finds nothing
    out = read_image(crop, settings(), dark_is_text, one_b_per_crop(seen), upright, upright_page)
    assert out.texts == ["b"] and len(seen) == 1
    np.testing.assert_array_equal(out.quads[0], [[0, 0], [60, 0], [60, 20], [0, 20]])
    never = with_overrides(settings(), {"single_line": "never"})
    assert (
        read_image(crop, never, dark_is_text, one_b_per_crop([]), upright, upright_page).texts == []
    )


def test_a_coroutine_that_never_waits_is_answered_without_a_loop_and_one_that_waits_is_refused():
    async def at_once() -> int:
        return 7

    async def waits() -> int:
        await asyncio.sleep(0)
        return 7

    assert answered(at_once()) == 7
    with pytest.raises(RuntimeError, match="waited on an event loop"):
        answered(waits())


def test_the_page_classifier_looks_at_pages_not_at_images_of_a_lines_shape():
    """A line or word crop is never a turned page (a quarter turn makes it tall; upside down
    is the line classifier's): the page classifier is not called for it, but is for a page
    and for a tall crop."""
    looked: list[int] = []

    def page_classifier(looks: np.ndarray) -> np.ndarray:
        looked.append(len(looks))
        return upright_page(looks)

    s = settings()
    for shape, calls in (((40, 300), 0), ((300, 40), 1), ((400, 300), 1)):
        looked.clear()
        image = png(np.full((*shape, 3), 255, np.uint8))
        read_image(image, s, dark_is_text, one_b_per_crop([]), upright, page_classifier)
        assert len(looked) == calls, shape


def test_a_page_whose_lines_read_upright_and_surely_needs_no_page_classifier():
    """Level lines that all read upright and surely settle a page's way up: no look. Lines the
    recognizer is unsure of, or that read better turned over, ask the page classifier; a page
    it finds turned is found and read again, upright."""
    looked: list[int] = []
    detected: list[tuple[int, ...]] = []

    def page_classifier(says: int):
        def classify(looks: np.ndarray) -> np.ndarray:
            looked.append(len(looks))  # look k sees the page turned k more quarters
            first = 0 if len(looks) == 1 else 1  # the first look, or the three after it
            turns = range(first, first + len(looks))
            return np.stack([np.roll(np.eye(4, dtype=np.float32)[says], k) for k in turns])

        return classify

    def detect(tensor: np.ndarray) -> list[np.ndarray]:
        detected.append(tensor.shape)
        return dark_is_text(tensor)

    def unsure(batches):
        return [(best, score * 0.5) for best, score in one_b_per_crop([])(batches)]

    def upside_down_surely(inputs):
        return [np.tile(np.float32([0.02, 0.98]), (len(x), 1)) for x in inputs]

    lines = np.full((400, 600, 3), 255, np.uint8)
    for top in range(40, 360, 60):
        lines[top : top + 16, 60:520] = 0  # five level lines of text, as the fake detector sees
    page, s = png(lines), settings()
    read_image(page, s, detect, one_b_per_crop([]), upright, page_classifier(0))
    assert looked == [] and len(detected) == 1
    read_image(page, s, detect, unsure, upright, page_classifier(0))
    assert looked == [1] and len(detected) == 2  # the first look settles it: read as it came
    looked.clear()
    out = read_image(page, s, detect, unsure, upright, page_classifier(2))
    assert looked == [1, 3] and out.rotation == 180
    assert len(detected) == 4  # as it came, then turned (those maps are read again)
    looked.clear()
    read_image(page, s, detect, one_b_per_crop([]), upside_down_surely, page_classifier(0))
    assert looked == [1]
    no_lines_first = with_overrides(s, {"classify_orientation": False})
    looked.clear()
    read_image(page, no_lines_first, detect, one_b_per_crop([]), upright, page_classifier(0))
    assert looked == [1]  # without the line classifier the lines cannot tell: asked first


def test_large_images_without_detections_are_not_taken_for_lines():
    blank = settings()
    for shape in ((200, 600, 3), (400, 300, 3)):  # too tall for a line, too large for a crop
        data = png(np.full(shape, 255, np.uint8))
        assert (
            read_image(data, blank, dark_is_text, one_b_per_crop([]), upright, upright_page).texts
            == []
        )


def test_a_small_image_without_detections_is_read_whole():
    data = png(np.full((78, 72, 3), 255, np.uint8))  # nearly square: a word crop's size
    out = read_image(data, settings(), dark_is_text, one_b_per_crop([]), upright, upright_page)
    assert out.texts == ["b"]
    np.testing.assert_array_equal(out.quads[0], [[0, 0], [72, 0], [72, 78], [0, 78]])


def test_a_crop_filled_by_its_box_is_also_read_whole():
    image = np.full((120, 110, 3), 255, np.uint8)  # too tall for the line shape
    image[4:116, 4:106] = 0  # one box filling it
    s = settings()
    maps = dark_is_text(prepare_image(image, s.detector_input).detector_input)
    located = locate(maps, image, s.lines, s.boxes, s.recognizer_input, s.blocks)
    assert located.rival and len(located.rows) == len(located.quads) == 2
    np.testing.assert_array_equal(located.quads[-1], [[0, 0], [110, 0], [110, 120], [0, 120]])
    assert located.block.tolist() == [0, 1]  # the whole image is a block of its own
    image[60:64] = 255  # two stacked lines: no box fills it
    maps = dark_is_text(prepare_image(image, s.detector_input).detector_input)
    assert not locate(maps, image, s.lines, s.boxes, s.recognizer_input, s.blocks).rival


def rival_paths(box_scores: list[float], whole_score: float) -> BestPath:
    """Each box reads "a" at its score, the last row (the whole image) "ab" at whole_score."""
    rows = [[1, 0, 0, 0] for _ in box_scores] + [[1, 0, 2, 0]]
    scores = [[b, 0, 0, 0] for b in box_scores] + [[whole_score, 0, whole_score, 0]]
    return BestPath(np.array(rows, np.int64), np.array(scores, np.float32))


@pytest.mark.parametrize(
    ("boxes", "whole", "texts"),
    [
        ([0.95, 0.99], 0.96, ["ab"]),  # the boxes are surer, but by less than the margin
        ([0.99, 0.99], 0.96, ["a", "a"]),  # surer by more: the boxes' texts
        ([0.3], 0.9, ["ab"]),  # the boxes' text is weak
        ([0.99], 0.4, ["a"]),  # the whole line is weak
        ([], 0.9, ["ab"]),  # nothing found: the whole line alone
        ([0.4], 0.4, []),
    ],
)
def test_the_surer_of_the_two_readings_is_kept(boxes, whole, texts):
    quads = np.arange((len(boxes) + 1) * 8, dtype=np.float32).reshape(-1, 4, 2)
    out = read_lines(rival_paths(boxes, whole), quads, ALPHABET, TextFilter(0.5, 0.02), True)
    assert out.texts == texts
    if texts == ["ab"]:
        np.testing.assert_array_equal(out.quads, quads[-1:])


def test_two_rows_in_a_small_image_keep_their_boxes():
    image = np.full((90, 300, 3), 255, np.uint8)
    image[10:30, 20:200] = 0
    image[55:75, 20:200] = 0
    seen = []
    out = read_image(
        png(image), settings(), dark_is_text, one_b_per_crop(seen), upright, upright_page
    )
    assert len(out.texts) == 2 and out.quads[:, :, 1].max() < 90


def test_single_line_always_skips_the_detector():
    def detect(tensor):
        raise AssertionError("no detector call when the caller says the image is a line")

    forced = with_overrides(settings(), {"single_line": "always"})
    out = read_image(render().png, forced, detect, one_b_per_crop([]), upright, upright_page)
    assert out.texts == ["b"]
    with pytest.raises(ValueError, match="single_line"):
        with_overrides(settings(), {"single_line": "sometimes"})


def test_crops_the_classifier_finds_upside_down_are_turned_before_recognition():
    # one line, dark on its left end only: turned over, the dark end is on the right
    image = np.full((20, 120, 3), 255, np.uint8)
    image[4:16, 10:40] = 0
    image[4:16, 40:110] = 128
    seen_inputs, seen_batches = [], []

    def upside_down_surely(inputs):
        seen_inputs.extend(inputs)
        return [np.tile(np.float32([0.02, 0.98]), (len(x), 1)) for x in inputs]

    def recognize(batches):
        seen_batches.extend(batches)
        return one_b_per_crop([])(batches)

    forced = with_overrides(settings(), {"single_line": "always"})
    read_image(png(image), forced, dark_is_text, recognize, upright, upright_page)
    (upright_batch,) = seen_batches
    seen_batches.clear()
    out = read_image(png(image), forced, dark_is_text, recognize, upside_down_surely, upright_page)
    turned, as_sent = seen_batches  # the second look reads the crop as it came too
    np.testing.assert_array_equal(as_sent, upright_batch)
    assert out.texts == ["b"]
    assert seen_inputs[0].shape == (1, 3, 48, 192)  # the classifier's input size, from its config
    width = 288  # 120 x 20 px resized to 48 px high
    np.testing.assert_array_equal(
        turned[0, :, :, :width], upright_batch[0, :, ::-1, width - 1 :: -1]
    )
    np.testing.assert_array_equal(turned[0, :, :, width:], 0)  # padding stays on the right


def test_the_second_look_reads_only_the_turned_rows_of_a_group():
    """A group of three with one row flagged: the second batch holds that row alone, as it
    came, at the group's width; it keeps the surer reading, the others their first one."""
    rows = [np.full((3, 48, 320), float(i + 1), np.float32) for i in range(3)]
    rows[1][:, 0, 0] = 2.0  # row 2's top-left corner; turned over, it is bottom-right
    rows[1][:, 1:] = 5.0
    calls = []

    async def flag_the_middle(inputs):
        return [np.float32([[1.0, 0.0], [0.02, 0.98], [1.0, 0.0]])]

    async def recognize(batches):
        calls.extend(b.copy() for b in batches)
        results = []
        for batch in batches:
            best = np.zeros((len(batch), 4), np.int64)
            # as sent, row 2 (value 2.0) reads "b" surely; turned over it reads "a" unsurely
            best[:, 0] = np.where(batch[:, 0, 0, 0] == 2.0, 2, 1)
            sure = np.where(batch[:, 0, 0, 0] == 2.0, 0.9, 0.6)[:, None]
            results.append((best, np.broadcast_to(sure, best.shape).astype(np.float32)))
        return results

    on = Orientation(classify_orientation=True, orientation_threshold=0.9)
    classifier = settings().classifier_input
    best = asyncio.run(
        recognize_rows(
            rows,
            [320] * 3,
            [320] * 3,
            Grouping(3, 3200),
            on,
            classifier,
            recognize,
            flag_the_middle,
        )
    )
    first, again = calls
    assert first.shape[0] == 3 and again.shape == (1, 3, 48, 320)
    np.testing.assert_array_equal(again[0], rows[1])
    texts = read_lines(best, np.zeros((3, 4, 2), np.float32), ALPHABET, TextFilter(0.5, 0.02))
    assert texts.texts == ["a", "b", "a"]
    assert best.turned is not None and not best.turned.any()


@pytest.mark.parametrize("surer", ["turned", "as sent"])
def test_a_turned_crop_keeps_the_reading_the_recognizer_is_surer_of(surer):
    """The line classifier may turn an upright line over: the recognizer reads both and the
    surer reading wins ("a" as sent, "b" turned)."""
    image = np.full((20, 120, 3), 255, np.uint8)
    image[4:16, 10:40] = 0
    batches = []

    def recognize(found):
        results = []
        for batch in found:
            turned = bool(batches) and not np.array_equal(batch, batches[0])
            best = np.zeros((len(batch), 4), np.int64)
            best[:, 0] = 2 if turned else 1
            sure = 0.9 if (surer == "turned") == turned else 0.6
            results.append((best, np.full(best.shape, sure, np.float32)))
        return results

    def upside_down_surely(inputs):
        return [np.tile(np.float32([0.02, 0.98]), (len(x), 1)) for x in inputs]

    def remember(found):
        batches.extend(found)
        return recognize(found)

    forced = with_overrides(settings(), {"single_line": "always"})
    read_image(png(image), forced, dark_is_text, remember, upright, upright_page)  # as sent
    out = read_image(png(image), forced, dark_is_text, recognize, upside_down_surely, upright_page)
    assert out.texts == (["b"] if surer == "turned" else ["a"])


def test_unsure_or_disabled_orientation_leaves_crops_alone():
    seen = []

    def unsure(inputs):
        return [np.tile(np.float32([0.15, 0.85]), (len(x), 1)) for x in inputs]

    def never(inputs):
        raise AssertionError("no classifier call when classify_orientation is off")

    def recognize(batches):
        seen.extend(batches)
        return one_b_per_crop([])(batches)

    forced = with_overrides(settings(), {"single_line": "always"})
    off = with_overrides(forced, {"classify_orientation": "false"})
    data = render().png
    for s, classify in ((forced, upright), (forced, unsure), (off, never)):
        read_image(data, s, dark_is_text, recognize, classify, upright_page)
    np.testing.assert_array_equal(seen[0], seen[1])
    np.testing.assert_array_equal(seen[0], seen[2])


def test_orientation_settings_are_checked():
    with pytest.raises(ValueError, match="orientation_threshold"):
        with_overrides(settings(), {"orientation_threshold": "0.2"})
    # the east-str recognizer reads 1-channel crops: the 3-channel classifier cannot see them
    assert not settings("east-str").orientation.classify_orientation
    with pytest.raises(ValueError, match="3-channel"):
        with_overrides(settings("east-str"), {"classify_orientation": "true"})


# --- read_lines on synthetic best paths ------------------------------------------------------

LETTERS = ["", "a", "b", "c", " "]
FILTER = TextFilter(text_score=0.5, rival_margin=0.0)


def test_read_lines_drops_weak_texts_and_ignores_a_padding_row():
    best_class = np.array([[1, 1], [2, 2], [3, 3]])  # "a", "b", and a padding row "c"
    best_score = np.array([[0.9, 0.9], [0.3, 0.3], [0.9, 0.9]], np.float32)  # "b" is weak
    quads = np.arange(2 * 8, dtype=np.float32).reshape(2, 4, 2)
    out = read_lines(BestPath(best_class, best_score), quads, LETTERS, FILTER)
    assert out.texts == ["a"]
    assert np.array_equal(out.quads, quads[:1]) and out.scores.shape == (1,)


def test_read_lines_without_boxes():
    best = BestPath(np.zeros((1, 2), np.int64), np.zeros((1, 2), np.float32))
    out = read_lines(best, np.zeros((0, 4, 2), np.float32), LETTERS, FILTER)
    assert out.texts == [] and out.quads.shape == (0, 4, 2) and out.scores.shape == (0,)


def box(left: float, top: float, right: float, bottom: float) -> np.ndarray:
    return np.array([[left, top], [right, top], [right, bottom], [left, bottom]], np.float32)


def test_a_page_of_pictures_keeps_its_drawn_lines_and_ocr_where_none_lie():
    """with_layer: OCR's line on the drawn text is dropped (the layer's is exact), its line on
    the picture kept, in reading order with the layer's, each word and font on its line."""
    drawn = TextLayer(
        (
            LayerLine(
                (LayerWord("Drawn", box(10, 10, 60, 30)), LayerWord("title", box(70, 10, 120, 30))),
                box(10, 10, 120, 30),
                "Helvetica-Bold",
            ),
        ),
        (400, 300),
        ocr_too=True,
    )
    ocr = Texts(
        ["Drawn tit1e", "In the picture"],
        np.stack([box(12, 11, 118, 29), box(10, 200, 150, 220)]),
        np.array([0.9, 0.8], np.float32),
    ).with_words(
        Words(
            ["Drawn", "tit1e", "In", "the", "picture"],
            np.stack(
                [
                    box(12, 11, 60, 29),
                    box(70, 11, 118, 29),
                    box(10, 200, 30, 220),
                    box(40, 200, 70, 220),
                    box(80, 200, 150, 220),
                ]
            ),
            np.full(5, 0.8, np.float32),
            np.array([0, 0, 1, 1, 1], np.int32),
        )
    )
    blocks = settings().blocks
    merged = with_layer(ocr, drawn, blocks, word_boxes=True)
    assert merged.texts == ["Drawn title", "In the picture"]
    assert merged.fonts == ("Helvetica-Bold", "")  # each line's font follows it; OCR names none
    assert merged.scores.tolist() == pytest.approx([1.0, 0.8])
    assert merged.words is not None
    assert list(zip(merged.words.texts, merged.words.lines.tolist(), strict=True)) == [
        ("Drawn", 0),
        ("title", 0),
        ("In", 1),
        ("the", 1),
        ("picture", 1),
    ]
    assert with_layer(ocr, drawn, blocks, word_boxes=False).words is None
    turned = dataclasses.replace(ocr, rotation=90)
    assert with_layer(turned, drawn, blocks, word_boxes=True) is turned  # OCR's reading alone
