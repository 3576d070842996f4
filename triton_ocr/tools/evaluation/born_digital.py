"""The born-digital PDF set (tests/data/born_digital): each file read by `ocr` from its pages'
text layers (`pdf_text=auto`) and by OCR (`pdf_text=ocr`), both timed, each page's text held
against pdfium's own extraction of it (pypdfium2), by split.

Per page: **exact**, the same characters in the same order as pdfium's (whitespace left out:
pdfium puts line ends and spaces where it infers them; its line-end hyphen, U+FFFE, is the
hyphen drawn); **same characters**, the same characters in any order (a page whose blocks read
in another order than the file's content); **OCR**, 1 - the normalised edit distance between
OCR's text and pdfium's, whitespace left out. Pages per second each way, and their ratio.
A file labelled with its `headings` also has the Markdown of its layer reading scored for them
as evaluation.markdown scores a page's (found, and right).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
from rapidfuzz.distance import Levenshtein

from triton_ocr.client import OcrClient
from triton_ocr.contract import PDF_TEXT

from .labels import manifest_entries
from .markdown import headings_found, headings_of
from .metrics import pair_share, shown

BORN_DIGITAL_SET = Path("tests/data/born_digital")
LINE_END_HYPHEN = "\ufffe"


@dataclass(frozen=True)
class PdfSample:
    path: Path
    split: str  # "dev" (settings are chosen on it) or "report" (held out)
    held_out: bool = True  # False: looked at while a setting was chosen, left out of reports
    headings: tuple[str, ...] | None = None  # the document's headings (None: not labelled)


def is_pdf_set(folder: Path) -> bool:
    entries = manifest_entries(folder)
    return bool(entries) and all(entry.get("kind") == "pdf" for entry in entries)


def load_pdfs(folder: Path) -> list[PdfSample]:
    return [
        PdfSample(
            folder / entry["file"],
            entry["split"],
            entry.get("held_out", True),
            tuple(entry["headings"]) if "headings" in entry else None,
        )
        for entry in json.loads((folder / "manifest.json").read_text())
    ]


def plain(text: str) -> str:
    """Text without whitespace, pdfium's line-end hyphen as the hyphen it draws."""
    return "".join(text.replace(LINE_END_HYPHEN, "-").split())


def pdfium_pages(data: bytes) -> list[str]:
    """Each page's text as pdfium extracts it, in its order."""
    document = pdfium.PdfDocument(data)
    try:
        pages = []
        for page in document:
            text_page = page.get_textpage()
            pages.append(text_page.get_text_range())
            text_page.close()
            page.close()
        return pages
    finally:
        document.close()


def score_pdfs(
    samples: Sequence[PdfSample], client: OcrClient, parameters: Mapping[str, Any]
) -> list[dict]:
    """Each file read from its layer and by OCR, timed, its pages held against pdfium's."""
    rows = []
    for sample in samples:
        data = sample.path.read_bytes()
        truth = [plain(text) for text in pdfium_pages(data)]
        seconds = {}
        read = {}
        for way in ("auto", "ocr"):
            start = time.perf_counter()
            read[way] = client.read_document(data, **{**parameters, PDF_TEXT: way})
            seconds[way] = time.perf_counter() - start
        layer = [plain(page.text) for page in read["auto"].pages]
        ocr = [plain(page.text) for page in read["ocr"].pages]
        headings = {}
        if sample.headings is not None:
            written = headings_of(read["auto"].to_markdown())
            found, right = headings_found(sample.headings, written)
            headings = {
                "headings": [found, len(sample.headings)],
                "markdown_headings": [right, len(written)],
            }
        rows.append(
            {
                "file": sample.path.name,
                "split": sample.split,
                "pages": len(truth),
                "from_layer": sum(page.read_from == "layer" for page in read["auto"].pages),
                "exact": sum(a == b for a, b in zip(layer, truth, strict=True)),
                "same_characters": sum(
                    Counter(a) == Counter(b) for a, b in zip(layer, truth, strict=True)
                ),
                "ocr_similarity": [
                    round(Levenshtein.normalized_similarity(a, b), 3)
                    for a, b in zip(ocr, truth, strict=True)
                ],
                "layer_s": round(seconds["auto"], 3),
                "ocr_s": round(seconds["ocr"], 3),
                **headings,
            }
        )
    return rows


def summary(rows: Sequence[dict]) -> dict[str, dict]:
    """Per split: pages, pages read from the layer, exact, same characters, mean OCR
    similarity, pages per second each way and their ratio; labelled headings found and the
    Markdown's headings right (None where no file is labelled)."""
    found = {}
    for split in sorted({row["split"] for row in rows}):
        held = [row for row in rows if row["split"] == split]
        pages = sum(row["pages"] for row in held)
        layer_s, ocr_s = sum(row["layer_s"] for row in held), sum(row["ocr_s"] for row in held)
        similarities = [s for row in held for s in row["ocr_similarity"]]
        found[split] = {
            "files": len(held),
            "pages": pages,
            "from_layer": sum(row["from_layer"] for row in held),
            "exact": sum(row["exact"] for row in held),
            "same_characters": sum(row["same_characters"] for row in held),
            "ocr_similarity": round(sum(similarities) / len(similarities), 3) if pages else None,
            "layer_pages_per_s": round(pages / layer_s, 2) if layer_s else None,
            "ocr_pages_per_s": round(pages / ocr_s, 2) if ocr_s else None,
            "times": round(ocr_s / layer_s, 1) if layer_s else None,
            "headings_recall": pair_share(held, "headings"),
            "headings_precision": pair_share(held, "markdown_headings"),
        }
    return found


def print_pdfs(name: str, rows: Sequence[dict], left_out: int) -> None:
    aside = f"; {left_out} left out (not held out)" if left_out else ""
    print(f"\n######## {name}: {len(rows)} born-digital PDFs{aside} (against pdfium's text)")
    print(
        f"{'split':8} {'pages':>5} {'layer':>5} {'exact':>5} {'chars':>5} {'OCR sim':>7} "
        f"{'layer p/s':>9} {'OCR p/s':>7} {'x':>6} {'headings':>8} {'right':>6}"
    )
    for split, s in summary(rows).items():
        print(
            f"{split:8} {s['pages']:5d} {s['from_layer']:5d} {s['exact']:5d} "
            f"{s['same_characters']:5d} {s['ocr_similarity']:7.3f} "
            f"{s['layer_pages_per_s']:9.2f} {s['ocr_pages_per_s']:7.2f} {s['times']:6.1f} "
            f"{shown(s['headings_recall']):>8} {shown(s['headings_precision']):>6}"
        )
    for row in rows:
        headings = (
            f" headings {row['headings'][0]}/{row['headings'][1]} right "
            f"{row['markdown_headings'][0]}/{row['markdown_headings'][1]}"
            if "headings" in row
            else ""
        )
        print(
            f"  {row['file']:30} {row['split']:6} pages {row['pages']} exact {row['exact']} "
            f"same characters {row['same_characters']} OCR {row['ocr_similarity']}{headings}"
        )
