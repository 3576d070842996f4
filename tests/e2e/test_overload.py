"""Overload against the real server: `ocr`'s queue is bounded, a request beyond it is refused at
once with an overload status, a request whose deadline passes while it waits is dropped unread,
and the requests accepted are answered as they are without load. The clients back off and are
answered once there is room, or give up as overloaded when their time runs out; the REST gateway
passes the service's refusal on, and refuses beyond its own bound (503) and beyond one caller's
share (429), each with Retry-After, after its short delay, each counted in its /metrics; the
autoscaler's shed rate adds up each kind of refusal from the real /metrics pages.

`ensemble_model` is bounded by its gate: beyond its requests in flight, one is refused at once,
unread, and counted on /metrics; once the last step is done with a request, its place is free.

The server here serves a copy of the repository whose `ocr` has one instance and room for one
waiting request, so that three requests are enough to fill it, and whose ensemble holds one
request at once.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from tests.e2e.conftest import Endpoints
from tests.e2e.test_deploy_metrics import rule, rule_sum, samples
from tests.e2e.test_gateway import call, multipart, running_gateway, slow_upload
from tests.samples import ENGLISH_LINES, layout_page
from triton_ocr import contract
from triton_ocr.client import OcrClient, ServerOverloaded
from triton_ocr.client.ocr_client import (
    image_lines,
    image_request,
    ocr_documents,
    ocr_request,
)
from triton_ocr.config.repository import Repository
from triton_ocr.serving.flags import ServerOptions, free_ports
from triton_ocr.serving.server import running_server
from triton_ocr.tools.samples import render

PAGE = render(ENGLISH_LINES, size=(900, 500)).png
# a page of five times PAGE's lines: a few of them keep the one instance busy
BUSY_PAGE = render(
    tuple(
        replace(line, xy=(line.xy[0], line.xy[1] + 450 * block))
        for block in range(5)
        for line in ENGLISH_LINES
    ),
    size=(900, 2300),
).png
BUSY_S = 6.0  # how long the busy request keeps the instance, on this machine's CPU
PAST_1_S_PAGES = 12  # PAGEs: 2 s of work on the fastest CPU these tests ran on
OVERLOADED = {"503", "StatusCode.UNAVAILABLE"}


@dataclass(frozen=True)
class SmallQueue(Endpoints):
    busy_pages: int  # BUSY_PAGEs in one request that keep the one instance busy for BUSY_S


@pytest.fixture(scope="module")
def small_queue(repository, tmp_path_factory) -> SmallQueue:
    folder = tmp_path_factory.mktemp("overload")
    copy = Repository(repository).copy_to(folder / "repository")
    ocr = copy.config(contract.OCR_MODEL)
    ocr.instance_group[0].count = 1
    ocr.dynamic_batching.default_queue_policy.max_queue_size = 1
    copy.write_config(contract.OCR_MODEL, ocr)
    ensemble = copy.config(contract.ENSEMBLE_MODEL)
    ensemble.parameters["max_in_flight"].string_value = "1"
    copy.write_config(contract.ENSEMBLE_MODEL, ensemble)
    http, grpc, metrics = free_ports(3)
    # cores=0: the counts set above, not the layout for this machine's cores
    opts = ServerOptions(copy.path, "127.0.0.1", http, grpc, metrics, cores=0)
    log = folder / "server.log"
    # each BUSY_PAGE timed here (the CPUs differ 3x between machines), within the request's cap
    cap = int(ocr.parameters["max_images_per_request"].string_value)
    with running_server(opts, log_file=log):
        url = f"127.0.0.1:{grpc}"
        raw_call(grpcclient, url, 1, BUSY_PAGE)
        start = time.monotonic()
        raw_call(grpcclient, url, 1, BUSY_PAGE)
        pages = min(cap, max(2, math.ceil(BUSY_S / (time.monotonic() - start))))
        yield SmallQueue(f"127.0.0.1:{http}", url, f"127.0.0.1:{metrics}", log, pages)


def raw_call(module, url: str, pages: int, page: bytes = PAGE, **options):
    """One `ocr` request of `pages` copies of `page`, straight through tritonclient (no
    retries): its Documents, or the exception it ended with."""
    client = module.InferenceServerClient(url)
    request = ocr_request(module, [page] * pages)
    try:
        result = client.infer(request.model, request.inputs, outputs=request.outputs, **options)
        return ocr_documents(result, [None] * pages)
    except InferenceServerException as exc:
        return exc
    finally:
        client.close()


def in_background(call, *args, **kwargs) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(call(*args, **kwargs)))
    thread.start()
    return thread, out


def ocr_metric(
    server: Endpoints, name: str, reason: str | None = None, model: str = contract.OCR_MODEL
) -> float:
    """One of the server's counters for `model` (`ocr` unless told), from its /metrics."""
    found = [
        value
        for series, labels, value in samples(f"http://{server.metrics}/metrics")
        if series == name
        and labels.get("model") == model
        and reason in (None, labels.get("reason"))
    ]
    assert found, f"{name} for {model} is not in /metrics"
    return sum(found)


