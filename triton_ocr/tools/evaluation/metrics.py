"""Scores of one image's predicted texts against its labels (pure functions, no I/O).

Text matching follows ../shared/eval/README.md: NFKC, case-insensitive, punctuation and spaces
ignored. A label string counts as found when each of its normalised tokens occurs in the
image's normalised output (PP-OCR drops spaces between Latin words, so tokens are matched as
substrings of the output, not as whole words); a predicted line counts as correct when each of
its tokens occurs in the normalised labels. Detection is scored ICDAR 2015 style: one-to-one
matches at IoU >= 0.5, predictions mostly inside do-not-care regions ignored.

Those scores are blind to spaces. Two more see them, since a user's invoice must come back as
they would type it: a label string is read *exactly* when some predicted line equals it after
NFKC, case folding and collapsing runs of whitespace (punctuation kept); and *word* recall,
precision and F1 count whitespace-separated words (each normalised as above) matched one to one
between labels and predictions, so `Invoice2024-0917total` is one wrong word, not three right
tokens.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from rapidfuzz.distance import Levenshtein
from shapely.geometry import Polygon

from .labels import Sample

MATCH_IOU = 0.5
ORDER_MATCH = 0.6  # a label line's output line: the most similar one, at least this similar
DONT_CARE_COVER = 0.5  # a prediction this much inside a do-not-care region is ignored


def normalize(text: str) -> str:
    """NFKC, case-folded, without punctuation, symbols or spaces."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def tokens(text: str) -> list[str]:
    """Normalised whitespace-separated tokens (empty ones dropped)."""
    return [t for t in map(normalize, unicodedata.normalize("NFKC", text).split()) if t]


def spaced(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space: spaces count, nothing else
    is dropped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def common(a: Sequence[str], b: Sequence[str]) -> int:
    """How many items `a` and `b` share, one to one (multiset intersection)."""
    return sum((Counter(a) & Counter(b)).values())


def char_error_rate(predicted: str, truth: str) -> float:
    """Edit distance between the normalised strings over the normalised truth's length."""
    p, t = normalize(predicted), normalize(truth)
    return Levenshtein.distance(p, t) / max(1, len(t))


def found_in(text: str, normalized_output: str) -> bool:
    """A label string is found when each of its tokens occurs in the normalised output."""
    return all(t in normalized_output for t in tokens(text))


@dataclass
class Counts:
    """Sums over images; ratios come from the sums (micro averages)."""

    strings_found: int = 0
    strings: int = 0
    strings_exact: int = 0  # read exactly, spaces included (spaced())
    words_found: int = 0  # label words matched one to one by predicted words
    words: int = 0
    predicted_words_correct: int = 0
    predicted_words: int = 0
    lines_correct: int = 0
    lines: int = 0
    tokens_found: int = 0
    tokens: int = 0
    predicted_tokens_correct: int = 0
    predicted_tokens: int = 0
    boxes_matched: int = 0
    boxes: int = 0
    predicted_boxes: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def pair_share(rows: Sequence[dict], key: str) -> float | None:
    """Of the rows' [hits, of] pairs under `key` (rows without it left out): all the hits
    over all the of."""
    held = [row[key] for row in rows if key in row]
    return ratio(sum(hits for hits, _ in held), sum(of for _, of in held))


def shown(value: float | None) -> str:
    """A score as printed: three decimals, "-" where there is none."""
    return "-" if value is None else f"{value:.3f}"


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _polygon(quad: np.ndarray) -> Polygon:
    polygon = Polygon(np.asarray(quad, dtype=np.float64).reshape(4, 2))
    return polygon if polygon.is_valid else polygon.buffer(0)


def iou(a: Polygon, b: Polygon) -> float:
    union = a.union(b).area
    return a.intersection(b).area / union if union else 0.0


def match_boxes(predicted: Sequence[np.ndarray], truth: Sequence[np.ndarray]) -> int:
    """Greedy one-to-one matches at IoU >= MATCH_IOU, best pairs first."""
    pred = [_polygon(q) for q in predicted]
    gt = [_polygon(q) for q in truth]
    pairs = sorted(
        ((iou(p, g), i, j) for i, p in enumerate(pred) for j, g in enumerate(gt)), reverse=True
    )
    used_p, used_g = set(), set()
    for score, i, j in pairs:
        if score < MATCH_IOU:
            break
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
    return len(used_p)


def inside_dont_care(quad: np.ndarray, regions: Sequence[np.ndarray]) -> bool:
    polygon = _polygon(quad)
    if not polygon.area:
        return False
    return any(
        polygon.intersection(_polygon(r)).area / polygon.area >= DONT_CARE_COVER for r in regions
    )


def score_image(sample: Sample, texts: Sequence[str], quads: np.ndarray) -> Counts:
    """Counts for one scene or document image; `quads` [N, 4, 2] belong to `texts`."""
    quads = np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)
    ignored = [label.box for label in sample.labels if not label.care and label.box is not None]
    kept = [i for i in range(len(texts)) if not inside_dont_care(quads[i], ignored)]
    output = "".join(normalize(texts[i]) for i in kept)
    truth = "".join(normalize(label.text) for label in sample.cared)
    counts = Counts()
    predicted_lines = {spaced(texts[i]) for i in kept}
    label_words = [w for label in sample.cared for w in tokens(label.text)]
    predicted_words = [w for i in kept for w in tokens(texts[i])]
    shared_words = common(label_words, predicted_words)  # one to one: the same both ways
    counts.words += len(label_words)
    counts.words_found += shared_words
    for label in sample.cared:
        label_tokens = tokens(label.text)
        if not label_tokens:
            continue
        counts.strings += 1
        counts.strings_found += found_in(label.text, output)
        counts.strings_exact += spaced(label.text) in predicted_lines
        counts.tokens += len(label_tokens)
        counts.tokens_found += sum(t in output for t in label_tokens)
    if sample.complete:  # precision only where every legible text is labelled
        counts.predicted_words += len(predicted_words)
        counts.predicted_words_correct += shared_words
        for i in kept:
            line_tokens = tokens(texts[i])
            if not line_tokens:
                continue
            counts.lines += 1
            counts.lines_correct += all(t in truth for t in line_tokens)
            counts.predicted_tokens += len(line_tokens)
            counts.predicted_tokens_correct += sum(t in truth for t in line_tokens)
    if sample.has_boxes:
        cared = [label.box for label in sample.cared if label.box is not None]  # all: has_boxes
        counts.boxes += len(cared)
        counts.predicted_boxes += len(kept)
        counts.boxes_matched += match_boxes([quads[i] for i in kept], cared)
    return counts


