"""Detector output + original image -> ordered boxes in original pixels + recognizer batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from triton_ocr.params import DBParameters, DetectionPostprocessing, EASTParameters

from .crops import warp_crop
from .db import db_boxes
from .east import STRIDE, east_boxes
from .geometry import pad_quad, quad_size, reading_order, scale_quads


@dataclass(frozen=True)
class Detections:
    quads: np.ndarray  # [N, 4, 2] float32, original image pixels, reading order
    scores: np.ndarray  # [N] float32 detection scores
    crops: list[np.ndarray]  # N upright crops of the original image, same order


def find_boxes(
    maps: Sequence[np.ndarray], detector: DBParameters | EASTParameters
) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Boxes in the detector's input frame, their scores, and that frame's (height, width).

    DB: one probability map at input resolution (any leading singleton dims).
    EAST: NHWC score [1, H/4, W/4, 1] and geometry [1, H/4, W/4, 5] maps.
    """
    if isinstance(detector, DBParameters):
        (prob,) = maps
        prob = np.asarray(prob, dtype=np.float32).reshape(prob.shape[-2:])
        d = detector
        quads, scores = db_boxes(prob, d.thresh, d.box_thresh, d.unclip_ratio, d.max_candidates)
        return quads, scores, prob.shape
    score_map, geometry = maps
    score_map = np.asarray(score_map, dtype=np.float32).reshape(score_map.shape[-3:-1])
    geometry = np.asarray(geometry, dtype=np.float32).reshape(*score_map.shape, 5)
    d = detector
    quads, scores = east_boxes(
        score_map, geometry, d.score_thresh, d.merge_iou, d.nms_iou, d.max_candidates
    )
    return quads, scores, (score_map.shape[0] * STRIDE, score_map.shape[1] * STRIDE)


def whole_image(image: np.ndarray) -> Detections:
    """The whole image as one text line (its crop turned upright if it is tall)."""
    h, w = image.shape[:2]
    quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return Detections(quad[None], np.ones(1, np.float32), [warp_crop(image, quad)])


def on_one_row(quads: np.ndarray) -> bool:
    """True when every box's vertical centre lies within every box's vertical extent (no box,
    one box, or the words of one line; unclipped boxes of stacked lines overlap but fail this)."""
    if len(quads) < 2:
        return True
    top, bottom = quads[:, :, 1].min(axis=1), quads[:, :, 1].max(axis=1)
    center = (top + bottom) / 2
    return bool(top.max() <= center.min() and center.max() <= bottom.min())


def looks_like_a_line(
    image: np.ndarray, quads: np.ndarray, params: DetectionPostprocessing
) -> bool:
    """A small wide image whose text (if any was found) sits on one row: a pre-cropped line."""
    h, w = image.shape[:2]
    return h <= params.line_max_height and w >= params.line_min_aspect * h and on_one_row(quads)


def detect_texts(
    maps: Sequence[np.ndarray],
    image: np.ndarray,
    params: DetectionPostprocessing,
    detector: DBParameters | EASTParameters,
) -> Detections:
    """Turn detector maps into boxes and upright crops of the ORIGINAL image (full resolution).

    Boxes are mapped from the detector's input frame to the original image, boxes thinner than
    `min_box_size` original pixels are dropped, and the rest are put in reading order; each
    crop takes `crop_margin` of its box's height more above and below. With
    `single_line` "always", or "auto" and a line-shaped image, the whole image is one line.
    """
    if params.single_line == "always":
        return whole_image(image)
    quads, scores, frame = find_boxes(maps, detector)
    quads = scale_quads(quads, frame, image.shape[:2])
    keep = [i for i, q in enumerate(quads) if min(quad_size(q)) > params.min_box_size]
    quads, scores = quads[keep], scores[keep]
    if params.single_line == "auto" and looks_like_a_line(image, quads, params):
        return whole_image(image)
    order = reading_order(quads)
    quads, scores = quads[order], scores[order]
    crops = [warp_crop(image, pad_quad(q, params.crop_margin)) for q in quads]
    return Detections(quads.reshape(-1, 4, 2), scores.reshape(-1), crops)
