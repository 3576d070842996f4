"""`bench --only packs`: each pack's `ocr` over gRPC, served side by side in one run.

One server per pack, all started before the first round and each idle while another is
measured, so their ratio comes from the same minutes of the same machine (rounds interleaved,
pack after pack at each concurrency), like the bench's other rows.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Sequence
from pathlib import Path

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.tools.workload import Row, run_row, warm_up

from .readers import served_reader


def measure_packs(
    repository: Path,
    packs: Sequence[str],
    images: Sequence[bytes],
    rounds: int,
    concurrencies: Sequence[int],
    out_dir: Path,
) -> list[Row]:
    """Rows `<pack> c=<n>`: every image once per round through each pack's `ocr` (gRPC)."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    for pack in packs:
        missing = Repository(repository, pack).missing_files()
        if missing:
            raise ValueError(f"{pack} is not exported in {repository} (run `triton-ocr export`)")
    rows = [Row(pack, c) for c in concurrencies for pack in packs]
    with contextlib.ExitStack() as stack:
        urls = {}
        for pack in packs:
            http, grpc, metrics = free_ports(3)
            opts = ServerOptions(repository, "127.0.0.1", http, grpc, metrics, pack=pack)
            stack.enter_context(running_server(opts, log_file=out_dir / f"{pack}.log"))
            urls[pack] = f"127.0.0.1:{grpc}"
            warm_up(served_reader(urls[pack], "grpc", contract.OCR_MODEL), images)

        def reader(pack: str):
            return lambda: served_reader(urls[pack], "grpc", contract.OCR_MODEL)

        for round_index in range(rounds):
            for row in rows:
                run_row(row, reader(row.name), images)
                print(
                    f"round {round_index + 1}/{rounds} {row.name} c={row.concurrency}: "
                    f"{row.throughput:.2f} img/s"
                )
    return rows


def packs_summary(rows: Sequence[Row], baseline: str, cpu: str) -> dict:
    """Each row's images/s and p50, and its ratio to `baseline` at the same concurrency."""
    base = {r.concurrency: r.throughput for r in rows if r.name == baseline}
    best = {
        name: max(r.throughput for r in rows if r.name == name) for name in {r.name for r in rows}
    }
    return {
        "cpu": cpu,
        "baseline": baseline,
        "rows": [
            {
                "pack": r.name,
                "concurrency": r.concurrency,
                "images_per_s": r.throughput,
                "p50_ms": statistics.median(r.latencies) * 1000,
                "over_baseline": r.throughput / base[r.concurrency],
            }
            for r in rows
        ],
        "best_over_baseline": {name: best[name] / best[baseline] for name in best},
    }


def packs_lines(summary: dict) -> list[str]:
    lines = [f"\n`ocr` over gRPC, pack by pack, on {summary['cpu']}"]
    lines.append(
        f"{'pack':16} {'c':>3} {'img/s':>7} {'p50 ms':>8} {'x ' + summary['baseline']:>12}"
    )
    for r in summary["rows"]:
        lines.append(
            f"{r['pack']:16} {r['concurrency']:>3} {r['images_per_s']:7.2f} {r['p50_ms']:8.0f} "
            f"{r['over_baseline']:12.2f}"
        )
    for name, ratio in sorted(summary["best_over_baseline"].items()):
        lines.append(f"best of {name}: {ratio:.2f}x the best of {summary['baseline']}")
    return lines
