"""What every test folder shares: the checkout's paths and the labelled images of ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = ROOT / "repository"
SHARED_EVAL = ROOT.parent / "shared" / "eval"


@pytest.fixture(scope="session")
def shared_eval() -> Path:
    if not (SHARED_EVAL / "manifest.json").is_file():
        pytest.skip(f"{SHARED_EVAL} is absent (only CI and dev machines have ../shared)")
    return SHARED_EVAL
