"""`triton-ocr gpu-check` (`make gpu-check`): on a machine with an NVIDIA GPU, serve a pack's
GPU variant (the default pack's, or `--pack ppocr-v6-tiny`), check that its networks run on
the GPU, and print the served rows.

What "on the GPU" means here, checked three ways: Triton loaded every network as a KIND_GPU
instance with the TensorRT accelerator (its model-config API), the server's processes hold GPU
memory (nvidia-smi), and every network answered requests (Triton's statistics). Then the bench
images go to `ensemble_model` and `ocr` over gRPC at each concurrency, two rounds.

In the NGC container (`--container`) Triton's C++ onnxruntime backend runs the networks with CUDA
and TensorRT. Outside it, the Python-based backend needs onnxruntime-gpu (same version as the
lock's onnxruntime) and, for TensorRT, its libraries; without CUDA it refuses KIND_GPU.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.tools.bench.readers import served_reader
from triton_ocr.tools.bench.report import model_statistics
from triton_ocr.tools.workload import Row, bench_images, run_row

NETWORKS = contract.NETWORKS


@dataclass(frozen=True)
class GpuCheckOptions:
    repository: Repository  # a pack with a GPU variant (packs.GPU_VARIANTS), exported
    out_dir: Path  # gpu-check.json and the server's log
    shared_eval: Path | None
    concurrencies: Sequence[int]
    rounds: int
    container: bool  # the NGC container's tritonserver and C++ backends


def gpu_processes() -> list[dict]:
    """Processes holding GPU memory, from nvidia-smi (pid, name, MiB)."""
    out = subprocess.run(
        [
            "nvidia-smi",
            "--query-compute-apps=pid,process_name,used_memory",
            "--format=csv,noheader,nounits",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split(", ") for line in out.strip().splitlines() if line.strip()]
    return [{"pid": int(p), "name": n, "mib": float(m)} for p, n, m in rows]


def network_placement(http_url: str) -> dict[str, dict]:
    """Each network's instance kinds and GPU accelerators as the server loaded them."""
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(http_url)
    placement = {}
    for model in NETWORKS:
        config = client.get_model_config(model)
        listed = config.get("optimization", {}).get("execution_accelerators", {})
        placement[model] = {
            "kinds": [g.get("kind") for g in config.get("instance_group", [])],
            "gpu_accelerators": [a["name"] for a in listed.get("gpu_execution_accelerator", [])],
        }
    return placement


def problems_of(placement: dict[str, dict], processes: list[dict], stats: dict) -> list[str]:
    """What keeps this from being a GPU run (empty: every check passed)."""
    problems = []
    for model, found in placement.items():
        if found["kinds"] != ["KIND_GPU"]:
            problems.append(f"{model} loaded as {found['kinds']}, not KIND_GPU")
        if "tensorrt" not in found["gpu_accelerators"]:
            problems.append(f"{model} has no tensorrt accelerator")
        if not stats.get(model, {}).get("requests"):
            problems.append(f"{model} answered no request")
    if not any(p["mib"] > 0 for p in processes):
        problems.append("no process holds GPU memory (nvidia-smi)")
    return problems


def run_gpu_check(options: GpuCheckOptions) -> dict:
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    if shutil.which("nvidia-smi") is None:
        raise SystemExit("gpu-check: no nvidia-smi here, so no NVIDIA GPU to check")
    options.out_dir.mkdir(parents=True, exist_ok=True)
    images = [data for _, data in bench_images(options.shared_eval)]
    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(
        options.repository.path,
        http_port=http,
        grpc_port=grpc,
        metrics_port=metrics,
        pack=options.repository.pack,
        system_triton=options.container,
        gpu=True,
    )
    url = f"127.0.0.1:{grpc}"
    rows = [Row(f"{m} grpc", c) for m in contract.ENTRY_POINTS for c in options.concurrencies]
    start = time.perf_counter()
    with running_server(opts, log_file=options.out_dir / "tritonserver.log"):
        cold_start = time.perf_counter() - start  # TensorRT builds its engines here, once
        for model in contract.ENTRY_POINTS:
            served_reader(url, "grpc", model)(images[0])
        for round_index in range(options.rounds):
            for row in rows:
                model = row.name.split()[0]
                run_row(row, partial(served_reader, url, "grpc", model), images)
                print(
                    f"round {round_index + 1} {row.name} c={row.concurrency}: "
                    f"{row.throughput:.2f} img/s",
                    file=sys.stderr,
                )
        placement = network_placement(f"127.0.0.1:{http}")
        processes = gpu_processes()
        stats = model_statistics(f"127.0.0.1:{http}")
    problems = problems_of(placement, processes, stats)
    result: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "gpu": subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip(),
        "cold_start_s": cold_start,
        "placement": placement,
        "gpu_processes": processes,
        "problems": problems,
        "rows": [
            {
                "row": r.name,
                "concurrency": r.concurrency,
                "images_per_s": r.throughput,
                "p50_ms": r.percentile(50),
                "p95_ms": r.percentile(95),
            }
            for r in rows
        ],
        "model_statistics": stats,
    }
    (options.out_dir / "gpu-check.json").write_text(json.dumps(result, indent=2))
    print(f"GPU: {result['gpu']}; cold start (TensorRT engines built): {cold_start:.1f} s")
    for r in result["rows"]:
        print(
            f"  {r['row']:<22} c={r['concurrency']:<3} {r['images_per_s']:6.2f} img/s  "
            f"p50 {r['p50_ms']:6.0f} ms  p95 {r['p95_ms']:6.0f} ms"
        )
    print("\n".join(f"NOT ON THE GPU: {p}" for p in problems) or "every network ran on the GPU")
    return result
