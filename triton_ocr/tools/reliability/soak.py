"""`triton-ocr soak`: hours of traffic in minutes, checked answer by answer (a bounded script,
not a test).

Many clients at once send a mix of real images and bad ones over HTTP and gRPC to the entry
points served (both unless `--entry-points` says otherwise), each client backing off after an
overload refusal as the project's clients do (else a refused client sends again at once and
the run measures refusals, not reading). Every good answer must equal the
answer the same image got alone before the run (no cross-request mix-ups), every bad one must be
refused with its own INVALID_ARG, nothing else may happen; meanwhile the server's and its stubs'
resident memory and the /dev/shm regions they use are sampled, to see whether they keep growing
after warm-up.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tritonclient.utils import InferenceServerException

from triton_ocr.client.ocr_client import TextLine
from triton_ocr.config.repository import Repository
from triton_ocr.contract import ENTRY_POINTS
from triton_ocr.serving.processes import MemorySample, sample
from triton_ocr.tools.workload import bench_images

from .overload import outcome_of, wait_after_refusal
from .payloads import connect, image_cases, infer_raw

PROTOCOLS = ("http", "grpc")
INVALID = {"400", "StatusCode.INVALID_ARGUMENT"}
BAD_SHARE = 0.3  # of the requests
MAX_BAD_BYTES = (
    1 << 20
)  # the 32 MiB file is left to the bad-input tests: it would only time the copy


@dataclass(frozen=True)
class Job:
    name: str
    data: bytes
    error: str | None  # None: a good image


@dataclass
class Tally:
    outcomes: Counter = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)  # good requests, seconds
    problems: list[str] = field(default_factory=list)  # the first few, for the report
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, outcome: str, latency: float | None = None, problem: str | None = None):
        with self.lock:
            self.outcomes[outcome] += 1
            if latency is not None:
                self.latencies.append(latency)
            if problem and len(self.problems) < 20:
                self.problems.append(problem)


def same_answer(a: list[TextLine], b: list[TextLine]) -> bool:
    """Identical texts in the same order, polygons and scores equal up to float noise."""
    if [x.text for x in a] != [x.text for x in b]:
        return False
    if not a:
        return True
    return np.allclose([x.polygon for x in a], [x.polygon for x in b], atol=0.5) and np.allclose(
        [x.score for x in a], [x.score for x in b], atol=1e-3
    )


def jobs_for(shared_eval: Path | None) -> tuple[list[Job], list[Job]]:
    good = [Job(name, data, None) for name, data in bench_images(shared_eval)]
    bad = [
        Job(c.name, c.data, c.error)
        for c in image_cases()
        if c.error is not None and c.ensemble_error is None and len(c.data) <= MAX_BAD_BYTES
    ]
    return good, bad


def references(
    urls: dict[str, str], good: list[Job], models: tuple[str, ...]
) -> dict[tuple[str, str], list[TextLine]]:
    """Each good image's answer from each entry point, alone, before the load starts."""
    module, client = connect("grpc", urls["grpc"])
    answers = {
        (job.name, model): infer_raw(client, module, model, job.data)
        for job in good
        for model in models
    }
    client.close()
    return answers


def worker(
    urls: dict[str, str],
    good: list[Job],
    bad: list[Job],
    expected: dict[tuple[str, str], list[TextLine]],
    deadline: float,
    tally: Tally,
    seed: int,
    models: tuple[str, ...],
) -> None:
    rng = random.Random(seed)
    clients = {p: connect(p, urls[p]) for p in PROTOCOLS}
    refusals = 0  # overload refusals in a row: each client backs off as the project's do
    while time.monotonic() < deadline:
        protocol, model = rng.choice(PROTOCOLS), rng.choice(models)
        job = rng.choice(bad) if rng.random() < BAD_SHARE else rng.choice(good)
        module, client = clients[protocol]
        where = f"{job.name} via {model} over {protocol}"
        start = time.monotonic()
        try:
            lines = infer_raw(client, module, model, job.data)
        except InferenceServerException as exc:
            refused = str(exc.status()) in INVALID
            if job.error is not None and refused and re.search(job.error, str(exc)):
                tally.add("bad refused as expected")
            elif outcome_of(exc) == "shed":  # the bounded queue's refusal: fast, retryable
                tally.add("shed (overloaded)")
                wait = wait_after_refusal("project", exc, refusals)
                time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
                refusals += 1
            else:
                tally.add("unexpected error", problem=f"{where}: {exc.status()} {exc}")
            continue
        except Exception as exc:  # a dropped connection, a timeout: all unexpected
            tally.add("unexpected error", problem=f"{where}: {type(exc).__name__}: {exc}")
            continue
        elapsed = time.monotonic() - start
        refusals = 0
        if job.error is not None:
            tally.add("bad image answered", problem=f"{where}: answered, not refused")
        elif same_answer(lines, expected[job.name, model]):
            tally.add("good, same as alone", latency=elapsed)
        else:
            tally.add("good, DIFFERENT from alone", latency=elapsed, problem=f"{where}: differs")
    for _, client in clients.values():
        client.close()


