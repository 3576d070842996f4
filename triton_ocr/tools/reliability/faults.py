"""`triton-ocr faults`: fault drills against a real server under load, measured (not a test).

1. Kill a model's stub process (SIGKILL) while requests flow: the server must stay up, the stub
   must be replaced (by the server's supervisor, triton_ocr/serving/supervisor.py), and
   requests must succeed again; how long that takes is measured, for plain requests and for the
   client library, which retries.
2. Freeze a model (SIGSTOP its stubs): requests must fail within the BLS timeout instead of
   hanging, and succeed again once it runs (SIGCONT).
3. Stop the server (as `triton-ocr serve` does on SIGTERM) with requests in flight: they must
   finish; new ones are refused.

The servers run on a copy of the repository whose BLS timeout is short (`--bls-timeout`), so
drill 2 fits in seconds. Each drill gets a server of its own; the freeze comes last (Triton
2.51's Python backend aborts the whole server on a frozen stub: docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.client import OcrClient
from triton_ocr.config.repository import Repository
from triton_ocr.contract import ENTRY_POINTS
from triton_ocr.serving.processes import stubs
from triton_ocr.serving.supervisor import running
from triton_ocr.tools.workload import bench_images

from .payloads import connect, infer_raw


@dataclass
class Outcome:
    started: float  # seconds since the drill's fault
    finished: float
    ok: bool
    error: str = ""


@dataclass
class Load:
    """Clients sending good images in a loop, each outcome timed against the fault."""

    urls: dict[str, str]
    images: list[bytes]
    threads: int = 4
    retrying: bool = False  # through OcrClient (retries with backoff) instead of raw calls
    outcomes: list[Outcome] = field(default_factory=list)  # times since start()
    t0: float = 0.0
    fault_s: float = 0.0  # when the fault came, since start()
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)

    def _run(self, index: int) -> None:
        model = ENTRY_POINTS[index % 2]
        if self.retrying:
            client = OcrClient(self.urls["grpc"], "grpc", timeout=60, retries=6, backoff=0.5)
            call = (
                client.read
                if model == contract.ENSEMBLE_MODEL
                else (lambda data: client.read_many([data])[0])
            )
        else:
            module, raw = connect("grpc", self.urls["grpc"])

            def call(data, module=module, raw=raw, model=model):
                return infer_raw(raw, module, model, data, client_timeout=60)

        n = index
        while not self.stop.is_set():
            data = self.images[n % len(self.images)]
            n += 1
            start = time.monotonic() - self.t0
            try:
                call(data)
                outcome = Outcome(start, time.monotonic() - self.t0, True)
            except (InferenceServerException, OSError, ValueError) as exc:
                outcome = Outcome(start, time.monotonic() - self.t0, False, str(exc)[:200])
            with self.lock:
                self.outcomes.append(outcome)
            if not outcome.ok:
                time.sleep(0.05)  # a refused call returns at once: do not spin

    def start(self) -> None:
        self.t0 = time.monotonic()
        self._workers = [
            threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(self.threads)
        ]
        for worker in self._workers:
            worker.start()

    def set_fault_time(self) -> None:
        """Now is the fault: outcome times are reported as seconds after it."""
        self.fault_s = time.monotonic() - self.t0

    def seconds_since_fault(self) -> float:
        return time.monotonic() - self.t0 - self.fault_s

    def finish(self) -> list[Outcome]:
        self.stop.set()
        for worker in self._workers:
            worker.join(120)
        shift = self.fault_s
        return [
            Outcome(o.started - shift, o.finished - shift, o.ok, o.error) for o in self.outcomes
        ]


def recovery(outcomes: list[Outcome]) -> dict:
    """Errors after the fault, and when requests succeeded again for good."""
    after = [o for o in outcomes if o.finished >= 0]
    failures = [o for o in after if not o.ok]
    last_failure = max((o.finished for o in failures), default=0.0)
    back = min((o.finished for o in after if o.ok and o.finished >= last_failure), default=None)
    return {
        "requests_after_fault": len(after),
        "failed": len(failures),
        "errors": sorted({o.error.split("\n")[0][:160] for o in failures})[:5],
        "last_failure_s": round(last_failure, 2) if failures else None,
        "succeeding_again_after_s": None if back is None else round(back, 2),
    }


def wait_until(condition: Callable[[], bool], timeout: float) -> float | None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(0.1)
    return None


def model_ready(url: str, model: str) -> bool:
    import tritonclient.http as httpclient

    try:
        return httpclient.InferenceServerClient(url).is_model_ready(model)
    except Exception:
        return False


def kill_stub_drill(server_pid: int, urls: dict, images: list[bytes], model: str) -> dict:
    raw, retrying = Load(urls, images), Load(urls, images, threads=2, retrying=True)
    raw.start()
    retrying.start()
    time.sleep(8)  # steady load first
    (victim, *_) = [s for s in stubs(server_pid) if s.is_instance and s.model == model]
    raw.set_fault_time()
    retrying.set_fault_time()
    os.kill(victim.pid, signal.SIGKILL)
    restarted = wait_until(
        lambda: any(
            s.instance == victim.instance and s.pid != victim.pid and running(s.pid)
            for s in stubs(server_pid)
        ),
        60,
    )
    time.sleep(15)  # load goes on after the restart
    result = {
        "model": model,
        "killed_stub": victim.instance,
        "server_alive": running(server_pid),
        "stub_restarted_after_s": None if restarted is None else round(restarted, 2),
        "model_ready": model_ready(urls["http"], model),
        "plain_requests": recovery(raw.finish()),
        "client_library_with_retries": recovery(retrying.finish()),
    }
    return result


def freeze_drill(server, urls: dict, images: list[bytes], model: str, hold_s: float) -> dict:
    server_pid = server.pid
    frozen = [s for s in stubs(server_pid) if s.is_instance and s.model == model]
    load = Load(urls, images)
    load.start()
    time.sleep(5)
    load.set_fault_time()
    for stub in frozen:
        os.kill(stub.pid, signal.SIGSTOP)
    time.sleep(hold_s)
    for stub in frozen:
        os.kill(stub.pid, signal.SIGCONT)
    resumed_at = load.seconds_since_fault()
    time.sleep(15)
    outcomes = load.finish()
    during = [o for o in outcomes if 0 <= o.started < hold_s]
    return {
        "model": model,
        "frozen_stubs": [s.instance for s in frozen],
        "frozen_for_s": hold_s,
        "server_alive": server.poll() is None,
        "server_exit_code": server.returncode,
        "requests_started_while_frozen": len(during),
        "longest_wait_while_frozen_s": round(
            max((o.finished - o.started for o in during), default=0), 2
        ),
        "errors_while_frozen": sorted({o.error.split("\n")[0][:160] for o in during if not o.ok})[
            :5
        ],
        "succeeding_again_after_resume_s": next(
            (
                round(o.finished - resumed_at, 2)
                for o in outcomes
                if o.ok and o.started >= resumed_at
            ),
            None,
        ),
        "stubs_after": [s.instance for s in stubs(server_pid) if s.model == model],
    }


def stop_drill(started, process, urls: dict, images: list[bytes]) -> dict:
    """Stop the server the way `triton-ocr serve` does on SIGTERM (leave running_server: drain
    the entry points, then SIGTERM) while requests are in flight: they should finish; a new
    request during the stop is refused."""
    load = Load(urls, images, threads=6)
    load.start()
    time.sleep(6)
    load.set_fault_time()
    late: dict = {}

    def new_request() -> None:
        time.sleep(1.0)
        module, client = connect("grpc", urls["grpc"])
        try:
            infer_raw(client, module, contract.ENSEMBLE_MODEL, images[0], client_timeout=10)
            late["answer"] = "answered"
        except Exception as exc:
            late["answer"] = f"refused: {str(exc).splitlines()[0][:160]}"

    probe = threading.Thread(target=new_request)
    probe.start()
    started.__exit__(None, None, None)  # drain + SIGTERM + wait, as serve does
    exit_s = load.seconds_since_fault()
    probe.join(30)
    outcomes = load.finish()
    in_flight = [o for o in outcomes if o.started < 0 <= o.finished]
    return {
        "in_flight_at_stop": len(in_flight),
        "in_flight_completed_ok": sum(o.ok for o in in_flight),
        "in_flight_errors": sorted({o.error.split("\n")[0][:160] for o in in_flight if not o.ok}),
        "new_request_during_stop": late.get("answer"),
        "server_exit_code": process.returncode,
        "server_stopped_after_s": round(exit_s, 2),
    }


def short_timeout_copy(repository: Repository, target: Path, timeout_s: float) -> Path:
    copy = repository.copy_to(target)
    config = copy.config(contract.GROUPED_RECOGNITION)  # where the BLS timeout is stated
    config.parameters["bls_timeout_s"].string_value = f"{timeout_s:g}"
    copy.write_config(contract.GROUPED_RECOGNITION, config)
    return target


@dataclass(frozen=True)
class FaultsOptions:
    repository: Repository  # the pack served (its models exported); the drills run on a copy
    shared_eval: Path | None  # labelled real images added to the rendered ones, if present
    out_dir: Path  # faults.json and each drill's server log
    kill: Sequence[str]  # models whose stub is killed under load, one drill each
    freeze: str  # the model whose stubs are frozen ("" for no freeze drill)
    bls_timeout_s: float  # the BLS timeout of the drills' servers
    supervise: bool = True  # run the stub supervisor, as `triton-ocr serve` does


def run_faults(options: FaultsOptions) -> dict:
    """Each drill on a server of its own; writes faults.json and prints the report."""
    from triton_ocr.serving.flags import ServerOptions, free_ports
    from triton_ocr.serving.server import running_server

    kill, freeze, supervise = options.kill, options.freeze, options.supervise
    bls_timeout_s, out, pack = options.bls_timeout_s, options.out_dir, options.repository.pack
    images = [data for _, data in bench_images(options.shared_eval)][:8]
    report: dict = {
        "command": " ".join(sys.argv),
        "bls_timeout_s": bls_timeout_s,
        "supervisor": supervise,
    }
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="triton-ocr-faults-") as tmp:
        repo = short_timeout_copy(options.repository, Path(tmp) / "repository", bls_timeout_s)

        def server(name: str):
            http, grpc, metrics = free_ports(3)
            urls = {"http": f"127.0.0.1:{http}", "grpc": f"127.0.0.1:{grpc}"}
            opts = ServerOptions(
                repo, "127.0.0.1", http, grpc, metrics, pack=pack, supervise=supervise
            )
            return urls, running_server(opts, log_file=out / f"faults-{name}-tritonserver.log")

        report["kill"] = []
        if kill:
            urls, started = server("kill")
            with started as process:
                for model in kill:
                    print(f"drill: kill a stub of {model}", file=sys.stderr)
                    report["kill"].append(kill_stub_drill(process.pid, urls, images, model))
                    wait_until(partial(model_ready, urls["http"], model), 60)
        urls, started = server("stop")  # a server of its own, as in a deployment's stop
        process = started.__enter__()
        print("drill: stop with requests in flight", file=sys.stderr)
        report["stop"] = stop_drill(started, process, urls, images)
        if freeze:  # last, on a server of its own: Triton 2.51 may not survive it
            urls, started = server("freeze")
            with started as process:
                print(f"drill: freeze {freeze}", file=sys.stderr)
                report["freeze"] = freeze_drill(process, urls, images, freeze, 3 * bls_timeout_s)
    (out / "faults.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return report