def settled(read: Callable[[], float]) -> float:
    """A counter once the requests before have all been counted: Triton counts an execution
    after its response has gone, so the last test's may still come in. The same value twice,
    half a second apart (at most 10 s)."""
    value, deadline = read(), time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.5)
        value, before = read(), value
        if value == before:
            break
    return value


def busy(server: SmallQueue) -> tuple[threading.Thread, list]:
    """A long request on the one instance, given time to start."""
    thread, out = in_background(raw_call, grpcclient, server.grpc, server.busy_pages, BUSY_PAGE)
    time.sleep(1.0)
    return thread, out


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_beyond_the_queue_a_request_is_refused_at_once(small_queue, protocol):
    (alone,) = raw_call(grpcclient, small_queue.grpc, 1)  # the answer without load
    module, url = (
        (httpclient, small_queue.http) if protocol == "http" else (grpcclient, small_queue.grpc)
    )
    running, first = busy(small_queue)
    waiting, second = in_background(raw_call, module, url, 1)  # the one place in the queue
    time.sleep(0.3)
    start = time.monotonic()
    refused = raw_call(module, url, 1)
    elapsed = time.monotonic() - start
    assert isinstance(refused, InferenceServerException), "the third request was not refused"
    assert str(refused.status()) in OVERLOADED and "Exceeds maximum queue size" in str(refused)
    assert elapsed < 0.5  # at once, not after the others
    running.join()
    waiting.join()
    # the accepted ones are answered
    assert [len(d) for d in first[0]] == [1] * small_queue.busy_pages
    (accepted,) = second[0]
    assert [line.text for line in accepted.lines] == [line.text for line in alone.lines]


def dropped(server: Endpoints) -> float:
    """`ocr` requests ended before they ran: their deadline passed in the queue (REJECTED) or
    their caller went away (CANCELED: Triton drops a disconnected caller's request)."""
    return sum(
        ocr_metric(server, "nv_inference_request_failure", reason)
        for reason in ("REJECTED", "CANCELED")
    )


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_request_past_its_deadline_in_the_queue_is_dropped_unread(small_queue, protocol):
    module, url = (
        (httpclient, small_queue.http) if protocol == "http" else (grpcclient, small_queue.grpc)
    )
    executed = settled(lambda: ocr_metric(small_queue, "nv_inference_exec_count"))
    rejected = ocr_metric(small_queue, "nv_inference_request_failure", "REJECTED")
    running, _ = busy(small_queue)
    late = raw_call(module, url, 1, timeout=200_000)  # Triton's per-request timeout, in µs
    running.join()
    assert isinstance(late, InferenceServerException), "the late request was answered"
    assert str(late.status()) in OVERLOADED and "Request timeout expired" in str(late)
    assert ocr_metric(small_queue, "nv_inference_request_failure", "REJECTED") == rejected + 1
    assert ocr_metric(small_queue, "nv_inference_exec_count") == executed + 1  # the busy one only


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_client_past_its_deadline_costs_the_server_no_work(small_queue, protocol):
    url = small_queue.http if protocol == "http" else small_queue.grpc
    executed = settled(lambda: ocr_metric(small_queue, "nv_inference_exec_count"))
    ended = dropped(small_queue)
    running, _ = busy(small_queue)
    gone = (InferenceServerException, OSError)  # gRPC's DEADLINE_EXCEEDED, HTTP's socket timeout
    with OcrClient(url, protocol, timeout=0.3, retries=0) as client, pytest.raises(gone):
        client.read_many([PAGE])  # gone after 0.3 s, while the instance is still busy
    running.join()
    time.sleep(0.5)  # the queue is looked at again once the instance is free
    assert dropped(small_queue) == ended + 1
    assert ocr_metric(small_queue, "nv_inference_exec_count") == executed + 1  # the busy one only


