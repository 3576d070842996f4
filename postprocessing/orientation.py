"""Upside-down text, after the classifier: which rows to turn back."""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray

UPSIDE_DOWN = 1  # the classifier's classes: 0 upright, 1 turned by 180 degrees


def upside_down(probabilities: NDArray[np.float32], threshold: float) -> NDArray[np.bool_]:
    """[n, 2] class probabilities -> [n] bool: classified 180 degrees with at least `threshold`
    (below it the crop stays as it is: turning a correct line over costs more than leaving an
    uncertain one)."""
    probabilities = np.asarray(probabilities).reshape(-1, 2)
    flagged: NDArray[np.bool_] = (probabilities.argmax(axis=1) == UPSIDE_DOWN) & (
        probabilities[:, UPSIDE_DOWN] >= threshold
    )
    return flagged


def path_confidence(
    best_class: NDArray[np.int64], best_score: NDArray[np.float32]
) -> NDArray[np.float64]:
    """[n, T] best path -> [n] the mean probability of its non-blank steps (0 for none): how
    sure the recognizer is of what it read, to compare two readings of one crop."""
    kept = np.asarray(best_class) != 0
    total = np.where(kept, best_score, 0.0).sum(axis=1)
    return cast("NDArray[np.float64]", total / np.maximum(kept.sum(axis=1), 1))
