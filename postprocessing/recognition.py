"""Recognizer best path + boxes -> the texts the service returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .ctc import ctc_greedy_decode
from .words import Words


@dataclass(frozen=True)
class Texts:
    texts: list[str]
    quads: np.ndarray  # [M, 4, 2] float32
    scores: np.ndarray  # [M] float32 recognition confidence
    words: Words | None = None  # word boxes, when asked for; Words.lines index the M texts

    @staticmethod
    def empty() -> Texts:
        return Texts([], np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32))

    @staticmethod
    def of(decoded: Sequence[tuple[str, float]], quads: np.ndarray, keep: Sequence[int]) -> Texts:
        """The decoded texts (and the quads they were read from) at the indices `keep`."""
        return Texts(
            texts=[decoded[i][0] for i in keep],
            quads=np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)[list(keep)],
            scores=np.asarray([decoded[i][1] for i in keep], dtype=np.float32),
        )

    def with_words(self, words: Words) -> Texts:
        return dataclasses.replace(self, words=words)


def strong_texts(decoded: Sequence[tuple[str, float]], text_score: float) -> list[int]:
    """Indices of the decoded texts that are non-blank and at least `text_score` confident."""
    return [i for i, (text, score) in enumerate(decoded) if text.strip() and score >= text_score]


def select_texts(
    decoded: Sequence[tuple[str, float]], quads: np.ndarray, text_score: float
) -> Texts:
    """Keep the decoded texts that are non-blank and at least `text_score` confident."""
    return Texts.of(decoded, quads, strong_texts(decoded, text_score))


def read_texts(
    best_class: np.ndarray,
    best_score: np.ndarray,
    quads: np.ndarray,
    alphabet: Sequence[str],
    text_score: float,
) -> Texts:
    """Decode the best path [N, T] of the len(quads) crops and drop weak or empty texts.

    Rows beyond len(quads) (a padding row of a recognizer batch) are ignored.
    """
    n = len(quads)
    decoded = ctc_greedy_decode(best_class[:n], best_score[:n], alphabet) if n else []
    return select_texts(decoded, quads, text_score)
