"""The tuning command's variants: parsed from the CLI, written into a repository copy."""

import pytest

from tests.conftest import REPOSITORY
from triton_ocr.config.repository import Repository
from triton_ocr.tools.tuning import Variant, write_variant


def test_variants_parse():
    assert Variant.parse("64:0:2") == Variant(64, 0, 2)
    assert Variant.parse("1:none:1") == Variant(1, None, 1)
    assert Variant.parse("1:none:2:nocls") == Variant(1, None, 2, orientation=False)
    for bad in ("64:0", "1:none:2:cls"):
        with pytest.raises(ValueError):
            Variant.parse(bad)


@pytest.mark.parametrize("variant", [Variant(64, 2000, 3), Variant(1, None, 1, False)])
def test_a_variant_changes_only_its_settings(tmp_path, variant):
    target = write_variant(REPOSITORY, tmp_path / "repo", variant)
    post = Repository(target).config("detection_postprocessing")
    assert post.parameters["rec_width_bucket"].string_value == str(variant.bucket)
    recognizer = Repository(target).config("text_recognition")
    if variant.delay_us is None:
        assert not recognizer.HasField("dynamic_batching")
    else:
        assert recognizer.dynamic_batching.max_queue_delay_microseconds == variant.delay_us
    ocr = Repository(target).config("ocr")
    assert ocr.parameters["images_in_flight"].string_value == str(variant.in_flight)
    grouped = Repository(target).config("grouped_recognition").parameters["classify_orientation"]
    assert grouped.string_value == str(variant.orientation).lower()
    original = Repository(REPOSITORY).config("text_recognition")
    assert recognizer.max_batch_size == original.max_batch_size
    assert recognizer.input == original.input and recognizer.output == original.output
