"""Quadrilateral geometry: corner order, coordinate mapping, reading order, crop frames."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

VERTICAL_RATIO = 1.5  # a crop this much taller than wide is a vertical line: turn it to read


Box = tuple[float, float, float, float]  # x0, y0, x1, y1: an upright box


def quad_of(box: Box) -> NDArray[np.float32]:
    """A box as a polygon: tl, tr, br, bl."""
    x0, y0, x1, y1 = box
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


def box_of(quads: NDArray[np.floating[Any]]) -> Box:
    """The upright box around quads (or any points [..., 2])."""
    return (
        float(quads[..., 0].min()),
        float(quads[..., 1].min()),
        float(quads[..., 0].max()),
        float(quads[..., 1].max()),
    )


def order_quad(points: NDArray[np.number[Any]]) -> NDArray[np.float32]:
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


def scale_quads(
    quads: NDArray[np.float32], from_hw: tuple[int, int], to_hw: tuple[int, int]
) -> NDArray[np.float32]:
    """Map quads from a (height, width) frame to another and clip them to the target frame."""
    sy = to_hw[0] / from_hw[0]
    sx = to_hw[1] / from_hw[1]
    out = quads.astype(np.float32) * np.array([sx, sy], dtype=np.float32)
    out[..., 0] = np.clip(out[..., 0], 0, to_hw[1] - 1)
    out[..., 1] = np.clip(out[..., 1], 0, to_hw[0] - 1)
    return out


def pad_quad(quad: NDArray[np.floating[Any]], margin: float) -> NDArray[np.floating[Any]]:
    """The tl, tr, br, bl `quad` grown by `margin` times its height above and below, along its
    own vertical direction (so a tilted line's crop stays aligned with the line)."""
    if margin == 0:
        return quad
    quad = np.asarray(quad, dtype=np.float32)
    down = (quad[3] - quad[0] + quad[2] - quad[1]) / 2  # mean of the two side edges, top to bottom
    step = margin * down
    return np.stack([quad[0] - step, quad[1] - step, quad[2] + step, quad[3] + step])


def room_on_page(quads: NDArray[np.float32], margin: float) -> NDArray[np.float32]:
    """[N] float32: how much of its crop `margin` (a fraction of its height, above and below)
    each of the tl, tr, br, bl `quads` may take from the page: all of it, or less where the
    nearest box above or below it (in the box's own frame, overlapping it across, its centre
    higher or lower) is nearer. No crop takes pixels from inside another box: on a page with
    tight leading the next line's strokes stay out of the crop (preprocessing.crops)."""
    n = len(quads)
    out = np.full(n, margin, np.float32)
    if n < 2 or margin == 0:
        return out
    q = np.asarray(quads, np.float32).reshape(n, 4, 2)
    across = (q[:, 1] - q[:, 0] + q[:, 2] - q[:, 3]) / 2  # mean of top and bottom edges
    down = (q[:, 3] - q[:, 0] + q[:, 2] - q[:, 1]) / 2  # mean of the side edges
    width = np.linalg.norm(across, axis=1)
    height = np.linalg.norm(down, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit_across, unit_down = across / width[:, None], down / height[:, None]
    corners = q.reshape(n * 4, 2)
    for start in range(0, n, 256):  # 256 boxes against all at a time: bounded memory
        rows = np.arange(start, min(start + 256, n))
        # every corner along each box's line (u) and down its side (v), from its top-left
        u = (corners @ unit_across[rows].T).reshape(n, 4, -1).transpose(2, 0, 1)  # [k, n, 4]
        v = (corners @ unit_down[rows].T).reshape(n, 4, -1).transpose(2, 0, 1)
        u -= np.einsum("kd,kd->k", q[rows, 0], unit_across[rows])[:, None, None]
        v -= np.einsum("kd,kd->k", q[rows, 0], unit_down[rows])[:, None, None]
        w, h = width[rows, None], height[rows, None]
        beside = np.minimum(u.max(2), w) > np.maximum(u.min(2), 0)
        beside[np.arange(len(rows)), rows] = False
        centre = (v.min(2) + v.max(2)) / 2 - h / 2  # against each box's own centre
        gap = np.where(centre < 0, -v.max(2), v.min(2) - h)  # to the box above, or below
        gap = np.where(beside & (centre != 0), np.maximum(gap, 0), np.inf).min(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.minimum(margin, gap / height[rows])
        ok = (width[rows] > 0) & (height[rows] > 0)
        out[rows[ok]] = room[ok]
    return out


def quad_size(quad: NDArray[np.floating[Any]]) -> tuple[float, float]:
    """(width, height) of a tl, tr, br, bl quad: the longer of each pair of opposite edges."""
    width = max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[3] - quad[2]))
    height = max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2]))
    return float(width), float(height)


