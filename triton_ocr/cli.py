"""`triton-ocr`: export models, serve them locally, read images, run the demo."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import typer

from triton_ocr.client.client import read as read_command
from triton_ocr.packs import DEFAULT_PACK, PACKS

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
export_app = typer.Typer(
    no_args_is_help=True, help="Put a model pack's ONNX files into a repository."
)
app.add_typer(export_app, name="export")
app.command("read")(read_command)

REPOSITORY_HELP = "Triton model repository (default: $TRITON_OCR_REPOSITORY or ./repository)."
# the benchmark's and the tuning's image set: rendered images plus these when present
SHARED_EVAL_OPTION = typer.Option(
    Path("../shared/eval"), help="Labelled real images to add to the set (if present)."
)


def default_repository() -> Path:
    return Path(os.environ.get("TRITON_OCR_REPOSITORY", "repository"))


def export_pp_ocr(repository: Path | None, pack: str) -> None:
    from triton_ocr.export.ppocr import export_ppocr

    try:
        written = export_ppocr(repository or default_repository(), pack)
    except (FileNotFoundError, ValueError) as exc:  # ValueError: a file that misfits its config
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    for path in written:
        typer.echo(f"wrote {path}")


@export_app.command("ppocr-v6")
def export_ppocr_v6_command(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
) -> None:
    """The default pack: PP-OCRv6 small detection and recognition (18,708 characters, Latin
    diacritics included) and the 0/180° classifier, taken out of the rapidocr 3.10.0 wheel."""
    export_pp_ocr(repository, "ppocr-v6")


@export_app.command("ppocr")
def export_ppocr_command(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
) -> None:
    """The lighter pack: PP-OCRv4 mobile detection, recognition and the 0/180° classifier,
    taken out of the rapidocr-onnxruntime 1.4.4 wheel. Serve with `triton-ocr serve --pack
    ppocr`."""
    export_pp_ocr(repository, "ppocr")


def exported(repository: Path | None, pack: str = DEFAULT_PACK) -> Path:
    """The repository (default: the project's) with a PP-OCR pack (default: the default pack)
    exported into it."""
    repository = repository or default_repository()
    export_pp_ocr(repository, pack)
    return repository


@export_app.command("east-str")
def export_east_str_command(
    east: Path = typer.Option(..., help="The guide's frozen_east_text_detection.pb."),
    str_checkpoint: Path = typer.Option(..., "--str", help="The guide's None-ResNet-None-CTC.pth."),
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
) -> None:
    """The Triton guide's EAST detector (tf2onnx) + ResNet-CTC recognizer (torch.onnx).

    Needs the export extra: pip install 'triton-ocr[export]'.
    """
    try:
        from triton_ocr.export.east_str import export_east_str
    except ImportError as exc:
        typer.echo(
            f"error: {exc}; install the converters: pip install 'triton-ocr[export]'", err=True
        )
        raise typer.Exit(1) from exc
    try:
        written = export_east_str(repository or default_repository(), east, str_checkpoint)
    except (FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo("serve it with: triton-ocr serve --pack east-str")


@app.command()
def serve(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    host: str = typer.Option(
        "127.0.0.1", envvar="TRITON_OCR_HOST", help="Bind address (loopback unless told otherwise)."
    ),
    http_port: int = typer.Option(8000),
    grpc_port: int = typer.Option(8001),
    metrics_port: int = typer.Option(8002),
    log_verbose: int = typer.Option(0, help="Triton's --log-verbose level."),
    pack: str = typer.Option(DEFAULT_PACK, help=f"Model pack: {' or '.join(PACKS)}."),
    container: bool = typer.Option(
        False, help="Run the container's own tritonserver and backends (Docker entrypoint)."
    ),
    restart: bool = typer.Option(
        True, help="Start tritonserver again if it exits on its own (a crash)."
    ),
) -> None:
    """Start the real Triton server (from the nvidia-pytriton wheel) until Ctrl-C/SIGTERM.

    Model load/unload, shared memory, trace and logging APIs need the key in
    $TRITON_OCR_ADMIN_KEY (header triton-ocr-admin-key); without it they stay closed. A model
    whose stub process dies is reloaded; a crashed tritonserver is started again."""
    from triton_ocr.server import ServerError, ServerOptions, running_server

    if pack not in PACKS:
        typer.echo(f"error: unknown pack {pack!r}; choose from {', '.join(PACKS)}", err=True)
        raise typer.Exit(2)
    opts = ServerOptions(
        repository or default_repository(),
        host,
        http_port,
        grpc_port,
        metrics_port,
        log_verbose,
        pack,
        system_triton=container,
    )
    # SIGTERM stops like Ctrl-C: Triton finishes in-flight requests, then we exit 0.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while True:
            started = time.monotonic()
            with running_server(opts) as process:
                typer.echo(
                    f"ready: http://{host}:{http_port}  grpc {host}:{grpc_port}  "
                    f"metrics http://{host}:{metrics_port}/metrics  (Ctrl-C stops)",
                    err=True,
                )
                code = process.wait()
            if not restart:
                raise typer.Exit(code or 0)
            typer.echo(f"tritonserver exited on its own (code {code}); starting it again", err=True)
            if time.monotonic() - started < 60:
                time.sleep(5)  # a crash loop does not spin
    except KeyboardInterrupt:
        typer.echo("stopped", err=True)
    except ServerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


@app.command()
def bench(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    out: Path = typer.Option(Path("bench-results"), help="Folder for benchmark.json/.png."),
    shared_eval: Path = SHARED_EVAL_OPTION,
    rounds: int = typer.Option(2, help="Interleaved rounds over the whole image set."),
    concurrency: list[int] = typer.Option([1, 2, 4, 8], help="Client concurrencies to measure."),
    floor_threads: int = typer.Option(2, help="onnxruntime intra-op threads of row B."),
    pack: str = typer.Option(
        DEFAULT_PACK, help="PP-OCR pack to serve: ppocr-v6 or ppocr (its RapidOCR is row A)."
    ),
) -> None:
    """Benchmark the pack's RapidOCR release in-process, the in-process floor, the tutorial's
    design, and the server's ensemble_model and ocr over HTTP/gRPC (needs the bench
    environment: make bench)."""
    from triton_ocr.bench import run_benchmark
    from triton_ocr.evaluation.reference import ReferenceNotInstalled, reference_for

    try:
        reference_for(pack)  # before the export: east-str has no RapidOCR to compare with
        repository = exported(repository, pack)
        run_benchmark(repository, out, shared_eval, rounds, concurrency, floor_threads, pack)
    except (ValueError, ReferenceNotInstalled) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


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
    from triton_ocr.tuning import Variant, run_tuning

    repository = exported(repository)
    loads = [tuple(int(x) for x in text.split("x")) for text in load]
    run_tuning(repository, out, shared_eval, [Variant.parse(v) for v in variant], loads, passes)


@app.command("eval")
def evaluate(
    labelled: Path = typer.Argument(..., help="A manifest.json folder or an ICDAR 2015 folder."),
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
) -> None:
    """Accuracy on a labelled set: word-crop exact match and CER; string, token and detection
    scores of scenes and documents; the images with misses."""
    from triton_ocr.evaluation.command import run_evaluation
    from triton_ocr.evaluation.reference import ReferenceNotInstalled

    parameters = dict(p.split("=", 1) for p in param)
    try:
        code = run_evaluation(
            labelled,
            repository or default_repository(),
            pack,
            model,
            url,
            parameters,
            reference,
            out,
            visualize,
            min_string_f1,
            rotate,
        )
    except (ValueError, ReferenceNotInstalled) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
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
) -> None:
    """Mixed real and bad images from many clients over HTTP and gRPC to both entry points:
    counts unexpected errors and answers that differ from the same image's answer alone, and
    samples the server's memory and /dev/shm (a bounded script, not a test)."""
    from triton_ocr.reliability.soak import run_soak

    repository = exported(repository)
    report = run_soak(repository, minutes, concurrency, shared_eval, out, warmup)
    if report["unexpected"] or report["mismatches"] or not report["server_alive_at_end"]:
        raise typer.Exit(1)


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
    from triton_ocr.reliability.faults import run_faults

    repository = exported(repository)
    run_faults(repository, shared_eval, out, [k for k in kill if k], freeze, bls_timeout, supervise)


