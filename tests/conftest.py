"""What every test folder shares: the checkout's paths, a copy of the model repository's configs,
and the labelled images of ../shared.

The folders mirror the package: preprocessing/, postprocessing/, config/, repository/ (the
model.py adapters), runtime/, tools/, client/ and export/ hold the tests of those parts; e2e/
the end-to-end tests against the real server; the files here the pipeline's and the layout's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = ROOT / "repository"
SHARED_EVAL = ROOT.parent / "shared" / "eval"


@pytest.fixture(scope="session")
def shared_eval() -> Path:
    if not (SHARED_EVAL / "manifest.json").is_file():
        reason = f"{SHARED_EVAL} is absent (only CI and dev machines have ../shared)"
        if os.environ.get("CI"):  # CI has ../shared: its absence there is a broken checkout
            pytest.fail(reason)
        pytest.skip(reason)
    return SHARED_EVAL


def copy_configs(target: Path) -> Path:
    """A copy of the model repository's configs and adapters, without model files."""
    shutil.copytree(REPOSITORY, target, ignore=shutil.ignore_patterns("*.onnx", "__pycache__"))
    return target