def turned_back(
    points: NDArray[np.float32], degrees: int, upright_hw: tuple[int, int]
) -> NDArray[np.float32]:
    """Points [..., 2] of a page turned upright (preprocessing.page_orientation.turn_upright,
    its size `upright_hw`) -> the same points on the page as sent, whose content was turned
    `degrees` clockwise. Continuous coordinates (pixel i covers [i, i + 1]); a polygon keeps its
    vertex order, so its first vertex is still where its text starts."""
    if degrees == 0:
        return points
    h, w = upright_hw
    x, y = points[..., 0], points[..., 1]
    if degrees == 90:  # the upright page's top edge was the sent page's right edge
        moved = (h - y, x)
    elif degrees == 180:
        moved = (w - x, h - y)
    elif degrees == 270:  # ... its left edge
        moved = (y, w - x)
    else:
        raise ValueError(f"a page turn is one of 0, 90, 180, 270 degrees, not {degrees}")
    return cast("NDArray[np.float32]", np.stack(moved, axis=-1).astype(points.dtype))


def turned_upright(
    points: NDArray[np.float32], degrees: int, sent_hw: tuple[int, int]
) -> NDArray[np.float32]:
    """`turned_back` undone: points on the page as sent (its size `sent_hw`), whose content was
    turned `degrees` clockwise -> the same points on the page turned upright."""
    return turned_back(points, (360 - degrees) % 360, sent_hw)


def reading_order(quads: NDArray[np.float32]) -> NDArray[np.int64]:
    """Indices that put quads in reading order: lines top to bottom, each line left to right.

    A box joins the current line when its centre lies between the top and bottom edges of the
    line's first box, where they pass its centre (a level box: its vertical extent); this keeps
    words of one line together even when the line is tilted or its words differ in height, and
    the next line of a tilted page (a bent line's box, postprocessing.bends) out.
    """
    n = len(quads)
    if n == 0:
        return np.zeros((0,), dtype=np.int64)
    top = quads[:, :, 1].min(axis=1)
    bottom = quads[:, :, 1].max(axis=1)
    center_y = (top + bottom) / 2
    center_x = quads[:, :, 0].mean(axis=1)
    left = quads[:, :, 0].min(axis=1)
    order: list[int] = []
    remaining = list(np.argsort(center_y, kind="stable"))
    while remaining:
        first = remaining[0]
        rest = np.asarray(remaining)
        upper = edge_at(quads[first, 0], quads[first, 1], center_x[rest], top[first])
        lower = edge_at(quads[first, 3], quads[first, 2], center_x[rest], bottom[first])
        within = (upper <= center_y[rest]) & (center_y[rest] <= lower)
        line = [int(i) for i in rest[within]]
        if first not in line:
            line.insert(0, first)
        order.extend(sorted(line, key=lambda i: left[i]))
        taken = set(line)
        remaining = [i for i in remaining if i not in taken]
    return np.asarray(order, dtype=np.int64)


def edge_at(
    start: NDArray[np.floating[Any]],
    end: NDArray[np.floating[Any]],
    x: NDArray[np.floating[Any]],
    level: float,
) -> NDArray[np.float64]:
    """The y of the edge from `start` to `end` (x, y) at each `x`, extended beyond its ends;
    `level` where the edge is not across (a vertical box's)."""
    dx = float(end[0] - start[0])
    if abs(dx) < 1e-6 or abs(float(end[1] - start[1])) > abs(dx):
        return np.full(len(x), level, np.float64)
    return np.asarray(start[1] + (x - start[0]) * (float(end[1] - start[1]) / dx), np.float64)


