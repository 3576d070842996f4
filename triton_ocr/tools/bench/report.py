"""What a benchmark run reports: Triton's per-model statistics, the environment (the CPU
first: OpenVINO's speed, the server's and row A''s alike, depends on its AMX and VNNI), the table
of rows with their ratios to rows A, A' and B, and the chart."""

from __future__ import annotations

import os
import platform
import sys
import textwrap
from pathlib import Path

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.serving.layout import (
    available_cores,
    describe,
    lay_out,
    openvino_pays,
    shapes_pay,
)
from triton_ocr.tools.reference import reference_for
from triton_ocr.tools.workload import Row

# the instruction sets the runtimes' CPU kernels pick from (OpenVINO's int8 paths want VNNI or
# AMX, its BF16 ones AVX-512 BF16 or AMX; without them its lead over onnxruntime shrinks)
CPU_FLAGS = (
    "avx2",
    "avx512f",
    "avx512_vnni",
    "avx512_bf16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
)


def cpu_record(cpuinfo: str, logical: int | None = None, affinity: int | None = None) -> dict:
    """The CPU from /proc/cpuinfo's text: model name, vendor, family/model/stepping, which of
    CPU_FLAGS it has (the first processor's flags), physical cores (distinct physical id and
    core id pairs) and logical CPUs (`logical`, else the processors listed), and how many this
    process may run on (`affinity`)."""
    processors, cores = [], set()
    for block in cpuinfo.strip().split("\n\n"):
        fields = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if "processor" in fields:
            processors.append(fields)
            cores.add((fields.get("physical id", "0"), fields.get("core id", fields["processor"])))
    first = processors[0] if processors else {}
    flags = set(first.get("flags", "").split())
    return {
        "model_name": first.get("model name", "unknown CPU"),
        "vendor": first.get("vendor_id"),
        "family": first.get("cpu family"),
        "model": first.get("model"),
        "stepping": first.get("stepping"),
        "flags": [flag for flag in CPU_FLAGS if flag in flags],
        "hypervisor": "hypervisor" in flags,
        "physical_cores": len(cores) or None,
        "logical_cpus": logical or len(processors) or None,
        "affinity": affinity,
    }


def cpu_label(cpu: dict) -> str:
    """One line naming the CPU, as every printed table and the docs' tables do."""
    ident = ", ".join(
        f"{name} {cpu[key]}" if name else str(cpu[key])
        for name, key in (("", "vendor"), ("family", "family"), ("model", "model"))
        if cpu.get(key)
    )
    cores = f"{cpu['physical_cores']} cores, {cpu['logical_cpus']} logical CPUs"
    if cpu.get("affinity") and cpu["affinity"] != cpu["logical_cpus"]:
        cores += f" ({cpu['affinity']} usable)"
    flags = " ".join(cpu["flags"]) if cpu["flags"] else f"none of {' '.join(CPU_FLAGS)}"
    vm = ", a VM" if cpu.get("hypervisor") else ""
    return f"{cpu['model_name']} ({ident}{vm}), {cores}; {flags}"


def machine_cpu() -> dict:
    """This machine's cpu_record (Linux; elsewhere only the counts)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return cpu_record(text, os.cpu_count(), affinity)


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


def memory_record(server_pid: int) -> dict:
    """Proportional set size of tritonserver and each of its stubs (by model instance), MiB."""
    from triton_ocr.serving.processes import pss_bytes, stubs

    per = {"tritonserver": pss_bytes(server_pid)}
    per.update({stub.instance: pss_bytes(stub.pid) for stub in stubs(server_pid)})
    return {
        "total_pss_mib": sum(per.values()) / 2**20,
        "pss_mib": {name: size / 2**20 for name, size in per.items()},
    }


def memory_line(memory: dict) -> str:
    parts = ", ".join(f"{name} {mib:.0f}" for name, mib in memory["pss_mib"].items())
    return (
        f"\nmemory after the served rows (both entry points loaded): {memory['total_pss_mib']:.0f}"
        f" MiB PSS, tritonserver and {len(memory['pss_mib']) - 1} stubs ({parts})"
    )


def environment(repository: Repository, floor_threads: int) -> dict:
    import onnxruntime
    import openvino

    pack = repository.pack
    cores = available_cores()
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
        # as the bench's servers do (serving/layout.py)
        lay_out(config, cores, openvino_pays(), shapes_pay())
        threads[model] = {
            "backend": config.backend,
            "cpu_accelerators": [
                a.name for a in config.optimization.execution_accelerators.cpu_execution_accelerator
            ],
            "parameters": {k: v.string_value for k, v in config.parameters.items()},
            "instances": [g.count for g in config.instance_group],
        }
    cpu = machine_cpu()
    return {
        "cpu": cpu,
        "cpu_label": cpu_label(cpu),
        "cpu_count": os.cpu_count(),
        "affinity": cpu["affinity"],
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "onnxruntime": onnxruntime.__version__,
        "openvino": openvino.get_version(),
        "pack": pack,
        "reference": reference_for(pack).label,
        "reference_engines": {
            "A": "RapidOCR's defaults: Det, Cls, Rec on onnxruntime",
            "A'": "Det, Cls, Rec engine_type: openvino, the rest its defaults",
        },
        "rapidocr_threads": "its defaults: onnxruntime intra_op_num_threads=-1 (all cores); "
        "openvino inference_num_threads=-1 (OpenVINO's own, all cores)",
        "floor_threads": floor_threads,
        "server_models": threads,
        "layout": describe(cores, openvino_pays(), pack, shapes_pay()),
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


def ratio(row: Row, baseline: Row | None) -> float:
    return (
        row.throughput / baseline.throughput if baseline and baseline.throughput else float("nan")
    )


def summarize(
    rows: list[Row],
    a: Row,
    b: Row,
    a_openvino: Row | None = None,
    others: dict[str, float] | None = None,
) -> list[dict]:
    """Each row's figures and its ratios to A (RapidOCR's defaults), A' (RapidOCR on OpenVINO;
    NaN when the run had none) and B; `others`: by row and concurrency (`key`), the share of
    the machine's busy CPU other processes took while the row ran."""
    others = others or {}
    return [
        {
            **row_figures(row),
            "vs_A": ratio(row, a),
            "vs_A_openvino": ratio(row, a_openvino),
            "vs_B": ratio(row, b),
            "others_cpu_share": others.get(key(row), float("nan")),
        }
        for row in rows
    ]


