"""Run a reader over a labelled set and score it: the core of `triton-ocr eval`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .labels import Sample
from .metrics import (
    Counts,
    found_in,
    normalize,
    ratio,
    reading_order_pairs,
    score_image,
    score_word,
    summary,
    tokens,
)

# encoded image -> (texts, quads [N, 4, 2]) in reading order
Reader = Callable[[bytes], tuple[list[str], np.ndarray]]


@dataclass(frozen=True)
class ImageResult:
    sample: Sample
    texts: list[str]
    quads: np.ndarray

    @property
    def missed(self) -> list[str]:
        """Labelled strings not found in the output (the rules of the scores)."""
        if self.sample.kind == "word":
            exact = score_word(self.sample, self.texts).exact
            return [] if exact else [self.sample.cared[0].text]
        output = "".join(normalize(t) for t in self.texts)
        return [
            label.text
            for label in self.sample.cared
            if tokens(label.text) and not found_in(label.text, output)
        ]


def read_all(samples: Sequence[Sample], reader: Reader) -> list[ImageResult]:
    results = []
    for sample in samples:
        texts, quads = reader(sample.read())
        results.append(ImageResult(sample, texts, np.asarray(quads, np.float32).reshape(-1, 4, 2)))
    return results


def report(results: Sequence[ImageResult]) -> dict:
    """Word-crop accuracy and CER; string/token/detection scores of scenes and documents
    (together and per kind); the reading-order score of the pages labelled in reading order;
    one row per image."""
    words = [r for r in results if r.sample.kind == "word"]
    word_scores = [score_word(r.sample, r.texts) for r in words]
    per_kind: dict[str, Counts] = {}
    order = {"images": 0, "kept": 0, "pairs": 0}
    rows = []
    for r in results:
        row = {
            "image": str(r.sample.path),
            "kind": r.sample.kind,
            "texts": len(r.texts),
            "missed": r.missed,
        }
        if r.sample.kind != "word":
            counts = score_image(r.sample, r.texts, r.quads)
            per_kind[r.sample.kind] = per_kind.get(r.sample.kind, Counts()) + counts
            row["strings"] = [counts.strings_found, counts.strings]
            row["tokens"] = [counts.tokens_found, counts.tokens]
            row["exact"] = [counts.strings_exact, counts.strings]
            row["words"] = [counts.words_found, counts.words]
        if r.sample.reading_order:
            kept, pairs = reading_order_pairs([label.text for label in r.sample.cared], r.texts)
            order["images"] += 1
            order["kept"] += kept
            order["pairs"] += pairs
            row["order"] = [kept, pairs]
        rows.append(row)
    pages = sum(per_kind.values(), Counts())
    return {
        "words": {
            "images": len(words),
            "exact": sum(s.exact for s in word_scores),
            "accuracy": sum(s.exact for s in word_scores) / len(words) if words else None,
            "cer": float(np.mean([s.cer for s in word_scores])) if words else None,
        },
        "scenes_and_documents": summary(pages),
        "per_kind": {kind: summary(c) for kind, c in sorted(per_kind.items())},
        "reading_order": {**order, "score": ratio(order["kept"], order["pairs"])},
        "images": rows,
    }


def _fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def print_report(name: str, result: dict) -> None:
    w = result["words"]
    print(f"\n== {name}")
    if w["images"]:
        print(
            f"word crops: {w['exact']}/{w['images']} exact ({_fmt(w['accuracy'])}), "
            f"mean CER {_fmt(w['cer'])}"
        )
    # space-blind (str, tok), then space-sensitive (exact lines, words), then detection
    header = ["", "str R", "str P", "str F1", "tok R", "tok P", "tok F1", "exact", "word R"]
    header += ["word P", "word F1", "det R", "det P", "det H"]
    keys = [
        "string_recall",
        "string_precision",
        "string_f1",
        "token_recall",
        "token_precision",
        "token_f1",
        "string_exact",
        "word_recall",
        "word_precision",
        "word_f1",
        "det_recall",
        "det_precision",
        "det_hmean",
    ]
    print(" ".join(f"{h:>20}" if i == 0 else f"{h:>6}" for i, h in enumerate(header)))
    groups = {"scenes+documents": result["scenes_and_documents"], **result["per_kind"]}
    for group, scores in groups.items():
        print(f"{group:>20} " + " ".join(f"{_fmt(scores[k]):>6}" for k in keys))
    order = result.get("reading_order") or {}
    if order.get("images"):
        print(
            f"reading order: {_fmt(order['score'])} of {order['pairs']} label line pairs kept "
            f"in order ({order['images']} pages labelled in reading order)"
        )
    misses = [row for row in result["images"] if row["missed"]]
    if misses:
        print("misses:")
        for row in misses:
            shown = ", ".join(repr(t) for t in row["missed"][:6])
            more = f" (+{len(row['missed']) - 6} more)" if len(row["missed"]) > 6 else ""
            print(f"  {Path(row['image']).name:45} {row['kind']:9} {shown}{more}")


def write_report(path: Path, reports: dict[str, dict], extra: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**extra, "results": reports}, indent=2, ensure_ascii=False))
