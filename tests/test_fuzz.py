"""Bounded fuzzing (hypothesis) of what untrusted bytes and detector output flow through.

The properties: decoding returns an upright 3-channel uint8 image or raises ImageDecodeError
(a ValueError: INVALID_ARG), never anything else; the pre- and postprocessing functions accept
every shape and value a detector or an image can produce and return well-formed arrays.
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image

from triton_ocr.config.requests import with_overrides
from triton_ocr.pipeline import locate
from triton_ocr.postprocessing.ctc import ctc_greedy_decode
from triton_ocr.postprocessing.db import db_boxes
from triton_ocr.postprocessing.east import east_boxes
from triton_ocr.postprocessing.geometry import reading_order
from triton_ocr.preprocessing.crops import warp_crop
from triton_ocr.preprocessing.decode import ImageDecodeError, decode_image
from triton_ocr.preprocessing.detection import detection_input
from triton_ocr.preprocessing.orientation import classifier_input, turn_over
from triton_ocr.preprocessing.recognition import recognizer_rows, whole_batch
from triton_ocr.settings import ClassifierInput, DBBoxes, EASTBoxes, ImageLimits, PipelineSettings

from .test_pipeline import settings as pipeline_settings

LIMITS = ImageLimits(max_image_bytes=1 << 20, max_image_pixels=4_000_000)
# 150 examples per property in the suite; FUZZ_EXAMPLES=5000 for a longer hunt
BOUNDED = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PPOCR: PipelineSettings = pipeline_settings("ppocr")
EAST: PipelineSettings = pipeline_settings("east-str")


def encoded(fmt: str, mode: str = "RGB") -> bytes:
    image = Image.fromarray(np.random.default_rng(0).integers(0, 256, (24, 40, 3), np.uint8))
    buffer = io.BytesIO()
    image.convert(mode).save(buffer, format=fmt)
    return buffer.getvalue()


SEEDS = [encoded("PNG"), encoded("JPEG"), encoded("BMP"), encoded("TIFF"), encoded("WEBP")]


def decodes_or_refuses(data: bytes) -> None:
    try:
        image = decode_image(data, LIMITS)
    except ImageDecodeError:
        return
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[0] * image.shape[1] <= LIMITS.max_image_pixels


@BOUNDED
@given(st.binary(max_size=4096))
def test_arbitrary_bytes_decode_or_are_refused(data):
    decodes_or_refuses(data)


@BOUNDED
@given(
    st.sampled_from(SEEDS),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8),
    st.integers(0, 10_000),
)
def test_damaged_real_images_decode_or_are_refused(seed, edits, cut):
    data = bytearray(seed)
    for position, value in edits:
        data[position % len(data)] = value
    decodes_or_refuses(bytes(data[: max(1, len(data) - cut % len(data))]))


@BOUNDED
@given(
    st.integers(1, 400),
    st.integers(1, 400),
    st.sampled_from([PPOCR, EAST]),
    st.integers(32, 2000),
)
def test_detector_input_for_any_image_size(height, width, pipeline, max_side):
    params = pipeline.detector_input
    params = type(params)(**{**params.__dict__, "max_side_len": max_side})
    params = type(params)(**{**params.__dict__, "min_side_len": min(params.min_side_len, max_side)})
    tensor = detection_input(np.zeros((height, width, 3), np.uint8), params)
    assert tensor.ndim == 4 and tensor.dtype == np.uint8 and tensor.shape[::3] == (1, 3)
    assert all(s % 32 == 0 and 32 <= s <= max(max_side, 32) + 16 for s in tensor.shape[1:3])


def probability_maps(max_side: int):
    """[H, W] float32 maps of probabilities, sides 1..max_side."""
    sides = st.tuples(st.integers(1, max_side), st.integers(1, max_side))
    return arrays(np.float32, sides, elements=st.floats(0, 1, width=32))


def check_quads(quads: np.ndarray, scores: np.ndarray) -> None:
    assert quads.ndim == 3 and quads.shape[1:] == (4, 2) and len(scores) == len(quads)
    assert np.isfinite(quads).all() and np.isfinite(scores).all()


@BOUNDED
@given(
    probability_maps(48),
    st.floats(0.05, 0.95),
    st.floats(0.0, 0.95),
    st.floats(0.5, 3.0),
)
def test_db_boxes_on_any_probability_map(prob, thresh, box_thresh, unclip_ratio):
    quads, scores, _ = db_boxes(prob, thresh, box_thresh, unclip_ratio, 100, True)
    check_quads(quads, scores)
    assert ((scores >= box_thresh - 1e-6) & (scores <= 1 + 1e-6)).all()


@BOUNDED
@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.data(),
    st.floats(0.05, 0.95),
)
def test_east_boxes_on_any_maps(height, width, data, score_thresh):
    scores = data.draw(arrays(np.float32, (height, width), elements=st.floats(0, 1, width=32)))
    geometry = data.draw(
        arrays(
            np.float32,
            (height, width, 5),
            elements=st.floats(-200, 200, width=32, allow_subnormal=False),
        )
    )
    quads, box_scores = east_boxes(scores, geometry, score_thresh, 0.2, 0.2, 50)
    check_quads(quads, box_scores)


finite = st.floats(-500, 500, allow_nan=False, width=32)


@BOUNDED
@given(arrays(np.float32, (4, 2), elements=finite), st.integers(1, 60), st.integers(1, 60))
def test_any_quad_gives_a_crop(quad, height, width):
    crop = warp_crop(np.full((height, width, 3), 200, np.uint8), quad)
    assert crop.ndim == 3 and crop.shape[2] == 3 and crop.size > 0


@BOUNDED
@given(st.lists(st.tuples(st.integers(1, 120), st.integers(1, 900)), min_size=0, max_size=6))
def test_recognizer_batch_for_any_crop_sizes(sizes):
    crops = [np.full((h, w, 3), 128, np.uint8) for h, w in sizes]
    for pipeline in (PPOCR, EAST):
        p = pipeline.recognizer_input
        rows, _, padded = recognizer_rows(crops, p)
        batch = whole_batch(rows, padded, p)
        assert batch.shape[:3] == (max(1, len(crops)), p.channels, p.height)
        assert np.isfinite(batch).all() and batch.shape[3] <= p.max_width


@BOUNDED
@given(st.data(), st.integers(1, 5), st.integers(1, 300))
def test_orientation_functions_for_any_rows(data, rows, batch_width):
    widths = data.draw(st.lists(st.integers(1, batch_width), min_size=rows, max_size=rows))
    flags = data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    batch = np.random.default_rng(rows).normal(size=(rows, 3, 48, batch_width)).astype(np.float32)
    size = ClassifierInput(3, 48, 192)
    assert classifier_input(batch, widths, size).shape == (rows, 3, 48, 192)
    np.testing.assert_array_equal(turn_over(turn_over(batch, widths, flags), widths, flags), batch)


@BOUNDED
@given(st.integers(0, 5), st.integers(1, 40), st.data())
def test_ctc_decode_for_any_best_path(rows, steps, data):
    alphabet = ["", "a", "b", "c"]
    indices = data.draw(arrays(np.int64, (rows, steps), elements=st.integers(0, 3)))
    probs = data.draw(arrays(np.float32, (rows, steps), elements=st.floats(0, 1, width=32)))
    for text, score in ctc_greedy_decode(indices, probs, alphabet):
        assert set(text) <= {"a", "b", "c"} and 0.0 <= score <= 1.0


@BOUNDED
@given(arrays(np.float32, st.tuples(st.integers(0, 12), st.just(4), st.just(2)), elements=finite))
def test_reading_order_is_a_permutation(quads):
    assert sorted(reading_order(quads).tolist()) == list(range(len(quads)))


@BOUNDED
@given(
    probability_maps(64),
    st.integers(1, 200),
    st.integers(1, 200),
    st.sampled_from(["auto", "never", "always"]),
)
def test_locate_maps_any_map_onto_any_image(prob, height, width, single_line):
    s = with_overrides(PPOCR, {"single_line": single_line})
    assert isinstance(s.boxes, DBBoxes) and isinstance(EAST.boxes, EASTBoxes)
    image = np.zeros((height, width, 3), np.uint8)
    found = locate([prob[None, None]], image, s.lines, s.boxes, s.recognizer_input, s.blocks)
    check_quads(found.quads, np.ones(len(found.quads)))
    assert len(found.rows) == len(found.widths) == len(found.padded) == len(found.quads)
    assert all(row.shape == (3, 48, w) for row, w in zip(found.rows, found.widths, strict=True))
    assert (found.quads[..., 0] <= width + 1e-3).all() and (
        found.quads[..., 1] <= height + 1e-3
    ).all()


@BOUNDED
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "text_score",
                "min_side_len",
                "single_line",
                "orientation_threshold",
                "box_thresh",
                "nope",
            ]
        ),
        st.one_of(
            st.text(max_size=8), st.integers(-10, 5000), st.floats(allow_nan=True), st.booleans()
        ),
        max_size=3,
    )
)
def test_request_parameters_are_accepted_or_refused_with_value_error(overrides):
    with contextlib.suppress(ValueError):
        with_overrides(PPOCR, overrides)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_seeds_are_real_images(seed):
    assert decode_image(seed, LIMITS).shape == (24, 40, 3)
