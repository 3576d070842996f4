"""`triton-ocr eval`: start (or reach) the service, read labelled splits, report, compare."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from triton_ocr.client import OcrClient
from triton_ocr.config.repository import Repository, pack_of
from triton_ocr.contract import ENTRY_STEPS, OCR_MODEL
from triton_ocr.tools.reference import DEFAULT_ENGINE, rapidocr_reader, reference_for

from .born_digital import is_pdf_set, load_pdfs, print_pdfs, score_pdfs
from .born_digital import summary as pdf_summary
from .labels import Sample, load_samples, rotate_samples
from .markdown import print_markdown, score_markdown
from .markdown import summary as markdown_summary
from .readers import service_reader
from .runner import print_report, read_all, report, write_report
from .tables import is_table_set, load_tables, print_tables, score_tables, summary
from .visualize import save_all


@dataclass(frozen=True)
class EvalOptions:
    labelled: tuple[Path, ...]  # splits: manifest.json folders or ICDAR 2015 folders
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
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack)
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-eval-") as tmp,
        running_server(opts, log_file=Path(tmp) / "tritonserver.log"),
    ):
        yield f"127.0.0.1:{grpc}"


def held_out(samples: list[Sample]) -> tuple[list[Sample], int]:
    """The samples a report may count, and how many were left out: those marked as looked at
    while a setting was chosen (`held_out: false`)."""
    kept = [sample for sample in samples if sample.held_out]
    return kept, len(samples) - len(kept)


def served_pack(url: str, model: str) -> str:
    """The pack a running server serves, as the entry point's first model names it."""
    import tritonclient.grpc as grpcclient

    with grpcclient.InferenceServerClient(url) as client:
        config = client.get_model_config(ENTRY_STEPS[model], as_json=True)["config"]
    return pack_of(config)


def run_evaluation(options: EvalOptions) -> int:
    """Print each split's tables (and write the report); 1 if the service's string F1 is under
    `min_string_f1` on any split."""
    pack, model = options.repository.pack, options.model
    if options.url and (served := served_pack(options.url, model)) != pack:
        # the report would carry the wrong pack's name (and --reference its RapidOCR)
        raise ValueError(f"the server at {options.url} serves {served}: pass --pack {served}")
    parameters, rotate, min_string_f1 = options.parameters, options.rotate, options.min_string_f1
    out, visualize = options.out, options.visualize
    splits = {}
    table_sets = [labelled for labelled in options.labelled if is_table_set(labelled)]
    pdf_sets = [labelled for labelled in options.labelled if is_pdf_set(labelled)]
    for labelled in options.labelled:
        if labelled in table_sets or labelled in pdf_sets:
            continue
        samples, left_out = held_out(rotate_samples(load_samples(labelled), rotate))
        splits[str(labelled)] = (samples, left_out)
    name = f"{model} ({pack})" + (f" {dict(parameters)}" if parameters else "")
    name += f" turned {rotate} degrees" if rotate else ""
    # before the server starts: a pack without a reference (or RapidOCR missing) fails at once
    engine = options.reference_engine
    rapidocr = rapidocr_reader(pack, engine) if options.reference else None
    title = f"RapidOCR {reference_for(pack).version} in-process (reference)"
    title += f", Det/Cls/Rec on {engine}" if engine != DEFAULT_ENGINE else ""
    reports: dict[str, dict[str, dict]] = {}
    every_result = []
    table_rows: dict[str, tuple[list[dict], int]] = {}  # scored tables, how many left out
    markdown_rows: dict[str, list[dict]] = {}  # pages labelled with headings, as Markdown
    pdf_rows: dict[str, tuple[list[dict], int]] = {}  # born-digital PDFs, how many left out
    with service(options.url, options.repository) as address, OcrClient(address, "grpc") as client:
        for split, (samples, _) in splits.items():
            results = read_all(samples, service_reader(client, model, parameters))
            reports[split] = {name: report(results)}
            every_result += results
            # Markdown is written from blocks, which only `ocr` returns
            scored = model == OCR_MODEL
            markdown_rows[split] = score_markdown(samples, client, parameters) if scored else []
        for folder in table_sets:
            every = load_tables(folder)
            kept = [sample for sample in every if sample.held_out]
            table_rows[str(folder)] = (
                score_tables(kept, client, parameters),
                len(every) - len(kept),
            )
        for folder in pdf_sets:
            pdfs = load_pdfs(folder)
            held = [sample for sample in pdfs if sample.held_out]
            pdf_rows[str(folder)] = (score_pdfs(held, client, parameters), len(pdfs) - len(held))
    for split, (samples, _) in splits.items():
        if rapidocr is not None:
            reports[split][title] = report(read_all(samples, rapidocr))
    failed = []
    for split, (samples, left_out) in splits.items():
        aside = f"; {left_out} left out (not held out)" if left_out else ""
        print(f"\n######## {split}: {len(samples)} images{aside}")
        for heading, result in reports[split].items():
            print_report(heading, result)
        print_markdown(f"{OCR_MODEL}, {pack}", markdown_rows[split])
        if markdown_rows[split]:  # beside the service's scores of the split, read through ocr
            reports[split][name]["markdown"] = {
                **markdown_summary(markdown_rows[split]),
                "per_page": markdown_rows[split],
            }
        f1 = reports[split][name]["scenes_and_documents"]["string_f1"]
        if min_string_f1 is not None and (f1 is None or f1 < min_string_f1):
            failed.append(f"string F1 {f1} on {split} is below the floor {min_string_f1}")
    for table_set, (rows, left_out) in table_rows.items():
        print_tables(f"{table_set}, {name}", rows, left_out)
        reports[table_set] = {name: {"tables": summary(rows), "per_table": rows}}
    for pdf_set, (rows, left_out) in pdf_rows.items():
        print_pdfs(f"{pdf_set}, {name}", rows, left_out)
        reports[pdf_set] = {name: {"pdfs": pdf_summary(rows), "per_file": rows}}
    if visualize:
        save_all(every_result, visualize)
        print(f"\nimages with polygons in {visualize}")
    if out:
        write_report(out, reports, {"command": " ".join(sys.argv), "splits": list(splits)})
        print(f"report: {out}")
    for line in failed:
        print(line, file=sys.stderr)
    return 1 if failed else 0
