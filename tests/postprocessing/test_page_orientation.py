"""A page's turn: the classifier's four looks, the lines' evidence, and the way back to the
page as sent."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from triton_ocr.postprocessing.geometry import turned_back
from triton_ocr.postprocessing.page_orientation import (
    lines_level,
    proposed_turn,
    read_upright,
    turn_scores,
    upright_at_first_look,
)
from triton_ocr.preprocessing.page_orientation import page_classifier_input, turn_upright
from triton_ocr.settings import ClassifierInput, PageOrientation

PAGE = PageOrientation(
    "auto", 0.7, 0.6, 0.85, 0.9, 256, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
)
SIZE = ClassifierInput(3, 224, 224)
# the content turned this many degrees clockwise -> the OpenCV turn that makes it so
TURNED = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}


def looks_of(turn: int, sure: float = 0.9) -> np.ndarray:
    """What a classifier that sees the content turned `turn` degrees answers for each look
    (look k sees it turned k more quarters)."""
    rest = (1 - sure) / 3
    looks = np.full((4, 4), rest, np.float32)
    for k in range(4):
        looks[k, (turn // 90 + k) % 4] = sure
    return looks


@pytest.mark.parametrize("turn", [0, 90, 180, 270])
def test_four_consistent_looks_propose_their_turn(turn):
    assert proposed_turn(looks_of(turn), PAGE) == turn
    assert turn_scores(looks_of(turn)).argmax() == turn // 90


def test_one_confident_look_is_not_enough():
    """A photo the classifier misreads once, but not when turned: no turn."""
    looks = looks_of(0, sure=0.4)
    looks[0] = [0.05, 0.05, 0.85, 0.05]  # the first look says 180, the others do not agree
    assert proposed_turn(looks, PAGE) == 0
    assert proposed_turn(looks_of(90), PageOrientation("off", *list(vars(PAGE).values())[1:])) == 0


@pytest.mark.parametrize(("first", "upright"), [(0.92, True), (0.85, True), (0.84, False)])
def test_the_first_look_alone_settles_a_surely_upright_page(first, upright):
    rest = (1 - first) / 3
    assert upright_at_first_look(np.float32([[first, rest, rest, rest]]), PAGE) is upright


def box(w: float, h: float) -> list[list[float]]:
    return [[0, 0], [w, 0], [w, h], [0, h]]


def test_lines_must_lie_level_for_a_turn():
    level = np.array([box(200, 20)] * 5 + [box(20, 200)], np.float32)
    assert lines_level(level, PAGE)
    standing = np.array([box(20, 200)] * 5 + [box(200, 20)], np.float32)  # as the detector orders
    assert not lines_level(standing, PAGE)
    assert not lines_level(np.array([box(30, 30)], np.float32), PAGE)  # no direction: no evidence
    assert not lines_level(np.zeros((0, 4, 2), np.float32), PAGE)


def test_level_lines_read_upright_and_surely_show_an_upright_page():
    level = np.array([box(200, 20)] * 4, np.float32)
    none, one = np.zeros(4, bool), np.array([False, True, False, False])
    sure = np.array([0.95, 0.97, 0.4, 0.92])  # the median, not the weakest line, decides
    assert read_upright(level, none, sure, PAGE)
    assert not read_upright(level, one, sure, PAGE)  # a line read better turned over
    assert not read_upright(level, none, np.array([0.95, 0.6, 0.5, 0.92]), PAGE)  # unsure
    standing = np.array([box(20, 200)] * 4, np.float32)
    assert not read_upright(standing, none, sure, PAGE)


@pytest.mark.parametrize("turn", [90, 180, 270])
def test_turned_back_undoes_the_turn_pixel_for_pixel(turn):
    page = np.random.default_rng(turn).integers(0, 255, (5, 8, 3), dtype=np.uint8)
    sent = cv2.rotate(page, TURNED[turn])
    upright = turn_upright(sent, turn)
    assert np.array_equal(upright, page)
    ys, xs = np.mgrid[0 : upright.shape[0], 0 : upright.shape[1]]
    centres = np.stack([xs + 0.5, ys + 0.5], axis=-1).astype(np.float32)
    on_sent = turned_back(centres, turn, upright.shape[:2]).astype(int)
    assert np.array_equal(sent[on_sent[..., 1], on_sent[..., 0]], upright)


def test_the_four_looks_are_the_centre_crop_turned():
    page = np.random.default_rng(1).integers(0, 255, (300, 500, 3), dtype=np.uint8)
    looks = page_classifier_input(page, PAGE, SIZE)
    assert looks.shape == (4, 3, 224, 224) and looks.dtype == np.float32
    for k in range(1, 4):  # look k: look 0 turned k quarters clockwise
        assert np.array_equal(looks[k], np.rot90(looks[0], -k, axes=(1, 2)))
    # turning the page turns its centre crop: the first look of the turned page is look 1
    turned = page_classifier_input(cv2.rotate(page, cv2.ROTATE_90_CLOCKWISE), PAGE, SIZE)
    assert np.abs(turned[0] - looks[1]).mean() < 0.05
    small = page_classifier_input(page[:20, :30], PAGE, SIZE)  # scaled up to the input size
    assert small.shape == (4, 3, 224, 224)


def test_a_long_thin_page_costs_the_classifier_no_more_than_a_square_one():
    """Only the centre is resized: a 2 x 40000 strip is not scaled to 256 x 5 million first."""
    strip = np.full((2, 40_000, 3), 200, np.uint8)
    looks = page_classifier_input(strip, PAGE, SIZE)
    assert looks.shape == (4, 3, 224, 224)