def key(row: Row) -> str:
    return f"{row.name} c={row.concurrency}"


def headline(summary: list[dict]) -> dict:
    """The best served row against the stronger in-process RapidOCR row (A or A'): what the
    README's headline says."""
    served = [r for r in summary if r["row"].startswith(contract.ENTRY_POINTS)]
    best = max(served, key=lambda r: r["images_per_s"])
    peers = [r for r in summary if r["row"].startswith(("A ", "A' "))]
    stronger = max(peers, key=lambda r: r["images_per_s"])
    return {
        "best_served": f"{best['row']} c={best['concurrency']}",
        "images_per_s": best["images_per_s"],
        "vs_A": best["vs_A"],
        "vs_A_openvino": best["vs_A_openvino"],
        "stronger_peer": stronger["row"],
        "stronger_peer_images_per_s": stronger["images_per_s"],
        "vs_stronger_peer": best["images_per_s"] / stronger["images_per_s"],
    }


def headline_line(top: dict) -> str:
    return (
        f"best served row: {top['best_served']}, {top['images_per_s']:.2f} img/s = "
        f"{top['vs_A']:.2f}x A, {top['vs_A_openvino']:.2f}x A'; against the stronger peer "
        f"({top['stronger_peer']}, {top['stronger_peer_images_per_s']:.2f} img/s): "
        f"{top['vs_stronger_peer']:.2f}x"
    )


def table_lines(summary: list[dict], cpu: str) -> list[str]:
    """The rows as printed, under the CPU they ran on; `others`: the share of the machine's
    busy CPU other processes took during the row (above a few percent: a noisy row)."""
    lines = [
        f"\nmeasured on: {cpu}",
        f"{'row':34} {'conc':>4} {'img/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'xA':>6} "
        f"   xA' {'xB':>6} {'others':>6}",
    ]
    for r in summary:
        lines.append(
            f"{r['row']:34} {r['concurrency']:>4} {r['images_per_s']:7.2f} {r['p50_ms']:8.0f} "
            f"{r['p95_ms']:8.0f} {r['vs_A']:6.2f} {r['vs_A_openvino']:6.2f} {r['vs_B']:6.2f} "
            f"{r['others_cpu_share']:6.0%}"
        )
    return lines


def print_table(summary: list[dict], cpu: str) -> None:
    print("\n".join(table_lines(summary, cpu)))


def chart(summary: list[dict], path: Path, cpu: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    served: dict[str, list[tuple[int, float]]] = {}
    for r in summary:
        if r["row"].startswith(contract.ENTRY_POINTS):
            served.setdefault(r["row"], []).append((r["concurrency"], r["images_per_s"]))
    for name, points in served.items():
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, marker="o", label=name)
    baselines = [r for r in summary if not r["row"].startswith(contract.ENTRY_POINTS)]
    colors, styles = ("black", "tab:red", "gray", "brown"), ("--", "--", "-.", ":")
    for r, color, style in zip(baselines, colors, styles, strict=False):
        label = f"{r['row']} ({r['images_per_s']:.2f})"
        ax.axhline(r["images_per_s"], color=color, linestyle=style, linewidth=1.2, label=label)
    if served:
        top = headline(summary)
        ax.annotate(
            f"{top['best_served']}: {top['images_per_s']:.2f} img/s\n"
            f"{top['vs_A']:.2f}x A (defaults), {top['vs_A_openvino']:.2f}x A' (OpenVINO)",
            xy=(0.02, 0.45),
            xycoords="axes fraction",
            fontsize=8,
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrent requests")
    ax.set_ylabel("images / s")
    ax.set_title(f"OCR throughput, same images and models\n{textwrap.fill(cpu, 100)}", fontsize=8)
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
