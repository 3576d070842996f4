"""The overload benchmark's bookkeeping: what counts as shed, the row it prints, its fleets and
how each kind of client waits after a refusal."""

from __future__ import annotations

import re

import pytest
from tritonclient.utils import InferenceServerException

from triton_ocr.client.retry_after import hinted_refusal
from triton_ocr.tools.reliability.overload import (
    Feed,
    Fleet,
    Tally,
    outcome_of,
    summary,
    targets,
    wait_after_refusal,
)


def test_only_the_overload_status_counts_as_shed():
    assert outcome_of(None) == "done"
    full = InferenceServerException("Exceeds maximum queue size", status="503")
    late = InferenceServerException("Request timeout expired", status="StatusCode.UNAVAILABLE")
    assert outcome_of(full) == outcome_of(late) == "shed"
    assert outcome_of(InferenceServerException("bad image", status="400")) == "error"
    assert outcome_of(ConnectionResetError("reset")) == "error"  # no status: not a refusal
    gateway = hinted_refusal(b'{"error": "the gateway is overloaded"}', 503, 1.0)
    assert outcome_of(gateway) == "shed"  # the REST gateway's bound, with its Retry-After
    down = InferenceServerException("Request for unknown model", status="503")
    assert outcome_of(down) == "error"  # a 503 that is not an overload refusal


def test_the_row_counts_every_end_and_times_only_the_accepted():
    tally = Tally()
    for k in range(100):
        tally.add("done", (k + 1) / 100, None)  # 10 ms .. 1 s
    tally.add("shed", 0.001, InferenceServerException("full", status="503"))
    tally.add("error", 5.0, TimeoutError("timed out"))
    row = summary(tally, seconds=10.0, rss_idle=1 << 30, rss_peak=(1 << 30) + (300 << 20))
    assert (row["done"], row["shed"], row["error"]) == (100, 1, 1)
    assert row["accepted_per_s"] == 10.0
    assert row["p50_ms"] == 505.0 and row["p99_ms"] == 990.1
    assert row["rss_idle_mib"] == 1024.0 and row["rss_peak_growth_mib"] == 300.0
    assert row["problems"] == ["TimeoutError: timed out"]
    empty = summary(Tally(), seconds=1.0, rss_idle=0, rss_peak=0)
    assert empty["p50_ms"] is None and empty["accepted_per_s"] == 0.0


def test_a_fleet_is_a_count_and_how_its_clients_take_a_refusal():
    assert Fleet.parse("64") == Fleet(64, "project")
    assert Fleet.parse(" 64/impatient ") == Fleet(64, "impatient")
    for wrong in ("0", "x/polite", "64/rude", "-3"):
        with pytest.raises(ValueError, match=re.escape(repr(wrong))):
            Fleet.parse(wrong)


def test_each_kind_of_client_waits_its_own_way_after_a_refusal():
    full = InferenceServerException("Exceeds maximum queue size", status="503")
    assert [wait_after_refusal("impatient", full, k) for k in range(3)] == [0.0, 0.0, 0.0]
    polite = [wait_after_refusal("polite", full, k) for k in range(7)]
    assert polite == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0]  # whatever the server asks
    asked = hinted_refusal(b'{"error": "the gateway is overloaded"}', 503, 3.0)
    assert wait_after_refusal("polite", asked, 0) == 0.25
    assert 3.0 <= wait_after_refusal("project", asked, 0) <= 3.6  # the Retry-After, stretched
    assert 0.25 <= wait_after_refusal("project", full, 0) <= 0.5  # the clients' first wait


def test_the_gateway_is_driven_once_over_http_the_triton_entry_points_per_protocol():
    found = targets(["rest", "ocr", "ensemble_model"], ["http", "grpc"])
    assert found == [
        ("rest", "http"),
        ("ocr", "http"),
        ("ocr", "grpc"),
        ("ensemble_model", "http"),
        ("ensemble_model", "grpc"),
    ]


def test_a_fleet_sends_its_images_in_one_shared_order():
    feed = Feed([b"a", b"b", b"c"])
    assert [feed.next() for _ in range(7)] == [b"a", b"b", b"c", b"a", b"b", b"c", b"a"]
