"""OCR images with one call each to the server: `python client/client.py img.jpg [--json]`.

Arguments are files, folders (read recursively: every file with an image extension) or `-` for
a list of paths on stdin, one per line. `--concurrency N` keeps N requests in flight; results
print in input order; a summary line goes to stderr at the end.

`read_images` is what `triton-ocr read` runs; this file also runs on its own (argparse, no
typer), next to the client library it demonstrates.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tritonclient.utils import InferenceServerException

from triton_ocr.client import OcrClient

DEFAULT_URLS = {"http": "localhost:8000", "grpc": "localhost:8001"}
# What a folder contributes: the image formats the server decodes (a name's suffix, any case).
IMAGE_SUFFIXES = frozenset(
    {".bmp", ".gif", ".jpeg", ".jpg", ".png", ".tif", ".tiff", ".webp", ".pbm", ".pgm", ".ppm"}
)


def collect_inputs(arguments: Iterable[str], stdin: TextIO | None = None) -> list[Path]:
    """Files as given, folders' image files (recursively, sorted), and `-`: paths on stdin
    (one per line, blank lines skipped), each path once, in the order met. A path that does
    not exist is kept: reading it reports the error."""
    found: list[Path] = []
    for argument in arguments:
        if argument == "-":
            lines = (stdin or sys.stdin).read().splitlines()
            found.extend(Path(line.strip()) for line in lines if line.strip())
        elif Path(argument).is_dir():
            found.extend(
                sorted(
                    p
                    for p in Path(argument).rglob("*")
                    if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
                )
            )
        else:
            found.append(Path(argument))
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class ReadOptions:
    images: Sequence[Path]
    url: str | None = None  # host:port; None: the protocol's default (DEFAULT_URLS)
    protocol: str = "http"  # http or grpc
    as_json: bool = False  # one JSON record per image: text, polygon and score per line
    timeout: float = 60.0  # seconds to wait for each answer
    line: bool = False  # each image is one pre-cropped word or line: no detection
    concurrency: int = 1  # requests in flight


def read_images(options: ReadOptions) -> int:
    """Send each image to the OCR service and print the recognized lines, in input order; an
    image that cannot be read is reported on stderr (the others are still read) and the result
    is 1, else 0. A summary line goes to stderr at the end."""
    if options.concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {options.concurrency}")
    url = options.url or DEFAULT_URLS.get(options.protocol, "")
    local = threading.local()  # one client per worker thread
    clients: list[OcrClient] = []

    def read_one(image: Path) -> tuple[Path, list | None, str | None]:
        if not hasattr(local, "client"):
            local.client = OcrClient(url, options.protocol, timeout=options.timeout)
            clients.append(local.client)
        try:
            if not image.is_file():
                raise ValueError("not a file")
            # a forced line goes to the `ocr` entry point, which takes request parameters
            lines = (
                local.client.read_many([image], single_line="always")[0]
                if options.line
                else local.client.read(image)
            )
        except (ValueError, InferenceServerException) as exc:  # refused here or there
            return image, None, str(exc)
        return image, lines, None

    failed = lines_read = 0
    start = time.perf_counter()
    try:
        with ThreadPoolExecutor(options.concurrency) as pool:
            for image, lines, error in pool.map(read_one, options.images):
                if error is not None:
                    print(f"error: {image}: {error}", file=sys.stderr)
                    failed += 1
                    continue
                lines_read += len(lines)
                if options.as_json:
                    record = {"image": str(image), "lines": [found.as_dict() for found in lines]}
                    print(json.dumps(record, ensure_ascii=False), flush=True)
                else:
                    if len(options.images) > 1:
                        print(f"== {image}")
                    for found in lines:
                        print(found.text)
                    sys.stdout.flush()
    finally:
        for client in clients:
            client.close()
    seconds = time.perf_counter() - start
    print(
        f"{len(options.images)} files, {lines_read} lines, {failed} failed, {seconds:.1f} s "
        f"({len(options.images) / seconds if seconds else 0:.2f} files/s)",
        file=sys.stderr,
    )
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=read_images.__doc__)
    parser.add_argument(
        "images", nargs="+", help="Image files, folders (recursive), or - for paths on stdin."
    )
    parser.add_argument("--url", help="Server address host:port (default per protocol).")
    parser.add_argument("--protocol", default="http", help="http or grpc.")
    parser.add_argument(
        "--json", dest="as_json", action="store_true", help="Print text, polygon and score."
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="Seconds to wait.")
    parser.add_argument(
        "--line", action="store_true", help="Each image is one pre-cropped word or line."
    )
    parser.add_argument("--concurrency", type=int, default=1, help="Requests in flight.")
    args = parser.parse_args(argv)
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    images = collect_inputs(args.images)
    if not images:
        parser.error("no image files found in the arguments")
    return read_images(ReadOptions(**{**vars(args), "images": images}))


if __name__ == "__main__":
    sys.exit(main())
