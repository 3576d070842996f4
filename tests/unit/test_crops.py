import dataclasses

import numpy as np

from triton_ocr.params import DetectionPostprocessing
from triton_ocr.postprocessing.crops import (
    crop_widths,
    padded_widths,
    recognition_batch,
    recognition_groups,
    resized_width,
    split_batch,
    warp_crop,
)


def gradient_image(h=100, w=200):
    ys, xs = np.mgrid[0:h, 0:w]
    return np.stack([xs % 256, ys % 256, (xs + ys) % 256], axis=-1).astype(np.uint8)


def test_axis_aligned_crop_matches_slice():
    image = gradient_image()
    quad = np.array([[20, 10], [120, 10], [120, 40], [20, 40]], np.float32)
    crop = warp_crop(image, quad)
    assert crop.shape == (30, 100, 3)
    assert np.abs(crop.astype(int) - image[10:40, 20:120].astype(int)).max() <= 2


def test_rotated_quad_is_rectified():
    image = np.full((200, 200, 3), 255, np.uint8)
    # a dark bar rotated by 45 degrees
    quad = np.array([[50, 100], [100, 50], [114, 64], [64, 114]], np.float32)
    import cv2

    cv2.fillPoly(image, [quad.astype(np.int32)], (0, 0, 0))
    crop = warp_crop(image, quad)
    assert abs(crop.shape[1] - 71) <= 1 and abs(crop.shape[0] - 20) <= 1
    assert crop[3:-3, 3:-3].mean() < 40  # the whole crop is the dark bar


def test_vertical_crop_is_turned():
    image = gradient_image()
    quad = np.array([[10, 10], [30, 10], [30, 90], [10, 90]], np.float32)
    assert warp_crop(image, quad).shape[:2] == (20, 80)


def test_resized_width():
    assert resized_width(24, 100, 48, 3200) == 200
    assert resized_width(4, 2000, 48, 3200) == 3200


PPOCR = DetectionPostprocessing(
    detector="db",
    min_box_size=3,
    crop_margin=0.4,
    single_line="auto",
    line_max_height=96,
    line_min_aspect=1.5,
    rec_height=48,
    rec_min_width=320,
    rec_max_width=3200,
    rec_width_bucket=1,
    rec_keep_aspect=True,
    rec_channels=3,
    rec_mean=(0.5,) * 3,
    rec_std=(0.5,) * 3,
)
STR = dataclasses.replace(
    PPOCR,
    rec_height=32,
    rec_min_width=100,
    rec_max_width=100,
    rec_width_bucket=1,
    rec_keep_aspect=False,
    rec_channels=1,
    rec_mean=(0.5,),
    rec_std=(0.5,),
)


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


BUCKETED = dataclasses.replace(PPOCR, rec_width_bucket=64)


def test_width_buckets_round_up_and_set_the_batch_width():
    assert padded_widths([100, 320, 321, 384, 385], BUCKETED) == [320, 320, 384, 384, 448]
    assert padded_widths([321], PPOCR) == [321]
    crops = [np.zeros((48, 330, 3), np.uint8)]
    assert recognition_batch(crops, BUCKETED).shape == (1, 3, 48, 384)
    try:
        dataclasses.replace(PPOCR, rec_width_bucket=0)
    except ValueError as exc:
        assert "rec_width_bucket" in str(exc)
    else:
        raise AssertionError("a bucket of 0 must be refused")


def test_both_entry_points_build_the_same_groups():
    """ocr builds each group's batch from its crops; the ensemble cuts the groups out of one
    batch padded to the widest crop. The recognizer must see identical tensors either way."""
    rng = np.random.default_rng(0)
    crops = [
        rng.integers(0, 256, (int(h), int(w), 3), dtype=np.uint8)
        for h, w in zip(rng.integers(12, 60, 15), rng.integers(10, 900, 15), strict=True)
    ]
    for params in (PPOCR, STR, BUCKETED):
        padded = padded_widths(crop_widths(crops, params), params)
        direct = recognition_groups(crops, params, group_size=4)
        cut = split_batch(recognition_batch(crops, params), padded, group_size=4)
        assert [g for g, _ in direct] == [g for g, _ in cut]
        for (_, a), (_, b) in zip(direct, cut, strict=True):
            assert a.shape == b.shape and np.array_equal(a, b)
    widths = [padded[i] for g, _ in direct for i in g]
    assert widths == sorted(widths)  # narrow crops together, wide ones together
