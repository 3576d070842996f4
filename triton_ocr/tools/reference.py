"""The in-process RapidOCR reference of each model pack (`eval --reference`, bench's row A).

A comparison only means something when the reference runs the served models: each PP-OCR pack's
ONNX files are taken out of one RapidOCR wheel (export/ppocr.py), so its reference is that very
release, run as its users run it (default settings, angle classifier on, its bundled models).
RapidOCR is imported lazily: it is only installed in the bench environment (make bench).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # bench's row A runs this module alone in a fresh process: import little
    from triton_ocr.tools.evaluation.runner import Reader


@dataclass(frozen=True)
class Reference:
    distribution: str  # what pip installs (pyproject's bench extra, locks/bench-no-deps.in)
    version: str  # the wheel the pack's models were exported from
    models: str

    @property
    def label(self) -> str:
        return f"RapidOCR {self.version} ({self.models})"


class ReferenceNotInstalled(ImportError):
    """The pack's RapidOCR release is not the one installed (or none is)."""


REFERENCES = {
    "ppocr": Reference("rapidocr-onnxruntime", "1.4.4", "PP-OCRv4 mobile"),
    "ppocr-v6": Reference("rapidocr", "3.10.0", "PP-OCRv6 small"),
}


def reference_for(pack: str) -> Reference:
    """The RapidOCR release whose models `pack` serves; east-str has none (other models)."""
    if pack not in REFERENCES:
        raise ValueError(
            f"pack {pack!r} has no in-process RapidOCR reference (its models are not "
            f"RapidOCR's); references exist for {', '.join(REFERENCES)}"
        )
    return REFERENCES[pack]


def rapidocr_reader(pack: str) -> Reader:
    """bytes -> (texts, quads float32 [n, 4, 2]) from the RapidOCR release matching `pack`.

    Raises ReferenceNotInstalled when that release is not the one installed: a reference with
    other models than the served ones would compare nothing."""
    spec = reference_for(pack)
    try:
        installed = metadata.version(spec.distribution)
    except metadata.PackageNotFoundError:
        installed = None
    if installed != spec.version:
        found = f"found {installed}" if installed else "not installed"
        raise ReferenceNotInstalled(
            f"{pack}'s reference needs {spec.distribution}=={spec.version} ({found}); "
            "use the bench environment: make .venv-bench/.installed"
        )
    return _rapidocr_1() if spec.distribution == "rapidocr-onnxruntime" else _rapidocr_3()


def _quads(boxes: object) -> np.ndarray:
    return np.asarray(boxes if boxes is not None else [], np.float32).reshape(-1, 4, 2)


def _rapidocr_1() -> Reader:
    """rapidocr-onnxruntime 1.x: `engine(bytes)` returns ([[box, text, score], ...] or None,
    elapsed); the classifier is asked for as the service always runs it."""
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR()

    def read(data: bytes) -> tuple[list[str], np.ndarray]:
        found, _ = engine(data, use_cls=True)
        found = found or []
        return [text for _, text, _ in found], _quads([box for box, _, _ in found])

    return read


def _rapidocr_3() -> Reader:
    """rapidocr 3.x: `RapidOCR()` loads its config.yaml (Global.use_cls: true, PP-OCRv6 small
    det/rec and the mobile 0/180 classifier, bundled in the wheel under rapidocr/models, so no
    download); `engine(bytes)` returns a RapidOCROutput whose boxes [n, 4, 2], txts and scores
    are None when nothing was read. use_cls=True restates the default, as the service runs it."""
    from rapidocr import RapidOCR

    engine = RapidOCR()

    def read(data: bytes) -> tuple[list[str], np.ndarray]:
        result = engine(data, use_cls=True)
        texts = getattr(result, "txts", None) or ()
        return [str(t) for t in texts], _quads(getattr(result, "boxes", None) if texts else None)

    return read
