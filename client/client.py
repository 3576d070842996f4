"""OCR images with one call each to the server: `python client/client.py img.jpg [--json]`.

`read_images` is what `triton-ocr read` runs; this file also runs on its own (argparse, no
typer), next to the client library it demonstrates.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonclient.utils import InferenceServerException

from triton_ocr.client import OcrClient

DEFAULT_URLS = {"http": "localhost:8000", "grpc": "localhost:8001"}


@dataclass(frozen=True)
class ReadOptions:
    images: Sequence[Path]
    url: str | None = None  # host:port; None: the protocol's default (DEFAULT_URLS)
    protocol: str = "http"  # http or grpc
    as_json: bool = False  # one JSON record per image: text, polygon and score per line
    timeout: float = 60.0  # seconds to wait for each answer
    line: bool = False  # each image is one pre-cropped word or line: no detection


def read_images(options: ReadOptions) -> int:
    """Send each image to the OCR service and print the recognized lines; an image that cannot
    be read is reported on stderr (the others are still read) and the result is 1, else 0."""
    failed = False
    url = options.url or DEFAULT_URLS.get(options.protocol, "")
    with OcrClient(url, options.protocol, timeout=options.timeout) as client:
        for image in options.images:
            try:
                # a forced line goes to the `ocr` entry point, which takes request parameters
                lines = (
                    client.read_many([image], single_line="always")[0]
                    if options.line
                    else client.read(image)
                )
            except (ValueError, InferenceServerException) as exc:  # refused here or there
                print(f"error: {image}: {exc}", file=sys.stderr)
                failed = True
                continue
            if options.as_json:
                record = {"image": str(image), "lines": [found.as_dict() for found in lines]}
                print(json.dumps(record, ensure_ascii=False))
            else:
                if len(options.images) > 1:
                    print(f"== {image}")
                for found in lines:
                    print(found.text)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=read_images.__doc__)
    parser.add_argument("images", nargs="+", type=Path, help="Image files.")
    parser.add_argument("--url", help="Server address host:port (default per protocol).")
    parser.add_argument("--protocol", default="http", help="http or grpc.")
    parser.add_argument(
        "--json", dest="as_json", action="store_true", help="Print text, polygon and score."
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="Seconds to wait.")
    parser.add_argument(
        "--line", action="store_true", help="Each image is one pre-cropped word or line."
    )
    args = parser.parse_args(argv)
    for image in args.images:
        if not image.is_file():
            parser.error(f"{image} is not a file")
    return read_images(ReadOptions(**vars(args)))


if __name__ == "__main__":
    sys.exit(main())
