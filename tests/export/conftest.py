"""Tests of the east-str export; they need the export extra (TensorFlow, tf2onnx, torch).

`make test` runs them in their own environment (.venv-export) with TRITON_OCR_EXPORT_TESTS=1,
where a missing converter is an error, not a skip.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import REPOSITORY, shared_eval  # noqa: F401

from .standins import build_east_graph, save_str_checkpoint

REQUIRED = ("tensorflow", "tf2onnx", "torch", "onnx")
MISSING = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
if MISSING:  # the modules import the converters; test_export_extra.py says why they are absent
    collect_ignore_glob = ["test_*_export.py", "test_east_str_service.py"]


@pytest.fixture(scope="session")
def standin_files(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("standins")
    return (
        build_east_graph(folder / "frozen_east_text_detection.pb"),
        save_str_checkpoint(folder / "None-ResNet-None-CTC.pth"),
    )


@pytest.fixture(scope="session")
def east_str_repository(tmp_path_factory, standin_files) -> Path:
    """A copy of the model repository (configs + adapters), exported from the stand-ins with
    the CLI exactly as a user would."""
    import subprocess
    import sys

    target = tmp_path_factory.mktemp("repo") / "repository"
    shutil.copytree(REPOSITORY, target, ignore=shutil.ignore_patterns("*.onnx", "__pycache__"))
    east, checkpoint = standin_files
    cli = Path(sys.executable).parent / "triton-ocr"
    subprocess.run(
        [str(cli), "export", "east-str", "--east", str(east), "--str", str(checkpoint)]
        + ["--repository", str(target)],
        check=True,
        timeout=600,
    )
    return target
