"""Recognizer best path + boxes -> the texts the service returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from triton_ocr.contract import BLOCK_FIGURE

from .blocks import block_boxes
from .geometry import Box, box_of, quad_of, turned_back
from .tables import Table, turned_table
from .words import Words


def no_blocks() -> NDArray[np.float32]:
    return np.zeros((0, 4, 2), np.float32)


@dataclass(frozen=True)
class Texts:
    texts: list[str]
    quads: NDArray[np.float32]  # [M, 4, 2] float32
    scores: NDArray[np.float32]  # [M] float32 recognition confidence
    words: Words | None = None  # word boxes, when asked for; Words.lines index the M texts
    # [M] int32 per text its block, and [B, 4, 2] each block's box; texts come block by block
    line_block: NDArray[np.int32] = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    block_quads: NDArray[np.float32] = dataclasses.field(default_factory=no_blocks)
    rotation: int = 0  # degrees the page's content was turned clockwise (and turned back)
    tables: tuple[Table, ...] = ()  # when asked for (postprocessing.tables), top to bottom
    block_types: tuple[str, ...] = ()  # [B] each block's type (postprocessing.block_types)
    # [M] each text's font where the page says it (a PDF's text layer; "" for a line in mixed
    # fonts or read by OCR), or () when no text's is known
    fonts: tuple[str, ...] = ()
    # [M] each text's stroke width in page pixels (postprocessing.strokes), or empty when not
    # measured (a text layer's lines)
    strokes: NDArray[np.float32] = dataclasses.field(
        default_factory=lambda: np.zeros(0, np.float32)
    )
    # [M] how far apart each text's letters stand, over its height (postprocessing.strokes),
    # or empty when not measured
    gaps: NDArray[np.float32] = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    # [M] how far each text's upright strokes lean right (postprocessing.strokes: italic), or
    # empty when not measured
    slants: NDArray[np.float32] = dataclasses.field(default_factory=lambda: np.zeros(0, np.float32))
    # the page's figures (postprocessing.figures): boxes on the page as read, as sent after
    # turned_back
    figures: tuple[Box, ...] = ()

    @staticmethod
    def empty(rotation: int = 0) -> Texts:
        return Texts(
            [], np.zeros((0, 4, 2), np.float32), np.zeros((0,), np.float32), rotation=rotation
        )

    @staticmethod
    def of(
        decoded: Sequence[tuple[str, float]], quads: NDArray[np.float32], keep: Sequence[int]
    ) -> Texts:
        """The decoded texts (and the quads they were read from) at the indices `keep`."""
        return Texts(
            texts=[decoded[i][0] for i in keep],
            quads=np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)[list(keep)],
            scores=np.asarray([decoded[i][1] for i in keep], dtype=np.float32),
        )

    def with_words(self, words: Words) -> Texts:
        return dataclasses.replace(self, words=words)

    def with_tables(self, tables: Sequence[Table]) -> Texts:
        return dataclasses.replace(self, tables=tuple(tables))

    def with_blocks(self, line_block: NDArray[np.int32]) -> Texts:
        """Each text's block given (texts already block by block): blocks left without a
        text are dropped and the rest numbered again, each boxed around its texts."""
        kept, renumbered = np.unique(np.asarray(line_block, np.int32), return_inverse=True)
        renumbered = renumbered.astype(np.int32).reshape(-1)
        boxes = block_boxes(self.quads, renumbered, len(kept))
        return dataclasses.replace(self, line_block=renumbered, block_quads=boxes, block_types=())

    def with_block_types(self, types: Sequence[str]) -> Texts:
        return dataclasses.replace(self, block_types=tuple(types))

    def with_type(
        self, strokes: NDArray[np.float32], gaps: NDArray[np.float32], slants: NDArray[np.float32]
    ) -> Texts:
        return dataclasses.replace(self, strokes=strokes, gaps=gaps, slants=slants)

    def with_figures(self, figures: Sequence[Box]) -> Texts:
        return dataclasses.replace(self, figures=tuple(figures))

    def with_figure_blocks(self, places: Sequence[int]) -> Texts:
        """Each figure as a block of type figure with no text, before the block at its place
        (postprocessing.figures.figure_places; the number of blocks: after the last)."""
        if not self.figures:
            return self
        blocks = len(self.block_quads)
        # figures before the block at their place, in their own order
        order = sorted(
            [(p, 0, f) for f, p in enumerate(places)] + [(b, 1, b) for b in range(blocks)]
        )
        new_index = {(is_block, k): n for n, (_, is_block, k) in enumerate(order)}
        moved = np.array([new_index[(1, b)] for b in range(blocks)], np.int32)
        figure_quads = [quad_of(box) for box in self.figures]
        quads = [
            figure_quads[k] if not is_block else self.block_quads[k] for _, is_block, k in order
        ]
        types = [BLOCK_FIGURE if not is_block else self.block_types[k] for _, is_block, k in order]
        return dataclasses.replace(
            self,
            line_block=moved[self.line_block] if len(self.line_block) else self.line_block,
            block_quads=np.array(quads, np.float32).reshape(-1, 4, 2),
            block_types=tuple(types),
        )

    def turned_back(self, rotation: int, upright_hw: tuple[int, int]) -> Texts:
        """Read on a page turned upright (its size `upright_hw`) -> every polygon on the page
        as sent, whose content was turned `rotation` degrees clockwise."""

        def back(quads: NDArray[np.float32]) -> NDArray[np.float32]:
            return turned_back(quads, rotation, upright_hw)

        words = self.words and dataclasses.replace(self.words, quads=back(self.words.quads))
        return dataclasses.replace(
            self,
            quads=back(self.quads),
            words=words,
            block_quads=back(self.block_quads),
            rotation=rotation,
            tables=tuple(turned_table(t, back) for t in self.tables),
            figures=tuple(box_of(back(quad_of(box))) for box in self.figures),
        )


def strong_texts(decoded: Sequence[tuple[str, float]], text_score: float) -> list[int]:
    """Indices of the decoded texts that are non-blank and at least `text_score` confident."""
    return [i for i, (text, score) in enumerate(decoded) if text.strip() and score >= text_score]


def rival_reading(
    decoded: Sequence[tuple[str, float]], text_score: float, margin: float
) -> list[int]:
    """The indices kept when the last decoded text is the whole image read as one line and the
    others are the texts of the boxes found in it: the whole line, unless it is weak or the
    boxes' strong texts are surer by more than `margin` (their confidence weighted by their
    length, so a stray character beside a word counts for little)."""
    last = len(decoded) - 1
    boxes = strong_texts(decoded[:last], text_score)
    if not strong_texts(decoded[last:], text_score):
        return boxes
    if not boxes:
        return [last]
    lengths = [len(decoded[i][0]) for i in boxes]
    boxes_score = float(np.average([decoded[i][1] for i in boxes], weights=lengths))
    return [last] if decoded[last][1] >= boxes_score - margin else boxes
