"""The stage table's bookkeeping: each moment charged to the innermost stage running, the
pipeline's stage functions wrapped by name (the real stages run in tests/e2e/test_bench_worker.py
and `make bench`)."""

from __future__ import annotations

import pytest

from triton_ocr import pipeline
from triton_ocr.tools.bench import stages
from triton_ocr.tools.bench.stages import (
    FLOOR_NETWORKS,
    PIPELINE_FUNCTIONS,
    STAGES,
    Stopwatch,
    per_image_ms,
    stage_table,
    time_pipeline,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_stage_leaves_out_the_stages_it_calls(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(stages.time, "perf_counter", clock)
    watch = Stopwatch()

    def detect():
        clock.now += 3.0

    def turn_page():
        clock.now += 1.0
        watch.timed("detection (network)", detect)()
        clock.now += 0.5

    def read(_: bytes) -> str:
        clock.now += 0.25
        watch.timed("page orientation", turn_page)()
        return "texts"

    assert watch.read(read, b"image") == "texts"
    seconds = watch.take()
    assert seconds["page orientation"] == 1.5
    assert seconds["detection (network)"] == 3.0
    assert seconds["other"] == 0.25
    assert sum(seconds.values()) == clock.now
    assert watch.take() == dict.fromkeys(STAGES, 0.0)  # taken: a fresh start


def test_every_named_function_is_the_pipelines_and_gets_wrapped(monkeypatch):
    names = [name for group in PIPELINE_FUNCTIONS.values() for name in group]
    for name in names:  # monkeypatch puts the originals back afterwards
        monkeypatch.setattr(pipeline, name, getattr(pipeline, name))
    originals = {name: getattr(pipeline, name) for name in names}
    time_pipeline(Stopwatch())
    assert all(getattr(pipeline, name) is not originals[name] for name in names)
    assert set(PIPELINE_FUNCTIONS) | set(FLOOR_NETWORKS.values()) <= set(STAGES)
    assert set(FLOOR_NETWORKS) == {"detect", "recognize", "classify", "classify_page"}


def test_the_table_gives_ms_per_image_and_the_cost_beyond_the_floor():
    floor = per_image_ms(dict.fromkeys(STAGES, 0.0) | {"decode": 2.0, "other": 1.0}, 100)
    assert floor["decode"] == pytest.approx(20.0) and floor["other"] == pytest.approx(10.0)
    peer = dict.fromkeys(STAGES, 5.0)
    lines = stage_table({"service": floor, "peer": peer}, {"ocr": 12.5}, "Some CPU")
    assert "Some CPU" in lines[0]
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[1:] == ["30.0", f"{5.0 * len(STAGES):.1f}"]
    assert lines[-1].split()[-1] == "12.5"
