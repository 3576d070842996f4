"""The repository's config files, read as Triton reads them (protobuf text format)."""

import shutil
from pathlib import Path

from triton_ocr import packs

REPOSITORY = Path(__file__).resolve().parents[2] / "repository"


def load_config(model: str, pack: str = packs.DEFAULT_PACK):
    return packs.load_config(REPOSITORY, model, pack)


def config_dict(model: str, pack: str = packs.DEFAULT_PACK) -> dict:
    """The config as the Python backend receives it (JSON field names)."""
    return packs.load_config_dict(REPOSITORY, model, pack)


def copy_configs(target: Path) -> Path:
    """A copy of the model repository's configs and adapters, without model files."""
    shutil.copytree(REPOSITORY, target, ignore=shutil.ignore_patterns("*.onnx", "__pycache__"))
    return target