def busy_upload(server: SmallQueue) -> tuple[bytes, str]:
    """The busy request's pages as one multipart upload to the gateway: (body, content type)."""
    return multipart(*[(f"{k}.png", BUSY_PAGE) for k in range(server.busy_pages)])


def full_queue(server: SmallQueue) -> list[tuple[threading.Thread, list]]:
    """The one instance busy and the one place in the queue taken."""
    running = busy(server)
    waiting = in_background(raw_call, grpcclient, server.grpc, 1)
    time.sleep(0.3)
    return [running, waiting]


def finish(calls: list[tuple[threading.Thread, list]]) -> None:
    for thread, _ in calls:
        thread.join()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_client_that_backs_off_is_answered_once_there_is_room(small_queue, protocol):
    (alone,) = raw_call(grpcclient, small_queue.grpc, 1)
    url = small_queue.http if protocol == "http" else small_queue.grpc
    others = full_queue(small_queue)
    with OcrClient(url, protocol, timeout=120, retries=0) as client:
        (answered,) = client.read_many([PAGE])  # refused at first, retried past `retries`
    finish(others)
    assert [line.text for line in answered] == [line.text for line in alone.lines]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_client_out_of_time_gives_up_saying_the_server_was_overloaded(small_queue, protocol):
    url = small_queue.http if protocol == "http" else small_queue.grpc
    others = full_queue(small_queue)
    with (
        OcrClient(url, protocol, timeout=1.5) as client,
        pytest.raises(ServerOverloaded, match="the server was overloaded") as raised,
    ):
        client.read_many([PAGE])
    finish(others)
    assert "Exceeds maximum queue size" in str(raised.value)


def shed(gateway: str, by: str) -> float:
    """The gateway's count of refusals `by` itself, by one caller's share or by the service
    (0 before the first)."""
    scraped = samples(f"{gateway}/metrics")
    return sum(
        v for n, labels, v in scraped if n == "triton_ocr_rest_shed_total" and labels == {"by": by}
    )


DELAY_S = "0.6"  # the gateways' --refusal-delay here


def timed_call(url: str, body: bytes, headers: dict | None = None) -> tuple:
    """call()'s answer to one upload (status, headers, body), and the seconds it took."""
    start = time.monotonic()
    status, answered_headers, answer = call(url, body, "image/png", headers)
    return status, answered_headers, answer, time.monotonic() - start


def test_the_gateway_passes_the_service_refusal_on_after_its_delay(small_queue):
    with running_gateway(small_queue.grpc, "--refusal-delay", DELAY_S) as gateway:
        others = full_queue(small_queue)
        status, headers, answer, elapsed = timed_call(f"{gateway}/v1/ocr", PAGE)
        finish(others)
        assert status == 503 and int(headers["Retry-After"]) > 0
        assert "the service is overloaded" in json.loads(answer)["error"]
        # slowed by the delay, so a caller's tight loop slows too; not waited out
        assert float(DELAY_S) <= elapsed < float(DELAY_S) + 1.0
        assert shed(gateway, "service") == 1 and shed(gateway, "gateway") == 0


