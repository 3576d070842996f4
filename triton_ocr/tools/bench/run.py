"""One benchmark run: every row on the same images, interleaved rounds, then the report."""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

from triton_ocr import contract
from triton_ocr.config.repository import Repository
from triton_ocr.serving.layout import available_cores, describe, openvino_pays, shapes_pay
from triton_ocr.tools.reference import engines_of, reference_for
from triton_ocr.tools.workload import (
    ReadOne,
    Row,
    paired_seconds,
    real_images,
    run_row,
    warm_up,
)

from .gateway import (
    cpu_seconds,
    gateway_lines,
    gateway_summary,
    machine_busy_seconds,
    measure_gateway,
    others_share,
    running_gateway,
    server_cpu_seconds,
)
from .packs import measure_packs, packs_lines, packs_summary
from .readers import compare_entry_points, served_reader, tutorial_reader
from .report import (
    chart,
    cpu_label,
    environment,
    headline,
    headline_line,
    key,
    machine_cpu,
    memory_line,
    memory_record,
    model_statistics,
    print_table,
    summarize,
)
from .stages import per_image_ms, stage_table
from .worker import STAGES_SUFFIX, FreshProcess


@dataclass(frozen=True)
class BenchOptions:
    repository: Repository  # the pack to serve (its models exported)
    out_dir: Path  # benchmark.json, benchmark.png and the server's log
    image_folders: Sequence[Path]  # labelled real images (the dev and report splits), if present
    rounds: int  # interleaved rounds over the whole image set
    concurrencies: Sequence[int]  # client concurrencies of the served rows
    floor_threads: int  # onnxruntime intra-op threads of row B
    # one section alone: "gateway" (the REST gateway's cost), "packs" (the fast pack's speed) or
    # "stages" (where each image's time goes)
    only: str | None = None


SECTIONS = ("gateway", "packs", "stages")


def gateway_section(
    grpc_url: str, server_pid: int, port: int, images: Sequence[bytes], rounds: int, out_dir: Path
) -> dict:
    """The REST gateway's cost on the bench's server (gateway.py): its own process, both rows."""
    with running_gateway(grpc_url, port, out_dir / "gateway.log") as gateway:
        run = measure_gateway(grpc_url, server_pid, gateway, images, rounds)
    return gateway_summary(run, cpu_label(machine_cpu()))


