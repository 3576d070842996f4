"""Config parameters -> settings objects: typed, complete, nothing unknown."""

import pytest

from tests.conftest import REPOSITORY
from triton_ocr import contract
from triton_ocr.config.packs import PACKS
from triton_ocr.config.parse import parse_groups, tensor_names
from triton_ocr.config.repository import (
    STEP_SETTINGS,
    AlphabetSource,
    Pack,
    Repository,
    step_settings,
)
from triton_ocr.settings import (
    DETECTORS,
    Boxes,
    DetectorInput,
    ImageLimits,
    RecognizerInput,
    TextFilter,
    TextLines,
)

GOOD = {
    "min_side_len": {"string_value": "736"},
    "max_side_len": {"string_value": "2000"},
    "max_image_pixels": {"string_value": "1000"},
    "max_image_bytes": {"string_value": "2000"},
    "rec_height": {"string_value": "48"},
    "rec_min_width": {"string_value": "320"},
    "rec_max_width": {"string_value": "3200"},
    "rec_width_bucket": {"string_value": "64"},
    "rec_keep_aspect": {"string_value": "true"},
    "rec_channels": {"string_value": "3"},
    "rec_mean": {"string_value": "0.5, 0.5,0.5"},
    "rec_std": {"string_value": "[0.5, 0.5, 0.5]"},
}
GROUPS = (ImageLimits, DetectorInput, RecognizerInput)


def test_parse_typed_values():
    limits, detector, recognizer = parse_groups(GOOD, *GROUPS)
    assert detector.min_side_len == 736 and recognizer.mean == (0.5, 0.5, 0.5)
    assert recognizer.std == (0.5, 0.5, 0.5) and limits.max_image_bytes == 2000


def test_missing_and_unknown_keys_are_errors():
    partial = {k: v for k, v in GOOD.items() if k != "max_side_len"}
    with pytest.raises(ValueError, match=r"missing \['max_side_len'\]"):
        parse_groups(partial, *GROUPS)
    with pytest.raises(ValueError, match=r"unknown parameters \['mean'\]"):
        parse_groups({**GOOD, "mean": {"string_value": "1"}}, *GROUPS)


def test_wrong_types_are_errors():
    with pytest.raises(ValueError, match="min_side_len"):
        parse_groups({**GOOD, "min_side_len": {"string_value": "x"}}, *GROUPS)


def test_prefixed_keys_fill_plain_fields():
    raw = {
        "rec_height": "48",
        "rec_min_width": "320",
        "rec_max_width": "3200",
        "rec_width_bucket": "1",
        "rec_keep_aspect": "true",
        "rec_channels": "1",
        "rec_mean": "0.5",
        "rec_std": "0.5",
    }
    (recognizer,) = parse_groups(raw, RecognizerInput)
    assert recognizer.height == 48 and recognizer.channels == 1 and recognizer.keep_aspect
    with pytest.raises(ValueError, match=r"missing \['rec_height'\]"):
        parse_groups({k: v for k, v in raw.items() if k != "rec_height"}, RecognizerInput)


@pytest.mark.parametrize(("raw", "value"), [("true", True), ("False", False), ("1", True)])
def test_booleans(raw, value):
    params = {"text_score": "0.5", "rival_margin": "0", "alphabet_metadata_key": "k"}
    params["append_space"] = raw
    _, source = parse_groups(params, TextFilter, AlphabetSource)
    assert source.append_space is value


def test_boolean_typo_is_an_error():
    params = {"text_score": "0.5", "rival_margin": "0", "alphabet_metadata_key": "k"}
    params["append_space"] = "ture"
    with pytest.raises(ValueError, match="append_space"):
        parse_groups(params, TextFilter, AlphabetSource)


@pytest.mark.parametrize("pack", PACKS)
def test_every_python_model_config_parses(pack):
    repository = Repository(REPOSITORY, pack)
    for model, classes in STEP_SETTINGS.items():
        settings = repository.step(model)
        assert [type(s) for s in settings.found[: len(classes)]] == list(classes), model
        assert all(isinstance(settings[kind], kind) for kind in classes), model
        if Pack in classes:
            assert settings[Pack].pack == pack, model  # each variant names its own pack
    located = repository.step(contract.DETECTION_POSTPROCESSING)
    assert isinstance(located[Boxes], DETECTORS[located[TextLines].detector])
    with pytest.raises(KeyError, match="detection_postprocessing's config has no Pack settings"):
        located[Pack]
    # model.py reads the detector's maps first, then the upright page and its turn
    config = repository.config_dict(contract.DETECTION_POSTPROCESSING)
    assert tensor_names(config, "input")[-2:] == ["page_image", "page_rotation"]


def test_detector_must_be_known():
    config = {"parameters": {"detector": {"string_value": "yolo"}}}
    with pytest.raises(ValueError, match="'detector' must be one of"):
        step_settings(contract.DETECTION_POSTPROCESSING, config)
