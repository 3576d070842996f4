"""The REST gateway's cost: `ocr` over gRPC directly against the same requests through
`triton-ocr gateway` (POST /v1/ocr?format=json, raw body), side by side on one server.

Both sides do the caller's whole job: the direct side parses `ocr`'s outputs into the
`read --json` document (`Document.to_dict()`), the gateway's caller gets that document as JSON
and parses it. The gateway runs in a process of its own, as `triton-ocr gateway` (and `serve`)
run it; the two rows take turns round by round, the order swapped every round, so the machine's
drift falls on both alike. The issue's target: at concurrency 4, the gateway keeps at least 95%
of the direct throughput.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.serving.errors import ServerError
from triton_ocr.serving.server import wait_until_ready
from triton_ocr.tools.workload import ReadOne, Row, run_row

from .report import row_figures

CONCURRENCY = 4  # the issue's: the gateway's cost at concurrency 4
TARGET = 0.95  # gateway throughput / direct throughput, at least
# the image set sent this many times per row and round, so that the end of a pass (the last
# slow images running with a core idle; one pass of 22 images takes ~9 s) is a small part of it
PASSES = 3
DIRECT = "ocr grpc + document"
GATEWAY = "ocr REST gateway (json)"


def direct_reader(grpc_url: str) -> ReadOne:
    """`ocr` over gRPC, as the other served rows call it, answered as the `read --json`
    document (what the gateway returns), so both sides build the same thing."""
    client = OcrClient(grpc_url, "grpc")
    return lambda data: [document.to_dict() for document in client.read_documents([data])]


def gateway_reader(base_url: str, timeout_s: float = contract.UPLOAD_TIMEOUT_S) -> ReadOne:
    """POST /v1/ocr?format=json with the raw image, on one kept-alive connection (a caller's
    HTTP client would keep one); the answer parsed from JSON."""
    address = base_url.removeprefix("http://")
    connection = http.client.HTTPConnection(address, timeout=timeout_s)
    headers = {"Content-Type": "application/octet-stream"}

    def read(data: bytes) -> object:
        for attempt in range(2):
            try:
                connection.request("POST", "/v1/ocr?format=json", body=data, headers=headers)
                response = connection.getresponse()
                body = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                connection.close()  # the server closed an idle kept-alive connection: reopen
                if attempt:
                    raise
        if response.status != 200:
            raise RuntimeError(f"the gateway answered {response.status}: {body[:200]!r}")
        return json.loads(body)

    return read


@dataclass(frozen=True)
class Gateway:
    url: str  # http://127.0.0.1:PORT
    pid: int  # its process, whose CPU time the section reports


@contextlib.contextmanager
def running_gateway(
    grpc_url: str, port: int, log_file: Path, ready_timeout_s: float = 60.0
) -> Iterator[Gateway]:
    """`triton-ocr gateway` of this environment (the bench's own interpreter, not whichever is
    first on PATH) in front of `grpc_url`, until ready (/readyz); its output goes to `log_file`."""
    command = [str(Path(sys.executable).parent / "triton-ocr"), "gateway"]
    arguments = ["--triton-url", grpc_url, "--host", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with open(log_file, "wb") as log:
        process = subprocess.Popen([*command, *arguments], stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_until_ready(process, base, ready_timeout_s)
        except ServerError as exc:
            tail = log_file.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{exc}:\n{tail}") from None
        yield Gateway(base, process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (/proc/PID/stat, Linux); 0 once it
    is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine has been busy so far (/proc/stat, Linux): what
    the section measured, less its own processes, is what others took meanwhile."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(server_pid: int) -> float:
    """The server's CPU seconds so far: tritonserver and its Python backend stubs."""
    from triton_ocr.serving.processes import stubs

    return cpu_seconds(server_pid) + sum(cpu_seconds(s.pid) for s in stubs(server_pid))


@dataclass
class GatewayRun:
    direct: Row
    gateway: Row
    # each round's direct and gateway img/s, and the share of the machine's busy CPU other
    # processes took meanwhile
    rounds: list[tuple[float, float, float]] = field(default_factory=list)
    client_cpu_s: dict[str, float] = field(default_factory=dict)  # the bench's, per row
    server_cpu_s: dict[str, float] = field(default_factory=dict)  # Triton's, per row
    gateway_cpu_s: float = 0.0  # the gateway process's, over its rows
    busy_s: float = 0.0  # the whole machine's CPU seconds over both rows, anyone's