def test_the_gateway_refuses_beyond_its_own_bound_and_one_callers_share(small_queue):
    """--max-in-flight 2 in all, --max-per-client 1: a caller with one upload in flight gets a
    429 for a second, another caller (X-Forwarded-For, trusted from loopback) is let in; a third
    caller then finds the gateway full, a 503. Each refusal comes after the delay, unread."""
    arguments = ("--max-in-flight", "2", "--max-per-client", "1", "--refusal-delay", DELAY_S)
    with running_gateway(small_queue.grpc, *arguments) as gateway:
        body, kind = busy_upload(small_queue)
        long = in_background(call, f"{gateway}/v1/ocr?format=text", body, kind)
        time.sleep(1.0)
        status, headers, answer, elapsed = timed_call(f"{gateway}/v1/ocr", PAGE)
        assert status == 429 and int(headers["Retry-After"]) > 0
        assert "too many uploads from one caller" in json.loads(answer)["error"]
        assert float(DELAY_S) <= elapsed < float(DELAY_S) + 1.0
        second = slow_upload(gateway, headers="X-Forwarded-For: 192.0.2.7\r\n")
        time.sleep(0.5)
        third = {"X-Forwarded-For": "192.0.2.8"}
        status, headers, answer, elapsed = timed_call(f"{gateway}/v1/ocr", PAGE, third)
        assert status == 503 and int(headers["Retry-After"]) > 0
        assert "the gateway is overloaded" in json.loads(answer)["error"]
        assert float(DELAY_S) <= elapsed < float(DELAY_S) + 1.0
        second.close()
        finish([long])
        assert long[1][0][0] == 200  # the one let in is answered
        assert shed(gateway, "client") == 1 and shed(gateway, "gateway") == 1
        assert call(f"{gateway}/v1/ocr", PAGE, "image/png")[0] == 200  # room again


DENSE_PAGE = layout_page("three-columns").png  # many lines: seconds inside the ensemble


def first_steps_done(server: Endpoints) -> int:
    """Requests detection_preprocessing has answered: each is then inside the ensemble."""
    client = grpcclient.InferenceServerClient(server.grpc)
    try:
        stats = client.get_inference_statistics(contract.DETECTION_PREPROCESSING, as_json=True)
    finally:
        client.close()
    return int(stats["model_stats"][0]["inference_stats"]["success"].get("count", 0))


def hold_the_ensemble(server: Endpoints) -> tuple[threading.Thread, list]:
    """A dense page's request let into the ensemble, its place taken until it is answered: once
    its first step is done, it is inside (seconds of recognition to go)."""
    before = first_steps_done(server)
    inside = in_background(ensemble_call, grpcclient, server.grpc, DENSE_PAGE)
    deadline = time.monotonic() + 30
    while first_steps_done(server) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    return inside


def ensemble_call(module, url: str, page: bytes = PAGE):
    """One `ensemble_model` request straight through tritonclient: its texts, or its error."""
    client = module.InferenceServerClient(url)
    request = image_request(module, page)
    try:
        result = client.infer(request.model, request.inputs, outputs=request.outputs)
        return [line.text for line in image_lines(result)]
    except InferenceServerException as exc:
        return exc
    finally:
        client.close()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_beyond_its_bound_the_ensemble_refuses_a_request_at_once(small_queue, protocol):
    alone = ensemble_call(grpcclient, small_queue.grpc)
    module, url = (
        (httpclient, small_queue.http) if protocol == "http" else (grpcclient, small_queue.grpc)
    )
    shed = ocr_metric(small_queue, "triton_ocr_shed_total", model=contract.ENSEMBLE_MODEL)
    inside, held = hold_the_ensemble(small_queue)
    start = time.monotonic()
    refused = ensemble_call(module, url)
    elapsed = time.monotonic() - start
    inside.join()
    assert isinstance(refused, InferenceServerException), "the second request was not refused"
    assert str(refused.status()) in OVERLOADED and "the server is overloaded" in str(refused)
    assert elapsed < 0.5  # at once, unread
    assert not isinstance(held[0], Exception)  # the one inside is answered
    after = ocr_metric(small_queue, "triton_ocr_shed_total", model=contract.ENSEMBLE_MODEL)
    assert after == shed + 1
    assert ensemble_call(module, url) == alone  # its place is free again, the answer the same


