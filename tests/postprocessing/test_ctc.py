import numpy as np
import pytest

from triton_ocr.postprocessing.alphabet import alphabet_from_metadata
from triton_ocr.postprocessing.ctc import ctc_decode_probabilities, ctc_greedy_decode
from triton_ocr.postprocessing.recognition import read_texts

ALPHABET = ["", "a", "b", "c", " "]


def test_repeats_collapse_and_blanks_separate():
    indices = np.array([[1, 1, 0, 1, 2, 2, 0, 0, 3]])
    probs = np.array([[0.9, 0.8, 0.99, 0.7, 0.6, 0.5, 0.9, 0.9, 1.0]])
    ((text, score),) = ctc_greedy_decode(indices, probs, ALPHABET)
    assert text == "aabc"
    assert score == pytest.approx((0.9 + 0.7 + 0.6 + 1.0) / 4)


def test_all_blank_is_empty_with_zero_confidence():
    assert ctc_greedy_decode(np.zeros((1, 5), int), np.ones((1, 5)), ALPHABET) == [("", 0.0)]


def test_decode_probabilities_uses_best_path():
    probs = np.full((2, 3, 5), 0.01, np.float32)
    probs[0, [0, 1, 2], [2, 0, 4]] = 0.96
    probs[1, [0, 1, 2], [3, 3, 3]] = 0.96
    decoded = ctc_decode_probabilities(probs, ALPHABET)
    assert [t for t, _ in decoded] == ["b ", "c"]


def test_class_count_mismatch_is_an_error():
    with pytest.raises(ValueError, match="classes"):
        ctc_decode_probabilities(np.zeros((1, 2, 3), np.float32), ALPHABET)


def test_alphabet_from_metadata():
    assert alphabet_from_metadata("x\ny\n") == ["", "x", "y", " "]
    assert alphabet_from_metadata("x\ny", append_space=False) == ["", "x", "y"]


def test_read_texts_filters_and_ignores_padding_row():
    best_class = np.array([[1, 1], [2, 2], [3, 3]])  # "a", "b", and a padding row "c"
    best_score = np.array([[0.9, 0.9], [0.3, 0.3], [0.9, 0.9]], np.float32)  # "b" is weak
    quads = np.arange(2 * 8, dtype=np.float32).reshape(2, 4, 2)
    out = read_texts(best_class, best_score, quads, ALPHABET, text_score=0.5)
    assert out.texts == ["a"]
    assert np.array_equal(out.quads, quads[:1]) and out.scores.shape == (1,)


def test_read_texts_without_boxes():
    out = read_texts(np.zeros((1, 2), int), np.zeros((1, 2)), np.zeros((0, 4, 2)), ALPHABET, 0.5)
    assert out.texts == [] and out.quads.shape == (0, 4, 2) and out.scores.shape == (0,)
