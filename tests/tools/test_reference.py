"""The in-process RapidOCR reference: each PP-OCR pack is compared with the release its models
come from. The reading tests need that release (the bench environment) and skip without it."""

import importlib.util
import socket
from importlib import metadata

import numpy as np
import pytest

from tests.conftest import ROOT
from triton_ocr.config.packs import PACKS
from triton_ocr.export.ppocr import WHEELS
from triton_ocr.tools import reference
from triton_ocr.tools.reference import (
    REFERENCES,
    ReferenceNotInstalled,
    rapidocr_reader,
    reference_for,
)
from triton_ocr.tools.samples import Placed, render, render_blank

MODULES = {"ppocr": "rapidocr_onnxruntime", "ppocr-v6": "rapidocr"}


def test_each_pp_ocr_pack_has_its_rapidocr_release():
    assert reference_for("ppocr").label == "RapidOCR 1.4.4 (PP-OCRv4 mobile)"
    assert reference_for("ppocr").distribution == "rapidocr-onnxruntime"
    assert reference_for("ppocr-v6").label == "RapidOCR 3.10.0 (PP-OCRv6 small)"
    assert reference_for("ppocr-v6").distribution == "rapidocr"
    assert set(REFERENCES) == set(PACKS) - {"east-str"}


@pytest.mark.parametrize("pack", ["east-str", "nope"])
def test_a_pack_without_rapidocr_models_is_refused(pack):
    with pytest.raises(ValueError, match="no in-process RapidOCR reference"):
        reference_for(pack)
    with pytest.raises(ValueError, match="no in-process RapidOCR reference"):
        rapidocr_reader(pack)


@pytest.mark.parametrize("pack", list(REFERENCES))
def test_the_reference_is_the_wheel_the_models_come_from_and_is_locked(pack):
    """export/ppocr.py takes the pack's ONNX files out of this very release, and the bench
    environment installs it (pyproject's bench extra, or bench-no-deps.in without deps)."""
    spec = reference_for(pack)
    pin = f"{spec.distribution}=={spec.version}"
    assert WHEELS[pack].requirement == pin
    sources = (ROOT / "pyproject.toml").read_text() + (ROOT / "locks/bench-no-deps.in").read_text()
    assert pin in sources


def test_another_release_than_the_packs_is_refused(monkeypatch):
    """Other models than the served ones would compare nothing."""
    monkeypatch.setattr(reference.metadata, "version", lambda name: "9.9.9")
    with pytest.raises(ReferenceNotInstalled, match=r"rapidocr==3\.10\.0 \(found 9\.9\.9\)"):
        rapidocr_reader("ppocr-v6")

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(reference.metadata, "version", missing)
    with pytest.raises(ReferenceNotInstalled, match="not installed"):
        rapidocr_reader("ppocr")


@pytest.fixture
def offline(monkeypatch):
    """No network: the readers must use the models bundled in their wheel."""

    def refuse(self, address):
        raise OSError(f"network use in a test: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.parametrize("pack", list(REFERENCES))
def test_the_reference_reads_a_rendered_line_into_quads(pack, offline):
    if importlib.util.find_spec(MODULES[pack]) is None:
        pytest.skip(f"{MODULES[pack]} is only in the bench environment")
    read = rapidocr_reader(pack)
    text = "The quick brown fox jumps over the lazy dog"
    texts, quads = read(render((Placed(text, (30, 30), 36),), (1000, 110)).png)
    assert "".join(texts).replace(" ", "") == text.replace(" ", "")  # v4 may drop spaces
    assert quads.dtype == np.float32 and quads.shape == (len(texts), 4, 2)
    assert np.all((quads >= 0) & (quads <= (1000, 110)))  # inside the image, (x, y)

    texts, quads = read(render_blank())
    assert texts == [] and quads.shape == (0, 4, 2)
