"""Clients that back off: an overload refusal is retried until the caller's deadline (whatever
`retries` says), each wait at least the server's Retry-After, and a call that runs out of time
ends with ServerOverloaded, which says so; `triton-ocr read` and the OCRmyPDF plugin, clients
through OcrClient, do the same. The HTTP part talks to a real HTTP server that refuses inference
as an overloaded Triton, or a proxy in front of one, would (and serves the models' configs)."""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from tritonclient.utils import InferenceServerException

from tests.conftest import REPOSITORY
from triton_ocr.client import AsyncOcrClient, OcrClient, ServerOverloaded
from triton_ocr.client.client import main as read_main
from triton_ocr.client.ocr_client import is_overload, with_retries
from triton_ocr.client.retry_after import retry_after_seconds
from triton_ocr.config.repository import Repository
from triton_ocr.settings import ImageLimits
from triton_ocr.tools.samples import render

from .test_client import INVALID, UNAVAILABLE, FakeClock, failing

QUEUE_FULL = InferenceServerException("Exceeds maximum queue size", status="StatusCode.UNAVAILABLE")
LIMITS = ImageLimits(max_image_bytes=1 << 25, max_image_pixels=50_000_000)


def test_overload_refusals_are_told_from_other_failures():
    assert is_overload(QUEUE_FULL)
    assert is_overload(InferenceServerException("Request timeout expired", status="503"))
    assert is_overload(InferenceServerException("slow down", status="429"))
    assert not is_overload(UNAVAILABLE)  # a restarting stub: transient, not overload
    assert not is_overload(INVALID) and not is_overload(TimeoutError())


def test_overload_is_retried_past_the_count_until_the_deadline():
    clock = FakeClock()
    call, calls = failing([QUEUE_FULL] * 100, clock=clock)
    with pytest.raises(ServerOverloaded, match="the server was overloaded") as raised:
        with_retries(call, 30.0, 0, 0.5, clock, clock.sleep)
    assert len(calls) > 4 and clock.now < 30.0
    assert str(raised.value.status()) == "StatusCode.UNAVAILABLE"
    assert f"{len(calls)} tries" in str(raised.value)
    assert max(clock.sleeps) <= 16.0  # doubling, capped


def test_other_transient_failures_keep_the_count():
    clock = FakeClock()
    call, calls = failing([UNAVAILABLE] * 100, clock=clock)
    with pytest.raises(InferenceServerException) as raised:
        with_retries(call, 1000.0, 2, 0.5, clock, clock.sleep)
    assert len(calls) == 3 and not isinstance(raised.value, ServerOverloaded)


def test_overload_retries_may_stop_sooner_than_the_deadline():
    clock = FakeClock()
    call, calls = failing([QUEUE_FULL] * 100, clock=clock)
    with pytest.raises(ServerOverloaded):
        with_retries(call, 30.0, 3, 0.5, clock, clock.sleep, overload_s=0)
    assert len(calls) == 1  # passed on at once (the gateway's own callers back off)
    clock = FakeClock()
    call, calls = failing([QUEUE_FULL] * 100, clock=clock)
    with pytest.raises(ServerOverloaded):
        with_retries(call, 30.0, 3, 0.5, clock, clock.sleep, overload_s=3.0)
    assert len(calls) > 1 and clock.now < 3.0


def test_a_retry_after_is_waited_at_least():
    hinted = InferenceServerException("busy", status="503")
    hinted.retry_after = 7.0
    clock = FakeClock()
    call, calls = failing([hinted, hinted], clock=clock)
    assert with_retries(call, 60.0, 0, 0.5, clock, clock.sleep) == "ok"
    assert len(clock.sleeps) == 2 and all(7.0 <= wait <= 8.4 for wait in clock.sleeps)


def test_retry_after_as_seconds_or_a_date():
    assert retry_after_seconds("5") == 5.0 and retry_after_seconds(" 0 ") == 0.0
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_seconds(date, now) == pytest.approx(30.0)
    assert retry_after_seconds(email.utils.formatdate(now - 30, usegmt=True), now) == 0.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None


