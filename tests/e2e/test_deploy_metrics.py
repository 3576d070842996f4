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
from triton_ocr.contract import ENTRY_POINTS
from triton_ocr.tools.samples import render

from .conftest import Endpoints

RULE_FILE = ROOT / "deploy" / "kubernetes" / "monitoring" / "prometheus-adapter-values.yaml"
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}\s+(\S+)$")


def scrape(server: Endpoints) -> dict[str, dict[str, float]]:
    """metric -> model -> value, from Triton's Prometheus text."""
    with urllib.request.urlopen(f"http://{server.metrics}/metrics", timeout=10) as response:
        text = response.read().decode()
    found: dict[str, dict[str, float]] = defaultdict(dict)
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
            if "model" in labels:
                found[match.group(1)][labels["model"]] = float(match.group(3))
    return found


def rules() -> list[dict]:
    return yaml.safe_load(RULE_FILE.read_text())["rules"]["custom"]


def test_the_rules_read_series_the_server_exports(server: Endpoints):
    metrics = scrape(server)
    for rule in rules():
        query = rule["metricsQuery"]
        series = set(re.findall(r"([a-z_]+)\{<<\.LabelMatchers>>", query))
        assert re.match(r"([a-z_]+)\{", rule["seriesQuery"]).group(1) in series
        entry_points = re.search(r'model=~"([^"]+)"', query).group(1).split("|")
        assert sorted(entry_points) == sorted(ENTRY_POINTS)
        for name in series:
            assert name in metrics, f"{name} is not in the server's /metrics"
            assert set(ENTRY_POINTS) <= set(metrics[name]), (name, sorted(metrics[name]))


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
    after = scrape(server)

    def delta(name: str, models) -> float:
        return sum(after[name].get(m, 0.0) - before[name].get(m, 0.0) for m in models)

    requests = delta("nv_inference_request_success", ENTRY_POINTS)
    assert requests == 8
    in_flight = delta("nv_inference_request_duration_us", ENTRY_POINTS) / 1e6 / seconds
    queued = delta("nv_inference_queue_duration_us", after["nv_inference_queue_duration_us"])
    print(f"in flight {in_flight:.2f}, queue time per request {queued / requests / 1000:.0f} ms")
    assert 0 < in_flight <= 2.0 + 0.05  # two clients at a time
    assert queued >= 0
