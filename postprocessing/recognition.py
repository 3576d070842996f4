"""Recognizer output + boxes -> the texts the service returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .ctc import ctc_decode_probabilities


@dataclass(frozen=True)
class Texts:
    texts: list[str]
    quads: np.ndarray  # [M, 4, 2] float32
    scores: np.ndarray  # [M] float32 recognition confidence


def read_texts(
    probabilities: np.ndarray,
    quads: np.ndarray,
    alphabet: Sequence[str],
    text_score: float,
) -> Texts:
    """Decode the first len(quads) rows of `probabilities` and drop weak or empty texts.

    The recognizer batch may hold one padding row when there were no boxes; it is ignored.
    """
    n = len(quads)
    decoded = ctc_decode_probabilities(probabilities[:n], alphabet) if n else []
    keep = [i for i, (text, score) in enumerate(decoded) if text.strip() and score >= text_score]
    return Texts(
        texts=[decoded[i][0] for i in keep],
        quads=np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)[keep],
        scores=np.asarray([decoded[i][1] for i in keep], dtype=np.float32),
    )