def measure_gateway(
    grpc_url: str, server_pid: int, gateway: Gateway, images: Sequence[bytes], rounds: int
) -> GatewayRun:
    """Both rows at CONCURRENCY, `rounds` rounds of PASSES over the images each, taking turns;
    with the CPU time the caller's side, Triton and the gateway spent on each."""
    readers = {
        DIRECT: lambda: direct_reader(grpc_url),
        GATEWAY: lambda: gateway_reader(gateway.url),
    }
    run = GatewayRun(Row(DIRECT, CONCURRENCY), Row(GATEWAY, CONCURRENCY))
    rows = {DIRECT: run.direct, GATEWAY: run.gateway}
    run.client_cpu_s, run.server_cpu_s = dict.fromkeys(rows, 0.0), dict.fromkeys(rows, 0.0)
    for read in readers.values():  # warm up: connections, the gateway's limits, server caches
        read()(images[0])
    sent = list(images) * PASSES
    for round_index in range(rounds):
        order = list(rows) if round_index % 2 == 0 else list(reversed(rows))
        speeds, busy, ours = {}, 0.0, 0.0
        for name in order:
            row, wall, cpu = rows[name], rows[name].wall, time.process_time()
            served, relayed = server_cpu_seconds(server_pid), cpu_seconds(gateway.pid)
            machine = machine_busy_seconds()
            run_row(row, readers[name], sent)
            busy += machine_busy_seconds() - machine
            spent = {
                "client": time.process_time() - cpu,
                "server": server_cpu_seconds(server_pid) - served,
                "gateway": cpu_seconds(gateway.pid) - relayed if name == GATEWAY else 0.0,
            }
            run.client_cpu_s[name] += spent["client"]
            run.server_cpu_s[name] += spent["server"]
            run.gateway_cpu_s += spent["gateway"]
            ours += sum(spent.values())
            speeds[name] = len(sent) / (row.wall - wall)
            print(
                f"round {round_index + 1}/{rounds} {name} c={CONCURRENCY}: "
                f"{speeds[name]:.2f} img/s",
                file=sys.stderr,
            )
        run.busy_s += busy
        run.rounds.append((speeds[DIRECT], speeds[GATEWAY], others_share(ours, busy)))
    return run


def others_share(ours: float, busy: float) -> float:
    """The share of the machine's busy CPU seconds that were not the section's own."""
    return max(0.0, 1 - ours / busy) if busy else float("nan")


def per_request_ms(seconds: float, requests: int) -> float:
    return seconds / requests * 1000 if requests else float("nan")


def gateway_summary(run: GatewayRun, cpu: str) -> dict:
    """The section of benchmark.json: both rows, the ratio and whether it meets the target,
    each round's ratio (the noise), and CPU milliseconds per request of the caller's side,
    Triton and the gateway. On a machine Triton keeps busy, the CPU all of them spend per
    request bounds the throughput: its ratio predicts the gateway's cost without the noise of
    the wall clock."""
    direct, gateway = run.direct, run.gateway

    def row(r: Row) -> dict:
        client = per_request_ms(run.client_cpu_s.get(r.name, 0.0), r.images)
        server = per_request_ms(run.server_cpu_s.get(r.name, 0.0), r.images)
        relay = per_request_ms(run.gateway_cpu_s, r.images) if r is gateway else 0.0
        return {
            **row_figures(r),
            "client_cpu_ms_per_request": client,
            "server_cpu_ms_per_request": server,
            "gateway_cpu_ms_per_request": relay,
            "total_cpu_ms_per_request": client + server + relay,
        }

    rows = [row(direct), row(gateway)]
    round_ratios = [g / d if d else float("nan") for d, g, _ in run.rounds]
    ours = sum(run.client_cpu_s.values()) + sum(run.server_cpu_s.values()) + run.gateway_cpu_s
    ratio = gateway.throughput / direct.throughput if direct.throughput else float("nan")
    return {
        "cpu": cpu,
        "concurrency": CONCURRENCY,
        "rows": rows,
        "gateway_over_direct": ratio,
        "round_ratios": round_ratios,
        # each round's two rows ran back to back: the median ignores a round others disturbed
        "median_round_ratio": statistics.median(round_ratios) if round_ratios else float("nan"),
        "round_others_cpu_share": [share for _, _, share in run.rounds],
        "cpu_predicted_ratio": rows[0]["total_cpu_ms_per_request"]
        / rows[1]["total_cpu_ms_per_request"],
        # the machine's CPU others took during the section: above a few percent, rerun
        "others_cpu_share": others_share(ours, run.busy_s),
        "target": TARGET,
        "met": ratio >= TARGET,
    }


def gateway_lines(summary: dict) -> list[str]:
    """The section as printed: one line per row, then the ratios against the target."""
    lines = [f"\nREST gateway's cost, concurrency {summary['concurrency']} ({summary['cpu']})"]
    lines.append(
        f"{'row':26} {'conc':>4} {'img/s':>6} {'p50 ms':>7} {'p95 ms':>7}"
        "   CPU ms/request: caller  Triton gateway  total"
    )
    for r in summary["rows"]:
        lines.append(
            f"{r['row']:26} {r['concurrency']:>4} {r['images_per_s']:6.2f} "
            f"{r['p50_ms']:7.0f} {r['p95_ms']:7.0f} {r['client_cpu_ms_per_request']:24.1f} "
            f"{r['server_cpu_ms_per_request']:7.1f} {r['gateway_cpu_ms_per_request']:7.1f} "
            f"{r['total_cpu_ms_per_request']:6.1f}"
        )
    verdict = "met" if summary["met"] else "NOT met"
    shares = summary["round_others_cpu_share"]
    rounds = ", ".join(
        f"{ratio:.3f} ({share:.0%})"
        for ratio, share in zip(summary["round_ratios"], shares, strict=True)
    )
    lines.append(
        f"gateway / direct throughput: {summary['gateway_over_direct']:.3f} "
        f"(target >= {summary['target']:.2f}: {verdict}); median of the rounds "
        f"{summary['median_round_ratio']:.3f}; predicted from CPU per request "
        f"{summary['cpu_predicted_ratio']:.3f}"
    )
    lines.append(
        f"each round (other processes' share of the busy CPU): {rounds}; all rounds: "
        f"{summary['others_cpu_share']:.1%} (above a few percent: a noisy round)"
    )
    return lines
