"""The benchmark's bookkeeping (the measured paths themselves run in `make bench`)."""

import math
import threading
import time

import pytest

from triton_ocr.tools.bench.report import summarize
from triton_ocr.tools.bench.run import alone_line, alone_record
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


def test_a_round_in_two_runs_sends_the_chosen_images_first_and_counts_them_apart():
    from triton_ocr.tools.bench.run import run_in_two

    order, lock = [], threading.Lock()

    def reader():
        def read(data):
            with lock:
                order.append(data)

        return read

    row, part = Row("ocr grpc", 2), Row("ocr grpc", 2)
    images = [bytes([i]) for i in range(6)]
    run_in_two(row, part, reader, images, [1, 4])
    assert sorted(order[:2]) == [b"\x01", b"\x04"] and sorted(order) == sorted(images)
    assert (row.images, len(row.latencies), part.images, len(part.latencies)) == (6, 6, 2, 2)
    assert 0 < part.wall <= row.wall
    run_in_two(row, part, reader, images, range(6))  # all of them: one run
    assert (row.images, part.images, len(order)) == (12, 8, 12)


def test_the_images_of_a_one_at_a_time_round_are_taken_by_index():
    from triton_ocr.tools.bench.run import one_at_a_time

    part = one_at_a_time([0.5, 1.0, 2.0, 4.0], [0, 3])
    assert (part.images, part.latencies, part.wall) == (2, [0.5, 4.0], 4.5)
    whole = Row("A", 1, [1.0], 1.0, 1)
    whole.add(part)
    assert (whole.images, whole.wall, whole.latencies) == (3, 5.5, [1.0, 0.5, 4.0])


def test_the_lines_read_count_the_pipeline_s_texts_and_rapidocr_s_pairs():
    from triton_ocr.tools.bench.worker import lines_read

    class Texts:
        texts = ["a", "b", "c"]

    assert lines_read(Texts()) == 3
    assert lines_read((["one"], None)) == 1 and lines_read(([], None)) == 0


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


# /proc/cpuinfo of a 2-vCPU Intel VM with AMX, and of an AMD EPYC one without (flags cut short)
INTEL = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Processor
stepping\t: 8
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu avx2 avx512f avx512_vnni avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8 hypervisor

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Processor
physical id\t: 0
core id\t\t: 1
flags\t\t: fpu avx2 avx512f avx512_vnni avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8 hypervisor
"""
EPYC = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC 7B13
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu sse2 avx avx2 fma hypervisor

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu sse2 avx avx2 fma hypervisor
"""


def test_the_cpu_record_names_the_model_its_flags_and_cores():
    from triton_ocr.tools.bench.report import CPU_FLAGS, cpu_label, cpu_record

    intel = cpu_record(INTEL, logical=2, affinity=2)
    assert intel["model_name"] == "Intel(R) Xeon(R) Processor"
    assert (intel["vendor"], intel["family"], intel["model"]) == ("GenuineIntel", "6", "143")
    assert intel["flags"] == list(CPU_FLAGS)  # in CPU_FLAGS' order, not cpuinfo's
    assert intel["physical_cores"] == 2 and intel["logical_cpus"] == 2 and intel["hypervisor"]
    assert cpu_label(intel) == (
        "Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 143, a VM), 2 cores, "
        "2 logical CPUs; avx2 avx512f avx512_vnni avx512_bf16 avx_vnni amx_tile amx_bf16 amx_int8"
    )

    # two logical CPUs on one core (SMT siblings); the process may use one of them
    epyc = cpu_record(EPYC, affinity=1)
    assert epyc["flags"] == ["avx2"] and epyc["vendor"] == "AuthenticAMD"
    assert epyc["physical_cores"] == 1 and epyc["logical_cpus"] == 2 and epyc["affinity"] == 1
    assert cpu_label(epyc).startswith("AMD EPYC 7B13 (AuthenticAMD, family 25, model 1, a VM), ")
    assert cpu_label(epyc).endswith("1 cores, 2 logical CPUs (1 usable); avx2")


def test_a_cpuinfo_without_x86_fields_still_gives_a_label():
    from triton_ocr.tools.bench.report import cpu_label, cpu_record

    arm = cpu_record("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n", logical=1)
    assert arm["model_name"] == "unknown CPU" and arm["flags"] == [] and arm["vendor"] is None
    assert cpu_label(arm).startswith("unknown CPU (), 1 cores, 1 logical CPUs; none of avx2 ")
    assert cpu_record("")["physical_cores"] is None


def test_the_machine_s_cpu_is_recorded():
    from triton_ocr.tools.bench.report import machine_cpu

    cpu = machine_cpu()
    assert cpu["logical_cpus"] >= 1 and isinstance(cpu["flags"], list)


def rows_with_openvino():
    a, a_ov, b = Row("A rapidocr", 1), Row("A' rapidocr openvino", 1), Row("B floor", 1)
    served = [Row("ocr grpc", 1), Row("ocr grpc", 4), Row("ensemble_model http", 4)]
    for row, wall in zip([a, a_ov, b, *served], (10.0, 8.0, 5.0, 5.0, 4.0, 4.4), strict=True):
        row.images, row.wall, row.latencies = 10, wall, [0.1, 0.2, 0.3]
    return a, a_ov, b, served


