"""Boxes on the original image -> upright crops."""

import cv2
import numpy as np

from triton_ocr.preprocessing.crops import cut_crops, warp_crop


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
    cv2.fillPoly(image, [quad.astype(np.int32)], (0, 0, 0))
    crop = warp_crop(image, quad)
    assert abs(crop.shape[1] - 71) <= 1 and abs(crop.shape[0] - 20) <= 1
    assert crop[3:-3, 3:-3].mean() < 40  # the whole crop is the dark bar


def test_vertical_crop_is_turned():
    image = gradient_image()
    quad = np.array([[10, 10], [30, 10], [30, 90], [10, 90]], np.float32)
    assert warp_crop(image, quad).shape[:2] == (20, 80)


def test_the_margin_grows_each_crop_above_and_below():
    image = gradient_image()
    quad = np.array([[20, 40], [120, 40], [120, 60], [20, 60]], np.float32)
    (tight,), (loose,) = cut_crops(image, [quad], 0.0), cut_crops(image, [quad], 0.25)
    assert tight.shape == (20, 100, 3) and loose.shape == (30, 100, 3)
    np.testing.assert_array_equal(tight, warp_crop(image, quad))