def test_a_client_backs_off_from_the_ensemble_and_is_answered(small_queue):
    alone = ensemble_call(grpcclient, small_queue.grpc)
    inside, _ = hold_the_ensemble(small_queue)
    with OcrClient(small_queue.grpc, "grpc", timeout=120, retries=0) as client:
        lines = client.read(PAGE)  # refused at first, retried past `retries`
    inside.join()
    assert [line.text for line in lines] == alone


def every_sample(server: Endpoints, gateway: str) -> list:
    return samples(f"http://{server.metrics}/metrics") + samples(f"{gateway}/metrics")


def test_the_autoscalers_shed_rate_counts_each_kind_of_refusal(small_queue):
    """The HPA's triton_ocr_shed_per_second, as its prometheus-adapter rule adds it up from the
    server's and the gateway's real /metrics: one refusal of each kind it counts, each once, and
    not one caller's refusal beyond its own share (more pods are no answer to that)."""
    query = rule("triton_ocr_shed_per_second")["metricsQuery"]
    bounds = ("--max-in-flight", "1", "--max-per-client", "1", "--refusal-delay", "0")
    with running_gateway(small_queue.grpc, *bounds) as gateway:
        before = rule_sum(query, every_sample(small_queue, gateway))
        inside, _ = hold_the_ensemble(small_queue)
        assert isinstance(ensemble_call(grpcclient, small_queue.grpc), InferenceServerException)
        inside.join()  # 1: the ensemble's gate
        running, _ = busy(small_queue)
        late = raw_call(grpcclient, small_queue.grpc, 1, timeout=200_000)
        running.join()
        assert "Request timeout expired" in str(late)  # 2: a deadline drop in ocr's queue
        body, kind = busy_upload(small_queue)
        long = in_background(call, f"{gateway}/v1/ocr?format=text", body, kind)
        time.sleep(1.0)
        assert call(f"{gateway}/v1/ocr", PAGE, "image/png")[0] == 429  # its share: not counted
        other = {"X-Forwarded-For": "192.0.2.9"}
        assert call(f"{gateway}/v1/ocr", PAGE, "image/png", other)[0] == 503  # 3: the bound
        finish([long])
        others = full_queue(small_queue)
        assert call(f"{gateway}/v1/ocr", PAGE, "image/png")[0] == 503  # 4: passed on
        finish(others)
        after = rule_sum(query, every_sample(small_queue, gateway))
    assert after - before == 4


def test_ocr_stops_reading_a_request_once_its_timeout_has_passed(small_queue):
    counted = ocr_metric(small_queue, "triton_ocr_deadline_exceeded_total")
    start = time.monotonic()
    late = raw_call(grpcclient, small_queue.grpc, PAST_1_S_PAGES, timeout=1_000_000)  # 1 s
    elapsed = time.monotonic() - start
    assert isinstance(late, InferenceServerException), "the request was read past its timeout"
    assert str(late.status()) in OVERLOADED
    assert "longer than 1 s (the timeout the request was sent with)" in str(late)
    assert elapsed < 3.0  # its pages' work stopped at the timeout, not read to the end
    assert ocr_metric(small_queue, "triton_ocr_deadline_exceeded_total") == counted + 1
    (answered,) = raw_call(grpcclient, small_queue.grpc, 1)  # the instance is free again
    assert answered.lines
