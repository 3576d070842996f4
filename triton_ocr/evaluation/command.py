"""`triton-ocr eval`: start (or reach) the service, read a labelled set, report, compare."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from triton_ocr.client import OcrClient

from .labels import load_samples, rotate_samples
from .readers import service_reader
from .reference import rapidocr_reader, reference_for
from .runner import print_report, read_all, report, write_report
from .visualize import save_all


@contextlib.contextmanager
def service(url: str | None, repository: Path, pack: str) -> Iterator[str]:
    """The gRPC address of a running server: `url`, or one started here for the run."""
    if url:
        yield url
        return
    from triton_ocr.server import ServerOptions, free_ports, running_server

    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(repository, "127.0.0.1", http, grpc, metrics, pack=pack)
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-eval-") as tmp,
        running_server(opts, log_file=Path(tmp) / "tritonserver.log"),
    ):
        yield f"127.0.0.1:{grpc}"


def run_evaluation(
    labelled: Path,
    repository: Path,
    pack: str,
    model: str,
    url: str | None,
    parameters: Mapping[str, str],
    reference: bool,
    out: Path | None,
    visualize: Path | None,
    min_string_f1: float | None,
    rotate: int = 0,
) -> int:
    """Print the tables (and write the report); 1 if string F1 is under `min_string_f1`."""
    samples = rotate_samples(load_samples(labelled), rotate)
    name = f"{model} ({pack})" + (f" {dict(parameters)}" if parameters else "")
    name += f" turned {rotate} degrees" if rotate else ""
    # before the server starts: a pack without a reference (or RapidOCR missing) fails at once
    rapidocr = rapidocr_reader(pack) if reference else None
    with service(url, repository, pack) as address, OcrClient(address, "grpc") as client:
        results = read_all(samples, service_reader(client, model, parameters))
    reports = {name: report(results)}
    if rapidocr is not None:
        title = f"RapidOCR {reference_for(pack).version} in-process (reference)"
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
