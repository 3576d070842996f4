"""Whether the export extra is installed: skipped with the reason where it is not (a plain
`make setup` environment); an error where it must be (`make test` sets TRITON_OCR_EXPORT_TESTS=1
in .venv-export)."""

import os

import pytest

from .conftest import MISSING


def test_converters_are_installed():
    if MISSING and os.environ.get("TRITON_OCR_EXPORT_TESTS") != "1":
        pytest.skip(f"export extra not installed ({', '.join(MISSING)}): make test runs these")
    assert not MISSING, f"export tests required but {MISSING} are not installed"
