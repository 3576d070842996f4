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


def test_gateway_section_is_its_throughput_over_the_direct_one():
    from triton_ocr.tools.bench.gateway import (
        DIRECT,
        GATEWAY,
        GatewayRun,
        gateway_lines,
        gateway_summary,
    )

    direct, gateway = Row(DIRECT, 4), Row(GATEWAY, 4)
    for row, wall in ((direct, 10.0), (gateway, 10.4)):
        row.images, row.wall, row.latencies = 20, wall, [1.0, 2.0, 3.0]
    run = GatewayRun(
        direct,
        gateway,
        rounds=[(2.0, 1.9, 0.01), (2.0, 2.0, 0.2), (2.0, 1.0, 0.5)],
        client_cpu_s={DIRECT: 0.2, GATEWAY: 0.1},
        server_cpu_s={DIRECT: 16.0, GATEWAY: 16.0},
        gateway_cpu_s=0.2,
        busy_s=36.0,  # 32.5 s ours
    )
    summary = gateway_summary(run, "Some CPU")
    assert summary["gateway_over_direct"] == pytest.approx(10.0 / 10.4)
    assert summary["met"] and summary["concurrency"] == 4 and summary["cpu"] == "Some CPU"
    assert summary["round_ratios"] == pytest.approx([0.95, 1.0, 0.5])
    assert summary["median_round_ratio"] == pytest.approx(0.95)
    assert summary["round_others_cpu_share"] == [0.01, 0.2, 0.5]
    assert [r["row"] for r in summary["rows"]] == [DIRECT, GATEWAY]
    first, second = summary["rows"]
    assert second["images_per_s"] == pytest.approx(20 / 10.4)
    assert (first["client_cpu_ms_per_request"], second["client_cpu_ms_per_request"]) == (
        pytest.approx(10),
        pytest.approx(5),
    )
    assert (first["gateway_cpu_ms_per_request"], second["gateway_cpu_ms_per_request"]) == (
        0.0,
        pytest.approx(10),
    )
    assert first["total_cpu_ms_per_request"] == pytest.approx(810)
    assert second["total_cpu_ms_per_request"] == pytest.approx(815)
    assert summary["cpu_predicted_ratio"] == pytest.approx(810 / 815)
    assert summary["others_cpu_share"] == pytest.approx(1 - 32.5 / 36)
    lines = gateway_lines(summary)
    assert "Some CPU" in lines[0] and len(lines) == 6
    assert lines[-2] == (
        "gateway / direct throughput: 0.962 (target >= 0.95: met); median of the rounds 0.950; "
        "predicted from CPU per request 0.994"
    )
    assert lines[-1].startswith("each round (other processes' share of the busy CPU): 0.950 (1%)")
    assert "all rounds: 9.7%" in lines[-1]
    gateway.wall = 11.0  # 0.909: more than 5% lost
    assert not gateway_summary(run, "Some CPU")["met"]
    assert "NOT met" in gateway_lines(gateway_summary(run, "x"))[-2]


def test_cpu_seconds_of_this_process_grow_as_it_works():
    import os

    from triton_ocr.tools.bench.gateway import cpu_seconds

    before = cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    assert cpu_seconds(os.getpid()) >= before + 0.03
    assert cpu_seconds(2**22 + 1) == 0.0  # no such process (above Linux's largest pid)


def test_the_machine_is_busy_at_least_as_long_as_this_process_works():
    from triton_ocr.tools.bench.gateway import machine_busy_seconds

    before = machine_busy_seconds()
    deadline = time.process_time() + 0.1
    while time.process_time() < deadline:
        pass
    assert machine_busy_seconds() - before >= 0.08


def test_gateway_reader_keeps_one_connection_and_reopens_a_closed_one():
    """A local stand-in for the gateway: the reader posts the raw body to /v1/ocr?format=json
    on one kept-alive connection, and reconnects once when the server dropped it."""
    import http.server
    import json

    from triton_ocr.tools.bench.gateway import gateway_reader

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.headers["Content-Type"], body, self.client_address))
            answer = json.dumps({"pages": [], "bytes": len(body)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            if body == b"last":
                self.close_connection = True

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        read = gateway_reader(f"http://127.0.0.1:{server.server_address[1]}", timeout_s=10)
        assert read(b"abc") == {"pages": [], "bytes": 3}
        assert read(b"last") == {"pages": [], "bytes": 4}  # the server closes after this one
        assert read(b"again") == {"pages": [], "bytes": 5}
    finally:
        server.shutdown()
        server.server_close()
    assert [s[0] for s in seen] == ["/v1/ocr?format=json"] * 3
    assert {s[1] for s in seen} == {"application/octet-stream"}
    assert seen[0][3] == seen[1][3] != seen[2][3]  # kept alive, then a new connection


def test_only_names_a_section_before_anything_starts():
    from pathlib import Path

    from triton_ocr.tools.bench.run import BenchOptions, run_benchmark

    options = BenchOptions(None, Path("unused"), None, 1, [4], 1, only="nope")
    with pytest.raises(ValueError, match="--only must be one of gateway"):
        run_benchmark(options)
