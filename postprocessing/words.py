"""Recognizer best path -> word boxes on the original image.

A line's best path has one step per `step_width` pixels of its recognizer row; greedy CTC
decoding keeps one run of steps per character (`ctc_runs`). Each character is placed at the
centre of its run and given the width of the line's character pitch (the median distance
between the centres of neighbouring characters of its kind, CJK or not); a word reaches from
half a pitch before its first character's centre to half a pitch after its last one's. The
word's row span goes back through the row's 180-degree turn (if the orientation classifier
turned it) and the resize to the upright crop, where its corners go on the box's own top and
bottom edges (the margin taken off); the crop's frame maps them back to the original image
(`CropFrame`), so a word's top and bottom lie on its line's.

Words are split on whitespace, and every CJK character (Han, kana, Hangul, CJK punctuation,
fullwidth forms) is a word of its own, as those scripts put no space between words.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from .ctc import ctc_runs
from .geometry import CropFrame, box_edge_points, to_original

# (first, last) code points of the scripts whose characters are words of their own
CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FFF),  # CJK and Kangxi radicals, ideographic description characters
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo, Hangul compatibility Jamo, Kanbun, strokes, Katakana ext.
    (0x3200, 0x33FF),  # enclosed CJK letters and months, CJK compatibility
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Hangul Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # halfwidth and fullwidth forms
    (0x20000, 0x3FFFF),  # CJK unified ideographs extensions B and later (planes 2 and 3)
)
_STARTS = [first for first, _ in CJK_RANGES]


@dataclass(frozen=True)
class Words:
    texts: list[str]
    quads: NDArray[np.float32]  # [W, 4, 2] tl, tr, br, bl in reading direction, original pixels
    scores: NDArray[np.float32]  # [W] float32, mean probability of the word's characters
    lines: NDArray[np.int32]  # [W] int32, index of the (returned) line each word belongs to

    @staticmethod
    def empty() -> Words:
        return Words(
            [], np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32), np.zeros(0, np.int32)
        )


def is_cjk(character: str) -> bool:
    """Whether any code point of `character` is of a script that writes words without spaces."""
    for c in character:
        code = ord(c)
        i = bisect.bisect_right(_STARTS, code) - 1
        if i >= 0 and code <= CJK_RANGES[i][1]:
            return True
    return False


def split_units(units: Sequence[str]) -> list[tuple[int, int]]:
    """[start, end) index ranges of the words of a sequence of characters (alphabet entries):
    whitespace (or empty) ones separate words, each CJK one is a word of its own."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for k, unit in enumerate(units):
        space, cjk = not unit.strip(), is_cjk(unit)
        if (space or cjk) and start is not None:
            spans.append((start, k))
            start = None
        if cjk and not space:
            spans.append((k, k + 1))
        elif not space and start is None:
            start = k
    if start is not None:
        spans.append((start, len(units)))
    return spans


def character_pitches(
    units: Sequence[str], centres: NDArray[np.float64], row_width: float
) -> NDArray[np.float64]:
    """Each character's pitch (row pixels): the median distance between the centres of
    neighbouring non-space characters of its kind (CJK or not) in the line; for a kind with no
    such pair, the median over all neighbouring pairs; with none at all, the row's width per
    character."""
    n = len(units)
    wide = np.array([is_cjk(u) for u in units], dtype=bool)
    solid = np.array([bool(u.strip()) for u in units], dtype=bool)
    pairs = np.flatnonzero(solid[:-1] & solid[1:]) if n > 1 else np.zeros(0, np.int64)
    gaps = centres[pairs + 1] - centres[pairs]
    fallback = float(np.median(gaps)) if gaps.size else row_width / max(n, 1)
    pitches = np.full(n, fallback, dtype=np.float64)
    for kind in (False, True):
        same = (wide[pairs] == kind) & (wide[pairs + 1] == kind)
        if same.any():
            pitches[wide == kind] = float(np.median(gaps[same]))
    return pitches


