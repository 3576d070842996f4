"""`triton-ocr overload`: a busy client fleet against each entry point, and what it gets back.

Fleets of N clients each send a real image and send the next as soon as they are answered (the
images in one order the fleet shares, so every fleet reads about the same mix), for T seconds,
at each entry point in turn: `ensemble_model` and `ocr` on Triton's HTTP or gRPC port, `rest`
the REST gateway in front of `ocr` (a fresh server per entry point and protocol, so one run's
queue and memory do not leak into the next). A refused client waits as its kind does
(BEHAVIOURS): as the project's clients (`project`), not at all (`impatient`, as many scripts do),
or 0.25 s doubling to 4 s whatever the server asked (`polite`). Each answer is counted as done,
shed (an overload refusal: UNAVAILABLE, 503 or 429, a queue full, a request's deadline gone, the
ensemble's or the gateway's bound) or another error; the accepted requests' throughput (also as
a share of the first fleet's, run unloaded), latency percentiles and the peak growth of the
resident memory of the server, its stubs and the gateway are reported.
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from triton_ocr.client.ocr_client import BACKOFF_S, is_overload, retry_wait
from triton_ocr.client.retry_after import hinted_refusal, retry_after_seconds
from triton_ocr.config.repository import Repository
from triton_ocr.serving.processes import rss_bytes, sample
from triton_ocr.tools.workload import bench_images

from .payloads import connect, infer_raw

REST = "rest"  # the REST gateway in front of `ocr`, driven like the two Triton entry points
POLITE_FIRST_S, POLITE_MOST_S = 0.25, 4.0  # a generic script's backoff after a refusal
BEHAVIOURS = ("project", "impatient", "polite")


def wait_after_refusal(behaviour: str, error: Exception, refusals: int) -> float:
    """Seconds a client of kind `behaviour` waits after its `refusals`-th refusal in a row
    (0-based): the project's clients' retry_wait (doubling from 0.5 s, jittered, at least the
    Retry-After asked), nothing, or a generic script's 0.25 s doubling to 4 s."""
    if behaviour == "impatient":
        return 0.0
    if behaviour == "polite":
        return min(POLITE_MOST_S, POLITE_FIRST_S * 2.0 ** min(refusals, 32))
    return retry_wait(error, refusals, 0, BACKOFF_S, float("inf")) or 0.0


@dataclass(frozen=True)
class Fleet:
    clients: int
    behaviour: str = "project"  # one of BEHAVIOURS

    @classmethod
    def parse(cls, spec: str) -> Fleet:
        """`N` or `N/behaviour`: ValueError naming what is wrong."""
        count, _, behaviour = spec.strip().partition("/")
        behaviour = behaviour.strip() or "project"
        if not count.strip().isdigit() or int(count) < 1:
            raise ValueError(f"{spec!r}: the clients must be a count of at least 1")
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"{spec!r}: the behaviour must be one of {', '.join(BEHAVIOURS)}")
        return cls(int(count), behaviour)


def outcome_of(error: Exception | None) -> str:
    """ "done", "shed" (an overload refusal, as the clients tell it: is_overload) or "error"
    for one request's end."""
    if error is None:
        return "done"
    return "shed" if is_overload(error) else "error"


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
        "rss_peak_mib": round(rss_peak / 2**20, 1),
        "rss_peak_growth_mib": round((rss_peak - rss_idle) / 2**20, 1),
        "problems": tally.problems,
    }


class Sender:
    """One client's connection to an entry point: `send(data)` returns normally once answered,
    and raises what the entry point refused with (a refusal as an InferenceServerException,
    with the Retry-After it asked for, if any, as `retry_after`)."""

    module: ModuleType | None  # tritonclient.http or .grpc; None for the gateway's REST
    client: Any

    def __init__(self, url: str, entry_point: str, protocol: str = "http") -> None:
        self.url, self.entry_point = url, entry_point
        rest = entry_point == REST
        self.module, self.client = (None, None) if rest else connect(protocol, url)

    def send(self, data: bytes) -> None:
        if self.entry_point == REST:
            post_upload(self.url, data)
        else:
            infer_raw(self.client, self.module, self.entry_point, data)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def post_upload(base: str, data: bytes) -> None:
    """POST one file to the gateway's /v1/ocr as a raw body; a 4xx or 5xx answer is raised as
    the clients see a refusal."""
    request = urllib.request.Request(f"{base}/v1/ocr?format=json", data=data, method="POST")
    request.add_header("Content-Type", "application/octet-stream")
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            response.read()
    except urllib.error.HTTPError as answer:
        asked = retry_after_seconds(answer.headers.get("Retry-After"))
        raise hinted_refusal(answer.read(), answer.code, asked) from None


class Feed:
    """The images a fleet sends, one after the other in one order shared by all its clients,
    so that every fleet reads about the same mix of quick and slow images in its run."""

    def __init__(self, images: Sequence[bytes]) -> None:
        self.images, self.sent = images, itertools.count()

    def next(self) -> bytes:
        return self.images[next(self.sent) % len(self.images)]  # count(): atomic under the GIL


def client_loop(target: Target, fleet: Fleet, feed: Feed, until: float, tally: Tally) -> None:
    """One client: send, and once answered send the next image at once; once refused as
    overloaded, wait as its kind does (wait_after_refusal) and try the same image again."""
    sender = Sender(target.url, target.entry_point, target.protocol)
    data, refusals = feed.next(), 0
    try:
        while time.monotonic() < until:
            start = time.monotonic()
            error = None
            try:
                sender.send(data)
            except Exception as exc:  # refusals, timeouts, dropped connections: all counted
                error = exc
            outcome = outcome_of(error)
            tally.add(outcome, time.monotonic() - start, error)
            if outcome == "shed":
                assert error is not None  # "shed": a refusal
                delay = wait_after_refusal(fleet.behaviour, error, refusals)
                refusals += 1
                time.sleep(max(0.0, min(delay, until - time.monotonic())))
            else:
                data, refusals = feed.next(), 0
    finally:
        sender.close()