@app.command()
def doctor(
    fix: bool = typer.Option(False, help="Install a missing libpython with apt-get (as root)."),
) -> None:
    """Check that the local Triton runtime can start (server binary, stub, libpython)."""
    from triton_ocr.server import ServerError, ensure_libpython

    try:
        typer.echo(ensure_libpython(fix))
    except ServerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


@app.command()
def demo(
    repository: Path = typer.Option(None, help=REPOSITORY_HELP),
    http_port: int = typer.Option(8000),
    grpc_port: int = typer.Option(8001),
    metrics_port: int = typer.Option(8002),
    pack: str = typer.Option(DEFAULT_PACK, help="PP-OCR pack: ppocr-v6 or ppocr."),
) -> None:
    """Export a PP-OCR pack (default: the default pack), start the server, OCR a rendered
    sample, print it, stop."""
    from triton_ocr.client import OcrClient
    from triton_ocr.samples import render
    from triton_ocr.server import ServerError, ServerOptions, running_server

    repository = exported(repository, pack)  # the wheel is cached after the first run
    sample = render()
    opts = ServerOptions(repository, "127.0.0.1", http_port, grpc_port, metrics_port, pack=pack)
    typer.echo("starting Triton ...", err=True)
    with tempfile.TemporaryDirectory(prefix="triton-ocr-demo-") as tmp:
        try:
            with (
                running_server(opts, log_file=Path(tmp) / "tritonserver.log"),
                OcrClient(f"127.0.0.1:{http_port}") as client,
            ):
                lines = client.read(sample.png)
        except ServerError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
    typer.echo(f"sample image ({sample.size[0]}x{sample.size[1]}) rendered with:")
    for text in sample.texts:
        typer.echo(f"  {text}")
    typer.echo("the service read:")
    for line in lines:
        typer.echo(f"  {line.text}  (score {line.score:.3f})")
    sys.stdout.flush()