def run_gateway_only(options: BenchOptions) -> dict:
    """`bench --only gateway`: serve the pack, measure the gateway section alone, write
    gateway.json (benchmark.json, the whole run's, is left as it is)."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    repository = options.repository
    options.out_dir.mkdir(parents=True, exist_ok=True)
    images = [data for _, data in real_images(options.image_folders)]
    http, grpc, metrics, rest = free_ports(4)
    opts = ServerOptions(repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack)
    with running_server(opts, log_file=options.out_dir / "tritonserver.log") as server:
        grpc_url, out_dir = f"127.0.0.1:{grpc}", options.out_dir
        section = gateway_section(grpc_url, server.pid, rest, images, options.rounds, out_dir)
    result = {
        "command": " ".join(sys.argv),
        "images": len(images),
        "rounds": options.rounds,
        "environment": environment(repository, options.floor_threads),
        "gateway_overhead": section,
    }
    path = options.out_dir / "gateway.json"
    path.write_text(json.dumps(result, indent=2))
    print("\n".join(gateway_lines(section)).lstrip("\n"))
    print(f"\nwrote {path}")
    return result


def run_packs_only(options: BenchOptions) -> dict:
    """`bench --only packs`: the `ocr` of the pack given (`--pack`; the fast pack when that is
    the default) against the default pack's, side by side (packs.py), at each concurrency;
    writes packs.json."""
    from triton_ocr.config.packs import DEFAULT_PACK, FAST_PACK

    options.out_dir.mkdir(parents=True, exist_ok=True)
    images = [data for _, data in real_images(options.image_folders)]
    given = options.repository.pack
    packs = (DEFAULT_PACK, FAST_PACK if given == DEFAULT_PACK else given)
    rows = measure_packs(
        options.repository.path,
        packs,
        images,
        options.rounds,
        options.concurrencies,
        options.out_dir,
    )
    result: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "images": len(images),
        "rounds": options.rounds,
        "environment": environment(options.repository, options.floor_threads),
        "packs": packs_summary(rows, DEFAULT_PACK, cpu_label(machine_cpu())),
    }
    path = options.out_dir / "packs.json"
    path.write_text(json.dumps(result, indent=2))
    print("\n".join(packs_lines(result["packs"])))
    print(f"\nwrote {path}")
    return result


def measure_stages(
    pack: str, repository: Path, floor_threads: int, images: Sequence[bytes], rounds: int
) -> dict[str, dict[str, float]]:
    """ms per image per stage (stages.py): the floor (row B's pipeline) and, where the pack's
    RapidOCR is 3.x, row A' (RapidOCR on OpenVINO), each in a fresh process, rounds
    interleaved."""
    labels = {"B": "service (floor)"}
    if "openvino" in engines_of(reference_for(pack)):
        labels["A'"] = "RapidOCR A'"
    with contextlib.ExitStack() as stack:
        workers = {
            row: stack.enter_context(
                FreshProcess(row + STAGES_SUFFIX, pack, repository, floor_threads, images)
            )
            for row in labels
        }
        timed = {row: Row(row, 1) for row in labels}
        for _ in range(rounds):
            for row, worker in workers.items():
                worker.round(timed[row])
    return {labels[r]: per_image_ms(workers[r].stages, timed[r].images) for r in labels}


def stages_summary(columns: dict[str, dict[str, float]], served: Sequence[Row], cpu: str) -> dict:
    """The stage table's figures, and each entry point's cost beyond the floor: its mean ms per
    image at concurrency 1 (gRPC) minus the floor's total."""
    floor = sum(columns["service (floor)"].values())
    at_c1 = {
        row.name.split()[0]: 1000 * statistics.mean(row.latencies)
        for row in served
        if row.concurrency == 1 and row.name.endswith("grpc") and row.latencies
    }
    return {
        "cpu": cpu,
        "ms_per_image": columns,
        "served_c1_ms": at_c1,
        "beyond_floor_ms": {model: ms - floor for model, ms in at_c1.items()},
    }


def run_stages_only(options: BenchOptions) -> dict:
    """`bench --only stages`: the stage table, with the entry points at concurrency 1 served
    beside it for their cost beyond the floor; writes stages.json."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    repository = options.repository
    options.out_dir.mkdir(parents=True, exist_ok=True)
    images = [data for _, data in real_images(options.image_folders)]
    served = [Row(f"{model} grpc", 1) for model in contract.ENTRY_POINTS]
    http, grpc, metrics = free_ports(3)
    opts = ServerOptions(repository.path, "127.0.0.1", http, grpc, metrics, pack=repository.pack)
    with running_server(opts, log_file=options.out_dir / "tritonserver.log"):
        for row in served:
            reader = served_reader(f"127.0.0.1:{grpc}", "grpc", row.name.split()[0])
            warm_up(reader, images)
            for _ in range(options.rounds):
                # cast: mypy cannot type a lambda with a default against Callable[[], ReadOne]
                run_row(row, cast(Callable[[], ReadOne], lambda r=reader: r), images)
        columns = measure_stages(
            repository.pack, repository.path, options.floor_threads, images, options.rounds
        )
    cpu = cpu_label(machine_cpu())
    result: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "images": len(images),
        "rounds": options.rounds,
        "environment": environment(repository, options.floor_threads),
        "stages": stages_summary(columns, served, cpu),
    }
    path = options.out_dir / "stages.json"
    path.write_text(json.dumps(result, indent=2))
    print("\n".join(stage_lines(result["stages"])))
    print(f"\nwrote {path}")
    return result


def stage_lines(summary: dict) -> list[str]:
    return stage_table(summary["ms_per_image"], summary["beyond_floor_ms"], summary["cpu"])


def one_at_a_time(latencies: Sequence[float], indices: Sequence[int]) -> Row:
    """The images `indices` of a round read one at a time (its per-image `latencies`, in image
    order) as a row of their own."""
    times = [latencies[i] for i in indices]
    return Row("", 1, times, sum(times), len(times))


def run_in_two(
    row: Row, part: Row, read: Callable[[], ReadOne], images: Sequence[bytes], first: Sequence[int]
) -> None:
    """One round of `row` in two runs, the images `first` then the others (one run when that
    is all of them); both go to `row`, the first also to `part`."""
    head = Row(row.name, row.concurrency)
    run_row(head, read, [images[i] for i in first])
    rest = sorted(set(range(len(images))) - set(first))
    if rest:
        run_row(row, read, [images[i] for i in rest])
    row.add(head)
    part.add(head)


def alone_record(in_bench: Row, before: Row, after: Row, others: dict[str, float]) -> dict:
    """A reader row in the bench against the same reader alone in a fresh process, before the
    server started and after it stopped (the mean of the two): within 5%, or the ratios to it
    are off."""
    alone = statistics.mean([before.throughput, after.throughput])
    match = in_bench.throughput / alone if alone else float("nan")
    return {
        "in_bench_images_per_s": in_bench.throughput,
        "images_per_s": alone,
        "before_images_per_s": before.throughput,
        "after_images_per_s": after.throughput,
        "p50_ms": before.percentile(50) * 1000,
        "in_bench_over_alone": match,
        "within_5_percent": abs(match - 1) <= 0.05,
        "others_cpu_share": {
            label: others.get(key(row), float("nan"))
            for label, row in (("before", before), ("after", after))
        },
    }


def alone_line(name: str, check: dict) -> str:
    """alone_record as a line of the bench's printout."""
    match = check["in_bench_over_alone"]
    verdict = (
        "within 5%" if check["within_5_percent"] else f"NOT within 5%: the ratios to {name} are off"
    )
    return (
        f"row {name} in the bench {check['in_bench_images_per_s']:.2f} img/s, alone in a fresh "
        f"process {check['images_per_s']:.2f} img/s (before the server "
        f"{check['before_images_per_s']:.2f}, after {check['after_images_per_s']:.2f}; "
        f"{match:.2f}x, {verdict})"
    )


def run_benchmark(options: BenchOptions) -> dict:
    """Serve the pack and measure every row on it; row A is the pack's RapidOCR release."""
    if options.only is not None:
        only = {"packs": run_packs_only, "gateway": run_gateway_only, "stages": run_stages_only}
        if options.only not in only:
            raise ValueError(f"--only must be one of {', '.join(SECTIONS)}, not {options.only!r}")
        return only[options.only](options)
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    repository, pack = options.repository, options.repository.pack
    out_dir, floor_threads = options.out_dir, options.floor_threads

    reference = reference_for(pack)  # east-str has no reference: it fails here, at once
    on_openvino = "openvino" in engines_of(reference)  # row A': RapidOCR 3.x only
    cpu = cpu_label(machine_cpu())
    print(f"pack {pack}; row A: {reference.label} in-process; on {cpu}", file=sys.stderr)
    cores = available_cores()
    print(
        f"served with the {describe(cores, openvino_pays(), pack, shapes_pay())}", file=sys.stderr
    )
    if not on_openvino:
        print(f"no row A': {reference.label} runs on onnxruntime only", file=sys.stderr)
    out_dir.mkdir(parents=True, exist_ok=True)
    named_images = real_images(options.image_folders)
    images = [data for _, data in named_images]
    settings = repository.pipeline_settings()

    def fresh(row: str) -> FreshProcess:
        return FreshProcess(row, pack, repository.path, floor_threads, images)

    # how busy the machine was: per row, the share of its busy CPU other processes took while
    # the row ran (ours: the bench, the row's worker, the server and its stubs)
    busy: dict[str, list[float]] = {}  # by row key: [ours, the machine's], CPU seconds

    def measured(row: Row, run, pids: Sequence[int] = (), server_pid: int | None = None) -> None:
        def spent() -> float:
            server = server_cpu_seconds(server_pid) if server_pid else 0.0
            return time.process_time() + sum(cpu_seconds(p) for p in pids) + server

        ours, machine = spent(), machine_busy_seconds()
        run()
        total = busy.setdefault(key(row), [0.0, 0.0])
        total[0] += spent() - ours
        total[1] += machine_busy_seconds() - machine

    def others() -> dict[str, float]:
        return {name: others_share(ours, machine) for name, (ours, machine) in busy.items()}

    # Rows A and A' alone, each in its own fresh process with nothing else running: what a user
    # sees (A' as RapidOCR's README shows it, on OpenVINO), and what the bench's rows must match.
    # Once before the server starts and once after it stops, so a drift of the machine's speed
    # during the run shows instead of passing for a ratio.
    def run_alone(worker_row: str, label: str) -> tuple[Row, list[int]]:
        """Row `worker_row` alone, and the lines it read from each image."""
        alone = Row(f"{worker_row} alone {label}", 1)
        with fresh(worker_row) as worker:
            for _ in range(options.rounds):
                measured(alone, lambda: worker.round(alone), [worker.process.pid])
        share = others_share(*busy[key(alone)])
        print(
            f"row {worker_row} alone {label}: {alone.throughput:.2f} img/s "
            f"(others took {share:.0%})",
            file=sys.stderr,
        )
        return alone, worker.lines

    alone_before, peer_lines = run_alone("A", "before")
    prime_before = run_alone("A'", "before")[0] if on_openvino else None
    # Like with like: RapidOCR answers some images with nothing (it reads a palette PNG's
    # colour indices as grey levels: a black page), and reading nothing is fast. Every row is
    # also measured on the images RapidOCR read lines from, in a run of their own.
    peer_read = [i for i, lines in enumerate(peer_lines) if lines]
    unread = [name for (name, _), lines in zip(named_images, peer_lines, strict=True) if not lines]
    print(f"RapidOCR read nothing from {len(unread)} of {len(images)} images", file=sys.stderr)
    a = Row("A rapidocr in-process", 1)
    a_openvino = Row("A' rapidocr openvino in-process", 1) if on_openvino else None
    b = Row("B floor in-process", 1)
    c = Row("C tutorial two calls (grpc)", 1)
    served = [
        Row(f"{model} {protocol}", conc)
        for model in contract.ENTRY_POINTS
        for protocol in ("http", "grpc")
        for conc in options.concurrencies
    ]
    http, grpc, metrics, rest = free_ports(4)
    opts = ServerOptions(repository.path, "127.0.0.1", http, grpc, metrics, pack=pack)
    urls = {"http": f"127.0.0.1:{http}", "grpc": f"127.0.0.1:{grpc}"}
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(running_server(opts, log_file=out_dir / "tritonserver.log"))
        cold_start = time.perf_counter() - start
        first = time.perf_counter()
        served_reader(urls["grpc"], "grpc", contract.OCR_MODEL)(images[0])
        first_request = time.perf_counter() - first
        # rows A, A' and B in their own fresh processes, warmed up as they start
        workers = {a.name: stack.enter_context(fresh("A"))}
        if a_openvino:
            workers[a_openvino.name] = stack.enter_context(fresh("A'"))
        workers[b.name] = stack.enter_context(fresh("B"))
        readers: dict[str, Callable[[], ReadOne]] = {
            c.name: lambda: tutorial_reader(urls["grpc"], repository, settings),
        }
        for row in served:
            model, protocol = row.name.split()
            readers.setdefault(row.name, partial(served_reader, urls[protocol], protocol, model))
        rows = [a, *([a_openvino] if a_openvino else []), b, c, *served]
        # every path warmed up (sessions, connections); each model of the server, and row C's
        # calls, on every image (the server's compiled shapes), as the workers warm themselves
        warmed: set[str] = set()
        for row in rows:
            if row.name not in workers:
                path = row.name.split()[0]
                warm_up(readers[row.name](), images if path not in warmed else images[:1])
                warmed.add(path)
        on_read = {key(row): Row(row.name, row.concurrency) for row in rows}
        for round_index in range(options.rounds):
            for row in rows:
                part = on_read[key(row)]
                if row.name in workers:
                    worker = workers[row.name]
                    pids = [worker.process.pid]
                    measured(
                        row,
                        lambda w=worker, r=row, p=part: p.add(one_at_a_time(w.round(r), peer_read)),
                        pids,
                        server.pid,
                    )
                else:
                    read = readers[row.name]
                    run = partial(run_in_two, row, part, read, images, peer_read)
                    measured(row, run, (), server.pid)
                print(
                    f"round {round_index + 1}/{options.rounds} {row.name} c={row.concurrency}: "
                    f"{row.throughput:.2f} img/s (others took "
                    f"{others()[key(row)]:.0%} so far)",
                    file=sys.stderr,
                )
        memory = memory_record(server.pid)
        # what page orientation costs: `ocr` with it on (the default) and off, image by image
        off = {contract.PAGE_ORIENTATION_PARAMETER: "off"}
        paired = paired_seconds(
            {
                "on": served_reader(urls["grpc"], "grpc", contract.OCR_MODEL),
                "off": served_reader(urls["grpc"], "grpc", contract.OCR_MODEL, off),
            },
            images,
            options.rounds,
        )
        gateway = gateway_section(urls["grpc"], server.pid, rest, images, options.rounds, out_dir)
        columns = measure_stages(pack, repository.path, floor_threads, images, options.rounds)
        stats = model_statistics(urls["http"])
        differences = compare_entry_points(urls["grpc"], named_images)
    alone_after, _ = run_alone("A", "after")
    prime_after = run_alone("A'", "after")[0] if on_openvino else None
    # the first image's steady latency needs a concurrency-1 row (--concurrency may leave it out)
    ocr_c1 = [r for r in served if r.name == f"{contract.OCR_MODEL} grpc" and r.concurrency == 1]
    first_image_steady = (
        statistics.median(ocr_c1[0].latencies[:: len(images)]) if ocr_c1 else float("nan")
    )
    summary = summarize(rows, a, b, a_openvino, others())
    top = headline(summary)
    peer_summary = summarize(
        [on_read[key(row)] for row in rows],
        on_read[key(a)],
        on_read[key(b)],
        on_read[key(a_openvino)] if a_openvino else None,
        others(),
    )
    peer_top = headline(peer_summary) if peer_read else None
    on_peer_read = {
        "images": len(peer_read) * options.rounds,
        "rapidocr_read_nothing_from": unread,
        "rows": peer_summary,
        "headline": peer_top,
    }
    # throughput lost to page orientation (the classifier's call, a proposed turn's checks)
    orientation_cost = {
        "images": len(images) * options.rounds,
        "on_images_per_s": len(images) * options.rounds / paired["on"],
        "off_images_per_s": len(images) * options.rounds / paired["off"],
        "cost": 1 - paired["off"] / paired["on"],
    }
    result: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "images": len(images),
        "rounds": options.rounds,
        "environment": environment(repository, floor_threads),
        "cpu": cpu,
        "cold_start_s": cold_start,
        "first_request_s": first_request,
        "steady_first_image_ocr_grpc_c1_s": first_image_steady,
        "rows": summary,
        "headline": top,
        "on_images_rapidocr_read": on_peer_read,
        "page_orientation_cost": orientation_cost,
        "stages": stages_summary(columns, served, cpu),
        "gateway_overhead": gateway,
        "memory": memory,
        "row_a_alone": alone_record(a, alone_before, alone_after, others()),
        "row_a_prime_alone": (
            alone_record(a_openvino, prime_before, prime_after, others())
            if a_openvino and prime_before and prime_after
            else None
        ),
        "model_statistics": stats,
        "ocr_vs_ensemble_differences": differences,
    }
    (out_dir / "benchmark.json").write_text(json.dumps(result, indent=2))
    chart(summary, out_dir / "benchmark.png", cpu)
    print_table(summary, cpu)
    print(headline_line(top))
    if peer_top:
        print(
            f"on the {len(peer_read)} images RapidOCR read (it answered {len(unread)} with "
            f"nothing): {headline_line(peer_top)}"
        )
    print()
    for name, check in (("A", result["row_a_alone"]), ("A'", result["row_a_prime_alone"])):
        if check:
            print(alone_line(name, check))
    print(
        f"cold start to ready: {cold_start:.2f} s; first request (ocr, grpc, image 0): "
        f"{first_request * 1000:.0f} ms; the same image later: {first_image_steady * 1000:.0f} ms"
    )
    print("\nper model (Triton statistics): requests, mean ms queued / computing")
    for name, s in sorted(stats.items()):
        print(f"  {name:28} {s['requests']:>6} {s['queue_ms']:8.1f} {s['compute_infer_ms']:8.1f}")
    cost = orientation_cost
    print(
        f"\npage orientation: `ocr` (grpc, one image at a time, on and off image by image) "
        f"{cost['on_images_per_s']:.2f} img/s with it, {cost['off_images_per_s']:.2f} without: "
        f"it costs {cost['cost']:.1%} of throughput"
    )
    print("\n".join(gateway_lines(gateway)))
    print("\n".join(stage_lines(result["stages"])))
    print(memory_line(memory))
    print(f"\nocr and ensemble_model differ on {len(differences)} of {len(images)} images")
    for diff in differences:
        print(f"  {diff['image']}: ocr {diff['ocr']} / ensemble {diff['ensemble_model']}")
    print(f"\nwrote {out_dir / 'benchmark.json'} and {out_dir / 'benchmark.png'}")
    return result