@dataclass(frozen=True)
class WordResult:
    exact: bool
    cer: float


def score_word(sample: Sample, texts: Sequence[str]) -> WordResult:
    """A word or line crop: the whole output against its one label."""
    (label,) = sample.cared
    predicted = " ".join(texts)
    return WordResult(
        normalize(predicted) == normalize(label.text), char_error_rate(predicted, label.text)
    )


def summary(counts: Counts) -> dict[str, float | None]:
    """Recall, precision and F1 of strings, tokens and words (spaces counted), strings read
    exactly, detection P/R/H-mean."""
    c = counts
    out: dict[str, float | None] = {}
    for name, found, total, correct, predicted in (
        ("string", c.strings_found, c.strings, c.lines_correct, c.lines),
        ("token", c.tokens_found, c.tokens, c.predicted_tokens_correct, c.predicted_tokens),
        ("word", c.words_found, c.words, c.predicted_words_correct, c.predicted_words),
    ):
        recall, precision = ratio(found, total), ratio(correct, predicted)
        out |= {
            f"{name}_recall": recall,
            f"{name}_precision": precision,
            f"{name}_f1": f1(precision, recall),
        }
    out["string_exact"] = ratio(c.strings_exact, c.strings)
    recall, precision = ratio(c.boxes_matched, c.boxes), ratio(c.boxes_matched, c.predicted_boxes)
    out |= {"det_recall": recall, "det_precision": precision, "det_hmean": f1(precision, recall)}
    return out


def line_positions(truth: Sequence[str], predicted: Sequence[str]) -> list[int | None]:
    """For each label line, the index of the output line it was read as: the most similar
    unused one (normalised Levenshtein similarity of at least ORDER_MATCH; the earliest of
    equals, so repeated texts pair up in turn), or None when none is similar enough."""
    outputs = [normalize(text) for text in predicted]
    used: set[int] = set()
    positions: list[int | None] = []
    for text in map(normalize, truth):
        best, best_score = None, ORDER_MATCH
        for index, output in enumerate(outputs):
            score = Levenshtein.normalized_similarity(text, output) if text else 0.0
            if index not in used and score > best_score + 1e-9:
                best, best_score = index, score
        if best is not None:
            used.add(best)
        positions.append(best)
    return positions


def reading_order_pairs(truth: Sequence[str], predicted: Sequence[str]) -> tuple[int, int]:
    """(pairs kept in order, pairs) over every pair of label lines found in the output: the
    reading-order score of a page whose labels are in reading order is their ratio."""
    found = [p for p in line_positions(truth, predicted) if p is not None]
    pairs = len(found) * (len(found) - 1) // 2
    kept = sum(1 for i, a in enumerate(found) for b in found[i + 1 :] if a < b)
    return kept, pairs
