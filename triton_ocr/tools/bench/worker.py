"""An in-process row in a process of its own, started fresh, as its user would run it.

Rows A and A' (the pack's RapidOCR release with its defaults, and with Det, Cls and Rec on
OpenVINO) and row B (this project's pipeline with onnxruntime) read images in the caller's
process in real use. Measured inside the bench process, after the
server's client threads and the other rows' allocations, RapidOCR ran 20-30% slower than alone,
which overstated the service's lead. So each runs here, in a fresh interpreter that loads only
its engine, and the bench drives it round by round (interleaved with the served rows) over a
pipe:

    python -m triton_ocr.tools.bench.worker ROW PACK REPOSITORY FLOOR_THREADS IMAGE...

It loads the engine, reads the images into memory, reads every image once (model loading and
the first pass, which compiles each input shape, stay out of the timed rounds: workload.warm_up)
and prints `{"ready": seconds}`. Then each line `round` on stdin reads every image once, one
after the other, and prints
`{"latencies": [...], "wall": seconds, "lines": [...]}` (per image, in order: seconds, and the
lines the reader answered with); end of input ends it. A ROW ending in `+stages` (B or
A') also times each stage (stages.py) and adds `"stages": {stage: seconds}` to each answer.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the worker itself imports only its engine
    from triton_ocr.tools.workload import Row

# the RapidOCR rows and the runtime each runs Det, Cls and Rec on (reference.rapidocr_params):
# A its defaults, A' OpenVINO, what a speed-minded RapidOCR user sets
REFERENCE_ENGINES = {"A": "onnxruntime", "A'": "openvino"}
ROWS = (*REFERENCE_ENGINES, "B")
# the rows whose stages can be timed, and the suffix that asks for it
STAGED_ROWS = ("A'", "B")
STAGES_SUFFIX = "+stages"


def engine(row: str, pack: str, repository: Path, floor_threads: int, watch=None):
    """The row's reader: bytes -> texts; with a stages.Stopwatch `watch`, the floor's stage
    functions and networks timed by it (RapidOCR's steps are wrapped once it has loaded)."""
    if row in REFERENCE_ENGINES:
        from triton_ocr.tools.reference import rapidocr_reader

        return rapidocr_reader(pack, REFERENCE_ENGINES[row])
    from triton_ocr.config.repository import Repository

    from .readers import floor_reader, unwrapped

    configs = Repository(repository, pack)
    wrap = unwrapped
    if watch is not None:
        from .stages import FLOOR_NETWORKS, time_pipeline

        time_pipeline(watch)

        def wrap(name, network):
            return watch.timed(FLOOR_NETWORKS[name], network)

    return floor_reader(configs, configs.pipeline_settings(), floor_threads, wrap)


def lines_read(answer) -> int:
    """How many lines a reader answered with: the pipeline's Texts or RapidOCR's (texts, quads)."""
    return len(answer.texts if hasattr(answer, "texts") else answer[0])


def timed_round(read, images: list[bytes]) -> dict:
    latencies, lines = [], []
    start = time.perf_counter()
    for data in images:
        began = time.perf_counter()
        answer = read(data)
        latencies.append(time.perf_counter() - began)
        lines.append(lines_read(answer))
    return {"latencies": latencies, "wall": time.perf_counter() - start, "lines": lines}


def main(argv: list[str]) -> int:
    row, pack, repository, floor_threads, *paths = argv
    staged = row.endswith(STAGES_SUFFIX)
    row = row.removesuffix(STAGES_SUFFIX)
    if row not in ROWS or (staged and row not in STAGED_ROWS):
        raise SystemExit(f"row must be one of {ROWS} (or {STAGED_ROWS} + {STAGES_SUFFIX})")
    # the answers get their own copy of stdout; whatever an engine prints goes to stderr
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    started = time.perf_counter()
    watch = None
    if staged:
        from .stages import Stopwatch

        watch = Stopwatch()
    read = engine(row, pack, Path(repository), int(floor_threads), watch)
    images = [Path(p).read_bytes() for p in paths]
    for data in images:  # as workload.warm_up, which this lean process does not import
        read(data)
    if watch is not None:
        if row in REFERENCE_ENGINES:
            from .stages import time_rapidocr

            time_rapidocr(read.engine, watch)
        read = functools.partial(watch.read, read)
        watch.take()
    answers.write(json.dumps({"ready": time.perf_counter() - started}) + "\n")
    answers.flush()
    for line in sys.stdin:
        if line.strip() == "round":
            answer = timed_round(read, images)
            if watch is not None:
                answer["stages"] = watch.take()
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
    return 0


class FreshProcess:
    """The bench's side of a worker: a fresh interpreter for one row, one timed round per call.

    Use as a context manager; the images are handed over as files in a temporary folder.
    """

    def __init__(
        self, row: str, pack: str, repository: Path, floor_threads: int, images: Sequence[bytes]
    ) -> None:
        self.row = row
        self.stages: dict[str, float] = {}  # seconds per stage over the rounds (+stages rows)
        self.lines: list[int] = []  # the last round's lines read, per image
        self._folder = tempfile.TemporaryDirectory(prefix="triton-ocr-bench-")
        paths = []
        for index, data in enumerate(images):
            path = Path(self._folder.name) / f"{index:04d}"
            path.write_bytes(data)
            paths.append(str(path))
        command = [sys.executable, "-m", __name__, row, pack, str(repository), str(floor_threads)]
        self.process = subprocess.Popen(
            [*command, *paths], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            self.load_s: float = self._answer()["ready"]
        except BaseException:
            self.process.kill()
            self.process.wait()
            self._folder.cleanup()
            raise

    def _answer(self) -> dict:
        assert self.process.stdout is not None  # PIPE
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            raise RuntimeError(f"row {self.row}'s process ended (exit code {code})")
        return json.loads(line)

    def round(self, row: Row) -> list[float]:
        """Every image once, in the worker; the times are added to `row` and returned (one per
        image, in order)."""
        assert self.process.stdin is not None  # PIPE
        self.process.stdin.write("round\n")
        self.process.stdin.flush()
        result = self._answer()
        row.latencies.extend(result["latencies"])
        row.wall += result["wall"]
        row.images += len(result["latencies"])
        self.lines = result["lines"]
        for stage, seconds in result.get("stages", {}).items():
            self.stages[stage] = self.stages.get(stage, 0.0) + seconds
        return result["latencies"]

    def __enter__(self) -> FreshProcess:
        return self

    def __exit__(self, *exc) -> None:
        assert self.process.stdin is not None  # PIPE
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._folder.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
