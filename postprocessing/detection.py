"""Detector output + original image -> ordered boxes in original pixels + recognizer batch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from triton_ocr.params import DetectionPostprocessing

from .crops import recognition_batch, warp_crop
from .db import db_boxes
from .geometry import quad_size, reading_order, scale_quads


@dataclass(frozen=True)
class Detections:
    quads: np.ndarray  # [N, 4, 2] float32, original image pixels, reading order
    scores: np.ndarray  # [N] float32 detection scores
    batch: np.ndarray  # [max(N, 1), 3, H, W] float32 recognizer input


def detect_texts(
    prob_map: np.ndarray, image: np.ndarray, params: DetectionPostprocessing
) -> Detections:
    """Turn a DB probability map (any leading singleton dims) into crops of the original image.

    Boxes are found on the map, mapped to the original frame, cropped from the ORIGINAL image
    (full resolution), and put in reading order; boxes smaller than `min_box_size` original
    pixels on either side are dropped.
    """
    p = params
    prob = np.asarray(prob_map, dtype=np.float32).reshape(prob_map.shape[-2:])
    quads, scores = db_boxes(
        prob, p.thresh, p.box_thresh, p.unclip_ratio, p.max_candidates, p.min_box_size
    )
    quads = scale_quads(quads, prob.shape, image.shape[:2])
    keep = [i for i, q in enumerate(quads) if min(quad_size(q)) > p.min_box_size]
    quads, scores = quads[keep], scores[keep]
    order = reading_order(quads)
    quads, scores = quads[order], scores[order]
    crops = [warp_crop(image, q) for q in quads]
    batch = recognition_batch(
        crops, p.rec_height, p.rec_min_width, p.rec_max_width, p.rec_mean, p.rec_std
    )
    return Detections(quads.reshape(-1, 4, 2), scores.reshape(-1), batch)
