"""Where each image's time goes, stage by stage, for the pipeline in-process (row B, the
compute floor) and for RapidOCR (rows A and A'), on the same images in fresh processes.

Neither reader is changed: the functions each calls are wrapped by name, in the worker's own
process only, with a stopwatch that charges each moment to the innermost stage running (a
stage's figure leaves out the stages it calls: the detector called while a page's turn is
checked counts as detection). What no stage claims is "other" (Python between the stages:
the result's assembly, the turned-back geometry, RapidOCR's own glue).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# The stages in the table's order. The pipeline's names (triton_ocr.pipeline's module globals,
# which its stage functions call) and the floor's networks (floor_reader's `wrap`) per stage.
STAGES = (
    "decode",
    "page orientation",
    "detector input",
    "detection (network)",
    "box finding",
    "blocks",
    "crops and rows",
    "line classifier",
    "recognition (network)",
    "CTC and text selection",
    "other",
)
PIPELINE_FUNCTIONS = {
    "decode": ("decode_image",),
    "page orientation": ("page_classifier_input", "proposed_turn", "turn_upright", "lines_level"),
    "detector input": ("detection_input",),
    "box finding": ("text_boxes",),
    "blocks": ("cut_at_gutters", "page_layout"),
    "crops and rows": ("cut_crops", "room_on_page", "recognizer_rows", "whole_image"),
    "line classifier": ("classifier_input", "upside_down", "turn_over", "path_confidence"),
    "recognition (network)": ("recognition_groups", "pad_steps"),
    "CTC and text selection": ("ctc_greedy_decode", "strong_texts", "rival_reading"),
}
FLOOR_NETWORKS = {
    "detect": "detection (network)",
    "recognize": "recognition (network)",
    "classify": "line classifier",
    "classify_page": "page orientation",
}


class Stopwatch:
    """Seconds per stage, each moment charged to the innermost stage running (one thread)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self._stack: list[str] = []
        self._since = 0.0

    def _switch(self) -> None:
        now = time.perf_counter()
        if self._stack:
            self.seconds[self._stack[-1]] += now - self._since
        self._since = now

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._switch()
        self._stack.append(name)
        try:
            yield
        finally:
            self._switch()
            self._stack.pop()

    def timed(self, name: str, function: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return function(*args, **kwargs)

        return call

    def read(self, read: Callable[[bytes], Any], data: bytes) -> Any:
        """One image through `read`; time no stage claims goes to "other"."""
        with self.stage("other"):
            return read(data)

    def take(self) -> dict[str, float]:
        """The seconds so far, and a fresh start."""
        taken, self.seconds = self.seconds, dict.fromkeys(STAGES, 0.0)
        return taken


def time_pipeline(watch: Stopwatch) -> None:
    """Wrap the pipeline module's stage functions (this process only, for good)."""
    from triton_ocr import pipeline

    for stage, names in PIPELINE_FUNCTIONS.items():
        for name in names:
            setattr(pipeline, name, watch.timed(stage, getattr(pipeline, name)))


def time_rapidocr(engine: Any, watch: Stopwatch) -> None:
    """Wrap a warmed-up RapidOCR 3.x engine's steps (this process only, for good): image
    loading, its resize within bounds and each step's input, network session and decode; the
    crops are what `detect_and_crop` spends beyond its detector, the recognizer's rows what
    it spends beyond its session and CTC decode."""
    det, cls, rec = engine.text_det, engine.text_cls, engine.text_rec
    engine.load_img = watch.timed("decode", engine.load_img)
    engine.preprocess_img = watch.timed("detector input", engine.preprocess_img)
    det.session = watch.timed("detection (network)", det.session)
    det.postprocess_op = watch.timed("box finding", det.postprocess_op)
    cls.session = watch.timed("line classifier", cls.session)
    rec.session = watch.timed("recognition (network)", rec.session)
    rec.postprocess_op = watch.timed("CTC and text selection", rec.postprocess_op)
    engine.text_det = watch.timed("detector input", det)
    engine.text_cls = watch.timed("line classifier", cls)
    engine.text_rec = watch.timed("crops and rows", rec)
    engine.detect_and_crop = watch.timed("crops and rows", engine.detect_and_crop)


def per_image_ms(seconds: dict[str, float], images: int) -> dict[str, float]:
    return {stage: 1000 * s / max(images, 1) for stage, s in seconds.items()}


def stage_table(
    columns: dict[str, dict[str, float]], hops: dict[str, float], cpu: str
) -> list[str]:
    """The printed table: ms per image per stage, a column per reader, then the total and each
    entry point's cost beyond the floor (`hops`: served ms per image at concurrency 1 minus the
    floor's total)."""
    names = list(columns)
    width = max(len(n) for n in names) + 2
    lines = [f"\nwhere each image's time goes (ms per image, one at a time), on: {cpu}"]
    lines.append(f"{'stage':26}" + "".join(f"{n:>{width}}" for n in names))
    for stage in STAGES:
        lines.append(f"{stage:26}" + "".join(f"{columns[n][stage]:>{width}.1f}" for n in names))
    totals = {n: sum(columns[n].values()) for n in names}
    lines.append(f"{'total':26}" + "".join(f"{totals[n]:>{width}.1f}" for n in names))
    for entry, ms in hops.items():
        lines.append(f"{entry + ' beyond the floor':26}{ms:>{width}.1f}")
    return lines
