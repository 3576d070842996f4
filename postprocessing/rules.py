"""A page's ruled grids: horizontal and vertical rules are the dark pixels that survive a
morphological opening with a long thin kernel; rules that meet form a grid, whose rule
positions (clustered) cut it into rows and columns, and two neighbouring grid cells are one
cell where the rule between them is mostly missing (the spans). Whether a grid holds a table is
the text's to say (postprocessing.tables)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from .geometry import Box

RULE_SHARE = 1 / 40  # a rule runs at least this share of the page's width (height), ...
MIN_RULE = 20  # ... at least this many pixels, ...
LETTER_STROKE = 1.2  # ... and this many of the text's line heights (a stroke of a letter less)
RULE_COVER = 0.5  # a cell border counts as drawn when rules cover this share of it
MIN_GRID_CELLS = 2  # a frame around one box of text is not a table
RULE_SIDE = 3000  # rules are looked for on the page scaled to at most this long side


def rule_masks(
    gray: NDArray[np.uint8], text_height: float
) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """The page's horizontal and vertical rules: dark pixels (against their neighbourhood, so
    uneven light in a photo does not matter) that survive an opening with a kernel of a rule's
    least length: a share of the page, and longer than a letter's stroke of the page's text
    (`text_height`, its lines' median height)."""
    h, w = gray.shape
    block = max(15, (min(h, w) // 60) | 1)
    dark = cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block, 10
    )
    letters = int(LETTER_STROKE * text_height)
    across = max(MIN_RULE, int(w * RULE_SHARE), letters)
    down = max(MIN_RULE, int(h * RULE_SHARE), letters)
    horizontal = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((1, across), np.uint8))
    vertical = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((down, 1), np.uint8))
    return horizontal.astype(np.uint8), vertical.astype(np.uint8)


