"""The orientation decision from the classifier's probabilities."""

import numpy as np

from triton_ocr.postprocessing.orientation import upside_down


def test_upside_down_needs_the_class_and_the_threshold():
    probabilities = np.float32([[0.99, 0.01], [0.05, 0.95], [0.3, 0.7], [0.1, 0.9]])
    assert upside_down(probabilities, 0.9).tolist() == [False, True, False, True]