def word_spans(
    units: Sequence[str], centres: NDArray[np.float64], row_width: float
) -> list[tuple[tuple[int, int], tuple[float, float]]]:
    """([start, end) character range, (x0, x1) row span) per word, in row order: half a pitch
    around the first and last character centres, within [0, row_width], neighbours that overlap
    meeting halfway."""
    half = character_pitches(units, centres, row_width) / 2
    spans = split_units(units)
    extents = [
        [
            min(max(centres[a] - half[a], 0.0), row_width),
            min(max(centres[b - 1] + half[b - 1], 0.0), row_width),
        ]
        for a, b in spans
    ]
    for left, right in pairwise(extents):
        if left[1] > right[0]:
            left[1] = right[0] = (left[1] + right[0]) / 2
    return [(span, (x0, x1)) for span, (x0, x1) in zip(spans, extents, strict=True)]


def row_to_crop(
    x: NDArray[np.float64], row_width: int, frame: CropFrame, turned: bool
) -> NDArray[np.float64]:
    """Row x (pixels of the recognizer row, as the recognizer saw it) -> x in the upright crop:
    undo the 180-degree turn within the row's own width, then the resize."""
    x = np.asarray(x, dtype=np.float64)
    if turned:
        x = row_width - x
    return x * (frame.width / row_width)


def line_words(
    classes: NDArray[np.int64],
    scores: NDArray[np.float32],
    alphabet: Sequence[str],
    step_width: float,
    row_width: int,
    frame: CropFrame,
    turned: bool,
) -> list[tuple[str, NDArray[np.float32], float]]:
    """One line's best path [T] -> (text, quad [4, 2] float32 original pixels, score) per word.

    `step_width`: row pixels per step (batch width / steps); `row_width`: the line's own width
    in its row; `frame`: its crop's; `turned`: the row was turned 180 degrees before the
    recognizer. The quad is tl, tr, br, bl in the reading direction of the recognized text (for
    a turned row, its tl is the crop's bottom right end of the word).
    """
    runs = ctc_runs(classes, scores)
    if not runs or row_width <= 0:
        return []
    units = [alphabet[c] for c, _, _, _ in runs]
    centres = np.array([(first + last + 1) / 2 * step_width for _, first, last, _ in runs])
    probabilities = np.array([p for _, _, _, p in runs], dtype=np.float32)
    words = []
    for (a, b), (x0, x1) in word_spans(units, centres, row_width):
        xs = row_to_crop(np.array([x0, x1]), row_width, frame, turned)
        top, bottom = box_edge_points(frame, xs)
        if turned:  # read upside down: the crop's bottom edge is the text's top
            top, bottom = bottom, top
        corners = np.stack([top[0], top[1], bottom[1], bottom[0]])
        quad = to_original(frame, corners).astype(np.float32)
        words.append(("".join(units[a:b]), quad, float(probabilities[a:b].mean())))
    return words


def text_words(
    best_class: NDArray[np.int64],
    best_score: NDArray[np.float32],
    kept: Sequence[int],
    frames: Sequence[CropFrame],
    row_widths: Sequence[int],
    step_widths: Sequence[float] | NDArray[np.float32],
    turned: Sequence[bool] | NDArray[np.bool_],
    alphabet: Sequence[str],
) -> Words:
    """The words of the lines the text filter kept. Output line j is crop kept[j]: its best
    path is best_class[kept[j]], best_score[kept[j]] ([N, T], indexed by crop), and frames[j],
    row_widths[j], step_widths[j], turned[j] describe it (one per kept line, in `kept`'s
    order); each of its words' `lines` entry is j."""
    count = len(kept)
    if not len(frames) == len(row_widths) == len(step_widths) == len(turned) == count:
        raise ValueError(
            f"expected one frame, row width, step width and turn per kept line ({count}), got "
            f"{len(frames)}, {len(row_widths)}, {len(step_widths)}, {len(turned)}"
        )
    texts: list[str] = []
    quads: list[NDArray[np.float32]] = []
    scores: list[float] = []
    lines: list[int] = []
    for j, i in enumerate(kept):
        found = line_words(
            best_class[i],
            best_score[i],
            alphabet,
            float(step_widths[j]),
            int(row_widths[j]),
            frames[j],
            bool(turned[j]),
        )
        for text, quad, score in found:
            texts.append(text)
            quads.append(quad)
            scores.append(score)
            lines.append(j)
    if not texts:
        return Words.empty()
    return Words(
        texts,
        np.stack(quads).astype(np.float32),
        np.asarray(scores, dtype=np.float32),
        np.asarray(lines, dtype=np.int32),
    )
