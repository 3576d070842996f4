"""The REST gateway's settings, with their defaults: one home, read by the app and by the
`triton-ocr gateway` command's options (a light module: the command line does not load FastAPI
to print its help)."""

from __future__ import annotations

from dataclasses import dataclass

from triton_ocr.contract import UPLOAD_TIMEOUT_S


@dataclass(frozen=True)
class GatewaySettings:
    triton_url: str  # the service's gRPC address, host:port
    timeout_s: float = UPLOAD_TIMEOUT_S  # per request, retries included
    max_body_bytes: int | None = None  # None: the server's max_image_bytes
    token: str | None = None  # a bearer token callers must send (None: no auth)
    channels: int = 2  # gRPC channels shared by all requests
    # uploads answered at once; beyond, a 503. One pod's `ocr` holds its instances' requests
    # and max_queue_size (12) waiting before it refuses (docs/reliability.md, Overload)
    max_in_flight: int = 16
    # uploads answered at once for one caller (its address); beyond, a 429
    max_per_client: int = 8
    # seconds an overload refusal waits before it is sent, so a tight retry loop slows itself
    refusal_delay_s: float = 1.0
