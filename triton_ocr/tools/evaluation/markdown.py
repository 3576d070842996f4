"""Markdown scored on pages labelled in reading order with their headings (manifest entries
with `headings`): the page read by `ocr` and written as Markdown (`Document.to_markdown`, its
defaults: running headers and footers left out), then

- **text**: 1 - normalised edit distance between the text a reader of the Markdown sees and
  the label lines in reading order (both normalised as the other scores are);
- **order**: the share of label line pairs kept in order in that text (each label line placed
  where it aligns best, when at least ALIGNED similar);
- **headings**: labelled headings found as Markdown headings (recall; a heading the Markdown
  split in two, one after the other, counts), and Markdown headings that are labelled ones or
  parts of them (precision);
- **figures**, on pages labelled with them (`figures`, boxes): the picture blocks of the page
  (a figure block with no text) matched one to one with labelled figures by their overlap, as
  the detection scores match boxes, against the labelled (recall) and the found (precision).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from markdown_it import MarkdownIt
from numpy.typing import NDArray
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from triton_ocr.client import OcrClient
from triton_ocr.client.results import Document
from triton_ocr.contract import BLOCK_FIGURE
from triton_ocr.postprocessing.geometry import Box, quad_of

from .labels import Sample
from .metrics import match_boxes, normalize, pair_share, shown

ALIGNED = 80.0  # a label line is placed where it aligns at least this well (0-100)
SAME_HEADING = 0.8  # normalised similarity at which a Markdown heading is a labelled one
PART = 90.0  # a heading is part of another when it aligns with a stretch of it this well
PARSER = MarkdownIt("commonmark").enable("table")
HEADING = re.compile(r"<h[1-6]>(.*?)</h[1-6]>", re.S)
TAG = re.compile(r"<[^>]+>")
COMMENT = re.compile(r"<!--.*?-->", re.S)


def shown_text(markdown: str) -> str:
    """What a reader of the rendered Markdown sees (comments and tags left out)."""
    rendered = COMMENT.sub(" ", PARSER.render(markdown))
    return html.unescape(TAG.sub(" ", rendered))


def headings_of(markdown: str) -> list[str]:
    return [html.unescape(TAG.sub(" ", h)) for h in HEADING.findall(PARSER.render(markdown))]


def order_pairs(lines: Sequence[str], text: str) -> tuple[int, int]:
    """(label line pairs kept in order, pairs) among the label lines placed in `text`."""
    placed = []
    for line in map(normalize, lines):
        if not line:
            continue
        found = fuzz.partial_ratio_alignment(line, text)
        if found is not None and found.score >= ALIGNED:
            placed.append(found.dest_start)
    pairs = len(placed) * (len(placed) - 1) // 2
    kept = sum(1 for i, a in enumerate(placed) for b in placed[i + 1 :] if a <= b)
    return kept, pairs


def same_heading(label: str, heading: str) -> bool:
    return label == heading or Levenshtein.normalized_similarity(label, heading) >= SAME_HEADING


def part_of(short: str, long: str) -> bool:
    """Whether `short` (normalised) is, all but a few characters, a stretch of `long`."""
    return bool(short) and len(short) <= len(long) and fuzz.partial_ratio(short, long) >= PART


def headings_found(labelled: Sequence[str], found: Sequence[str]) -> tuple[int, int]:
    """(labelled headings found, Markdown headings right): a labelled heading is found as a
    Markdown heading, as consecutive ones (split in two), or within one (two labelled headings
    written as one); a Markdown heading is right when it is a labelled one or part of one, or
    made of labelled ones."""
    labels = [normalize(h) for h in labelled]
    heads = [normalize(h) for h in found]
    runs = {"".join(heads[i:j]) for i in range(len(heads)) for j in range(i + 1, len(heads) + 1)}
    recall = sum(
        1
        for label in labels
        if any(same_heading(label, run) or part_of(label, run) for run in runs)
    )
    right = sum(
        1
        for h in heads
        if any(same_heading(label, h) or part_of(h, label) for label in labels)
        or sum(len(label) for label in labels if part_of(label, h)) >= SAME_HEADING * len(h) > 0
    )
    return recall, right


def score_markdown(
    samples: Sequence[Sample], client: OcrClient, parameters: Mapping[str, Any]
) -> list[dict]:
    """Each sample with labelled headings read by `ocr`, written as Markdown and scored."""
    rows = []
    for sample in samples:
        if sample.headings is None:
            continue
        document = client.read_document(sample.read(), **parameters)
        markdown = document.to_markdown()
        truth = [label.text for label in sample.cared]
        text = normalize(shown_text(markdown))
        kept, pairs = order_pairs(truth, text)
        similar = Levenshtein.normalized_similarity(normalize(" ".join(truth)), text)
        headings = headings_of(markdown)
        found, right = headings_found(sample.headings, headings)
        rows.append(
            {
                "file": sample.name,
                "text": round(similar, 3),
                "order": [kept, pairs],
                "headings": [found, len(sample.headings)],
                "markdown_headings": [right, len(headings)],
                **figure_scores(sample.figures, pictures(document)),
            }
        )
    return rows


def pictures(document: Document) -> list[NDArray[np.float32]]:
    """The polygons of a document's figure blocks that hold no text (the pictures)."""
    return [
        np.asarray(block.polygon, np.float32)
        for page in document.pages
        for block in page.blocks
        if block.type == BLOCK_FIGURE and not block.lines
    ]


def figure_scores(
    labelled: Sequence[Box] | None, found: Sequence[NDArray[np.float32]]
) -> dict[str, list[int]]:
    """Labelled figures found and found figures labelled (one-to-one at metrics.MATCH_IOU);
    nothing on a page whose figures are not labelled."""
    if labelled is None:
        return {}
    matched = match_boxes(found, [quad_of(box) for box in labelled])
    return {"figures": [matched, len(labelled)], "figures_right": [matched, len(found)]}


def summary(rows: Sequence[dict]) -> dict[str, float | int | None]:
    """Pages, mean text similarity, pairs kept in order, heading and figure recall and
    precision."""
    return {
        "pages": len(rows),
        "text": round(sum(row["text"] for row in rows) / len(rows), 3) if rows else None,
        "order": pair_share(rows, "order"),
        "headings_recall": pair_share(rows, "headings"),
        "headings_precision": pair_share(rows, "markdown_headings"),
        "figures_recall": pair_share(rows, "figures"),
        "figures_precision": pair_share(rows, "figures_right"),
    }


def print_markdown(name: str, rows: Sequence[dict]) -> None:
    if not rows:
        return
    s = summary(rows)
    scores = {key: shown(value) for key, value in s.items() if key != "pages"}
    print(
        f"markdown ({name}): {s['pages']} pages, text {scores['text']}, order "
        f"{scores['order']}, headings found {scores['headings_recall']}, "
        f"Markdown headings right {scores['headings_precision']}, figures found "
        f"{scores['figures_recall']}, right {scores['figures_precision']}"
    )
    for row in rows:
        print(
            f"  {row['file']:45} text {row['text']:.3f} order {row['order'][0]}/{row['order'][1]} "
            f"headings {row['headings'][0]}/{row['headings'][1]} "
            f"right {row['markdown_headings'][0]}/{row['markdown_headings'][1]}"
            + (
                f" figures {row['figures'][0]}/{row['figures'][1]} "
                f"right {row['figures_right'][0]}/{row['figures_right'][1]}"
                if "figures" in row
                else ""
            )
        )