@dataclass(frozen=True)
class Target:
    """Where a fleet sends: an entry point over a protocol at `url`."""

    entry_point: str
    protocol: str  # "http" or "grpc"; the gateway's is http
    url: str

    @property
    def name(self) -> str:
        return REST if self.entry_point == REST else f"{self.entry_point} ({self.protocol})"


@dataclass(frozen=True)
class OverloadOptions:
    repository: Repository  # the pack served (its models exported)
    fleets: tuple[Fleet, ...]  # one run each, in turn; the first is the unloaded reference
    seconds: float  # how long each run sends
    entry_points: tuple[str, ...]
    protocols: tuple[str, ...]  # the Triton entry points' ("http", "grpc"); rest is HTTP
    shared_eval: Path | None  # real images to send (rendered ones when absent)
    out_dir: Path  # overload.json
    sample_every_s: float = 1.0  # memory sampling period


def resident(pids: Sequence[int]) -> int:
    """The resident memory of the server with its stubs (the first pid), and of the others."""
    server, *others = pids
    return sample(server, 0).total_rss + sum(rss_bytes(pid) for pid in others)


def run_fleet(pids: Sequence[int], target: Target, images: list[bytes], fleet: Fleet, s: float):
    """A fleet for `s` seconds against a running server (its pid first, then the gateway's, if
    any): the run's summary row."""
    tally, feed = Tally(), Feed(images)
    idle = peak = resident(pids)
    until = time.monotonic() + s
    threads = [
        threading.Thread(target=client_loop, args=(target, fleet, feed, until, tally))
        for _ in range(fleet.clients)
    ]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, resident(pids))
        time.sleep(1.0)
    return summary(tally, time.monotonic() - start, idle, peak)


def targets(entry_points: Sequence[str], protocols: Sequence[str]) -> list[tuple[str, str]]:
    """(entry point, protocol) pairs, in order: the gateway once, over HTTP."""
    return [
        (name, protocol)
        for name in entry_points
        for protocol in (("http",) if name == REST else protocols)
    ]


def run_overload(options: OverloadOptions) -> dict:
    """Every fleet at every entry point and protocol; write overload.json, print the table."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import gateway_process, running_server, wait_until_ready

    images = [data for _, data in bench_images(options.shared_eval)]
    rows = []
    for entry_point, protocol in targets(options.entry_points, options.protocols):
        http, grpc, metrics, rest = free_ports(4)
        repository = options.repository
        opts = ServerOptions(
            repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack
        )
        with (
            tempfile.TemporaryDirectory(prefix="triton-ocr-overload-") as tmp,
            running_server(opts, log_file=Path(tmp) / "tritonserver.log") as server,
        ):
            gateway = None
            if entry_point == REST:
                target = Target(REST, "http", f"http://127.0.0.1:{rest}")
                gateway = gateway_process("127.0.0.1", grpc, rest)
                wait_until_ready(gateway, target.url)
            else:
                port = grpc if protocol == "grpc" else http
                target = Target(entry_point, protocol, f"127.0.0.1:{port}")
            try:
                pids = [server.pid] + ([gateway.pid] if gateway else [])
                sender = Sender(target.url, target.entry_point, target.protocol)
                for data in images:  # warm every shape once: the first calls compile
                    sender.send(data)
                sender.close()
                start = resident(pids)
                unloaded = None
                for fleet in options.fleets:
                    row: dict[str, Any] = {
                        "entry_point": target.name,
                        "clients": fleet.clients,
                        "behaviour": fleet.behaviour,
                        "seconds": options.seconds,
                    }
                    row |= run_fleet(pids, target, images, fleet, options.seconds)
                    if unloaded is None:  # the first fleet's is the reference
                        unloaded = row["accepted_per_s"]
                    row["of_unloaded"] = (
                        round(row["accepted_per_s"] / unloaded, 2) if unloaded else None
                    )
                    row["rss_growth_from_start_mib"] = round(row["rss_peak_mib"] - start / 2**20, 1)
                    row["server_alive"] = server.poll() is None
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr)
            finally:
                if gateway is not None:
                    gateway.terminate()
                    gateway.wait(timeout=30)
    report = {"command": " ".join(sys.argv), "images": len(images), "runs": rows}
    options.out_dir.mkdir(parents=True, exist_ok=True)
    (options.out_dir / "overload.json").write_text(json.dumps(report, indent=2))
    print_table(rows)
    return report


def print_table(rows: list[dict]) -> None:
    print(
        "| entry point | clients | done | shed | other errors | accepted/s | of unloaded "
        "| p50 s | p99 s | RSS peak growth MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        p50 = "-" if r["p50_ms"] is None else f"{r['p50_ms'] / 1000:.1f}"
        p99 = "-" if r["p99_ms"] is None else f"{r['p99_ms'] / 1000:.1f}"
        print(
            f"| {r['entry_point']} | {r['clients']} {r['behaviour']} | {r['done']} | {r['shed']} "
            f"| {r['error']} | {r['accepted_per_s']} | {r['of_unloaded']} | {p50} | {p99} "
            f"| {r['rss_peak_growth_mib']} |"
        )
