"""`triton-ocr bench`: every way to run the same OCR, measured side by side in one run.

Rows (same images, interleaved rounds so drift hits all rows alike):
  A  RapidOCR in-process: the release the pack's models come from, with its angle classifier
     (triton_ocr.evaluation.reference) -- what users would otherwise do: pip install and call it;
  B  this project's pipeline + onnxruntime in-process, no server            -- the compute floor;
  C  the Triton tutorial's Part-1 design: pre/post-processing in the client, two network calls
     (text_detection, then text_recognition with all crops padded to the widest);
  then `ensemble_model` and `ocr` over HTTP and gRPC at several concurrencies.
Prints images/s, p50/p95 latency and ratios to A and B; writes JSON and a PNG chart.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from triton_ocr.client import OcrClient
from triton_ocr.evaluation.reference import rapidocr_reader, reference_for
from triton_ocr.packs import ORIENTATION_MODEL, load_config, model_file, recognizer_best_path
from triton_ocr.pipeline import PipelineSettings, read_image
from triton_ocr.postprocessing.crops import recognition_batch
from triton_ocr.postprocessing.ctc import ctc_greedy_decode
from triton_ocr.postprocessing.detection import detect_texts
from triton_ocr.postprocessing.recognition import Texts, select_texts
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.preprocessing.detection import detection_input
from triton_ocr.workload import ReadOne, Row, bench_images, run_row

# --- the in-process rows ---------------------------------------------------------------------


def onnx_sessions(repository: Path, threads: int, pack: str):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1

    def session(model: str):
        return ort.InferenceSession(
            str(model_file(repository, model, pack)),
            options,
            providers=["CPUExecutionProvider"],
        )

    return session("text_detection"), session("text_recognition"), session(ORIENTATION_MODEL)


def floor_reader(repository: Path, pack: str, settings: PipelineSettings, threads: int) -> ReadOne:
    detector, recognizer, classifier = onnx_sessions(repository, threads, pack)
    det_in = detector.get_inputs()[0].name
    rec_in, best_path = recognizer_best_path(repository, pack)

    def detect(tensor):
        return detector.run(None, {det_in: tensor})

    def recognize(batches):
        return [tuple(recognizer.run(best_path, {rec_in: b})) for b in batches]

    def classify(inputs):
        model = settings.orientation
        return [classifier.run([model.output], {model.input: x})[0] for x in inputs]

    return lambda data: read_image(data, settings, detect, recognize, classify)


# --- the served rows -------------------------------------------------------------------------


def tutorial_reader(url: str, repository: Path, pack: str, settings: PipelineSettings) -> ReadOne:
    """Part-1 design: the client prepares and decodes, Triton only runs the two networks."""
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(url)
    detector = load_config(repository, "text_detection", pack)
    recognizer_input, best_path = recognizer_best_path(repository, pack)
    limit = load_config(repository, "text_recognition", pack).max_batch_size or 1_000_000

    def infer(model: str, name: str, array: np.ndarray, outputs: list[str]) -> list[np.ndarray]:
        tensor = grpcclient.InferInput(name, list(array.shape), "FP32")
        tensor.set_data_from_numpy(array)
        wanted = [grpcclient.InferRequestedOutput(n) for n in outputs]
        result = client.infer(model, [tensor], outputs=wanted)
        return [result.as_numpy(n) for n in outputs]

    def read(data: bytes):
        s = settings
        image = decode_image(data, s.preprocessing.limits)
        maps = infer(
            "text_detection",
            detector.input[0].name,
            detection_input(image, s.preprocessing),
            [o.name for o in detector.output],
        )
        found = detect_texts(maps, image, s.postprocessing, s.detector)
        # every crop padded to the widest one, in as few calls as max_batch_size allows
        batch = recognition_batch(found.crops, s.postprocessing)
        results = [
            infer("text_recognition", recognizer_input, batch[i : i + limit], best_path)
            for i in range(0, len(found.crops), limit)
        ]
        if not results:
            return Texts.empty()
        best_class, best_score = (np.concatenate(parts) for parts in zip(*results, strict=True))
        decoded = ctc_greedy_decode(best_class, best_score, s.alphabet)
        return select_texts(decoded, found.quads, s.recognition.text_score)

    return read


def served_reader(url: str, protocol: str, model: str) -> ReadOne:
    client = OcrClient(url, protocol)
    if model == "ocr":
        return lambda data: client.read_many([data])
    return client.read


def compare_entry_points(url: str, images: Sequence[tuple[str, bytes]]) -> list[dict]:
    """Images on which `ocr` and `ensemble_model` return different texts (with the texts)."""
    client = OcrClient(url, "grpc")
    differences = []
    for name, data in images:
        (ocr,) = client.read_many([data])
        ensemble = client.read(data)
        ocr_texts, ensemble_texts = [x.text for x in ocr], [x.text for x in ensemble]
        if ocr_texts != ensemble_texts:
            only_ocr = [t for t in ocr_texts if t not in ensemble_texts]
            only_ensemble = [t for t in ensemble_texts if t not in ocr_texts]
            differences.append({"image": name, "ocr": only_ocr, "ensemble_model": only_ensemble})
    return differences


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


def environment(repository: Path, pack: str, floor_threads: int) -> dict:
    import onnxruntime

    threads = {}
    for model in ("text_detection", "text_recognition", "grouped_recognition", "ocr"):
        config = load_config(repository, model, pack)
        threads[model] = {
            "parameters": {k: v.string_value for k, v in config.parameters.items()},
            "instances": [g.count for g in config.instance_group],
        }
    return {
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "onnxruntime": onnxruntime.__version__,
        "pack": pack,
        "reference": reference_for(pack).label,
        "rapidocr_threads": "onnxruntime default (intra_op_num_threads=-1: all cores)",
        "floor_intra_op_threads": floor_threads,
        "server_models": threads,
    }


def summarize(rows: list[Row], a: Row, b: Row) -> list[dict]:
    out = []
    for row in rows:
        out.append(
            {
                "row": row.name,
                "concurrency": row.concurrency,
                "images": row.images,
                "images_per_s": row.throughput,
                "p50_ms": row.percentile(50) * 1000,
                "p95_ms": row.percentile(95) * 1000,
                "vs_A": row.throughput / a.throughput if a.throughput else float("nan"),
                "vs_B": row.throughput / b.throughput if b.throughput else float("nan"),
            }
        )
    return out


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
        if r["row"].startswith(("ensemble_model", "ocr")):
            served.setdefault(r["row"], []).append((r["concurrency"], r["images_per_s"]))
    for name, points in served.items():
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, marker="o", label=name)
    baselines = [r for r in summary if not r["row"].startswith(("ensemble_model", "ocr"))]
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


def run_benchmark(
    repository: Path,
    out_dir: Path,
    shared_eval: Path | None,
    rounds: int,
    concurrencies: Sequence[int],
    floor_threads: int,
    pack: str,
) -> dict:
    """Serve `pack` and measure every row on it; row A is the pack's RapidOCR release."""
    from triton_ocr.server import ServerOptions, free_ports, running_server

    # Row A's engine, built once before the server starts (east-str, which has no reference, or
    # a missing RapidOCR fails at once) and reused every round: rapidocr 3.x loads its models
    # on the first call, which the warm-up then makes, outside the timed rounds.
    read_a = rapidocr_reader(pack)
    print(f"pack {pack}; row A: {reference_for(pack).label} in-process", file=sys.stderr)
    out_dir.mkdir(parents=True, exist_ok=True)
    named_images = bench_images(shared_eval)
    images = [data for _, data in named_images]
    settings = PipelineSettings.from_repository(repository, pack)
    a = Row("A rapidocr in-process", 1)
    b = Row("B floor in-process", 1)
    c = Row("C tutorial two calls (grpc)", 1)
    served = [
        Row(f"{model} {protocol}", conc)
        for model in ("ensemble_model", "ocr")
        for protocol in ("http", "grpc")
        for conc in concurrencies
    ]
    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(repository, "127.0.0.1", http, grpc, metrics, pack=pack)
    urls = {"http": f"127.0.0.1:{http}", "grpc": f"127.0.0.1:{grpc}"}
    start = time.perf_counter()
    with running_server(opts, log_file=out_dir / "tritonserver.log"):
        cold_start = time.perf_counter() - start
        first = time.perf_counter()
        served_reader(urls["grpc"], "grpc", "ocr")(images[0])
        first_request = time.perf_counter() - first
        readers: dict[str, Callable[[], ReadOne]] = {
            a.name: lambda: read_a,
            b.name: lambda: floor_reader(repository, pack, settings, floor_threads),
            c.name: lambda: tutorial_reader(urls["grpc"], repository, pack, settings),
        }
        for row in served:
            model, protocol = row.name.split()
            readers.setdefault(row.name, lambda m=model, p=protocol: served_reader(urls[p], p, m))
        rows = [a, b, c, *served]
        for row in rows:  # warm up every path once (sessions, connections, server caches)
            readers[row.name]()(images[0])
        for round_index in range(rounds):
            for row in rows:
                run_row(row, readers[row.name], images)
                print(
                    f"round {round_index + 1}/{rounds} {row.name} c={row.concurrency}: "
                    f"{row.throughput:.2f} img/s",
                    file=sys.stderr,
                )
        stats = model_statistics(urls["http"])
        differences = compare_entry_points(urls["grpc"], named_images)
    ocr_c1 = next(r for r in served if r.name == "ocr grpc" and r.concurrency == 1)
    first_image_steady = statistics.median(ocr_c1.latencies[:: len(images)])
    summary = summarize(rows, a, b)
    result = {
        "command": " ".join(sys.argv),
        "images": len(images),
        "rounds": rounds,
        "environment": environment(repository, pack, floor_threads),
        "cold_start_s": cold_start,
        "first_request_s": first_request,
        "steady_first_image_ocr_grpc_c1_s": first_image_steady,
        "rows": summary,
        "model_statistics": stats,
        "ocr_vs_ensemble_differences": differences,
    }
    (out_dir / "benchmark.json").write_text(json.dumps(result, indent=2))
    chart(summary, out_dir / "benchmark.png")
    print_table(summary)
    print(
        f"\ncold start to ready: {cold_start:.2f} s; first request (ocr, grpc, image 0): "
        f"{first_request * 1000:.0f} ms; the same image later: {first_image_steady * 1000:.0f} ms"
    )
    print("\nper model (Triton statistics): requests, mean ms queued / computing")
    for name, s in sorted(stats.items()):
        print(f"  {name:28} {s['requests']:>6} {s['queue_ms']:8.1f} {s['compute_infer_ms']:8.1f}")
    print(f"\nocr and ensemble_model differ on {len(differences)} of {len(images)} images")
    for diff in differences:
        print(f"  {diff['image']}: ocr {diff['ocr']} / ensemble {diff['ensemble_model']}")
    print(f"\nwrote {out_dir / 'benchmark.json'} and {out_dir / 'benchmark.png'}")
    return result
