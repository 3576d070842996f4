"""The page classifier's looks and the detected lines -> the page's turn.

The first look alone settles a page it finds upright surely enough. Where the lines are read
first (`ocr`), they settle most pages without any look: level lines that all read upright, and
surely, are an upright page's.

The classifier's labels are the degrees a page's content was turned clockwise (0, 90, 180,
270); look k saw the page turned k more quarters, so its label k + t speaks for turn t. The
mean of the four looks is the turn's score. A turn is only taken when the text agrees: once
turned, most lines must lie level (a sideways page's lines are tall boxes; an upright photo the
classifier misreads keeps its level lines level only at 0 degrees).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from triton_ocr.settings import PageOrientation

from .geometry import quad_size

QUARTER_TURNS = (0, 90, 180, 270)
ELONGATED = 1.5  # a box this many times longer one way than the other shows its direction


def turn_scores(looks: NDArray[np.float32]) -> NDArray[np.float32]:
    """[4, 4] class probabilities of the four looks -> [4] the mean score of each turn."""
    n = len(QUARTER_TURNS)
    return np.array([np.mean([looks[k][(t + k) % n] for k in range(n)]) for t in range(n)])


def upright_at_first_look(first: NDArray[np.float32], page: PageOrientation) -> bool:
    """[1, 4] probabilities of the first look (the page as it came) -> the page is upright
    beyond doubt, and the three turned looks are not needed."""
    return bool(first[0][0] >= page.page_upright_score)


def proposed_turn(looks: NDArray[np.float32], page: PageOrientation) -> int:
    """The turn (degrees clockwise) the classifier's looks agree on, 0 when none scores
    `page_turn_score` or the mode is off."""
    if page.page_orientation == "off":
        return 0
    scores = turn_scores(looks)
    best = int(np.argmax(scores))
    return QUARTER_TURNS[best] if scores[best] >= page.page_turn_score else 0


def lines_level(quads: NDArray[np.float32], page: PageOrientation) -> bool:
    """At least `page_lines_share` of the clearly elongated boxes are wider than tall (False when no
    box shows a direction: no evidence for a turn)."""
    sizes = [quad_size(q) for q in quads]
    wide = sum(1 for w, h in sizes if w >= ELONGATED * h)
    tall = sum(1 for w, h in sizes if h >= ELONGATED * w)
    return wide + tall > 0 and wide >= page.page_lines_share * (wide + tall)


def read_upright(
    quads: NDArray[np.float32],
    turned: NDArray[np.bool_],
    confidence: NDArray[np.float64],
    page: PageOrientation,
) -> bool:
    """A page's lines (boxes, whether each read better turned over, how sure each reading is)
    show it upright: they lie level, none read better turned over, and their median
    confidence is at least `page_read_score`. A page upside down reads turned over or unsure
    (the line classifier misses some of its lines, the recognizer is unsure of those)."""
    return (
        lines_level(quads, page)
        and not turned.any()
        and float(np.median(confidence)) >= page.page_read_score
    )
