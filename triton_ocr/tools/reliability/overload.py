"""`triton-ocr overload`: a busy client fleet against each entry point, and what it gets back.

N clients each send a real image over HTTP and send again as soon as they are answered (a
refused one waits and tries again, backing off as the project's clients do), for T seconds, at
each entry point in turn (a fresh server per entry point, so one run's queue and memory do not
leak into the next). Each answer is counted as done, shed (the server's overload refusal:
UNAVAILABLE over gRPC, 503 over HTTP, its queue full or the request's deadline gone) or another
error; the accepted requests' latency percentiles, the throughput and the peak growth of the
server's and its stubs' resident memory over the idle server are reported.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tritonclient.utils import InferenceServerException

from triton_ocr.client.ocr_client import backoff_delay
from triton_ocr.config.repository import Repository
from triton_ocr.runtime.processes import sample
from triton_ocr.tools.workload import bench_images

from .payloads import connect, infer_raw

OVERLOADED = {"503", "StatusCode.UNAVAILABLE"}  # Triton's status of a refusal under load
BACKOFF_S = 0.5  # the clients' default first wait (ClientOptions.backoff)


def outcome_of(error: Exception | None) -> str:
    """ "done", "shed" (an overload refusal) or "error" for one request's end."""
    if error is None:
        return "done"
    if isinstance(error, InferenceServerException) and str(error.status()) in OVERLOADED:
        return "shed"
    return "error"


@dataclass
class Tally:
    """What the clients of one run got, shared by their threads."""

    counts: dict[str, int] = field(default_factory=lambda: {"done": 0, "shed": 0, "error": 0})
    latencies: list[float] = field(default_factory=list)  # accepted requests, seconds
    problems: list[str] = field(default_factory=list)  # the first few other errors
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, outcome: str, seconds: float, error: Exception | None) -> None:
        with self.lock:
            self.counts[outcome] += 1
            if outcome == "done":
                self.latencies.append(seconds)
            elif outcome == "error" and len(self.problems) < 10:
                self.problems.append(f"{type(error).__name__}: {error}")


def summary(tally: Tally, seconds: float, rss_idle: int, rss_peak: int) -> dict:
    """One run's row: counts, accepted throughput, p50/p99 of accepted requests, memory."""
    latencies = np.array(tally.latencies) * 1000
    return {
        **tally.counts,
        "accepted_per_s": round(tally.counts["done"] / seconds, 2) if seconds > 0 else None,
        "p50_ms": round(float(np.percentile(latencies, 50)), 1) if latencies.size else None,
        "p99_ms": round(float(np.percentile(latencies, 99)), 1) if latencies.size else None,
        "rss_idle_mib": round(rss_idle / 2**20, 1),
        "rss_peak_growth_mib": round((rss_peak - rss_idle) / 2**20, 1),
        "problems": tally.problems,
    }


def client_loop(
    url: str, model: str, images: Sequence[bytes], seed: int, until: float, tally: Tally
):
    """One client, as the project's clients behave: send, and once answered send the next image
    at once; once refused, wait (the clients' backoff_delay: doubling, capped, jittered) and
    try it again."""
    module, client = connect("http", url)
    k, refusals = seed, 0
    try:
        while time.monotonic() < until:
            data = images[k % len(images)]
            start = time.monotonic()
            error = None
            try:
                infer_raw(client, module, model, data)
            except Exception as exc:  # refusals, timeouts, dropped connections: all counted
                error = exc
            outcome = outcome_of(error)
            tally.add(outcome, time.monotonic() - start, error)
            if outcome == "shed":
                delay = backoff_delay(refusals, BACKOFF_S)
                refusals += 1
                time.sleep(max(0.0, min(delay, until - time.monotonic())))
            else:
                k, refusals = k + 1, 0
    finally:
        client.close()


@dataclass(frozen=True)
class OverloadOptions:
    repository: Repository  # the pack served (its models exported)
    clients: tuple[int, ...]  # fleet sizes, one run each
    seconds: float  # how long each run sends
    entry_points: tuple[str, ...]
    shared_eval: Path | None  # real images to send (rendered ones when absent)
    out_dir: Path  # overload.json
    sample_every_s: float = 1.0  # memory sampling period


def run_fleet(server_pid: int, url: str, model: str, images: list[bytes], n: int, s: float):
    """N clients for `s` seconds against a running server: the run's summary row."""
    tally = Tally()
    idle = sample(server_pid, 0).total_rss
    peak = idle
    start = time.monotonic()
    until = start + s
    threads = [
        threading.Thread(target=client_loop, args=(url, model, images, k, until, tally))
        for k in range(n)
    ]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, sample(server_pid, time.monotonic() - start).total_rss)
        time.sleep(1.0)
    return summary(tally, time.monotonic() - start, idle, peak)


def run_overload(options: OverloadOptions) -> dict:
    """Every entry point at every fleet size; write overload.json and print the table."""
    from triton_ocr.runtime.flags import ServerOptions, free_ports
    from triton_ocr.runtime.server import running_server

    images = [data for _, data in bench_images(options.shared_eval)]
    rows = []
    for model in options.entry_points:
        http, grpc, metrics = free_ports(3)
        repository = options.repository
        opts = ServerOptions(
            repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack
        )
        with (
            tempfile.TemporaryDirectory(prefix="triton-ocr-overload-") as tmp,
            running_server(opts, log_file=Path(tmp) / "tritonserver.log") as server,
        ):
            url = f"127.0.0.1:{http}"
            module, client = connect("http", url)
            for data in images:  # warm every shape once: the first calls compile
                infer_raw(client, module, model, data)
            client.close()
            for n in options.clients:
                row = {"entry_point": model, "clients": n, "seconds": options.seconds}
                row |= run_fleet(server.pid, url, model, images, n, options.seconds)
                row["server_alive"] = server.poll() is None
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    report = {"command": " ".join(sys.argv), "images": len(images), "runs": rows}
    options.out_dir.mkdir(parents=True, exist_ok=True)
    (options.out_dir / "overload.json").write_text(json.dumps(report, indent=2))
    print_table(rows)
    return report


def print_table(rows: list[dict]) -> None:
    print(
        "| entry point | clients | done | shed | other errors | accepted/s | p50 s | p99 s | "
        "RSS peak growth MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        p50 = "-" if r["p50_ms"] is None else f"{r['p50_ms'] / 1000:.1f}"
        p99 = "-" if r["p99_ms"] is None else f"{r['p99_ms'] / 1000:.1f}"
        print(
            f"| {r['entry_point']} | {r['clients']} | {r['done']} | {r['shed']} | {r['error']} "
            f"| {r['accepted_per_s']} | {p50} | {p99} | {r['rss_peak_growth_mib']} |"
        )
