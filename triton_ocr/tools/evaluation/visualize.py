"""Eval images with predicted polygons (green) and missed labelled boxes (red)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from triton_ocr.preprocessing.decode import decode_image

from .labels import LOCAL_FILES
from .runner import ImageResult

GREEN, RED = (0, 200, 0), (0, 0, 255)


def draw(result: ImageResult) -> np.ndarray:
    image = decode_image(result.sample.read(), LOCAL_FILES).copy()
    thickness = max(1, round(max(image.shape[:2]) / 500))
    for quad in result.quads:
        cv2.polylines(image, [np.round(quad).astype(np.int32)], True, GREEN, thickness)
    missed = set(result.missed)
    for label in result.sample.cared:
        if label.box is not None and label.text in missed:
            cv2.polylines(image, [np.round(label.box).astype(np.int32)], True, RED, thickness)
    return image


def save_all(results: list[ImageResult], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, result in enumerate(results):
        name = f"{index:03d}_{result.sample.path.stem}.png"
        cv2.imwrite(str(folder / name), draw(result))
