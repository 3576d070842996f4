"""Tests of the east-str export; they need the export extra (TensorFlow, tf2onnx, torch).

`make test` runs them in their own environment (.venv-export) with TRITON_OCR_EXPORT_TESTS=1,
where a missing converter is an error, not a skip.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_configs

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


def cli_export(repository: Path, east: Path, checkpoint: Path) -> subprocess.CompletedProcess:
    """`triton-ocr export east-str` into `repository`, exactly as a user runs it."""
    cli = Path(sys.executable).parent / "triton-ocr"
    return subprocess.run(
        [str(cli), "export", "east-str", "--east", str(east), "--str", str(checkpoint)]
        + ["--repository", str(repository)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="session")
def east_str_repository(tmp_path_factory, standin_files) -> Path:
    """A copy of the model repository, exported from the stand-ins with the CLI."""
    target = copy_configs(tmp_path_factory.mktemp("repo") / "repository")
    result = cli_export(target, *standin_files)
    assert result.returncode == 0, result.stderr[-3000:]
    return target
