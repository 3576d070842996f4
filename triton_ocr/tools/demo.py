"""`triton-ocr demo`: the whole service once, end to end, on an image whose text is known.

Renders a sample, starts the real server on the pack, reads the sample through the client
library and once more through the REST gateway (as curl would), prints what was rendered and
what the service read, and stops both.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from triton_ocr.client import OcrClient, TextLine
from triton_ocr.config.repository import Repository
from triton_ocr.contract import GRPC_PORT, HTTP_PORT, METRICS_PORT, REST_PORT
from triton_ocr.serving.errors import ServerError
from triton_ocr.serving.flags import ServerOptions
from triton_ocr.serving.server import gateway_process, running_server, wait_until_ready
from triton_ocr.tools.samples import render

# the sample as the demo's curl line sends it, kept for that line to work again
SAMPLE_PATH = Path(tempfile.gettempdir()) / "triton-ocr-demo" / "sample.png"


@dataclass(frozen=True)
class DemoOptions:
    repository: Repository  # the pack served (its models exported)
    http_port: int = HTTP_PORT
    grpc_port: int = GRPC_PORT
    metrics_port: int = METRICS_PORT
    rest_port: int = REST_PORT  # 0: no REST gateway


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
        rest = rest_text(sample.png, options) if options.rest_port else None
    print(f"sample image ({sample.size[0]}x{sample.size[1]}) rendered with:")
    for text in sample.texts:
        print(f"  {text}")
    print("the service read:")
    for line in lines:
        print(f"  {line.text}  (score {line.score:.3f})")
    if rest is not None:
        command, text = rest
        base = f"http://127.0.0.1:{options.rest_port}"
        print(f"the REST gateway read the same ({base}; `triton-ocr serve` runs it):")
        print(f"  $ {shlex.join(command)}")
        print("".join(f"  | {row}".rstrip() + "\n" for row in text.splitlines()), end="")
        print(f"  (with `triton-ocr serve` running: the same line again, and the page at {base}/)")
    sys.stdout.flush()
    return lines


def rest_text(image: bytes, options: DemoOptions) -> tuple[list[str], str]:
    """The sample read once more through a REST gateway beside the demo's Triton, by the curl
    line printed (urllib's same POST where curl is not installed); the sample is kept at
    SAMPLE_PATH, so the line works again against `triton-ocr serve`."""
    gateway = gateway_process("127.0.0.1", options.grpc_port, options.rest_port)
    base = f"http://127.0.0.1:{options.rest_port}"
    SAMPLE_PATH.parent.mkdir(parents=True, exist_ok=True)
    SAMPLE_PATH.write_bytes(image)
    url = f"{base}/v1/ocr?format=text"
    command = ["curl", "-sS", "-F", f"file=@{SAMPLE_PATH}", url]
    try:
        wait_until_ready(gateway, base)
        if shutil.which("curl") is not None:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                raise ServerError(f"curl could not reach the REST gateway: {done.stderr}")
            return command, done.stdout
        request = urllib.request.Request(url, data=image, headers={"Content-Type": "image/png"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return command, response.read().decode("utf-8")
    finally:
        gateway.terminate()
        gateway.wait(timeout=30)
