"""NVIDIA's perf_analyzer on both entry points: `triton-ocr perf-analyzer` (`make perf-analyzer`).

perf_analyzer (the tritonclient 2.41.0 wheel's binary; the Makefile fetches it) loads one model
over gRPC at concurrency 1..N with the bench images, one image per request, cycling through them;
its CSV gives throughput and latency percentiles per concurrency. This module writes its
--input-data files, builds its command line, reads its CSV and prints the table.

The input-data format is perf_analyzer's (client repo r23.12, src/c++/perf_analyzer/
data_loader.cc, ReadTensorData): {"data": [{TENSOR: {"content": {"b64": ...}, "shape": [...]}},
...]}, one entry per request. The decoded b64 bytes are sent as the tensor's raw contents
unchanged, so a BYTES tensor's b64 must hold the serialized form (each element as a 4-byte
little-endian length, then its bytes), the one SerializeExplicitTensor builds from a JSON list
of strings; a UINT8 tensor's is the bytes themselves.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import struct
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.tools.workload import bench_images

# Each measurement window must hold several requests of ~1 s each; perf_analyzer stops a sweep
# at the first concurrency whose last three windows differ by more than STABILITY_PERCENT.
MEASUREMENT_MS = 10_000
STABILITY_PERCENT = 50
MAX_TRIALS = 5
PERCENTILES = (50, 90, 99)  # of the CSV's client latencies (p50, p90, p95, p99 in microseconds)


@dataclass(frozen=True)
class PerfRow:
    concurrency: int
    throughput: float  # inferences (= images) per second
    p50_ms: float
    p90_ms: float
    p99_ms: float


@dataclass
class ModelRun:
    model: str
    command: list[str]  # as run, in the output folder
    returncode: int
    rows: list[PerfRow] = field(default_factory=list)
    output_tail: str = ""  # the end of perf_analyzer's stdout and stderr


@dataclass(frozen=True)
class PerfAnalyzerOptions:
    binary: Path  # perf_analyzer, or the Makefile's wrapper that sets LD_LIBRARY_PATH
    repository: Repository  # served when `url` is None; its configs give the batch dimensions
    url: str | None  # a running server's gRPC host:port; None: start one
    shared_eval: Path | None  # labelled real images added to the rendered ones, if present
    out_dir: Path  # perf_analyzer.json, the input-data files and perf_analyzer's CSVs
    concurrency_max: int = 4
    measurement_ms: int = MEASUREMENT_MS


# --- input data --------------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def serialize_bytes(elements: Sequence[bytes]) -> bytes:
    """A BYTES tensor's raw contents: each element as its 4-byte little-endian length, then it."""
    return b"".join(struct.pack("<I", len(e)) + e for e in elements)


def ensemble_input_data(images: Sequence[bytes], max_batch_size: int) -> dict:
    """`ensemble_model`'s requests: input_image UINT8 [1, nbytes], one image each. With
    max_batch_size > 0 the batch dimension is implicit: perf_analyzer adds it (-b 1), so the
    shape given is [nbytes]."""
    batch = [] if max_batch_size > 0 else [1]
    return {
        "data": [
            {contract.INPUT_IMAGE: {"content": {"b64": b64(image)}, "shape": [*batch, len(image)]}}
            for image in images
        ]
    }


def ocr_input_data(images: Sequence[bytes]) -> dict:
    """`ocr`'s requests: images BYTES [1], one encoded image each (its b64 holds the serialized
    element, length prefix included); the request's batch dimension of one (max_batch_size 1)
    is perf_analyzer's to add (-b 1)."""
    return {
        "data": [
            {
                contract.OCR_INPUT_IMAGES: {
                    "content": {"b64": b64(serialize_bytes([image]))},
                    "shape": [1],
                }
            }
            for image in images
        ]
    }


def input_data(model: str, images: Sequence[bytes], max_batch_size: int) -> dict:
    """perf_analyzer's --input-data for entry point `model` (its config's max_batch_size)."""
    if model == contract.ENSEMBLE_MODEL:
        return ensemble_input_data(images, max_batch_size)
    if model == contract.OCR_MODEL:
        if max_batch_size != 1:
            raise ValueError(f"{model}: expected max_batch_size 1, got {max_batch_size}")
        return ocr_input_data(images)
    raise ValueError(f"{model!r} is not an entry point: {', '.join(contract.ENTRY_POINTS)}")


# --- running it --------------------------------------------------------------------------


def perf_analyzer_command(
    binary: Path,
    model: str,
    url: str,
    input_json: Path,
    csv_name: str,
    concurrency_max: int = 4,
    measurement_ms: int = MEASUREMENT_MS,
) -> list[str]:
    """perf_analyzer on `model` over gRPC at concurrency 1..concurrency_max. `csv_name` is a bare
    file name: perf_analyzer writes an ensemble's per-step CSVs to `<step>_v<version>.<csv_name>`
    in its working folder, so it runs in the output folder."""
    return [
        str(binary),
        "-m",
        model,
        "-i",
        "grpc",
        "-u",
        url,
        "--input-data",
        str(input_json),
        "--concurrency-range",
        f"1:{concurrency_max}",
        "--measurement-interval",
        str(measurement_ms),
        "--stability-percentage",
        str(STABILITY_PERCENT),
        "--max-trials",
        str(MAX_TRIALS),
        "-f",
        csv_name,
    ]


