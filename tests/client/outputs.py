"""Synthetic `ocr` responses, as the server's output tensors would hold them."""

from __future__ import annotations

import numpy as np

from triton_ocr import contract


def box(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def ocr_outputs(lines, pages, words=()) -> dict[str, np.ndarray]:
    """`lines`: (item, page, text, polygon, score); `pages`: (item, width, height[, error]);
    `words`: (line, text, polygon, score)."""
    return {
        contract.OCR_OUTPUT_IMAGE_INDEX: np.array([line[0] for line in lines], np.int32),
        contract.OCR_OUTPUT_PAGE_INDEX: np.array([line[1] for line in lines], np.int32),
        contract.OUTPUT_TEXT: np.array([line[2].encode() for line in lines], np.object_),
        contract.OUTPUT_POLYGONS: np.array([line[3] for line in lines], np.float32).reshape(
            -1, 4, 2
        ),
        contract.OUTPUT_SCORES: np.array([line[4] for line in lines], np.float32),
        contract.OCR_OUTPUT_PAGE_IMAGE: np.array([p[0] for p in pages], np.int32),
        contract.OCR_OUTPUT_PAGE_SIZE: np.array([p[1:3] for p in pages], np.int32).reshape(-1, 2),
        contract.OCR_OUTPUT_PAGE_ERROR: np.array(
            [(p[3] if len(p) > 3 else "").encode() for p in pages], np.object_
        ),
        contract.OCR_OUTPUT_WORD_TEXT: np.array([w[1].encode() for w in words], np.object_),
        contract.OCR_OUTPUT_WORD_POLYGONS: np.array([w[2] for w in words], np.float32).reshape(
            -1, 4, 2
        ),
        contract.OCR_OUTPUT_WORD_SCORES: np.array([w[3] for w in words], np.float32),
        contract.OCR_OUTPUT_WORD_LINE: np.array([w[0] for w in words], np.int32),
    }


# Two items: a 3-page document whose middle page has no text, then an image.
LINES = [
    (0, 0, "Invoice 42", box(10, 10, 200, 40), 0.97),
    (0, 0, "Total: 12 €", box(10, 60, 180, 90), 0.9),
    (0, 2, "Page three", box(20, 30, 220, 70), 0.85),
    (1, 0, "Hello <world> & \"friends\" 'too'", box(5.5, 6.25, 300.75, 50), 0.5),
]
PAGES = [(0, 600, 800), (0, 600, 800), (0, 600, 850), (1, 320, 60)]
WORDS = [
    (0, "Invoice", box(10, 10, 120, 40), 0.98),
    (0, "42", box(130, 10, 200, 40), 0.96),
    (1, "Total:", box(10, 60, 90, 90), 0.91),
    (1, "12", box(100, 60, 130, 90), 0.92),
    (1, "€", box(140, 60, 180, 90), 0.87),
    (3, "Hello", box(5.5, 6.25, 60, 50), 0.55),
]
