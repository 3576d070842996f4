"""`triton-ocr eval`: start (or reach) the service, read a labelled set, report, compare."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from triton_ocr.client import OcrClient
from triton_ocr.config.repository import Repository
from triton_ocr.tools.reference import DEFAULT_ENGINE, rapidocr_reader, reference_for

from .labels import load_samples, rotate_samples
from .readers import service_reader
from .runner import print_report, read_all, report, write_report
from .visualize import save_all


@dataclass(frozen=True)
class EvalOptions:
    labelled: Path  # a manifest.json folder or an ICDAR 2015 folder
    repository: Repository  # the pack read (and served when `url` is None)
    model: str = "ocr"  # entry point: ocr or ensemble_model
    url: str | None = None  # a running server's gRPC address; None: start one for the run
    parameters: Mapping[str, str] = field(default_factory=dict)  # request parameters (ocr only)
    reference: bool = False  # also run the pack's RapidOCR release in-process
    out: Path | None = None  # the JSON report
    visualize: Path | None = None  # a folder for the images with their polygons
    min_string_f1: float | None = None  # the gate: exit code 1 under it
    rotate: int = 0  # turn every image (and its boxes) by 90, 180 or 270 degrees first
    reference_engine: str = DEFAULT_ENGINE  # the runtime of the reference's Det, Cls and Rec


def parse_parameters(texts: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` texts (from --param) as a dict; the value may hold `=` itself."""
    parameters = {}
    for text in texts:
        key, equals, value = text.partition("=")
        if not equals:
            raise ValueError(f"--param {text!r} is not KEY=VALUE")
        parameters[key] = value
    return parameters


@contextlib.contextmanager
def service(url: str | None, repository: Repository) -> Iterator[str]:
    """The gRPC address of a running server: `url`, or one started here for the run."""
    if url:
        yield url
        return
    from triton_ocr.runtime.flags import ServerOptions, free_ports
    from triton_ocr.runtime.server import running_server

    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack)
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-eval-") as tmp,
        running_server(opts, log_file=Path(tmp) / "tritonserver.log"),
    ):
        yield f"127.0.0.1:{grpc}"


def run_evaluation(options: EvalOptions) -> int:
    """Print the tables (and write the report); 1 if string F1 is under `min_string_f1`."""
    labelled, pack, model = options.labelled, options.repository.pack, options.model
    parameters, rotate, min_string_f1 = options.parameters, options.rotate, options.min_string_f1
    out, visualize = options.out, options.visualize
    samples = rotate_samples(load_samples(labelled), rotate)
    name = f"{model} ({pack})" + (f" {dict(parameters)}" if parameters else "")
    name += f" turned {rotate} degrees" if rotate else ""
    # before the server starts: a pack without a reference (or RapidOCR missing) fails at once
    engine = options.reference_engine
    rapidocr = rapidocr_reader(pack, engine) if options.reference else None
    with service(options.url, options.repository) as address, OcrClient(address, "grpc") as client:
        results = read_all(samples, service_reader(client, model, parameters))
    reports = {name: report(results)}
    if rapidocr is not None:
        title = f"RapidOCR {reference_for(pack).version} in-process (reference)"
        title += f", Det/Cls/Rec on {engine}" if engine != DEFAULT_ENGINE else ""
        reports[title] = report(read_all(samples, rapidocr))
    for title, result in reports.items():
        print_report(title, result)
    if visualize:
        save_all(results, visualize)
        print(f"\nimages with polygons in {visualize}")
    if out:
        write_report(out, reports, {"command": " ".join(sys.argv), "set": str(labelled)})
        print(f"report: {out}")
    f1 = reports[name]["scenes_and_documents"]["string_f1"]
    if min_string_f1 is not None and (f1 is None or f1 < min_string_f1):
        print(f"string F1 {f1} is below the floor {min_string_f1}", file=sys.stderr)
        return 1
    return 0
