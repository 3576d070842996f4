"""What a benchmark run reports: Triton's per-model statistics, the environment, the table of
rows with their ratios to rows A and B, and the chart."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.tools.reference import reference_for
from triton_ocr.tools.workload import Row


def model_statistics(url: str) -> dict[str, dict[str, float]]:
    """Per model: executions and mean milliseconds queued / computing (Triton statistics API)."""
    import tritonclient.http as httpclient

    stats = httpclient.InferenceServerClient(url).get_inference_statistics()
    table = {}
    for model in stats["model_stats"]:
        s = model["inference_stats"]
        count = int(s["success"]["count"]) or 1
        table[model["name"]] = {
            "requests": int(s["success"]["count"]),
            "executions": int(model.get("execution_count", 0)),
            "queue_ms": int(s["queue"]["ns"]) / count / 1e6,
            "compute_input_ms": int(s["compute_input"]["ns"]) / count / 1e6,
            "compute_infer_ms": int(s["compute_infer"]["ns"]) / count / 1e6,
            "compute_output_ms": int(s["compute_output"]["ns"]) / count / 1e6,
        }
    return table


def environment(repository: Repository, floor_threads: int) -> dict:
    import onnxruntime
    import openvino

    pack = repository.pack
    threads = {}
    models = (
        contract.TEXT_DETECTION,
        contract.TEXT_RECOGNITION,
        contract.TEXT_ORIENTATION,
        contract.GROUPED_RECOGNITION,
        contract.OCR_MODEL,
    )
    for model in models:
        config = repository.config(model)
        threads[model] = {
            "backend": config.backend,
            "cpu_accelerators": [
                a.name for a in config.optimization.execution_accelerators.cpu_execution_accelerator
            ],
            "parameters": {k: v.string_value for k, v in config.parameters.items()},
            "instances": [g.count for g in config.instance_group],
        }
    return {
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "onnxruntime": onnxruntime.__version__,
        "openvino": openvino.get_version(),
        "pack": pack,
        "reference": reference_for(pack).label,
        "rapidocr_threads": "onnxruntime default (intra_op_num_threads=-1: all cores)",
        "floor_threads": floor_threads,
        "server_models": threads,
    }


def row_figures(row: Row) -> dict:
    """A row's name, load and speed, as every table of benchmark.json gives them."""
    return {
        "row": row.name,
        "concurrency": row.concurrency,
        "images": row.images,
        "images_per_s": row.throughput,
        "p50_ms": row.percentile(50) * 1000,
        "p95_ms": row.percentile(95) * 1000,
    }


def summarize(rows: list[Row], a: Row, b: Row) -> list[dict]:
    return [
        {
            **row_figures(row),
            "vs_A": row.throughput / a.throughput if a.throughput else float("nan"),
            "vs_B": row.throughput / b.throughput if b.throughput else float("nan"),
        }
        for row in rows
    ]


def print_table(summary: list[dict]) -> None:
    print(f"\n{'row':34} {'conc':>4} {'img/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'xA':>6} {'xB':>6}")
    for r in summary:
        print(
            f"{r['row']:34} {r['concurrency']:>4} {r['images_per_s']:7.2f} {r['p50_ms']:8.0f} "
            f"{r['p95_ms']:8.0f} {r['vs_A']:6.2f} {r['vs_B']:6.2f}"
        )


def chart(summary: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    served = {}
    for r in summary:
        if r["row"].startswith(contract.ENTRY_POINTS):
            served.setdefault(r["row"], []).append((r["concurrency"], r["images_per_s"]))
    for name, points in served.items():
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, marker="o", label=name)
    baselines = [r for r in summary if not r["row"].startswith(contract.ENTRY_POINTS)]
    for r, color, style in zip(
        baselines, ("black", "gray", "brown"), ("--", "-.", ":"), strict=False
    ):
        ax.axhline(r["images_per_s"], color=color, linestyle=style, linewidth=1.2, label=r["row"])
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrent requests")
    ax.set_ylabel("images / s")
    ax.set_title(f"OCR throughput, same images and models ({os.cpu_count()} CPU cores)")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
