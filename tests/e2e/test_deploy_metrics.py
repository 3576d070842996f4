"""The autoscaler's metric (deploy/kubernetes: the prometheus-adapter rule behind the HPA) is made
of series the real server exports: its names and labels found in a /metrics scrape, and the
value the rule computes, worked out from two scrapes around real requests."""

from __future__ import annotations

import re
import time
import urllib.request
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import yaml

from tests.conftest import ROOT
from triton_ocr.client import OcrClient
from triton_ocr.contract import ENTRY_POINTS, ENTRY_STEPS
from triton_ocr.tools.samples import render

from .conftest import Endpoints

RULE_FILE = ROOT / "deploy" / "kubernetes" / "monitoring" / "prometheus-adapter-values.yaml"
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}\s+(\S+)$")
TERM = re.compile(r"([a-z_]+)\{<<\.LabelMatchers>>,?([^}]*)\}")
GATEWAY_SERIES = "triton_ocr_rest_"  # the REST gateway's /metrics, not Triton's


def samples(url: str) -> list[tuple[str, dict[str, str], float]]:
    """Every labelled sample of a Prometheus text page: (name, labels, value)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    found = []
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
            found.append((match.group(1), labels, float(match.group(3))))
    return found


def scrape(server: Endpoints) -> dict[str, dict[str, float]]:
    """metric -> model -> value, from Triton's Prometheus text (summed over other labels)."""
    found: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for name, labels, value in samples(f"http://{server.metrics}/metrics"):
        if "model" in labels:
            found[name][labels["model"]] += value
    return found


def rules() -> list[dict]:
    return yaml.safe_load(RULE_FILE.read_text())["rules"]["custom"]


def rule(name: str) -> dict:
    (found,) = [r for r in rules() if r["name"]["as"] == name]
    return found


def terms(query: str) -> list[tuple[str, dict[str, str]]]:
    """The series a rule's query reads, each with its own label filters (= and =~)."""
    return [
        (name, {k: v for k, _, v in re.findall(r'(\w+)(=~|=)"([^"]*)"', filters)})
        for name, filters in TERM.findall(query)
    ]


def rule_sum(query: str, scraped: list[tuple[str, dict[str, str], float]]) -> float:
    """What the sum of a rule's terms adds up to over these samples (the rule takes the rate of
    that sum per pod: two of these around some requests give its increase)."""
    total = 0.0
    for series, filters in terms(query):
        for name, labels, value in scraped:
            matched = all(re.fullmatch(v, labels.get(k, "")) for k, v in filters.items())
            total += value if name == series and matched else 0.0
    return total


def test_the_rules_read_series_the_server_exports(server: Endpoints):
    metrics = scrape(server)
    for each in rules():
        query = each["metricsQuery"]
        series = [name for name, _ in terms(query)]
        assert re.match(r"([a-z_]+)\{", each["seriesQuery"]).group(1) in series
        for name, filters in terms(query):
            if name.startswith(GATEWAY_SERIES):
                continue  # test_overload.py scrapes the gateway's
            assert name in metrics, f"{name} is not in the server's /metrics"
            models = filters.get("model")
            if models:  # the entry points, or the models whose queues bound them
                named = sorted(models.split("|"))
                assert named in (sorted(ENTRY_POINTS), sorted(ENTRY_STEPS.values())), named
                assert set(named) <= set(metrics[name]), (name, sorted(metrics[name]))


def test_the_rules_values_from_two_scrapes_around_requests(server: Endpoints):
    """What the HPA and the dashboards see, worked out as the rules do: requests in flight (by
    Little's law, never more than the client had at once) and queue time per request."""
    image = render().png
    before = scrape(server)
    start = time.monotonic()

    def read(_):
        with OcrClient(server.grpc, "grpc") as client:
            client.read(image)
            client.read_many([image, image])

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(read, range(4)))
    seconds = time.monotonic() - start

    def delta(name: str, models) -> float:
        return sum(after[name].get(m, 0.0) - before[name].get(m, 0.0) for m in models)

    # a Python model's statistics are reported after its response is sent: the last request's
    # may land a moment after the client has its answer
    deadline = time.monotonic() + 10
    after = scrape(server)
    while delta("nv_inference_request_success", ENTRY_POINTS) < 8 and time.monotonic() < deadline:
        time.sleep(0.1)
        after = scrape(server)
    requests = delta("nv_inference_request_success", ENTRY_POINTS)
    assert requests == 8
    in_flight = delta("nv_inference_request_duration_us", ENTRY_POINTS) / 1e6 / seconds
    queued = delta("nv_inference_queue_duration_us", after["nv_inference_queue_duration_us"])
    print(f"in flight {in_flight:.2f}, queue time per request {queued / requests / 1000:.0f} ms")
    assert 0 < in_flight <= 2.0 + 0.05  # two clients at a time
    assert queued >= 0
