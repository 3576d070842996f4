"""The `ppocr` pack: PP-OCRv4 detection + recognition ONNX files from the rapidocr wheel.

The files are taken out of the wheel; rapidocr itself is never installed or imported. The
recognizer gets a best-path head appended (see recognizer_head.py). The orientation classifier
comes from the same wheel; every pack's repository needs it (text_orientation is one of its
models), so the east-str export takes it out too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import onnx

from triton_ocr.packs import DEFAULT_PACK, ORIENTATION_MODEL

from .recognizer_head import append_best_path_head
from .verify import install, partial_path

PACK = DEFAULT_PACK
WHEEL_REQUIREMENT = "rapidocr-onnxruntime==1.4.4"
WHEEL_NAME = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
WHEEL_SHA256 = "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"
CLASSIFIER_MEMBER = "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
# member in the wheel -> model directory in the repository
MODELS = {
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": "text_detection",
    "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": "text_recognition",
    CLASSIFIER_MEMBER: ORIENTATION_MODEL,
}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "triton-ocr" / "wheels"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_wheel(cache: Path | None = None) -> Path:
    """Download (once) the pinned rapidocr wheel without dependencies and check its hash."""
    cache = cache or cache_dir()
    wheel = cache / WHEEL_NAME
    if wheel.is_file() and sha256(wheel) == WHEEL_SHA256:
        return wheel
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "--only-binary=:all:",
                "--dest",
                tmp,
                WHEEL_REQUIREMENT,
            ],
            check=True,
        )
        downloaded = Path(tmp) / WHEEL_NAME
        actual = sha256(downloaded)
        if actual != WHEEL_SHA256:
            raise RuntimeError(f"{WHEEL_NAME}: sha256 {actual}, expected {WHEEL_SHA256}")
        shutil.move(downloaded, wheel)
    return wheel


def export_ppocr(repository: Path, wheel: Path | None = None) -> list[Path]:
    """Write the detector, recognizer and orientation classifier into `repository`."""
    return extract_models(repository, list(MODELS), wheel)


def export_orientation_classifier(repository: Path, wheel: Path | None = None) -> Path:
    """Write only the orientation classifier (for the packs that bring their own networks)."""
    (written,) = extract_models(repository, [CLASSIFIER_MEMBER], wheel)
    return written


def extract_models(repository: Path, members: list[str], wheel: Path | None) -> list[Path]:
    """Write the wheel's `members` at the files their models' configs name, each checked
    against its config first (verify.install)."""
    wheel = wheel or fetch_wheel()
    written = []
    with zipfile.ZipFile(wheel) as archive:
        for member in members:
            model_name = MODELS[member]
            model = onnx.load_model_from_string(archive.read(member))
            if model_name == "text_recognition":
                model = append_best_path_head(model)
            partial = partial_path(repository, model_name, PACK)
            onnx.save_model(model, partial)
            written.append(install(partial, repository, model_name, PACK))
    return written
