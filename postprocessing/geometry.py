"""Quadrilateral geometry: corner order, coordinate mapping, reading order."""

from __future__ import annotations

import numpy as np


def order_quad(points: np.ndarray) -> np.ndarray:
    """Order 4 corners clockwise (in image coordinates) starting at the top-left one.

    Top-left is the corner with the smallest x + y, which is right for text tilted up to 45
    degrees either way.
    """
    pts = np.asarray(points, dtype=np.float32).reshape(4, 2)
    center = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - center[1], pts[:, 0] - center[0])
    pts = pts[np.argsort(angles)]  # increasing angle = clockwise on screen (y points down)
    start = int(np.argmin(pts.sum(axis=1)))
    return np.roll(pts, -start, axis=0)


def scale_quads(quads: np.ndarray, from_hw: tuple[int, int], to_hw: tuple[int, int]) -> np.ndarray:
    """Map quads from a (height, width) frame to another and clip them to the target frame."""
    sy = to_hw[0] / from_hw[0]
    sx = to_hw[1] / from_hw[1]
    out = quads.astype(np.float32) * np.array([sx, sy], dtype=np.float32)
    out[..., 0] = np.clip(out[..., 0], 0, to_hw[1] - 1)
    out[..., 1] = np.clip(out[..., 1], 0, to_hw[0] - 1)
    return out


def pad_quad(quad: np.ndarray, margin: float) -> np.ndarray:
    """The tl, tr, br, bl `quad` grown by `margin` times its height above and below, along its
    own vertical direction (so a tilted line's crop stays aligned with the line)."""
    if margin == 0:
        return quad
    quad = np.asarray(quad, dtype=np.float32)
    down = (quad[3] - quad[0] + quad[2] - quad[1]) / 2  # mean of the two side edges, top to bottom
    step = margin * down
    return np.stack([quad[0] - step, quad[1] - step, quad[2] + step, quad[3] + step])


def quad_size(quad: np.ndarray) -> tuple[float, float]:
    """(width, height) of a tl, tr, br, bl quad: the longer of each pair of opposite edges."""
    width = max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[3] - quad[2]))
    height = max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2]))
    return float(width), float(height)


def reading_order(quads: np.ndarray) -> np.ndarray:
    """Indices that put quads in reading order: lines top to bottom, each line left to right.

    A box joins the current line when its vertical centre lies within the vertical extent of
    the line's first box; this keeps words of one line together even when the line is tilted
    slightly or its words differ in height.
    """
    n = len(quads)
    if n == 0:
        return np.zeros((0,), dtype=np.int64)
    top = quads[:, :, 1].min(axis=1)
    bottom = quads[:, :, 1].max(axis=1)
    center_y = (top + bottom) / 2
    left = quads[:, :, 0].min(axis=1)
    order: list[int] = []
    remaining = list(np.argsort(center_y, kind="stable"))
    while remaining:
        first = remaining[0]
        line = [i for i in remaining if top[first] <= center_y[i] <= bottom[first]]
        if first not in line:
            line.insert(0, first)
        order.extend(sorted(line, key=lambda i: left[i]))
        taken = set(line)
        remaining = [i for i in remaining if i not in taken]
    return np.asarray(order, dtype=np.int64)
