"""The overload benchmark's bookkeeping: what counts as shed, and the row it prints."""

from __future__ import annotations

from tritonclient.utils import InferenceServerException

from triton_ocr.client.retry_after import hinted_refusal
from triton_ocr.tools.reliability.overload import Tally, outcome_of, summary


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
