"""What `triton-ocr read` reads and where its results go: the input files (from files, folders and
stdin lists), each one's output name, and which ones an earlier run already did (--resume).

Standard library only, so the client script runs on the light install.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

# What a folder contributes: the formats the server reads (a name's suffix, any case): images,
# and documents whose pages are read one by one (PDF; TIFF may hold several pages).
IMAGE_SUFFIXES = frozenset(
    {".bmp", ".gif", ".jpeg", ".jpg", ".png", ".tif", ".tiff", ".webp", ".pbm", ".pgm", ".ppm"}
)
DOCUMENT_SUFFIXES = frozenset({".pdf"})
READABLE_SUFFIXES = IMAGE_SUFFIXES | DOCUMENT_SUFFIXES
# The files --out writes for each input, beside each other: <name>.txt, .json, .md, .alto.xml
# and .hocr (written in this order: .hocr last).
OUT_SUFFIXES = (".txt", ".json", ".md", ".alto.xml", ".hocr")
# --format pdf (<name>.pdf in --out), pages of a PDF that already have text: OCRmyPDF's choices
# (client/pdf.py)
PDF_TEXT_FLAGS = {
    "skip": ("--skip-text", "leave pages that have text as they are (the default)"),
    "redo": ("--redo-ocr", "replace earlier OCR text, keep the visible text"),
    "force": ("--force-ocr", "rasterise every page and read it anew"),
}


def collect_inputs(arguments: Iterable[str], stdin: TextIO | None = None) -> list[Path]:
    """Files as given, folders' image and document files (recursively, sorted), and `-`: paths
    on stdin (one per line, blank lines skipped), each path once, in the order met. A path that
    does not exist is kept: reading it reports the error."""
    found: list[Path] = []
    for argument in arguments:
        if argument == "-":
            lines = (stdin or sys.stdin).read().splitlines()
            found.extend(Path(line.strip()) for line in lines if line.strip())
        elif Path(argument).is_dir():
            found.extend(
                sorted(
                    p
                    for p in Path(argument).rglob("*")
                    if p.is_file() and p.suffix.lower() in READABLE_SUFFIXES
                )
            )
        else:
            found.append(Path(argument))
    return list(dict.fromkeys(found))


def output_names(inputs: Sequence[Path]) -> dict[Path, str]:
    """Each input's output name (no suffix, relative to the output folder): its file name
    without suffix; when another input could take that name, the file name with its suffix
    (a.png, a.pdf), then with as many parent folders as make it unique (2024/a, 2025/a). The
    same inputs always get the same names, and no name leaves the output folder."""

    def candidates(path: Path) -> list[str]:
        parts = [p for p in path.parts if p not in ("..", ".", path.anchor)]
        names = []
        for depth in range(1, len(parts) + 1):
            tail = Path(*parts[-depth:])
            names += [str(tail.with_suffix("")), str(tail)]
        return names

    options = {path: candidates(path) for path in inputs}
    names = {}
    for index, (path, mine) in enumerate(options.items()):
        theirs = {n for other, ns in options.items() if other != path for n in ns}
        names[path] = next((n for n in mine if n not in theirs), f"{mine[-1]}-{index}")
    return names


def outputs_done(out: Path, name: str, pdf: bool = False) -> bool:
    """Whether an earlier run wrote all of `name`'s --out files (and its .pdf, for --format
    pdf, which is written before them)."""
    suffixes = OUT_SUFFIXES + ((".pdf",) if pdf else ())
    return all((out / f"{name}{suffix}").is_file() for suffix in suffixes)


def jsonl_done(lines: Iterable[str]) -> set[str]:
    """The files a --jsonl output holds every page of (each page's object says how many pages
    its file has); a file cut off mid-way, or a torn last line, is not done."""
    seen: dict[str, set[int]] = {}
    expected: dict[str, int] = {}
    for line in lines:
        try:
            record = json.loads(line)
            file, page, pages = record["file"], int(record["page"]), int(record["pages"])
        except (ValueError, KeyError, TypeError):
            continue
        seen.setdefault(file, set()).add(page)
        expected[file] = pages
    return {file for file, pages in seen.items() if pages >= set(range(1, expected[file] + 1))}


def stdout_file() -> Path | None:
    """The regular file standard output goes to (`>> results.jsonl`), or None (a terminal, a
    pipe; or a system without /proc)."""
    try:
        if not stat.S_ISREG(os.fstat(sys.stdout.fileno()).st_mode):
            return None
        return Path(os.readlink("/proc/self/fd/1"))
    except (OSError, ValueError, AttributeError):
        return None
