"""`triton-ocr demo`: the whole service once, end to end, on an image whose text is known.

Renders a sample, starts the real server on the pack, reads the sample through the client
library, prints what was rendered and what the service read, and stops the server.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from triton_ocr.client import OcrClient, TextLine
from triton_ocr.config.repository import Repository
from triton_ocr.runtime.flags import ServerOptions
from triton_ocr.runtime.server import running_server
from triton_ocr.tools.samples import render


@dataclass(frozen=True)
class DemoOptions:
    repository: Repository  # the pack served (its models exported)
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002


def run_demo(options: DemoOptions) -> list[TextLine]:
    """Print the sample's lines and the lines the service read (returned); the server's log goes
    to a temporary folder, shown only if it fails to start (ServerError)."""
    repository = options.repository
    sample = render()
    opts = ServerOptions(
        repository.path,
        "127.0.0.1",
        options.http_port,
        options.grpc_port,
        options.metrics_port,
        pack=repository.pack,
    )
    print("starting Triton ...", file=sys.stderr)
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-demo-") as tmp,
        running_server(opts, log_file=Path(tmp) / "tritonserver.log"),
        OcrClient(f"127.0.0.1:{options.http_port}") as client,
    ):
        lines = client.read(sample.png)
    print(f"sample image ({sample.size[0]}x{sample.size[1]}) rendered with:")
    for text in sample.texts:
        print(f"  {text}")
    print("the service read:")
    for line in lines:
        print(f"  {line.text}  (score {line.score:.3f})")
    sys.stdout.flush()
    return lines
