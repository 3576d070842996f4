"""The table set (tests/data/tables): real table images with their structure and cell text as
HTML, scored with TEDS (tree-edit-distance similarity, PubTabNet's measure) by split (dev,
report) and kind (ruled, unruled). TEDS compares the whole tree, cell text included;
TEDS-S the structure alone."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triton_ocr.client import OcrClient
from triton_ocr.client.markdown import table_html
from triton_ocr.client.results import Table

from .labels import manifest_entries

TABLE_SET = Path("tests/data/tables")
# <thead> and <tbody> say nothing a picture shows: both sides are compared without them
NO_SECTIONS = ["thead", "tbody"]


@dataclass(frozen=True)
class TableSample:
    path: Path
    split: str  # "dev" (settings are chosen on it) or "report" (held out)
    ruled: bool  # rules between every row and column
    html: str  # the ground truth: <table> with its cells' text and spans
    box: tuple[float, float, float, float] | None  # where the table lies in the image, if given
    held_out: bool = True  # False: looked at while a setting was chosen, left out of reports


def is_table_set(folder: Path) -> bool:
    entries = manifest_entries(folder)
    return bool(entries) and all("html" in entry for entry in entries)


def load_tables(folder: Path) -> list[TableSample]:
    return [
        TableSample(
            folder / entry["file"],
            entry["split"],
            bool(entry["ruled"]),
            entry["html"],
            tuple(entry["table_box"]) if entry.get("table_box") else None,
            entry.get("held_out", True),
        )
        for entry in json.loads((folder / "manifest.json").read_text())
    ]


def overlap(table: Table, box: tuple[float, float, float, float]) -> float:
    xs = [x for x, _ in table.polygon]
    ys = [y for _, y in table.polygon]
    width = min(max(xs), box[2]) - max(min(xs), box[0])
    height = min(max(ys), box[3]) - max(min(ys), box[1])
    return max(width, 0.0) * max(height, 0.0)


def area(table: Table) -> float:
    xs = [x for x, _ in table.polygon]
    ys = [y for _, y in table.polygon]
    return (max(xs) - min(xs)) * (max(ys) - min(ys))


def chosen(tables: Sequence[Table], box: tuple[float, float, float, float] | None) -> Table | None:
    """The table found that stands for the labelled one: the one overlapping its box most, or
    (no box: the image is the table) the largest."""
    if not tables:
        return None
    if box is None:
        return max(tables, key=area)
    best = max(tables, key=lambda t: overlap(t, box))
    return best if overlap(best, box) > 0 else None


def teds(predicted: str, truth: str, structure_only: bool) -> float:
    from table_recognition_metric import TEDS

    def page(table: str) -> str:  # TEDS reads the table at html/body/table
        return f"<html><body>{table}</body></html>"

    # the library splats ignore_nodes into strip_tags: a list of tag names
    score = TEDS(structure_only=structure_only, ignore_nodes=NO_SECTIONS)
    return float(score(page(predicted), page(truth)))


def score_tables(
    samples: Sequence[TableSample], client: OcrClient, parameters: Mapping[str, Any]
) -> list[dict]:
    """Each sample read with tables=true and scored: TEDS, TEDS-S and what was found."""
    rows = []
    for sample in samples:
        asked = {**parameters, "tables": True}
        document = client.read_document(sample.path.read_bytes(), **asked)
        tables = [t for page in document.pages for t in page.tables]
        table = chosen(tables, sample.box)
        predicted = table_html(table.grid()) if table is not None else ""
        rows.append(
            {
                "file": sample.path.name,
                "split": sample.split,
                "ruled": sample.ruled,
                "found": table is not None,
                "grid": [table.rows, table.columns] if table is not None else None,
                "teds": teds(predicted, sample.html, False) if predicted else 0.0,
                "teds_s": teds(predicted, sample.html, True) if predicted else 0.0,
            }
        )
    return rows


def summary(rows: Sequence[dict]) -> dict[str, dict[str, dict]]:
    """Per split, per kind (ruled, unruled, all): tables, found, mean TEDS and TEDS-S."""
    found: dict[str, dict[str, dict]] = {}
    for split in sorted({row["split"] for row in rows}):
        for kind, test in (("ruled", True), ("unruled", False), ("all", None)):
            held = [r for r in rows if r["split"] == split and test in (None, r["ruled"])]
            if not held:
                continue
            found.setdefault(split, {})[kind] = {
                "tables": len(held),
                "found": sum(r["found"] for r in held),
                "teds": round(sum(r["teds"] for r in held) / len(held), 3),
                "teds_s": round(sum(r["teds_s"] for r in held) / len(held), 3),
            }
    return found


def print_tables(name: str, rows: Sequence[dict], left_out: int) -> None:
    aside = f"; {left_out} left out (not held out)" if left_out else ""
    print(f"\n######## {name}: {len(rows)} tables{aside} (TEDS, TEDS-S: structure only)")
    print(f"{'split':8} {'kind':8} {'tables':>6} {'found':>6} {'TEDS':>6} {'TEDS-S':>7}")
    for split, kinds in summary(rows).items():
        for kind, s in kinds.items():
            print(
                f"{split:8} {kind:8} {s['tables']:6d} {s['found']:6d} "
                f"{s['teds']:6.3f} {s['teds_s']:7.3f}"
            )