def test_ratios_are_given_against_both_rapidocr_rows_and_the_headline_uses_the_stronger():
    from triton_ocr.tools.bench.report import headline, headline_line, summarize, table_lines

    a, a_ov, b, served = rows_with_openvino()
    others = {"ocr grpc c=4": 0.03}
    summary = summarize([a, a_ov, b, *served], a, b, a_ov, others)
    best = next(r for r in summary if r["row"] == "ocr grpc" and r["concurrency"] == 4)
    assert best["vs_A"] == pytest.approx(2.5) and best["vs_A_openvino"] == pytest.approx(2.0)
    assert best["vs_B"] == pytest.approx(1.25) and best["others_cpu_share"] == 0.03
    assert summary[0]["vs_A_openvino"] == pytest.approx(0.8)
    assert math.isnan(summary[0]["others_cpu_share"])  # not measured
    top = headline(summary)
    assert top["best_served"] == "ocr grpc c=4" and top["stronger_peer"] == "A' rapidocr openvino"
    assert top["vs_stronger_peer"] == pytest.approx(2.0)
    assert headline_line(top).endswith("(A' rapidocr openvino, 1.25 img/s): 2.00x")
    lines = table_lines(summary, "Some CPU; amx_tile")
    assert lines[0] == "\nmeasured on: Some CPU; amx_tile"
    assert lines[1].split()[-4:] == ["xA", "xA'", "xB", "others"]
    assert lines[-2].split()[-4:] == ["2.50", "2.00", "1.25", "3%"]

    a.wall = 4.0  # RapidOCR's defaults faster than on OpenVINO: then A is the peer
    top = headline(summarize([a, a_ov, b, *served], a, b, a_ov))
    assert top["stronger_peer"] == "A rapidocr" and top["vs_stronger_peer"] == pytest.approx(1.0)


def test_without_row_a_openvino_its_ratios_are_nan():
    from triton_ocr.tools.bench.report import summarize

    a, _, b, served = rows_with_openvino()
    assert all(math.isnan(r["vs_A_openvino"]) for r in summarize([a, b, *served], a, b))


def test_the_chart_names_the_cpu(tmp_path):
    pytest.importorskip("matplotlib")
    from triton_ocr.tools.bench.report import chart, summarize

    a, a_ov, b, served = rows_with_openvino()
    chart(summarize([a, a_ov, b, *served], a, b, a_ov), tmp_path / "b.png", "Some CPU")
    assert (tmp_path / "b.png").stat().st_size > 0


def test_row_a_openvino_runs_rapidocr_on_openvino_for_every_step_and_a_on_its_defaults():
    from triton_ocr.tools.bench.worker import REFERENCE_ENGINES, ROWS
    from triton_ocr.tools.reference import rapidocr_params

    assert ROWS == ("A", "A'", "B")
    assert rapidocr_params(REFERENCE_ENGINES["A"]) == {}  # its config.yaml as shipped
    assert rapidocr_params(REFERENCE_ENGINES["A'"]) == {
        "Det.engine_type": "openvino",
        "Cls.engine_type": "openvino",
        "Rec.engine_type": "openvino",
    }


def test_packs_are_compared_at_the_same_concurrency_and_at_their_best():
    from triton_ocr.tools.bench.packs import packs_lines, packs_summary

    rows = []
    for name, c, wall in (
        ("small", 1, 10.0),
        ("tiny", 1, 4.0),
        ("small", 4, 5.0),
        ("tiny", 4, 2.5),
    ):
        row = Row(name, c)
        row.images, row.wall, row.latencies = 10, wall, [0.1, 0.3]
        rows.append(row)
    summary = packs_summary(rows, "small", "some CPU")
    ratios = {(r["pack"], r["concurrency"]): r["over_baseline"] for r in summary["rows"]}
    assert ratios[("tiny", 1)] == pytest.approx(2.5) and ratios[("tiny", 4)] == pytest.approx(2.0)
    assert summary["best_over_baseline"]["tiny"] == pytest.approx(2.0)  # 4 img/s over 2
    assert "some CPU" in packs_lines(summary)[0]


def test_memory_is_the_servers_pss_and_each_stubs():
    import os

    from triton_ocr.tools.bench.report import memory_line, memory_record

    memory = memory_record(os.getpid())  # no stubs under a test process: itself alone
    assert list(memory["pss_mib"]) == ["tritonserver"]
    assert memory["total_pss_mib"] == memory["pss_mib"]["tritonserver"] > 0
    line = memory_line({"total_pss_mib": 30.0, "pss_mib": {"tritonserver": 10.0, "ocr_0_0": 20.0}})
    assert "30 MiB PSS, tritonserver and 1 stubs (tritonserver 10, ocr_0_0 20)" in line


def test_a_row_in_the_bench_is_checked_against_its_reader_alone_before_and_after():
    def row(name: str, images: int, wall: float) -> Row:
        r = Row(name, 1)
        r.images, r.wall, r.latencies = images, wall, [wall / images] * images
        return r

    in_bench = row("A' rapidocr openvino in-process", 92, 23.0)  # 4.0 img/s
    before, after = row("A' alone before", 92, 23.0), row("A' alone after", 92, 30.67)
    check = alone_record(in_bench, before, after, {})
    assert check["images_per_s"] == pytest.approx((4.0 + 3.0) / 2, abs=0.01)
    assert check["in_bench_over_alone"] == pytest.approx(4.0 / 3.5, abs=0.01)
    assert not check["within_5_percent"]
    assert "NOT within 5%: the ratios to A' are off" in alone_line("A'", check)
    steady = alone_record(in_bench, before, row("A' alone after", 92, 23.5), {})
    assert steady["within_5_percent"]
    assert "1.01x, within 5%" in alone_line("A'", steady)
