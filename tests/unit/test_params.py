import pytest

from triton_ocr.params import (
    DetectionPostprocessing,
    DetectionPreprocessing,
    RecognitionPostprocessing,
    model_parameters,
    parse_parameters,
    tensor_names,
)

from .configs import config_dict

GOOD = {
    "min_side_len": {"string_value": "736"},
    "max_side_len": {"string_value": "2000"},
    "mean": {"string_value": "0.5, 0.5,0.5"},
    "std": {"string_value": "[0.5, 0.5, 0.5]"},
    "max_image_pixels": {"string_value": "1000"},
}


def test_parse_typed_values():
    p = parse_parameters(DetectionPreprocessing, GOOD)
    assert p.min_side_len == 736 and p.mean == (0.5, 0.5, 0.5) and p.std == (0.5, 0.5, 0.5)


def test_missing_and_unknown_keys_are_errors():
    partial = {k: v for k, v in GOOD.items() if k != "mean"}
    with pytest.raises(ValueError, match=r"missing \['mean'\]"):
        parse_parameters(DetectionPreprocessing, partial)
    with pytest.raises(ValueError, match=r"unknown \['mena'\]"):
        parse_parameters(DetectionPreprocessing, {**GOOD, "mena": {"string_value": "1"}})


def test_wrong_types_are_errors():
    with pytest.raises(ValueError, match="min_side_len"):
        parse_parameters(DetectionPreprocessing, {**GOOD, "min_side_len": {"string_value": "x"}})


@pytest.mark.parametrize(("raw", "value"), [("true", True), ("False", False), ("1", True)])
def test_booleans(raw, value):
    params = {
        "text_score": "0.5",
        "recognizer_model": "m",
        "alphabet_metadata_key": "k",
        "append_space": raw,
    }
    assert parse_parameters(RecognitionPostprocessing, params).append_space is value


def test_boolean_typo_is_an_error():
    params = {"text_score": "0.5", "recognizer_model": "m", "alphabet_metadata_key": "k"}
    with pytest.raises(ValueError, match="append_space"):
        parse_parameters(RecognitionPostprocessing, {**params, "append_space": "ture"})


@pytest.mark.parametrize(
    ("model", "cls"),
    [
        ("detection_preprocessing", DetectionPreprocessing),
        ("detection_postprocessing", DetectionPostprocessing),
        ("recognition_postprocessing", RecognitionPostprocessing),
    ],
)
def test_repository_configs_parse(model, cls):
    config = config_dict(model)
    assert isinstance(model_parameters(cls, config), cls)
    assert tensor_names(config, "input") and tensor_names(config, "output")
