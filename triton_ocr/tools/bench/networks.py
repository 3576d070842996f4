"""`triton-ocr bench-networks`: each network on each CPU runtime a config can name, on the
tensors the pipeline really sends for the bench images: what chose the configs' CPU path.

The pipeline reads every image once in-process with the configs' engines, recording each
network call's input; then every (network, runtime) pair runs those same inputs, one pair at a
time, with the thread count the served config gives that network. Runtimes:
  onnxruntime            ONNX Runtime's CPU provider (FP32)
  onnxruntime+openvino   the `openvino` cpu_execution_accelerator: OpenVINO at FP32
  openvino               the openvino backend: OpenVINO's default precision (BF16 on AMX CPUs)
Each row gives ms per image, the speed-up over onnxruntime and the largest difference of the
first output from onnxruntime's (FP32 paths agree to ~1e-5; BF16 does not).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence

import numpy as np

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.pipeline import read_image
from triton_ocr.runtime.backends.engines import THREADS_KEY, Engine, open_engine, parameters_of

RUNTIMES = ("onnxruntime", "onnxruntime+openvino", "openvino")


def runtime_config(config: dict, runtime: str) -> dict:
    """`config` (a network's, JSON-like) made to run on `runtime`, same thread count."""
    threads = parameters_of(config).get(THREADS_KEY["onnxruntime"], "1")
    out = copy.deepcopy(config)
    out.pop("optimization", None)
    backend = "openvino" if runtime == "openvino" else "onnxruntime"
    out["backend"] = backend
    out["parameters"] = {THREADS_KEY[backend]: {"string_value": threads}}
    if runtime == "onnxruntime+openvino":
        out["optimization"] = {
            "execution_accelerators": {"cpu_execution_accelerator": [{"name": "openvino"}]}
        }
    return out


def recorded_inputs(
    repository: Repository, images: Sequence[bytes]
) -> dict[str, list[dict[str, np.ndarray]]]:
    """Every network call's feeds while the pipeline reads `images` in-process."""
    engines = {
        m: open_engine(repository.config_dict(m), repository.model_file(m))
        for m in contract.NETWORKS
    }
    det_in, det_out = repository.detector_tensors()
    rec_in, best_path = repository.recognizer_tensors()
    orientation = repository.classifier()
    page = repository.classifier(contract.PAGE_ORIENTATION)
    calls: dict[str, list[dict[str, np.ndarray]]] = {m: [] for m in contract.NETWORKS}

    def call(model: str, wanted: Sequence[str], feeds: dict[str, np.ndarray]) -> list:
        calls[model].append(feeds)
        return engines[model].run(wanted, feeds)

    def detect(x):
        return call(contract.TEXT_DETECTION, det_out, {det_in: x})

    def recognize(batches):
        return [tuple(call(contract.TEXT_RECOGNITION, best_path, {rec_in: b})) for b in batches]

    def classify(inputs):
        return [
            call(contract.TEXT_ORIENTATION, [orientation.output], {orientation.input: x})[0]
            for x in inputs
        ]

    def classify_page(looks):
        return call(contract.PAGE_ORIENTATION, [page.output], {page.input: looks})[0]

    settings = repository.pipeline_settings()
    for data in images:
        read_image(data, settings, detect, recognize, classify, classify_page)
    return calls


def time_engine(engine: Engine, calls: list[dict[str, np.ndarray]]) -> tuple[float, list]:
    """Seconds for all calls (after one warm-up call) and each call's first output."""
    first = engine.outputs[:1]
    engine.run(first, calls[0])
    start = time.perf_counter()
    outputs = [engine.run(first, feeds)[0] for feeds in calls]
    return time.perf_counter() - start, outputs


def bench_networks(repository: Repository, images: Sequence[bytes]) -> list[dict]:
    calls = recorded_inputs(repository, images)
    rows = []
    for model in contract.NETWORKS:
        if not calls[model]:
            continue
        config = repository.config_dict(model)
        baseline = None
        for runtime in RUNTIMES:
            engine = open_engine(runtime_config(config, runtime), repository.model_file(model))
            seconds, outputs = time_engine(engine, calls[model])
            if baseline is None:
                baseline = (seconds, outputs)
            diff = max(
                float(np.abs(a.astype(np.float64) - b).max()) if a.size else 0.0
                for a, b in zip(outputs, baseline[1], strict=True)
            )
            rows.append(
                {
                    "model": model,
                    "runtime": runtime,
                    "engine": engine.describe,
                    "threads": parameters_of(config).get(THREADS_KEY["onnxruntime"], "1"),
                    "calls": len(calls[model]),
                    "ms_per_image": seconds / len(images) * 1000,
                    "speedup": baseline[0] / seconds,
                    "max_abs_diff": diff,
                }
            )
    return rows


def print_rows(rows: list[dict]) -> None:
    print(f"{'network':18} {'runtime':22} {'engine':36} thr calls  ms/img   ×ort  max|diff|")
    for r in rows:
        print(
            f"{r['model']:18} {r['runtime']:22} {r['engine']:36} {r['threads']:>3} "
            f"{r['calls']:5} {r['ms_per_image']:7.1f} {r['speedup']:6.2f}  {r['max_abs_diff']:.1e}"
        )