class Refusing(BaseHTTPRequestHandler):
    """Every inference request: 503, Retry-After 1, Triton's error body; the times noted."""

    tries: list[float] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).tries.append(time.monotonic())
        body = json.dumps({"error": "the service is overloaded"}).encode()
        self.send_response(503)
        self.send_header("Retry-After", "1")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 (ready, and a model's config, as Triton's HTTP API answers)
        model = self.path.removeprefix("/v2/models/").removesuffix("/config")
        ready = self.path == "/v2/health/ready"
        body = b"" if ready else json.dumps(Repository(REPOSITORY).config_dict(model)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def refusing():
    Refusing.tries = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def check_tries(tries: list[float], seconds: float) -> None:
    assert len(tries) >= 2
    gaps = [later - earlier for earlier, later in zip(tries, tries[1:], strict=False)]
    assert min(gaps) >= 0.95  # Retry-After: 1, honoured although the backoff starts at 0.5
    assert tries[-1] - tries[0] < seconds


def test_the_blocking_client_honours_retry_after_and_gives_up_as_overloaded(refusing):
    image = render().png
    client = OcrClient(refusing, "http", timeout=3.5, retries=0, limits=LIMITS)
    with client, pytest.raises(ServerOverloaded, match="overloaded") as raised:
        client.read_many([image])
    assert str(raised.value.status()) == "503"
    check_tries(Refusing.tries, 3.5)


def test_the_async_client_honours_retry_after_and_gives_up_as_overloaded(refusing):
    image = render().png

    async def read():
        async with AsyncOcrClient(refusing, "http", timeout=3.5, retries=0, limits=LIMITS) as c:
            return await c.read(image)

    with pytest.raises(ServerOverloaded, match="overloaded"):
        asyncio.run(read())
    check_tries(Refusing.tries, 3.5)


def test_read_gives_up_on_an_overloaded_server_and_says_so(refusing, tmp_path, capsys):
    image = tmp_path / "page.png"
    image.write_bytes(render().png)
    assert read_main([str(image), "--url", refusing, "--timeout", "2.5"]) == 1
    assert "the server was overloaded" in capsys.readouterr().err
    check_tries(Refusing.tries, 2.5)


def test_the_ocrmypdf_plugin_backs_off_then_names_the_overload(refusing, tmp_path):
    plugin = pytest.importorskip("triton_ocr.ocrmypdf", reason="OCRmyPDF 17 needs Python 3.11+")
    image = tmp_path / "page.png"
    image.write_bytes(render().png)
    settings = plugin.TritonOptions(url=refusing, timeout=2.5)
    with pytest.raises(
        plugin.ServiceError, match=r"could not read page 1: \[503\] the server was overloaded"
    ):
        plugin.read_page(image, "page 1", settings, word_boxes=True)
    check_tries(Refusing.tries, 2.5)


def test_a_last_try_cut_short_by_the_deadline_after_refusals_ends_as_overloaded():
    # the wait a refusal asks may leave the last try too little time to be answered: the
    # caller hears the server's last word (overloaded), not a bare timeout
    def answers(first: Exception | None):
        clock, calls = FakeClock(), []

        def call(seconds_left):
            calls.append(seconds_left)
            if first is not None and len(calls) == 1:
                raise first
            clock.now += seconds_left  # the try runs out of the call's time
            raise TimeoutError()

        return call, clock

    call, clock = answers(QUEUE_FULL)
    with pytest.raises(ServerOverloaded, match="2 tries in") as raised:
        with_retries(call, 1.0, 0, 0.5, clock, clock.sleep)
    assert str(raised.value.status()) == "StatusCode.UNAVAILABLE"
    assert isinstance(raised.value.__cause__, TimeoutError)
    call, clock = answers(None)
    with pytest.raises(TimeoutError):  # never refused: the timeout is the answer
        with_retries(call, 1.0, 0, 0.5, clock, clock.sleep)
