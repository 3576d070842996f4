import pytest

from triton_ocr.packs import PACKS, model_file
from triton_ocr.params import (
    DETECTORS,
    DetectionPostprocessing,
    DetectionPreprocessing,
    GroupedRecognition,
    Ocr,
    RecognitionPostprocessing,
    detection_postprocessing_parameters,
    model_parameters,
    parse_parameters,
    tensor_names,
)

from .configs import REPOSITORY, config_dict

GOOD = {
    "min_side_len": {"string_value": "736"},
    "max_side_len": {"string_value": "2000"},
    "channel_order": {"string_value": "BGR"},
    "layout": {"string_value": "NCHW"},
    "scale": {"string_value": "0.00392156862745098"},
    "mean": {"string_value": "0.5, 0.5,0.5"},
    "std": {"string_value": "[0.5, 0.5, 0.5]"},
    "max_image_pixels": {"string_value": "1000"},
    "max_image_bytes": {"string_value": "2000"},
}


def test_parse_typed_values():
    p = parse_parameters(DetectionPreprocessing, GOOD)
    assert p.min_side_len == 736 and p.mean == (0.5, 0.5, 0.5) and p.std == (0.5, 0.5, 0.5)


def test_missing_and_unknown_keys_are_errors():
    partial = {k: v for k, v in GOOD.items() if k != "mean"}
    with pytest.raises(ValueError, match=r"missing \['mean'\]"):
        parse_parameters(DetectionPreprocessing, partial)
    with pytest.raises(ValueError, match=r"unknown parameters \['mena'\]"):
        parse_parameters(DetectionPreprocessing, {**GOOD, "mena": {"string_value": "1"}})


def test_wrong_types_are_errors():
    with pytest.raises(ValueError, match="min_side_len"):
        parse_parameters(DetectionPreprocessing, {**GOOD, "min_side_len": {"string_value": "x"}})


@pytest.mark.parametrize(("raw", "value"), [("true", True), ("False", False), ("1", True)])
def test_booleans(raw, value):
    params = {
        "text_score": "0.5",
        "recognizer_model": "m",
        "recognizer_file": "model.onnx",
        "alphabet_metadata_key": "k",
        "append_space": raw,
    }
    assert parse_parameters(RecognitionPostprocessing, params).append_space is value


def test_boolean_typo_is_an_error():
    params = {
        "text_score": "0.5",
        "recognizer_model": "m",
        "recognizer_file": "model.onnx",
        "alphabet_metadata_key": "k",
    }
    with pytest.raises(ValueError, match="append_space"):
        parse_parameters(RecognitionPostprocessing, {**params, "append_space": "ture"})


@pytest.mark.parametrize("pack", PACKS)
def test_repository_configs_parse(pack):
    for model, cls in [
        ("detection_preprocessing", DetectionPreprocessing),
        ("recognition_postprocessing", RecognitionPostprocessing),
        ("ocr", Ocr),
        ("grouped_recognition", GroupedRecognition),
    ]:
        assert isinstance(model_parameters(cls, config_dict(model, pack)), cls)
    for model, cls in (("ocr", Ocr), ("grouped_recognition", GroupedRecognition)):
        assert model_parameters(cls, config_dict(model, pack)).pack == pack  # its own pack
    config = config_dict("detection_postprocessing", pack)
    common, detector = detection_postprocessing_parameters(config["parameters"])
    assert isinstance(common, DetectionPostprocessing)
    assert isinstance(detector, DETECTORS[common.detector])
    # model.py reads the detector's maps first, the original image last
    assert tensor_names(config, "input")[-1] == "original_image"


def test_recognizer_file_names_the_recognizer_config_file():
    for pack in PACKS:
        params = model_parameters(
            RecognitionPostprocessing, config_dict("recognition_postprocessing", pack)
        )
        recognizer = model_file(REPOSITORY, params.recognizer_model, pack)
        assert params.recognizer_file == recognizer.name, pack


def test_detector_must_be_known():
    with pytest.raises(ValueError, match="'detector' must be one of"):
        detection_postprocessing_parameters({"detector": "yolo"})