def segments_of(mask: NDArray[np.uint8], axis: int) -> NDArray[np.float64]:
    """Each rule of a mask as [start, end, position, thickness]: along x for horizontal rules
    (axis 0), along y for vertical ones (axis 1)."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    found = []
    for x, y, w, h, _ in stats[1:count]:
        if axis == 0:
            found.append((x, x + w, y + h / 2, h))
        else:
            found.append((y, y + h, x + w / 2, w))
    return np.array(found, np.float64).reshape(-1, 4)


def cluster(positions: NDArray[np.float64], tolerance: float) -> list[float]:
    """Positions closer than `tolerance` taken as one (their mean)."""
    found: list[list[float]] = []
    for p in np.sort(positions):
        if found and p - found[-1][-1] <= tolerance:
            found[-1].append(float(p))
        else:
            found.append([float(p)])
    return [float(np.mean(group)) for group in found]


def drawn(
    rules: NDArray[np.float64], position: float, start: float, end: float, tol: float
) -> bool:
    """Whether rules at `position` (within `tol`) cover RULE_COVER of [start, end]."""
    near = rules[np.abs(rules[:, 2] - position) <= tol]
    spans = np.clip(near[:, :2], start, end)
    covered = np.zeros(max(int(end - start), 1), bool)
    for a, b in spans:
        covered[int(a - start) : int(b - start)] = True
    return bool(covered.mean() >= RULE_COVER)


def merged_cells(
    xs: list[float], ys: list[float], horizontal: NDArray[np.float64], vertical: NDArray[np.float64]
) -> list[tuple[int, int, int, int]]:
    """The grid's cells as (row, column, row span, column span): neighbouring grid cells joined
    where the rule between them is missing, a joined group widened to its bounding rectangle."""
    rows, columns = len(ys) - 1, len(xs) - 1
    parent = list(range(rows * columns))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    tol = 3.0 + 0.5 * float(np.median(np.concatenate([horizontal[:, 3], vertical[:, 3]])))
    for r in range(rows):
        for c in range(columns):
            if c + 1 < columns and not drawn(vertical, xs[c + 1], ys[r], ys[r + 1], tol):
                parent[find(r * columns + c + 1)] = find(r * columns + c)
            if r + 1 < rows and not drawn(horizontal, ys[r + 1], xs[c], xs[c + 1], tol):
                parent[find((r + 1) * columns + c)] = find(r * columns + c)
    changed = True
    while changed:  # a group's bounding rectangle takes in every group it overlaps
        changed = False
        groups: dict[int, list[int]] = {}
        for i in range(rows * columns):
            groups.setdefault(find(i), []).append(i)
        for members in groups.values():
            r0, r1 = min(i // columns for i in members), max(i // columns for i in members)
            c0, c1 = min(i % columns for i in members), max(i % columns for i in members)
            for r in range(r0, r1 + 1):
                for c in range(c0, c1 + 1):
                    if find(r * columns + c) != find(members[0]):
                        parent[find(r * columns + c)] = find(members[0])
                        changed = True
    groups = {}
    for i in range(rows * columns):
        groups.setdefault(find(i), []).append(i)
    cells = []
    for members in groups.values():
        r0, c0 = min(i // columns for i in members), min(i % columns for i in members)
        r1, c1 = max(i // columns for i in members), max(i % columns for i in members)
        cells.append((r0, c0, r1 - r0 + 1, c1 - c0 + 1))
    return sorted(cells)


@dataclass(frozen=True)
class Grid:
    """Rules that touch: their column lines (x), row lines (y), merged cells, and the rules."""

    xs: list[float]
    ys: list[float]
    cells: list[tuple[int, int, int, int]]
    horizontal: NDArray[np.float64]  # segments_of(..., 0) inside it
    vertical: NDArray[np.float64]  # segments_of(..., 1) inside it

    @property
    def box(self) -> Box:
        return (self.xs[0], self.ys[0], self.xs[-1], self.ys[-1])

    def scaled(self, factor: float) -> Grid:
        """The grid on the page `factor` times as large."""
        return Grid(
            [x * factor for x in self.xs],
            [y * factor for y in self.ys],
            self.cells,
            self.horizontal * factor,
            self.vertical * factor,
        )

    def tolerance(self) -> float:
        return 3.0 + float(np.median(np.concatenate([self.horizontal[:, 3], self.vertical[:, 3]])))


def touching(
    rules: NDArray[np.float64], across: NDArray[np.float64], tol: float
) -> NDArray[np.float64]:
    """The rules that meet one of the rules `across` them (segments_of rows of the other
    axis): its position within the rule's extent and the rule's position within its own."""
    start, end, position = rules[:, 0:1], rules[:, 1:2], rules[:, 2:3]
    meets = (
        (across[None, :, 2] >= start - tol)
        & (across[None, :, 2] <= end + tol)
        & (position >= across[None, :, 0] - tol)
        & (position <= across[None, :, 1] + tol)
    )
    kept: NDArray[np.float64] = rules[meets.any(axis=1)]
    return kept


def grids(gray: NDArray[np.uint8], text_height: float) -> list[Grid]:
    """Each ruled grid on the page (rules that touch, two or more each way), in the page's
    pixels; looked for on the page scaled to a long side of RULE_SIDE at most, so that the
    largest page takes bounded time and memory (a rule drawn a pixel wide stays darker than
    the paper around it)."""
    h, w = gray.shape
    scale = min(1.0, RULE_SIDE / max(h, w))
    if scale == 1.0:
        return grids_at(gray, text_height)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(gray, size, interpolation=cv2.INTER_AREA).astype(np.uint8)
    return [grid.scaled(1 / scale) for grid in grids_at(small, text_height * scale)]


def grids_at(gray: NDArray[np.uint8], text_height: float) -> list[Grid]:
    """`grids` at the page's own size."""
    horizontal, vertical = rule_masks(gray, text_height)
    h_rules, v_rules = segments_of(horizontal, 0), segments_of(vertical, 1)
    if len(h_rules) < 2 or len(v_rules) < 2:
        return []
    joined = cv2.dilate(horizontal | vertical, np.ones((5, 5), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    found = []
    for x, y, w, h, _ in stats[1:count]:
        in_x = (h_rules[:, 0] >= x - 1) & (h_rules[:, 1] <= x + w + 1)
        inside_h = h_rules[in_x & (h_rules[:, 2] >= y) & (h_rules[:, 2] <= y + h)]
        in_y = (v_rules[:, 0] >= y - 1) & (v_rules[:, 1] <= y + h + 1)
        inside_v = v_rules[in_y & (v_rules[:, 2] >= x) & (v_rules[:, 2] <= x + w)]
        if len(inside_h) < 2 or len(inside_v) < 2:
            continue
        tol = 3.0 + float(np.median(np.concatenate([inside_h[:, 3], inside_v[:, 3]])))
        # a rule meets a rule across it; a letter's stroke (a 2's foot) meets none
        inside_h, inside_v = touching(inside_h, inside_v, tol), touching(inside_v, inside_h, tol)
        if len(inside_h) < 2 or len(inside_v) < 2:
            continue
        ys, xs = cluster(inside_h[:, 2], tol), cluster(inside_v[:, 2], tol)
        # rules that stop short of the frame still bound the grid at its extent
        if ys[0] - y > 2 * tol:
            ys.insert(0, float(y))
        if y + h - ys[-1] > 2 * tol:
            ys.append(float(y + h))
        if xs[0] - x > 2 * tol:
            xs.insert(0, float(x))
        if x + w - xs[-1] > 2 * tol:
            xs.append(float(x + w))
        cells = merged_cells(xs, ys, inside_h, inside_v)
        if len(cells) >= MIN_GRID_CELLS:
            found.append(Grid(xs, ys, cells, inside_h, inside_v))
    return found