def parse_csv(text: str) -> list[PerfRow]:
    """perf_analyzer's -f CSV (one line per concurrency, latencies in microseconds) -> rows
    by concurrency."""
    rows = []
    for line in csv.DictReader(io.StringIO(text)):
        try:
            ms = [float(line[f"p{p} latency"]) / 1000 for p in PERCENTILES]
            row = PerfRow(int(line["Concurrency"]), float(line["Inferences/Second"]), *ms)
        except KeyError as exc:
            raise ValueError(f"perf_analyzer's CSV has no column {exc}") from None
        rows.append(row)
    return sorted(rows, key=lambda r: r.concurrency)


def perf_analyzer_version(binary: Path) -> str:
    """`perf_analyzer --version`, e.g. 'Perf Analyzer Version 2.41.0 (commit fbb030e)'."""
    done = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    return (done.stdout + done.stderr).strip()


def run_model(
    binary: Path,
    model: str,
    url: str,
    images: Sequence[bytes],
    max_batch_size: int,
    out_dir: Path,
    concurrency_max: int = 4,
    measurement_ms: int = MEASUREMENT_MS,
) -> ModelRun:
    """Write `model`'s input data, run perf_analyzer in `out_dir`, read its CSV."""
    input_json = (out_dir / f"{model}.input.json").resolve()
    input_json.write_text(json.dumps(input_data(model, images, max_batch_size)))
    csv_path = out_dir / f"{model}.csv"
    csv_path.unlink(missing_ok=True)
    command = perf_analyzer_command(
        binary.resolve(), model, url, input_json, csv_path.name, concurrency_max, measurement_ms
    )
    print(f"$ {' '.join(command)}", file=sys.stderr)
    # each concurrency: up to MAX_TRIALS windows, plus start-up and the last requests' latency
    timeout = concurrency_max * (MAX_TRIALS + 1) * measurement_ms / 1000 + 300
    try:
        done = subprocess.run(
            command, cwd=out_dir, capture_output=True, text=True, timeout=timeout, check=False
        )
        returncode, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:  # killed: report it like `timeout` does
        returncode = 124
        output = "".join(
            s.decode(errors="replace") if isinstance(s, bytes) else s
            for s in (exc.stdout, exc.stderr)
            if s
        )
        output += f"\nkilled after {timeout:.0f} s"
    (out_dir / f"{model}.log").write_text(output)
    rows = parse_csv(csv_path.read_text()) if csv_path.is_file() else []
    return ModelRun(model, command, returncode, rows, output[-4000:])


def print_rows(runs: Sequence[ModelRun]) -> None:
    """One table: per model and concurrency, throughput and latency percentiles."""
    print(f"{'model':16} {'conc':>4} {'infer/s':>8} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
    for run in runs:
        for r in run.rows:
            print(
                f"{run.model:16} {r.concurrency:>4} {r.throughput:>8.2f} "
                f"{r.p50_ms:>8.0f} {r.p90_ms:>8.0f} {r.p99_ms:>8.0f}"
            )
        if run.returncode != 0 or not run.rows:
            print(f"{run.model:16} perf_analyzer exited {run.returncode} (see {run.model}.log)")


def measure(options: PerfAnalyzerOptions, url: str, images: Sequence[bytes]) -> list[ModelRun]:
    """Both entry points, one after the other, each warmed up by one request first."""
    from triton_ocr.client import OcrClient

    runs = []
    for model in contract.ENTRY_POINTS:
        with OcrClient(url, "grpc", model=model) as client:  # sessions, connections, caches
            if model == contract.OCR_MODEL:
                client.read_many(images[:1])
            else:
                client.read(images[0])
        max_batch_size = options.repository.config(model).max_batch_size
        runs.append(
            run_model(
                options.binary,
                model,
                url,
                images,
                max_batch_size,
                options.out_dir,
                options.concurrency_max,
                options.measurement_ms,
            )
        )
    return runs


def run_perf_analyzer(options: PerfAnalyzerOptions) -> dict:
    """Measure both entry points (on a server of its own unless `options.url`), write
    perf_analyzer.json to the output folder, print the table."""
    options.out_dir.mkdir(parents=True, exist_ok=True)
    version = perf_analyzer_version(options.binary)
    named_images = bench_images(options.shared_eval)
    images = [data for _, data in named_images]
    if options.url:
        url = options.url
        runs = measure(options, url, images)
    else:
        from triton_ocr.serving.flags import ServerOptions, free_ports
        from triton_ocr.serving.server import running_server

        http, grpc, metrics = free_ports(3)
        repository = options.repository
        server = ServerOptions(
            repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack
        )
        url = f"127.0.0.1:{grpc}"
        with running_server(server, log_file=options.out_dir / "tritonserver.log"):
            runs = measure(options, url, images)
    result = {
        "command": " ".join(sys.argv),
        "perf_analyzer": version,
        "url": url,
        "server": "given" if options.url else f"started, pack {options.repository.pack}",
        "images": [name for name, _ in named_images],
        "models": {
            run.model: {
                "command": " ".join(run.command),
                "returncode": run.returncode,
                "rows": [asdict(r) for r in run.rows],
                "output_tail": run.output_tail,
            }
            for run in runs
        },
    }
    path = options.out_dir / "perf_analyzer.json"
    path.write_text(json.dumps(result, indent=2))
    print(version)
    print_rows(runs)
    print(f"\nwrote {path}")
    return result


def succeeded(result: dict) -> bool:
    """Every model's perf_analyzer exited 0 with at least one row."""
    return all(m["returncode"] == 0 and m["rows"] for m in result["models"].values())
