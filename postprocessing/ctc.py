"""CTC greedy decoding with per-text confidence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


def ctc_greedy_decode(
    indices: NDArray[np.int64],
    probs: NDArray[np.float32],
    alphabet: Sequence[str],
    blank_index: int = 0,
) -> list[tuple[str, float]]:
    """Decode best-path class indices [N, T] with their probabilities [N, T].

    Repeated classes collapse, blanks drop out; the confidence is the mean probability of the
    kept steps (0.0 when nothing is kept).
    """
    indices = np.asarray(indices)
    probs = np.asarray(probs, dtype=np.float32)
    if indices.ndim != 2 or indices.shape != probs.shape:
        raise ValueError(f"expected matching [N, T] arrays, got {indices.shape} and {probs.shape}")
    repeated = np.zeros_like(indices, dtype=bool)
    repeated[:, 1:] = indices[:, 1:] == indices[:, :-1]
    keep = (indices != blank_index) & ~repeated
    results = []
    for row_idx, row_prob, row_keep in zip(indices, probs, keep, strict=True):
        kept = row_idx[row_keep]
        text = "".join(alphabet[i] for i in kept)
        score = float(row_prob[row_keep].mean()) if kept.size else 0.0
        results.append((text, score))
    return results


def ctc_runs(
    classes: NDArray[np.int64], scores: NDArray[np.float32], blank: int = 0
) -> list[tuple[int, int, int, float]]:
    """One best path [T] -> (class, first step, last step, probability at the first step) per
    character greedy decoding keeps: each run of one non-blank class, in order (the characters
    and the mean of the probabilities are ctc_greedy_decode's text and score)."""
    classes = np.asarray(classes).reshape(-1)
    scores = np.asarray(scores, dtype=np.float32).reshape(-1)
    if classes.shape != scores.shape:
        raise ValueError(f"expected matching [T] arrays, got {classes.shape} and {scores.shape}")
    if classes.size == 0:
        return []
    starts = np.flatnonzero(np.concatenate([[True], classes[1:] != classes[:-1]]))
    ends = np.concatenate([starts[1:] - 1, [classes.size - 1]])
    return [
        (int(classes[s]), int(s), int(e), float(scores[s]))
        for s, e in zip(starts, ends, strict=True)
        if classes[s] != blank
    ]
