"""What the measuring tools send (bench, tune, soak, faults): one image set, and one way to send
it at a given concurrency and time it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from triton_ocr.tools.evaluation.labels import load_manifest
from triton_ocr.tools.samples import DEMO_LINES, Placed, render

ReadOne = Callable[[bytes], object]


@dataclass
class Row:
    name: str
    concurrency: int
    latencies: list[float] = field(default_factory=list)  # seconds per request
    wall: float = 0.0  # seconds spent, summed over rounds
    images: int = 0

    @property
    def throughput(self) -> float:
        return self.images / self.wall if self.wall else 0.0

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.latencies, q)) if self.latencies else float("nan")

    def add(self, other: Row) -> None:
        """Another run of the same row: its requests and time added to these."""
        self.latencies += other.latencies
        self.wall += other.wall
        self.images += other.images


def bench_images(shared_eval: Path | None) -> list[tuple[str, bytes]]:
    """The project's rendered images, plus ../shared/eval's real ones when present."""
    page = tuple(
        Placed(f"line {i}: serving OCR models with Triton, row {i * 7}", (40, 40 + 44 * i), 28)
        for i in range(12)
    )
    images = [
        ("rendered/demo.png", render().png),
        ("rendered/page.png", render(page, (1000, 600)).png),
    ]
    images.append(("rendered/small.png", render(DEMO_LINES[:2], (720, 240)).png))
    if shared_eval and (shared_eval / "manifest.json").is_file():
        for sample in load_manifest(shared_eval):
            images.append((str(sample.path.relative_to(shared_eval)), sample.path.read_bytes()))
    return images


def real_images(folders: Sequence[Path]) -> list[tuple[str, bytes]]:
    """Every labelled image of each folder that has a manifest (the dev and the report split:
    the bench's images), as a reader gets it (a labelled turn applied)."""
    return [
        (f"{folder.name}/{sample.path.relative_to(folder)}", sample.read())
        for folder in folders
        if (folder / "manifest.json").is_file()
        for sample in load_manifest(folder)
    ]


def warm_up(read: ReadOne, images: Sequence[bytes]) -> None:
    """Every image once, untimed. OpenVINO compiles kernels for each input shape it has not
    seen (RapidOCR keeps them; the served recognizer keeps its widths'), so a reader's first
    pass over the images is slower than the next ones: every row is timed after one, A' and
    the served rows alike (docs/benchmarks.md, "Warm rows")."""
    for data in images:
        read(data)


def run_row(
    row: Row, read: Callable[[], ReadOne], images: Sequence, count: int | None = None
) -> None:
    """Send every image once, `row.concurrency` at a time (one reader per worker thread).

    An item of `images` may be a list of images for one request; `count` is then the number
    of images they hold.
    """
    queue = list(reversed(images))  # popped from the end: images[0] goes first
    readers = [read() for _ in range(row.concurrency)]

    def worker(reader: ReadOne) -> list[float]:
        times: list[float] = []
        while True:
            try:
                data = queue.pop()
            except IndexError:
                return times
            start = time.perf_counter()
            reader(data)
            times.append(time.perf_counter() - start)

    start = time.perf_counter()
    with ThreadPoolExecutor(row.concurrency) as pool:
        for times in pool.map(worker, readers):
            row.latencies.extend(times)
    row.wall += time.perf_counter() - start
    row.images += len(images) if count is None else count


def paired_seconds(readers: dict[str, ReadOne], images: Sequence[bytes], rounds: int) -> dict:
    """Each reader's total seconds over `rounds` passes of the images, sent one at a time and
    image by image in turn (the order rotating every image), so that the machine's drift
    during the run falls on every reader alike."""
    names = list(readers)
    total = dict.fromkeys(names, 0.0)
    for round_index in range(rounds):
        for index, data in enumerate(images):
            shift = (round_index + index) % len(names)
            for name in names[shift:] + names[:shift]:
                start = time.perf_counter()
                readers[name](data)
                total[name] += time.perf_counter() - start
    return total
