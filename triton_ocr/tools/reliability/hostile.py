"""`triton-ocr hostile`: what hostile uploads cost a real server, measured (not a test).

Starts a server, then sends each case of bombs.py to `ocr` over HTTP, one at a time and then
four at once, sampling the resident memory of `tritonserver` and its stubs every 50 ms while the
case runs. For each case it prints the answer (refused with the expected message, or read), how
long it took, and the peak growth of the server's resident memory over what it held just before.
Beside the bombs: the largest images the limits accept, four at once, for what a legitimate
request at the limit costs. Targets (issue #23): no bomb grows the server by more than 1.5 GB
or takes more than 2 s to be refused.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.serving.processes import sample

from .bombs import Bomb, blank_image, document_bombs, image_bombs

TARGET_GROWTH_BYTES = 1_500_000_000
TARGET_REFUSAL_S = 2.0
SAMPLE_EVERY_S = 0.05


@dataclass(frozen=True)
class HostileOptions:
    repository: Repository  # the pack served (its models exported)
    out_dir: Path  # hostile.json and the server's log
    at_once: int = 4  # the concurrent round sends each case this many times together


class PeakMemory:
    """The highest resident memory (server + stubs) seen while a case runs, sampled in a
    thread of its own."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sample(self.server_pid, 0).total_rss)
            time.sleep(SAMPLE_EVERY_S)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, sample(self.server_pid, 0).total_rss)


def send(url: str, data: bytes) -> tuple[str, str]:
    """One item to `ocr`: ("refused", message), ("read", page summary) or ("error", ...)."""
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(url, network_timeout=300, connection_timeout=300)
    array = np.array([[data]], dtype=np.object_)  # a request of one item
    tensor = httpclient.InferInput(contract.OCR_INPUT_IMAGES, [1, 1], "BYTES")
    tensor.set_data_from_numpy(array)
    try:
        result = client.infer(contract.OCR_MODEL, [tensor])
    except InferenceServerException as exc:
        kind = "refused" if str(exc.status()) == "400" else "error"
        return kind, str(exc)
    finally:
        client.close()
    errors = [e.decode() for e in result.as_numpy(contract.OCR_OUTPUT_PAGE_ERROR)[0]]
    bad = [e for e in errors if e]
    return "read", f"{len(errors)} pages, {len(bad)} not read" + (f": {bad[0]}" if bad else "")


def run_case(url: str, server_pid: int, case: Bomb, copies: int) -> dict:
    before = sample(server_pid, 0).total_rss
    start = time.monotonic()
    with PeakMemory(server_pid) as memory, ThreadPoolExecutor(copies) as pool:
        answers = list(pool.map(lambda _: send(url, case.data), range(copies)))
    seconds = time.monotonic() - start
    kinds = {kind for kind, _ in answers}
    kind, message = answers[0]
    # a refusal's message, or a document's first page error, matches; no error: it is read
    expected = re.search(case.error, message) is not None if case.error else kind == "read"
    return {
        "case": case.name,
        "bytes": len(case.data),
        "at_once": copies,
        "answer": kind if len(kinds) == 1 else "mixed",
        "message": message[:200],
        "as_expected": expected and len(kinds) == 1,
        "seconds": round(seconds, 3),
        "peak_growth_bytes": max(0, memory.peak - before),
    }


def limit_cases(repository: Repository) -> list[Bomb]:
    """The largest plain images the pixel limit accepts: what a legitimate request can cost."""
    limits = repository.pipeline_settings(alphabet=["", "a"]).limits
    side = int(limits.max_image_pixels**0.5) - 8
    return [
        Bomb(f"accepted PNG {side}x{side} (at the pixel limit)", blank_image(side, side, "PNG"), "")
    ]


def within_targets(row: dict) -> bool:
    if row["case"].startswith("accepted"):
        return True  # read, not refused: its cost is the bound docs/running.md states
    refused_in_time = row["answer"] != "refused" or row["seconds"] <= TARGET_REFUSAL_S
    answered = row["answer"] in ("refused", "read")
    return answered and refused_in_time and row["peak_growth_bytes"] <= TARGET_GROWTH_BYTES


def run_hostile(options: HostileOptions) -> dict:
    """Every case alone, then `at_once` together; writes hostile.json and prints a table."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    repository = options.repository
    http, grpc, metrics = free_ports(3)
    url = f"127.0.0.1:{http}"
    opts = ServerOptions(repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack)
    cases = image_bombs() + document_bombs() + limit_cases(repository)
    rows = []
    options.out_dir.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-hostile-") as tmp,
        running_server(opts, log_file=Path(tmp) / "tritonserver.log") as server,
    ):
        for copies in (1, options.at_once):
            for case in cases:
                print(f"hostile: {case.name} x{copies}", file=sys.stderr, flush=True)
                rows.append(run_case(url, server.pid, case, copies))
        alive = server.poll() is None
    report = {
        "command": " ".join(sys.argv),
        "cpu": cpu_name(),
        "server_stayed_up": alive,
        "targets": {"growth_bytes": TARGET_GROWTH_BYTES, "refusal_s": TARGET_REFUSAL_S},
        "all_within_targets": alive and all(within_targets(r) for r in rows),
        "all_as_expected": all(r["as_expected"] for r in rows),
        "cases": rows,
    }
    (options.out_dir / "hostile.json").write_text(json.dumps(report, indent=2))
    print_table(report)
    return report


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def print_table(report: dict) -> None:
    print(f"{'case':48} {'x':>2} {'answer':8} {'s':>7} {'peak MB':>8}  ok")
    for row in report["cases"]:
        ok = "yes" if row["as_expected"] and within_targets(row) else "NO"
        print(
            f"{row['case'][:48]:48} {row['at_once']:>2} {row['answer']:8} {row['seconds']:7.2f} "
            f"{row['peak_growth_bytes'] / 1e6:8.0f}  {ok}"
        )
    print(
        f"server stayed up: {report['server_stayed_up']}; all within targets: "
        f"{report['all_within_targets']}; all answered as expected: {report['all_as_expected']}"
        f" ({report['cpu']})"
    )
