import numpy as np
import pytest

from triton_ocr.postprocessing.alphabet import alphabet_from_metadata
from triton_ocr.postprocessing.ctc import ctc_greedy_decode, ctc_runs

ALPHABET = ["", "a", "b", "c", " "]


def test_repeats_collapse_and_blanks_separate():
    indices = np.array([[1, 1, 0, 1, 2, 2, 0, 0, 3]])
    probs = np.array([[0.9, 0.8, 0.99, 0.7, 0.6, 0.5, 0.9, 0.9, 1.0]])
    ((text, score),) = ctc_greedy_decode(indices, probs, ALPHABET)
    assert text == "aabc"
    assert score == pytest.approx((0.9 + 0.7 + 0.6 + 1.0) / 4)


def test_all_blank_is_empty_with_zero_confidence():
    assert ctc_greedy_decode(np.zeros((1, 5), int), np.ones((1, 5)), ALPHABET) == [("", 0.0)]


def test_alphabet_from_metadata():
    assert alphabet_from_metadata("x\ny\n") == ["", "x", "y", " "]
    assert alphabet_from_metadata("x\ny", append_space=False) == ["", "x", "y"]


# --- ctc_runs: where each kept character lies in the best path -------------------------------


def test_runs_of_a_best_path():
    classes = np.array([1, 1, 0, 1, 2, 2, 0, 0, 3])
    scores = np.array([0.9, 0.8, 0.99, 0.7, 0.6, 0.5, 0.9, 0.9, 1.0], np.float32)
    runs = ctc_runs(classes, scores)
    assert [(c, a, b) for c, a, b, _ in runs] == [(1, 0, 1), (1, 3, 3), (2, 4, 5), (3, 8, 8)]
    assert [p for *_, p in runs] == pytest.approx([0.9, 0.7, 0.6, 1.0])
    assert ctc_runs(np.zeros(4, int), np.ones(4)) == [] and ctc_runs([], []) == []
    assert [c for c, *_ in ctc_runs([2, 2, 1], [1, 1, 1], blank=2)] == [1]


def test_runs_agree_with_greedy_decoding_on_random_paths():
    rng = np.random.default_rng(3)
    for _ in range(200):
        steps = int(rng.integers(1, 40))
        # mostly blanks and repeats, as recognizers emit them
        classes = np.where(rng.random(steps) < 0.5, 0, rng.integers(0, len(ALPHABET), steps))
        classes = np.where(rng.random(steps) < 0.3, np.roll(classes, 1), classes)
        scores = rng.random(steps).astype(np.float32)
        ((text, score),) = ctc_greedy_decode(classes[None], scores[None], ALPHABET)
        runs = ctc_runs(classes, scores)
        assert "".join(ALPHABET[c] for c, *_ in runs) == text
        mean = float(np.mean([p for *_, p in runs])) if runs else 0.0
        assert mean == pytest.approx(score, abs=1e-6)
        for c, first, last, p in runs:  # a run: one class from its first step to its last
            assert np.all(classes[first : last + 1] == c) and p == scores[first]
            assert first == 0 or classes[first - 1] != c
            assert last == steps - 1 or classes[last + 1] != c
