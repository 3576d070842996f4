"""Detector output -> text boxes in original image pixels, in reading order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import Boxes, DBBoxes, TextLines

from .bends import Bend
from .db import db_boxes
from .east import STRIDE, east_boxes
from .geometry import quad_size, reading_order, scale_quads


@dataclass(frozen=True)
class TextBoxes:
    quads: NDArray[np.float32]  # [N, 4, 2] float32, original image pixels, reading order
    scores: NDArray[np.float32]  # [N] float32 detection scores
    margin: float  # how much each crop grows above and below (0: the whole image is the line)
    # The whole image is also read as one line, against these boxes (could_be_one_line): the
    # reading the recognizer is surer of is kept (postprocessing.recognition.rival_reading).
    rival: bool = False
    # [N] each box's centre line where its line is bent (postprocessing.bends), else None; ()
    # where no box is
    bends: Sequence[Bend | None] = ()


def find_boxes(
    maps: Sequence[NDArray[np.float32]], boxes: Boxes
) -> tuple[NDArray[np.float32], NDArray[np.float32], list[Bend | None], tuple[int, int]]:
    """Boxes in the detector's input frame, their scores, their bends (DB's; an EAST box is
    never bent) and that frame's (height, width).

    DB: one probability map at input resolution (any leading singleton dims).
    EAST: NHWC score [1, H/4, W/4, 1] and geometry [1, H/4, W/4, 5] maps.
    """
    if isinstance(boxes, DBBoxes):
        (prob,) = maps
        prob = np.asarray(prob, dtype=np.float32).reshape(prob.shape[-2:])
        d = boxes
        found = db_boxes(
            prob, d.thresh, d.box_thresh, d.unclip_ratio, d.max_candidates, d.bent_lines
        )
        return *found, (prob.shape[0], prob.shape[1])
    score_map, geometry = maps
    score_map = np.asarray(score_map, dtype=np.float32).reshape(score_map.shape[-3:-1])
    geometry = np.asarray(geometry, dtype=np.float32).reshape(*score_map.shape, 5)
    e = boxes
    quads, scores = east_boxes(
        score_map, geometry, e.score_thresh, e.merge_iou, e.nms_iou, e.max_candidates
    )
    frame = (score_map.shape[0] * STRIDE, score_map.shape[1] * STRIDE)
    return quads, scores, [None] * len(quads), frame


def whole_image(size: tuple[int, int]) -> TextBoxes:
    """The whole (height, width) image as one text line."""
    h, w = size
    quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return TextBoxes(quad[None], np.ones(1, np.float32), 0.0)


def on_one_row(quads: NDArray[np.floating[Any]]) -> bool:
    """True when every box's vertical centre lies within every box's vertical extent (no box,
    one box, or the words of one line; unclipped boxes of stacked lines overlap but fail this)."""
    if len(quads) < 2:
        return True
    top, bottom = quads[:, :, 1].min(axis=1), quads[:, :, 1].max(axis=1)
    center = (top + bottom) / 2
    return bool(top.max() <= center.min() and center.max() <= bottom.min())


def line_shaped(size: tuple[int, int], lines: TextLines) -> bool:
    """A (height, width) image no taller than a line (`line_max_height`) and `line_min_aspect`
    times wider than tall: the shape of a crop of one line or word."""
    h, w = size
    return h <= lines.line_max_height and w >= lines.line_min_aspect * h


def looks_like_a_line(size: tuple[int, int], quads: NDArray[np.float32], lines: TextLines) -> bool:
    """A small wide image whose text (if any was found) sits on one row: a pre-cropped line."""
    return line_shaped(size, lines) and on_one_row(quads)


def covering_box(size: tuple[int, int], quads: NDArray[np.float32], cover: float) -> bool:
    """True when one box spans at least `cover` of the image's height and of its width: the
    text fills the image, as in a crop cut around a word."""
    if not len(quads):
        return False
    h, w = size
    spans = quads.max(axis=1) - quads.min(axis=1)  # [N, 2]: x and y extent of each box
    return bool(((spans[:, 0] >= cover * w) & (spans[:, 1] >= cover * h)).any())


def could_be_one_line(size: tuple[int, int], quads: NDArray[np.float32], lines: TextLines) -> bool:
    """A crop of one word or line, by its shape and what was found in it: line-shaped
    (`looks_like_a_line`), small (no side over `line_max_side`) with nothing found, or filled
    by one box. Such an image is also read whole, and the surer reading wins: size alone
    misses crops taller than a line, and the detector finds fragments or nothing in many."""
    h, w = size
    small = not len(quads) and max(h, w) <= lines.line_max_side
    return (
        small
        or looks_like_a_line(size, quads, lines)
        or covering_box(size, quads, lines.line_box_cover)
    )


def text_boxes(
    maps: Sequence[NDArray[np.float32]], size: tuple[int, int], lines: TextLines, boxes: Boxes
) -> TextBoxes:
    """Detector maps -> the text boxes of a (height, width) image, in its pixels.

    Boxes are mapped from the detector's input frame to the original image, boxes thinner than
    `min_box_size` original pixels are dropped, and the rest are put in reading order. With
    `single_line` "always" (no maps needed) the whole image is the one line; with "auto", an
    image that could be one line (`could_be_one_line`) is also read whole, as the boxes' rival.
    """
    if lines.single_line == "always":
        return whole_image(size)
    quads, scores, bends, frame = find_boxes(maps, boxes)
    quads = scale_quads(quads, frame, size)
    sx, sy = size[1] / frame[1], size[0] / frame[0]
    keep = [i for i, q in enumerate(quads) if min(quad_size(q)) > lines.min_box_size]
    quads, scores = quads[keep], scores[keep]
    rival = lines.single_line == "auto" and could_be_one_line(size, quads, lines)
    order = reading_order(quads)
    quads, scores = quads[order], scores[order]
    kept = [bends[keep[i]] for i in order]
    return TextBoxes(
        quads.reshape(-1, 4, 2),
        scores.reshape(-1),
        lines.crop_margin,
        rival,
        [b.scaled(sx, sy) if b else None for b in kept],
    )
