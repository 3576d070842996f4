"""Labelled images: the ../shared/eval manifest format and ICDAR 2015 style folders."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from triton_ocr.postprocessing.geometry import Box, box_of, quad_of, turned_back
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.settings import ImageLimits

# The labelled splits (paths from the checkout's root), which `triton-ocr eval` reads when
# given none and the bench sends: settings are chosen on the dev split, the report split is
# held out and the docs report it.
DEV_SPLIT = Path("../shared/eval")
REPORT_SPLIT = Path("tests/data/report")
# ... and its pages labelled with their headings blind, for the Markdown scores (not the bench's)
REPORT_HEADINGS = Path("tests/data/report_headings")
DONT_CARE = "###"
# the labelled set is the operator's own files; the limits only guard against a bomb among them
LOCAL_FILES = ImageLimits(max_image_bytes=1 << 30, max_image_pixels=200_000_000)
ROTATIONS = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}


@dataclass(frozen=True)
class Label:
    text: str
    box: np.ndarray | None  # [4, 2] float32 in original pixels, when labelled
    care: bool  # False: a do-not-care region, excluded from every score


@dataclass(frozen=True)
class Sample:
    path: Path
    kind: str  # "scene" | "document" | "word" (a cropped single word or line)
    labels: tuple[Label, ...]
    complete: bool  # False: some legible text is unlabelled, precision is not meaningful
    rotation: int = 0  # degrees clockwise the image is turned before it is read (boxes are)
    reading_order: bool = False  # the labels are the page's lines in the order people read them
    # False: looked at while a setting was chosen, so a held-out split's figures leave it out
    held_out: bool = True
    # the page's headings as labelled (None: not labelled), for the Markdown scores
    headings: tuple[str, ...] | None = None
    # the page's figures (pictures) as labelled, boxes x0, y0, x1, y1 (None: not labelled)
    figures: tuple[Box, ...] | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def read(self) -> bytes:
        """The encoded image as the reader gets it: the file, or the turned image as PNG."""
        data = self.path.read_bytes()
        if not self.rotation:
            return data
        image = cv2.rotate(decode_image(data, LOCAL_FILES), ROTATIONS[self.rotation])
        return cv2.imencode(".png", image)[1].tobytes()

    @property
    def cared(self) -> list[Label]:
        return [label for label in self.labels if label.care]

    @property
    def has_boxes(self) -> bool:
        return bool(self.labels) and all(label.box is not None for label in self.labels)


def _box(points) -> np.ndarray:
    return np.asarray(points, dtype=np.float32).reshape(4, 2)


def manifest_entries(folder: Path) -> list[dict]:
    """A labelled folder's manifest entries ([] where it has no manifest)."""
    manifest = folder / "manifest.json"
    return json.loads(manifest.read_text()) if manifest.is_file() else []


def load_manifest(folder: Path) -> list[Sample]:
    """`folder/manifest.json` entries: file, kind, text, optional boxes, care, complete,
    reading_order, held_out, headings."""
    samples = []
    for entry in json.loads((folder / "manifest.json").read_text()):
        texts = entry["text"]
        boxes = entry.get("boxes") or [None] * len(texts)
        care = entry.get("care") or [t != DONT_CARE for t in texts]
        if not len(texts) == len(boxes) == len(care):
            raise ValueError(f"{entry['file']}: text, boxes and care differ in length")
        labels = tuple(
            Label(t, None if b is None else _box(b), bool(c) and t != DONT_CARE)
            for t, b, c in zip(texts, boxes, care, strict=True)
        )
        complete, ordered = entry.get("complete", True), entry.get("reading_order", False)
        samples.append(
            Sample(
                folder / entry["file"],
                entry["kind"],
                labels,
                complete,
                reading_order=ordered,
                held_out=entry.get("held_out", True),
                headings=tuple(entry["headings"]) if "headings" in entry else None,
                figures=figures_of(entry),
            )
        )
    return samples


def parse_icdar_line(line: str) -> Label | None:
    """`x1,y1,...,x4,y4,transcription` (the text may hold commas); `###` is do-not-care."""
    line = line.strip().lstrip("\ufeff")
    if not line:
        return None
    parts = line.split(",", 8)
    if len(parts) < 9:
        raise ValueError(f"not an ICDAR 2015 line (8 coordinates and a text): {line!r}")
    box = _box([float(v) for v in parts[:8]])
    text = parts[8]
    return Label(text, box, text != DONT_CARE)


def load_icdar(folder: Path) -> list[Sample]:
    """`img_N.jpg` (or .png) beside `gt_img_N.txt`, as in ICDAR 2015; all kind `scene`."""
    samples = []
    for gt in sorted(folder.glob("gt_*.txt")):
        stem = gt.stem.removeprefix("gt_")
        image = next(
            (
                p
                for p in (folder / f"{stem}{ext}" for ext in (".jpg", ".png", ".jpeg"))
                if p.is_file()
            ),
            None,
        )
        if image is None:
            raise ValueError(f"{gt}: no image {stem}.jpg/.png beside it")
        lines = gt.read_text(encoding="utf-8-sig").splitlines()
        labels = tuple(label for label in map(parse_icdar_line, lines) if label is not None)
        samples.append(Sample(image, "scene", labels, True))
    return samples


def figures_of(entry: dict) -> tuple[Box, ...] | None:
    """A manifest entry's labelled figures (`figures`: [[x0, y0, x1, y1], ...]), if any."""
    if "figures" not in entry:
        return None
    return tuple(
        (float(x0), float(y0), float(x1), float(y1)) for x0, y0, x1, y1 in entry["figures"]
    )


def rotate_samples(samples: list[Sample], degrees: int) -> list[Sample]:
    """The set as if every image had been photographed turned by `degrees` clockwise: tests
    orientation handling on the same labels (a general check, no new labels needed)."""
    if degrees % 360 == 0:
        return samples
    if degrees not in ROTATIONS:
        raise ValueError(f"rotation must be one of 0, 90, 180, 270 degrees, not {degrees}")
    turned = []
    for sample in samples:
        height, width = decode_image(sample.path.read_bytes(), LOCAL_FILES).shape[:2]
        labels = tuple(
            label
            if label.box is None
            # a label of the upright image lands where turned_back puts it on the turned one
            else dataclasses.replace(label, box=turned_back(label.box, degrees, (height, width)))
            for label in sample.labels
        )
        figures = sample.figures and tuple(
            box_of(turned_back(quad_of(box), degrees, (height, width))) for box in sample.figures
        )
        turned.append(dataclasses.replace(sample, labels=labels, rotation=degrees, figures=figures))
    return turned


def load_samples(path: Path) -> list[Sample]:
    """A manifest folder, or an ICDAR 2015 style folder."""
    if (path / "manifest.json").is_file():
        return load_manifest(path)
    samples = load_icdar(path)
    if not samples:
        raise ValueError(f"{path}: neither manifest.json nor gt_img_N.txt files")
    return samples
