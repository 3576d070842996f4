"""The benchmark's bookkeeping (the measured paths themselves run in `make bench`)."""

import threading
import time

import pytest

from triton_ocr.tools.bench.report import summarize
from triton_ocr.tools.workload import Row, run_row


def test_every_image_is_sent_once_by_concurrent_workers():
    seen, lock = [], threading.Lock()

    def reader():
        def read(data):
            time.sleep(0.01)
            with lock:
                seen.append(data)

        return read

    row = Row("fake", concurrency=3)
    images = [bytes([i]) for i in range(10)]
    run_row(row, reader, images)
    run_row(row, reader, images)  # a second round adds up
    assert sorted(seen) == sorted(images * 2)
    assert row.images == 20 and len(row.latencies) == 20
    assert row.throughput > 0 and row.percentile(50) >= 0.01


def test_ratios_are_throughput_over_the_baselines():
    a, b, c = Row("A", 1), Row("B", 1), Row("ocr grpc", 4)
    for row, wall in ((a, 10.0), (b, 5.0), (c, 4.0)):
        row.images, row.wall, row.latencies = 10, wall, [0.1, 0.2, 0.3]
    by_name = {r["row"]: r for r in summarize([a, b, c], a, b)}
    assert by_name["ocr grpc"]["vs_A"] == pytest.approx(2.5)
    assert by_name["ocr grpc"]["vs_B"] == pytest.approx(1.25)
    assert by_name["A"]["p50_ms"] == pytest.approx(200)


def test_paired_readers_take_turns_image_by_image():
    from triton_ocr.tools.workload import paired_seconds

    seen = []
    readers = {name: (lambda data, name=name: seen.append((name, data))) for name in ("on", "off")}
    total = paired_seconds(readers, [b"1", b"2", b"3"], rounds=2)
    assert set(total) == {"on", "off"} and all(t >= 0 for t in total.values())
    assert seen[:6] == [("on", b"1"), ("off", b"1"), ("off", b"2"), ("on", b"2")] + [
        ("on", b"3"),
        ("off", b"3"),
    ]
    assert len(seen) == 12
