"""A request's parameters on top of the server's settings (the `ocr` entry point)."""

import dataclasses

import pytest

from tests.conftest import REPOSITORY
from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.config.repository import Repository
from triton_ocr.config.requests import OVERRIDABLE, REQUEST_PARAMETERS, with_overrides
from triton_ocr.settings import PipelineSettings


def settings(pack: str = DEFAULT_PACK) -> PipelineSettings:
    return Repository(REPOSITORY, pack).pipeline_settings(alphabet=["", "a"])


def test_overrides_change_only_the_named_values():
    base = settings()
    new = with_overrides(base, {"text_score": "0.9", "max_side_len": 960, "box_thresh": 0.6})
    assert new.text_filter.text_score == 0.9 and new.detector_input.max_side_len == 960
    assert new.boxes.box_thresh == 0.6 and base.text_filter.text_score == 0.5
    assert dataclasses.replace(new, text_filter=base.text_filter, boxes=base.boxes) == (
        dataclasses.replace(base, detector_input=new.detector_input)
    )
    assert with_overrides(base, {}) is base


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mean": "0,0,0"}, "unknown request parameters"),
        ({"rec_height": "32"}, "unknown request parameters"),
        ({"max_image_bytes": "1"}, "unknown request parameters"),
        ({"text_score": "x"}, "cannot read 'x' as float"),
        (
            {"max_side_len": 4000},
            r"max_side_len=4000 is out of range: it must be between 32 and "
            r"2000 \(the server's max_side_len\)",
        ),
        ({"min_side_len": 1000, "max_side_len": 900}, r"min_side_len \(1000\) <= max_side_len"),
        ({"score_thresh": 0.5}, "does not apply to this model pack"),
        ({"crop_margin": "2"}, "crop_margin"),
        ({"pdf_dpi": 601}, r"pdf_dpi=601 is out of range: it must be between 36 and 600"),
        ({"pdf_dpi": 0}, "pdf_dpi=0 is out of range"),
        ({"max_pages": 1000}, "unknown request parameters"),
        ({"max_pdf_dpi": 1200}, "unknown request parameters"),
        ({"word_boxes": "maybe"}, "cannot read 'maybe' as bool"),
    ],
)
def test_bad_overrides(overrides, message):
    with pytest.raises(ValueError, match=message):
        with_overrides(settings(), overrides)


def test_a_lower_max_side_len_takes_min_side_len_down_with_it():
    new = with_overrides(settings(), {"max_side_len": 320})
    assert new.detector_input.max_side_len == new.detector_input.min_side_len == 320


def test_documents_and_word_boxes_per_request():
    new = with_overrides(settings(), {"pdf_dpi": "300", "word_boxes": True})
    assert new.documents.pdf_dpi == 300 and new.words.word_boxes is True
    assert settings().documents.pdf_dpi == 200 and settings().words.word_boxes is False


def test_east_pack_accepts_its_own_detector_parameters():
    assert with_overrides(settings("east-str"), {"score_thresh": 0.6}).boxes.score_thresh == 0.6


@pytest.mark.parametrize("pack", ["ppocr-v6", "ppocr"])
def test_every_request_parameter_names_a_setting(pack):
    """No accepted name is dead: each one reaches a setting of the PP-OCR packs or of east-str."""
    owners = {}
    for candidate in (settings(pack), settings("east-str")):
        for part in OVERRIDABLE:
            for field in dataclasses.fields(getattr(candidate, part)):
                owners[field.name] = part
    assert set(owners) >= set(REQUEST_PARAMETERS)