@dataclass(frozen=True)
class CropFrame:
    """Where a line's upright crop lies in the original image.

    Coordinates are continuous, pixel i covering [i, i + 1] (so the resize to a recognizer row
    is a plain scale and the turn below moves whole pixels exactly as cv2.rotate does); the
    warp stretches the padded box onto [0, w] x [0, h] (OpenCV samples at pixel centres, half a
    pixel apart from this, which no box here resolves).
    """

    # [3, 3] original pixels -> the upright crop's, the vertical turn included
    to_crop: NDArray[np.float64]
    width: int  # the upright crop's size, after the turn
    height: int
    top: float  # mean y of the box's own (unpadded) top and bottom edges in the upright crop
    bottom: float
    warp: NDArray[np.float64]  # [3, 3] original pixels -> the crop as warped, before the turn
    vertical: bool  # turned 90 degrees counter-clockwise after the warp (a vertical line)
    # [4, 2] the box's own corners in the upright crop, in its reading order (tl, tr, br, bl):
    # its edges there are straight lines, not always level (the margin is added along the mean
    # of the box's sides, so a perspective box's own top edge may slope in its crop)
    box: NDArray[np.float64]


def map_points(
    matrix: NDArray[np.float64], points: NDArray[np.floating[Any]]
) -> NDArray[np.float64]:
    """Points [k, 2] through a 3x3 homography, float64 (degenerate ones come out non-finite)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    mapped = np.hstack([pts, np.ones((len(pts), 1))]) @ np.asarray(matrix, np.float64).T
    with np.errstate(divide="ignore", invalid="ignore"):
        return mapped[:, :2] / mapped[:, 2:]


def crop_frame(quad: NDArray[np.floating[Any]], margin: float) -> CropFrame:
    """The crop of the tl, tr, br, bl `quad` grown by `margin` of its height above and below:
    the padded box warped onto a w x h rectangle (w, h: its longer opposite edges, rounded),
    turned 90 degrees counter-clockwise when h >= VERTICAL_RATIO * w."""
    quad = np.asarray(quad)  # its own dtype: the crop's size is measured as it always was
    padded = pad_quad(quad, margin)
    width, height = quad_size(padded)
    w = max(1, int(round(width)))
    h = max(1, int(round(height)))
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    # a float64 3x3 matrix (cv2's stubs: any number type)
    warp = cast(
        "NDArray[np.float64]", cv2.getPerspectiveTransform(padded.astype(np.float32), target)
    )
    vertical = h >= VERTICAL_RATIO * w
    if vertical:
        # cv2.rotate(..., ROTATE_90_COUNTERCLOCKWISE): pixel (x, y) of the w-wide warp lands on
        # pixel (y, w - 1 - x), i.e. [x, x+1] x [y, y+1] -> [y, y+1] x [w-x-1, w-x]
        turn = np.array([[0, 1, 0], [-1, 0, w], [0, 0, 1]], dtype=np.float64)
        to_crop = turn @ warp
        size = (h, w)
        order = [1, 2, 3, 0]  # the right edge becomes the top, read from the quad's tr
    else:
        to_crop = warp.astype(np.float64)
        size = (w, h)
        order = [0, 1, 2, 3]
    box = map_points(to_crop, quad)[order]
    return CropFrame(
        to_crop=to_crop,
        width=size[0],
        height=size[1],
        top=float(box[:2, 1].mean()),
        bottom=float(box[2:, 1].mean()),
        warp=warp,
        vertical=bool(vertical),
        box=box,
    )


def box_edge_points(
    frame: CropFrame, x: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Points [k, 2] of the box's own top and bottom edges in the upright crop at crop x, each
    x held within its edge's ends (so they never leave the box)."""
    x = np.asarray(x, dtype=np.float64)

    def along(
        start: NDArray[np.float64], end: NDArray[np.float64], mean: float
    ) -> NDArray[np.float64]:
        low, high = min(start[0], end[0]), max(start[0], end[0])
        at = np.clip(x, low, high) if np.isfinite(low) and np.isfinite(high) else x
        run = end[0] - start[0]
        if not np.isfinite(run) or abs(run) < 1e-9:  # an edge with no width: level at the mean
            return np.stack([at, np.full_like(at, mean)], axis=-1)
        return np.stack([at, start[1] + (at - start[0]) * (end[1] - start[1]) / run], axis=-1)

    box = frame.box
    return along(box[0], box[1], frame.top), along(box[3], box[2], frame.bottom)


def to_original(frame: CropFrame, points: NDArray[np.float64]) -> NDArray[np.float64]:
    """Points [k, 2] of the upright crop -> original pixels [k, 2] (float64)."""
    try:
        back = np.linalg.inv(frame.to_crop)
    except np.linalg.LinAlgError:  # a degenerate box (all its corners on a line)
        back = np.linalg.pinv(frame.to_crop)
    return map_points(back, points)
