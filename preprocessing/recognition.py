"""Upright crops -> the recognizer's input: one normalised row per crop, rows batched in groups
of similar width.

A row is a crop resized to the recognizer's height (aspect kept, width capped) and normalised,
[C, height, width]. A batch is rows right-padded with 0 (0 after normalisation, as in PP-OCR's
training) to one width. Both entry points cut the same groups with the same padding, so a crop
reads alike whichever way it came in.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import Grouping, RecognizerInput


def resized_width(height: int, width: int, target_height: int, max_width: int) -> int:
    """Width of a crop resized to `target_height` keeping its aspect ratio, capped."""
    return int(min(max_width, max(1, math.ceil(target_height * width / max(height, 1)))))


def crop_widths(crops: Sequence[NDArray[np.uint8]], settings: RecognizerInput) -> list[int]:
    """Each crop's width in its row (before padding)."""
    s = settings
    if not s.keep_aspect:  # fixed-size recognizers: every crop stretched to max_width
        return [s.max_width] * len(crops)
    return [resized_width(c.shape[0], c.shape[1], s.height, s.max_width) for c in crops]


def padded_widths(widths: Sequence[int], settings: RecognizerInput) -> list[int]:
    """The batch width each crop needs on its own: its width, at least min_width, rounded up to
    a multiple of width_bucket (few distinct shapes let requests batch together)."""
    bucket = settings.width_bucket
    return [max(settings.min_width, -(-w // bucket) * bucket) for w in widths]


@functools.cache
def normalisation_table(mean: tuple[float, ...], std: tuple[float, ...]) -> NDArray[np.float32]:
    """(value / 255 - mean) / std for every 8-bit value, per channel, as cv2.LUT takes it
    ([1, 256, C]): the same float32 arithmetic as on the pixels themselves, done once."""
    values = np.arange(256, dtype=np.float32)[:, None]
    table = (values / 255.0 - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    table = np.ascontiguousarray(table.reshape(1, 256, len(mean)), dtype=np.float32)
    table.setflags(write=False)  # shared by every call
    return table


def recognizer_row(
    crop: NDArray[np.uint8], width: int, settings: RecognizerInput
) -> NDArray[np.float32]:
    """One crop resized to [height, width], normalised, as a [C, height, width] float32 row
    (C is 3, BGR, or 1, grayscale)."""
    s = settings
    if s.channels == 1 and crop.ndim == 3:
        crop = cast("NDArray[np.uint8]", cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY))
    resized = cv2.resize(crop, (width, s.height), interpolation=cv2.INTER_LINEAR)
    # a table lookup per pixel rather than three float passes over the row
    row = cv2.LUT(resized, normalisation_table(s.mean, s.std))
    return cast("NDArray[np.float32]", row.reshape(s.height, width, -1).transpose(2, 0, 1))


def recognizer_rows(
    crops: Sequence[NDArray[np.uint8]], settings: RecognizerInput
) -> tuple[list[NDArray[np.float32]], list[int], list[int]]:
    """Each crop's row, its own width and its padded width."""
    widths = crop_widths(crops, settings)
    rows = [recognizer_row(c, w, settings) for c, w in zip(crops, widths, strict=True)]
    return rows, widths, padded_widths(widths, settings)


def stack_rows(rows: Sequence[NDArray[np.float32]], width: int) -> NDArray[np.float32]:
    """Rows [C, H, w_i] right-padded with 0 to `width` into one [n, C, H, width] batch."""
    channels, height, _ = rows[0].shape
    batch = np.zeros((len(rows), channels, height, width), dtype=np.float32)
    for i, row in enumerate(rows):
        batch[i, :, :, : row.shape[2]] = row
    return batch


def whole_batch(
    rows: Sequence[NDArray[np.float32]], padded: Sequence[int], settings: RecognizerInput
) -> NDArray[np.float32]:
    """Every row in one batch as wide as the widest padded width: how the ensemble hands the
    rows from one step to the next. No rows gives one blank row (ONNX Runtime and Triton reject
    zero-size tensors there); callers know the true count."""
    if not rows:
        shape = (1, settings.channels, settings.height, settings.min_width)
        return np.zeros(shape, dtype=np.float32)
    return stack_rows(rows, max([settings.min_width, *padded]))


def rows_of(batch: NDArray[np.float32], widths: Sequence[int]) -> list[NDArray[np.float32]]:
    """The rows of a `whole_batch`, each cut to its crop's own width (views, no copy)."""
    return [batch[i, :, :, :width] for i, width in enumerate(widths)]


def group_indices(padded: Sequence[int], group_size: int, group_width: int) -> list[list[int]]:
    """Crop indices sorted by padded width (stable), cut into groups of at most `group_size`
    crops whose batch (rows x the group's widest padded width) spans at most `group_width` row
    pixels; a crop wider than that alone.

    Neighbours in width pad each other little, so far less compute goes to padding than when
    every crop is padded to the widest one. The width cap bounds the recognizer's working
    memory, which grows with a batch's row pixels and which its runtime keeps at the largest
    batch it has run; wide crops gain nothing from sharing a run.
    """
    order = sorted(range(len(padded)), key=lambda i: padded[i])
    groups: list[list[int]] = []
    for i in order:  # each crop is the widest of its group so far
        group = groups[-1] if groups else []
        if not group or len(group) == group_size or (len(group) + 1) * padded[i] > group_width:
            groups.append([i])
        else:
            group.append(i)
    return groups


def recognition_groups(
    rows: Sequence[NDArray[np.float32]], padded: Sequence[int], grouping: Grouping
) -> list[tuple[list[int], NDArray[np.float32]]]:
    """(crop indices, recognizer batch) per width-sorted group (`group_indices` with the
    grouping's size and width), each batch as wide as its widest padded width."""
    size, width = grouping.recognition_group_size, grouping.recognition_group_width
    return [
        (group, stack_rows([rows[i] for i in group], max(padded[i] for i in group)))
        for group in group_indices(padded, size, width)
    ]