def growth(samples: list[MemorySample], warmup_s: float, attribute: str) -> dict:
    """Mean of the first and of the last tenth of the samples after warm-up, and the change."""
    after = [s for s in samples if s.seconds >= warmup_s]
    if len(after) < 4:
        return {}
    tenth = max(1, len(after) // 10)
    first = statistics.mean(getattr(s, attribute) for s in after[:tenth])
    last = statistics.mean(getattr(s, attribute) for s in after[-tenth:])
    peak = max(getattr(s, attribute) for s in after)
    return {
        "after_warmup_mib": round(first / 2**20, 1),
        "end_mib": round(last / 2**20, 1),
        "peak_mib": round(peak / 2**20, 1),
        "growth_pct": round((last / first - 1) * 100, 2) if first else None,
    }


@dataclass(frozen=True)
class SoakOptions:
    repository: Repository  # the pack served (its models exported)
    minutes: float  # how long the load runs
    concurrency: int  # clients sending at once
    shared_eval: Path | None  # labelled real images added to the rendered ones, if present
    out_dir: Path  # soak.json
    # excluded from the growth figures (None: 20% of the run, at most 60 s); the shared-memory
    # regions grow to a high-water mark while the largest requests first meet, so a run should
    # set it past that (docs/reliability.md)
    warmup_s: float | None = None
    sample_every_s: float = 5.0  # memory sampling period
    entry_points: tuple[str, ...] = ENTRY_POINTS  # those served and sent to (`--entry-points`)


def healthy(report: dict) -> bool:
    """The soak's verdict: no unexpected outcome, no answer unlike the image's answer alone,
    and the server still up at the end."""
    return not (report["unexpected"] or report["mismatches"]) and report["server_alive_at_end"]


def run_soak(options: SoakOptions) -> dict:
    """Run the mixed load, sample memory, write soak.json and print the report."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    minutes, concurrency, warmup_s = options.minutes, options.concurrency, options.warmup_s
    good, bad = jobs_for(options.shared_eval)
    http, grpc, metrics = free_ports(3)
    urls = {"http": f"127.0.0.1:{http}", "grpc": f"127.0.0.1:{grpc}"}
    repository = options.repository
    models = options.entry_points
    opts = ServerOptions(
        repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack, entry_points=models
    )
    tally, samples = Tally(), []
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-soak-") as tmp,
        running_server(opts, log_file=Path(tmp) / "tritonserver.log") as server,
    ):
        expected = references(urls, good, models)
        start = time.monotonic()
        deadline = start + minutes * 60
        threads = [
            threading.Thread(
                target=worker, args=(urls, good, bad, expected, deadline, tally, seed, models)
            )
            for seed in range(concurrency)
        ]
        for thread in threads:
            thread.start()
        while any(t.is_alive() for t in threads):
            samples.append(sample(server.pid, time.monotonic() - start))
            print(
                f"{samples[-1].seconds:6.0f} s  {sum(tally.outcomes.values())} requests  "
                f"rss {samples[-1].total_rss / 2**20:.0f} MiB  "
                f"pss {samples[-1].total_pss / 2**20:.0f} MiB  "
                f"shm {samples[-1].shm_used / 2**20:.0f} MiB",
                file=sys.stderr,
            )
            time.sleep(options.sample_every_s)
        elapsed = time.monotonic() - start
        alive = server.poll() is None
    if warmup_s is None:
        warmup_s = min(60.0, minutes * 60 * 0.2)
    good_count = sum(n for k, n in tally.outcomes.items() if k.startswith("good"))
    report = {
        "command": " ".join(sys.argv),
        "minutes": minutes,
        "concurrency": concurrency,
        "entry_points": list(models),
        "images": {"good": len(good), "bad kinds": len(bad), "bad share": BAD_SHARE},
        "requests": sum(tally.outcomes.values()),
        "outcomes": dict(tally.outcomes),
        "unexpected": sum(
            n for k, n in tally.outcomes.items() if k in ("unexpected error", "bad image answered")
        ),
        "mismatches": tally.outcomes.get("good, DIFFERENT from alone", 0),
        "good_images_per_s": round(good_count / elapsed, 2),
        "good_latency_ms": {
            "p50": round(float(np.percentile(tally.latencies, 50)) * 1000, 1),
            "p99": round(float(np.percentile(tally.latencies, 99)) * 1000, 1),
        }
        if tally.latencies
        else {},
        "server_alive_at_end": alive,
        "warmup_s": warmup_s,
        "memory": {
            "rss_server_and_stubs": growth(samples, warmup_s, "total_rss"),
            # what server and stubs take together (shared pages counted once)
            "pss_server_and_stubs": growth(samples, warmup_s, "total_pss"),
            "rss_server": growth(samples, warmup_s, "server_rss"),
            "shm_used": growth(samples, warmup_s, "shm_used"),
            "shm_regions_size": growth(samples, warmup_s, "shm_size"),
        },
        "problems": tally.problems,
        "samples": [s.__dict__ for s in samples],
    }
    options.out_dir.mkdir(parents=True, exist_ok=True)
    (options.out_dir / "soak.json").write_text(json.dumps(report, indent=2))
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=2))
    return report
