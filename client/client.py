"""OCR an image with one call to the server: `python client/client.py img.jpg [--json]`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from tritonclient.utils import InferenceServerException

from triton_ocr.client import OcrClient

DEFAULT_URLS = {"http": "localhost:8000", "grpc": "localhost:8001"}


def read(
    images: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="Image files."),
    url: str = typer.Option(None, help="Server address host:port (default per protocol)."),
    protocol: str = typer.Option("http", help="http or grpc."),
    as_json: bool = typer.Option(False, "--json", help="Print text, polygon and score per line."),
    timeout: float = typer.Option(60.0, help="Seconds to wait for the answer."),
    line: bool = typer.Option(
        False, "--line", help="Each image is one pre-cropped word or line: no detection."
    ),
) -> None:
    """Send each image to the OCR service and print the recognized lines; an image that cannot
    be read is reported on stderr (the others are still read) and the exit code is 1."""
    failed = False
    with OcrClient(url or DEFAULT_URLS.get(protocol, ""), protocol, timeout=timeout) as client:
        for image in images:
            try:
                # a forced line goes to the `ocr` entry point, which takes request parameters
                lines = (
                    client.read_many([image], single_line="always")[0]
                    if line
                    else client.read(image)
                )
            except (ValueError, InferenceServerException) as exc:  # refused here or there
                typer.echo(f"error: {image}: {exc}", err=True)
                failed = True
                continue
            if as_json:
                record = {"image": str(image), "lines": [found.as_dict() for found in lines]}
                print(json.dumps(record, ensure_ascii=False))
            else:
                if len(images) > 1:
                    print(f"== {image}")
                for found in lines:
                    print(found.text)
    if failed:
        raise typer.Exit(1)


def main() -> None:
    typer.run(read)


if __name__ == "__main__":
    main()
