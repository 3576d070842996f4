"""Bench rows A and B run in processes of their own, started fresh (tools/bench/worker.py): the
floor's worker reads real images round by round and hands its times back."""

from __future__ import annotations

import pytest

from tests.samples import render_blank
from triton_ocr.config.packs import DEFAULT_PACK
from triton_ocr.tools.bench.worker import FreshProcess
from triton_ocr.tools.samples import render
from triton_ocr.tools.workload import Row


def test_the_floor_runs_round_by_round_in_its_own_process(repository):
    images = [render().png, render_blank()]
    row = Row("B floor in-process", 1)
    with FreshProcess("B", DEFAULT_PACK, repository, 1, images) as worker:
        assert worker.process.pid and worker.load_s > 0
        worker.round(row)
        latest = worker.round(row)
    assert row.images == 4 and len(row.latencies) == 4 and row.wall >= sum(row.latencies)
    assert latest == row.latencies[2:]
    assert worker.lines[0] > 0 and worker.lines[1] == 0  # the demo page's lines; the blank none
    assert worker.process.returncode == 0


def test_a_worker_that_cannot_start_says_so(repository):
    with pytest.raises(RuntimeError, match="row C's process ended"):
        FreshProcess("C", DEFAULT_PACK, repository, 1, [render_blank()])


def test_the_floor_times_its_stages_in_a_row_of_its_own(repository):
    from triton_ocr.tools.bench.stages import STAGES

    images = [render().png, render_blank()]
    plain, staged = Row("B", 1), Row("B+stages", 1)
    with FreshProcess("B+stages", DEFAULT_PACK, repository, 1, images) as worker:
        worker.round(staged)
    with FreshProcess("B", DEFAULT_PACK, repository, 1, images) as floor:
        floor.round(plain)
    assert set(worker.stages) == set(STAGES)
    for stage in ("decode", "detection (network)", "recognition (network)", "blocks"):
        assert worker.stages[stage] > 0, stage
    assert sum(worker.stages.values()) <= staged.wall
    assert floor.stages == {}  # the plain row is not timed by stage


def test_the_tutorials_design_reads_through_the_two_network_calls(repository, server):
    """Row C: the client prepares the page and decodes, Triton runs the detector on the page
    (uint8) and the recognizer on the rows (float32)."""
    from triton_ocr.config.repository import Repository
    from triton_ocr.tools.bench.readers import tutorial_reader
    from triton_ocr.tools.samples import Placed

    lines = ("Invoice 2024-0917 total 318.40 EUR", "Delivered to the north gate")
    sample = render(
        tuple(Placed(t, (40, 40 + 80 * i), 30, face="DejaVuSans.ttf") for i, t in enumerate(lines))
    )
    found = Repository(repository)
    texts = tutorial_reader(server.grpc, found, found.pipeline_settings())(sample.png)
    assert list(texts.texts) == list(lines)
