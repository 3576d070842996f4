"""Upright crops -> the recognizer's rows, batches and width groups."""

import dataclasses

import cv2
import numpy as np
import pytest

from triton_ocr.preprocessing.recognition import (
    group_indices,
    padded_widths,
    recognition_groups,
    recognizer_row,
    recognizer_rows,
    resized_width,
    rows_of,
    whole_batch,
)
from triton_ocr.settings import Grouping, RecognizerInput


def test_resized_width():
    assert resized_width(24, 100, 48, 3200) == 200
    assert resized_width(4, 2000, 48, 3200) == 3200


PPOCR = RecognizerInput(
    height=48,
    min_width=320,
    max_width=3200,
    width_bucket=1,
    keep_aspect=True,
    channels=3,
    mean=(0.5,) * 3,
    std=(0.5,) * 3,
)
STR = RecognizerInput(
    height=32,
    min_width=100,
    max_width=100,
    width_bucket=1,
    keep_aspect=False,
    channels=1,
    mean=(0.5,),
    std=(0.5,),
)


@pytest.mark.parametrize(
    "settings",
    [PPOCR, dataclasses.replace(PPOCR, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)), STR],
)
def test_rows_are_normalised_per_channel_exactly(settings):
    """Every 8-bit value of every channel comes out as (value / 255 - mean) / std in float32,
    to the bit (the rows are normalised through a lookup table)."""
    values = np.arange(256, dtype=np.uint8)
    # one column per value, each channel in another order, 48 rows: no resize
    crop = np.stack([values, values[::-1], np.roll(values, 7)], axis=-1)[None].repeat(48, 0)
    gray = settings.channels == 1
    pixels = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)[..., None] if gray else crop
    mean, std = np.float32(settings.mean), np.float32(settings.std)
    expected = ((pixels.astype(np.float32) / 255.0 - mean) / std).transpose(2, 0, 1)
    row = recognizer_row(crop, 256, dataclasses.replace(settings, height=48))
    assert row.dtype == np.float32 and np.array_equal(row, expected)


def recognition_batch(crops, settings):
    """Every crop's row in one batch, as the ensemble passes them between its steps."""
    rows, _, padded = recognizer_rows(crops, settings)
    return whole_batch(rows, padded, settings)


def test_recognition_batch_shapes_and_padding():
    crops = [np.full((24, 100, 3), 255, np.uint8), np.full((48, 800, 3), 0, np.uint8)]
    batch = recognition_batch(crops, PPOCR)
    assert batch.shape == (2, 3, 48, 800) and batch.dtype == np.float32
    assert np.allclose(batch[0, :, :, :200], 1.0)  # white -> +1
    assert np.allclose(batch[0, :, :, 200:], 0.0)  # padding
    assert np.allclose(batch[1], -1.0)  # black -> -1


def test_recognition_batch_minimum_width_and_empty():
    batch = recognition_batch([np.zeros((10, 10, 3), np.uint8)], PPOCR)
    assert batch.shape == (1, 3, 48, 320)
    empty = recognition_batch([], PPOCR)
    assert empty.shape == (1, 3, 48, 320) and not empty.any()


BUCKETED = dataclasses.replace(PPOCR, width_bucket=64)


def test_width_buckets_round_up_and_set_the_batch_width():
    assert padded_widths([100, 320, 321, 384, 385], BUCKETED) == [320, 320, 384, 384, 448]
    assert padded_widths([321], PPOCR) == [321]
    crops = [np.zeros((48, 330, 3), np.uint8)]
    assert recognition_batch(crops, BUCKETED).shape == (1, 3, 48, 384)
    with pytest.raises(ValueError, match="rec_width_bucket"):
        dataclasses.replace(PPOCR, width_bucket=0)


def test_both_entry_points_build_the_same_groups():
    """ocr groups the rows it built; the ensemble's grouped_recognition gets them in one batch
    padded to the widest crop and cuts them back out. The recognizer must see identical tensors
    either way."""
    rng = np.random.default_rng(0)
    crops = [
        rng.integers(0, 256, (int(h), int(w), 3), dtype=np.uint8)
        for h, w in zip(rng.integers(12, 60, 15), rng.integers(10, 900, 15), strict=True)
    ]
    for settings in (PPOCR, STR, BUCKETED):
        rows, widths, padded = recognizer_rows(crops, settings)
        direct = recognition_groups(rows, padded, Grouping(4, 3200))
        passed = rows_of(whole_batch(rows, padded, settings), widths)
        cut = recognition_groups(passed, padded, Grouping(4, 3200))
        assert [g for g, _ in direct] == [g for g, _ in cut]
        for (_, a), (_, b) in zip(direct, cut, strict=True):
            assert a.shape == b.shape and np.array_equal(a, b)
    widths = [padded[i] for g, _ in direct for i in g]
    assert widths == sorted(widths)  # narrow crops together, wide ones together


def test_groups_hold_at_most_their_size_and_width_of_row_pixels():
    padded = [320, 3200, 640, 320, 1280, 640, 320, 960]
    groups = group_indices(padded, group_size=3, group_width=3200)
    assert groups == [[0, 3, 6], [2, 5, 7], [4], [1]]
    for group in groups:  # narrow rows still share a call; a batch spans <= 3200 unless alone
        assert len(group) <= 3
        assert len(group) == 1 or len(group) * max(padded[i] for i in group) <= 3200
    assert group_indices(padded, 8, 10**6) == [[0, 3, 6, 2, 5, 7, 4, 1]]  # no cap: size alone
    assert group_indices([], 3, 3200) == []


def test_a_group_width_below_one_is_refused():
    with pytest.raises(ValueError, match="recognition_group_width"):
        Grouping(6, 0)
