"""OCR files with the server: `python client/client.py scans/ --jsonl --words --overlay /tmp/ov`.

Arguments are files, folders (read recursively: images, PDFs and multi-page TIFFs) or `-` for a
list of paths on stdin. Each file is one call to the `ocr` entry point (a document's pages are
read by the server); `--concurrency N` keeps N calls in flight. Output: text (default), one
JSON object per file (`--json`) or per page as pages finish (`--jsonl`), hOCR or ALTO (`--format
hocr|alto`, into `--out`), or a searchable PDF (`--format pdf`: <name>.pdf in `--out`, the input's
pages under an invisible text layer; pages of a PDF that already have text are left as they are,
or `--redo-ocr`, `--force-ocr`); `--out DIR` saves each file's .txt, .json, .alto.xml and .hocr;
`--overlay DIR` draws what was found over each page. A progress bar goes to stderr when it is a
terminal, a summary line at the end; the exit code is 1 when a file failed or a page of one could
not be read (the others are still read, and each page's error is in every output).

`read_files` is what `triton-ocr read` runs; this file also runs on its own (argparse, no
typer), next to the client library it demonstrates.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.client.address import TRITON_PORTS, WrongAddress, check_protocol
from triton_ocr.client.formats import (
    FILE_FORMATS,
    FORMATS,
    TABLE_FORMATS,
    jsonl_records,
    render_markdown,
    render_text,
)
from triton_ocr.client.inputs import (
    OUT_SUFFIXES,
    PDF_TEXT_FLAGS,
    collect_inputs,
    jsonl_done,
    output_names,
    outputs_done,
    stdout_file,
)
from triton_ocr.client.results import Document

DEFAULT_URLS = {protocol: f"localhost:{port}" for protocol, port in TRITON_PORTS.items()}
OVERLAY_DPI = 200  # PDF pages drawn at this resolution, then scaled to the size the server read


@dataclass(frozen=True)
class ReadOptions:
    inputs: Sequence[Path]
    url: str | None = None  # host:port; None: the protocol's default (DEFAULT_URLS)
    protocol: str = "http"  # http or grpc
    output: str = "text"  # what goes to stdout: text, json (per file), jsonl (per page), hocr
    timeout: float = contract.REQUEST_TIMEOUT_S  # seconds each request may take, retries included
    line: bool = False  # each image is one pre-cropped word or line: no detection
    concurrency: int = 1  # requests in flight
    words: bool = False  # word boxes beside the lines
    out: Path | None = None  # folder for each input's .txt, .json, .md, .alto.xml and .hocr
    overlay: Path | None = None  # folder for one PNG per page, results drawn over it
    overlay_font: Path | None = None  # the overlay's font (None: overlay.WIDE_FONTS, Pillow's)
    resume: bool = False  # skip inputs already in --out, or in the --jsonl file stdout extends
    pdf_dpi: int | None = None  # None: the server's
    progress: bool | None = None  # None: when stderr is a terminal
    pdf_text: str = "skip"  # --format pdf, pages with text: skip, redo or force (PDF_TEXT_FLAGS)
    headers_footers: bool = False  # --format markdown (and .md): keep running headers, footers
    tables: bool | None = None  # None: for Markdown (--format markdown, or --out's .md)

    @property
    def asks_tables(self) -> bool:
        if self.tables is not None:
            return self.tables
        return self.output in TABLE_FORMATS or self.out is not None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.output not in FORMATS:
            raise ValueError(f"output must be one of {list(FORMATS)}, not {self.output!r}")
        if self.output in FILE_FORMATS and self.out is None:
            raise ValueError(f"--format {self.output} writes one file per input: give --out DIR")
        if self.resume and self.out is None and self.output != "jsonl":
            raise ValueError("--resume needs --out DIR or --jsonl")
        if self.pdf_text not in PDF_TEXT_FLAGS:
            raise ValueError(
                f"pdf_text must be one of {list(PDF_TEXT_FLAGS)}, not {self.pdf_text!r}"
            )
        if self.pdf_text != "skip" and self.output != "pdf":
            raise ValueError(f"{PDF_TEXT_FLAGS[self.pdf_text][0]} goes with --format pdf")


@dataclass
class Tally:
    """What the run has done so far (the progress bar and the summary line)."""

    files: int = 0
    pages: int = 0
    lines: int = 0
    failed: int = 0  # files that failed, or had a page that could not be read
    failed_pages: int = 0


def already_done(options: ReadOptions, names: dict[Path, str]) -> set[Path]:
    """The inputs an earlier run finished: all their --out files exist, or (--jsonl, standard
    output appended to a file) all their pages are in that file."""
    if options.out is not None:
        pdf = options.output == "pdf"
        return {path for path in options.inputs if outputs_done(options.out, names[path], pdf)}
    if options.output == "jsonl":
        target = stdout_file()
        if target is None:
            raise ValueError(
                "--resume needs --out DIR, or --jsonl with standard output appended to a file "
                "(>> results.jsonl)"
            )
        with open(target, encoding="utf-8", errors="replace") as existing:
            finished = jsonl_done(existing)
        return {path for path in options.inputs if str(path) in finished}
    return set()


def write_whole(path: Path, content: str | bytes) -> None:
    """Write `content` to `path` through a temporary name: a file is there whole or not at all
    (--resume trusts what it finds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    if isinstance(content, bytes):
        partial.write_bytes(content)
    else:
        partial.write_text(content, encoding="utf-8")
    os.replace(partial, path)


def save_outputs(out: Path, name: str, document: Document, headers_footers: bool = False) -> None:
    texts = {
        ".txt": document.text + "\n",
        ".json": json.dumps(document.to_dict(), ensure_ascii=False, indent=1) + "\n",
        ".md": document.to_markdown(headers_footers),
        ".alto.xml": document.to_alto(),
        ".hocr": document.to_hocr(),
    }
    for suffix in OUT_SUFFIXES:  # .hocr last: outputs_done sees all or none of them
        write_whole(out / f"{name}{suffix}", texts[suffix])


def read_searchable(
    client: OcrClient, data: bytes, options: ReadOptions, parameters: dict, target: Path
) -> Document:
    """--format pdf: read what the input's pages need (client/pdf.py), write the searchable PDF
    to `target`, and return what was read, its pages numbered as in the input (pages left as
    they are, with their own text, are not in it)."""
    from triton_ocr.client import pdf

    job = pdf.prepare(data, options.pdf_text)
    if job.send is None:
        document = Document(())
    else:
        read = client.read_document(job.send, word_boxes=True, **parameters)
        document = pdf.renumbered(job, read)
    write_whole(target, pdf.searchable_pdf(job, document))
    return document


def save_overlays(
    folder: Path, name: str, data: bytes, document: Document, font: Path | None = None
) -> None:
    """One PNG per page (<name>-p<N>.png): the page as the server read it, with its lines (and
    words) drawn over it. Needs the server extra (OpenCV and pypdfium2 read the pages here)."""
    from PIL import Image

    from triton_ocr.client.overlay import draw_overlay
    from triton_ocr.preprocessing.documents import open_pages
    from triton_ocr.settings import Documents, ImageLimits

    unlimited = ImageLimits(max_image_bytes=len(data), max_image_pixels=1 << 62)
    dpi = OVERLAY_DPI
    pages = Documents(pdf_dpi=dpi, max_pdf_dpi=dpi, max_pages=len(document.pages))
    with open_pages(data, unlimited, pages, dpi) as source:
        for page in document.pages:
            image = Image.fromarray(source.page(page.number)[:, :, ::-1])  # BGR -> RGB
            if image.size != (page.width, page.height):  # a PDF rendered at another dpi
                image = image.resize((page.width, page.height), Image.Resampling.LANCZOS)
            target = folder / f"{name}-p{page.number + 1}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            draw_overlay(image, page, font).save(target)


@contextmanager
def progress_bar(total: int, tally: Tally, show: bool) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr (files, pages, lines, pages/s, errors), or nothing; yields
    the function that redraws it."""
    try:  # rich comes with the CLI (typer's); the light client install may lack it: no bar
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
    except ImportError:
        show = False
    if not show:
        yield lambda: None
        return

    start = time.perf_counter()
    columns = (
        TextColumn("files"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    # the results printed above the bar when they share its terminal, never into it otherwise
    shared = sys.stdout.isatty()
    console = Console(stderr=True)
    with Progress(*columns, console=console, transient=True, redirect_stdout=shared) as progress:
        task = progress.add_task("read", total=total, status="")

        def redraw() -> None:
            rate = tally.pages / max(time.perf_counter() - start, 1e-9)
            status = (
                f"{tally.pages} pages · {tally.lines} lines · {rate:.2f} img/s · "
                f"{tally.failed} errors"
            )
            progress.update(task, completed=tally.files, status=status)

        yield redraw


def read_files(options: ReadOptions) -> int:
    """Send each input to the OCR service and write what it read (stdout, --out, --overlay); an
    input that cannot be read is reported on stderr (the others are still read) and the result
    is 1, else 0. A summary line goes to stderr at the end. An address where the protocol asked
    for does not answer raises address.WrongAddress before any input is read."""
    for wanted, flag in (
        (options.overlay is not None, "--overlay"),
        (options.output == "pdf", "--format pdf"),
    ):
        if wanted:
            try:
                import triton_ocr.client.pdf  # noqa: F401 (pikepdf, pdfium: the server extra)
            except ImportError as exc:
                message = f"{flag} reads the pages here: install triton-ocr[server] ({exc})"
                raise ValueError(message) from exc
    url = options.url or DEFAULT_URLS.get(options.protocol, "")
    check_protocol(url, options.protocol, "--protocol {}")
    names = output_names(options.inputs)
    done = already_done(options, names) if options.resume else set()
    todo = [path for path in options.inputs if path not in done]
    parameters: dict[str, object] = {}
    if options.line:  # the whole image is one line: no detection
        parameters["single_line"] = "always"
    if options.pdf_dpi is not None:
        parameters[contract.PDF_DPI] = options.pdf_dpi
    if options.asks_tables:
        parameters[contract.TABLES] = True
    local = threading.local()  # one client per worker thread
    clients: list[OcrClient] = []
    lock = threading.Lock()
    tally = Tally()

    def read_one(path: Path) -> Document:
        if not hasattr(local, "client"):
            local.client = OcrClient(url, options.protocol, timeout=options.timeout)
            with lock:
                clients.append(local.client)
        if not path.is_file():
            raise ValueError("not a file")
        data = path.read_bytes()
        if options.output == "pdf":
            assert options.out is not None  # ReadOptions: --format pdf needs --out
            document = read_searchable(
                local.client, data, options, parameters, options.out / f"{names[path]}.pdf"
            )
        else:
            # --out saves ALTO and hOCR, whose boxes are words'
            words = options.words or options.out is not None
            document = local.client.read_document(data, word_boxes=words, **parameters)
        document = Document(document.pages, str(path))
        if options.out is not None:
            save_outputs(options.out, names[path], document, options.headers_footers)
        if options.overlay is not None:
            save_overlays(options.overlay, names[path], data, document, options.overlay_font)
        return document

    def count(future: Future) -> None:
        """Tally one finished input as it finishes (the bar moves whatever the output order)."""
        error = future.exception()
        with lock:
            tally.files += 1
            if error is None:
                document = future.result()
                tally.pages += len(document.pages)
                tally.lines += sum(len(page.lines) for page in document.pages)
                tally.failed_pages += len(document.errors)
                tally.failed += bool(document.errors)
            else:
                tally.failed += 1
            redraw()

    show = sys.stderr.isatty() if options.progress is None else options.progress
    start = time.perf_counter()
    try:
        with (
            ThreadPoolExecutor(options.concurrency) as pool,
            progress_bar(len(todo), tally, show) as redraw,
        ):
            futures = {pool.submit(read_one, path): path for path in todo}
            for future in futures:
                future.add_done_callback(count)
            # jsonl: pages as files finish; the others in input order
            order = as_completed(futures) if options.output == "jsonl" else futures
            for future in order:
                error = future.exception()
                if error is not None:
                    if not isinstance(error, (ValueError, OSError, InferenceServerException)):
                        raise error  # a bug, not a file that cannot be read
                    print(f"error: {futures[future]}: {error}", file=sys.stderr, flush=True)
                    continue
                document = future.result()
                for problem in document.errors:  # each names its page
                    print(f"error: {futures[future]}: {problem}", file=sys.stderr, flush=True)
                if options.output == "jsonl":
                    sys.stdout.write(jsonl_records(document))
                elif options.output == "json":
                    sys.stdout.write(json.dumps(document.to_dict(), ensure_ascii=False) + "\n")
                elif options.output == "text":
                    sys.stdout.write(render_text(document, len(options.inputs) > 1))
                elif options.output == "markdown":
                    several = len(options.inputs) > 1
                    sys.stdout.write(render_markdown(document, several, options.headers_footers))
                sys.stdout.flush()
    finally:
        for client in clients:
            client.close()
    seconds = time.perf_counter() - start
    skipped = f" ({len(done)} done before, skipped)" if done else ""
    not_read = f" ({tally.failed_pages} pages not read)" if tally.failed_pages else ""
    rate = tally.pages / seconds if seconds else 0
    print(
        f"{len(todo)} files{skipped}, {tally.pages} pages, {tally.lines} lines, "
        f"{tally.failed} failed{not_read}, {seconds:.1f} s ({rate:.2f} pages/s)",
        file=sys.stderr,
    )
    return 1 if tally.failed else 0


def at_least_one(text: str) -> int:
    """argparse type of counts: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return value


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """The one declaration of `read`'s options: this script and `triton-ocr read` parse them."""
    parser = argparse.ArgumentParser(prog=prog, description=read_files.__doc__)
    parser.add_argument(
        "inputs",
        nargs="+",
        help="Files, folders (read recursively: images, PDFs, TIFFs), or - for a list of paths "
        "on stdin.",
    )
    parser.add_argument("--url", help="Server address host:port (default per protocol).")
    parser.add_argument(
        "--protocol", default="http", choices=tuple(DEFAULT_URLS), help="http or grpc."
    )
    parser.add_argument(
        "--format",
        dest="output",
        default="text",
        choices=FORMATS,
        help="text, json (per file), jsonl (per page), markdown, hocr, alto or pdf (searchable; "
        "the last three with --out).",
    )
    parser.add_argument(
        "--json", dest="output", action="store_const", const="json", help="--format json."
    )
    parser.add_argument(
        "--jsonl",
        dest="output",
        action="store_const",
        const="jsonl",
        help="--format jsonl: pages as they finish.",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=contract.REQUEST_TIMEOUT_S,
        help="Seconds each request may take, retries included: a server that refuses it as "
        "overloaded is asked again, backing off, until then.",
    )
    parser.add_argument(
        "--line",
        action="store_true",
        help="Each image is one pre-cropped word or line: no detection.",
    )
    parser.add_argument("--concurrency", type=at_least_one, default=1, help="Requests in flight.")
    parser.add_argument(
        "--words",
        action="store_true",
        help="Word boxes beside the lines (always with --out, for its ALTO and hOCR).",
    )
    parser.add_argument(
        "--headers-footers",
        action="store_true",
        help="Keep running headers and footers in the Markdown (--format markdown, .md).",
    )
    parser.add_argument(
        "--tables",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Find each page's tables and their cells (default: with --format markdown and "
        "--out, whose .md writes them).",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="Save each file's .txt, .json, .md, .alto.xml and .hocr (and .pdf) in this folder.",
    )
    parser.add_argument(
        "--overlay", type=Path, help="Save one PNG per page with the results drawn."
    )
    parser.add_argument(
        "--overlay-font",
        type=Path,
        help="A TrueType font for the overlay's text (default: a CJK font if installed).",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="Skip files already in --out, or in the file --jsonl output is appended to.",
    )
    parser.add_argument(
        "--pdf-dpi", type=at_least_one, help="Render PDF pages at this DPI (default: the server's)."
    )
    pdf_text = parser.add_mutually_exclusive_group()
    for mode, (flag, what) in PDF_TEXT_FLAGS.items():
        pdf_text.add_argument(
            flag, dest="pdf_text", action="store_const", const=mode, help=f"--format pdf: {what}."
        )
    parser.set_defaults(pdf_text="skip")
    args = parser.parse_args(argv)
    inputs = collect_inputs(args.inputs)
    if not inputs:
        parser.error("no image or document files found in the arguments")
    try:
        return read_files(ReadOptions(**{**vars(args), "inputs": inputs}))
    except WrongAddress as exc:  # one line, no usage: the arguments parsed, the server is elsewhere
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
