"""The orientation classifier's input, and the turn of the rows it finds upside down."""

import numpy as np

from triton_ocr.preprocessing.orientation import classifier_input, turn_over
from triton_ocr.settings import ClassifierInput

CLASSIFIER = ClassifierInput(channels=3, height=48, width=192)


def rows(widths, height=48, batch_width=400, channels=3) -> np.ndarray:
    """Recognizer rows: crop i is a ramp over its first widths[i] columns, 0 after."""
    batch = np.zeros((len(widths), channels, height, batch_width), np.float32)
    for i, w in enumerate(widths):
        batch[i, :, :, :w] = np.linspace(-1, 1, w, dtype=np.float32)
    return batch


def test_classifier_input_keeps_aspect_up_to_its_width_and_pads_with_zero():
    out = classifier_input(rows([96, 400]), [96, 400], CLASSIFIER)
    assert out.shape == (2, 3, 48, 192) and out.dtype == np.float32
    # a crop narrower than the classifier's width keeps its size; zero after it
    np.testing.assert_allclose(out[0, :, :, :96], rows([96])[0, :, :, :96], atol=1e-6)
    assert not out[0, :, :, 96:].any()
    # a wider crop is squeezed into the whole width, its ends kept
    assert out[1, 0, 0, 0] < -0.95 and out[1, 0, 0, -1] > 0.95


def test_classifier_input_scales_rows_of_another_height():
    out = classifier_input(rows([50], height=32), [50], CLASSIFIER)
    assert out.shape == (1, 3, 48, 192)
    assert out[0, 0, 0, 74] != 0 and not out[0, :, :, 75:].any()  # ceil(48 * 50 / 32) = 75


def test_turn_over_rotates_only_flagged_crops_and_twice_is_identity():
    batch = rows([100, 300])
    batch[:, :, :10] *= 2  # the top differs from the bottom
    turned = turn_over(batch, [100, 300], [True, False])
    np.testing.assert_array_equal(turned[1], batch[1])
    np.testing.assert_array_equal(turned[0, :, :, :100], batch[0, :, ::-1, 99::-1])
    assert not turned[0, :, :, 100:].any()
    np.testing.assert_array_equal(turn_over(turned, [100, 300], [True, False]), batch)
    assert turn_over(batch, [100, 300], [False, False]) is batch  # nothing to copy
