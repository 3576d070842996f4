"""A tritonserver process from start to stop: start it, wait until ready, supervise its stubs,
drain the entry points, stop it, clean up after it; and `serve_forever`, which starts it again
when it crashes (what `triton-ocr serve` runs).

Where the binary comes from is distribution.py; what it is told, flags.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from triton_ocr.contract import ENTRY_POINTS
from triton_ocr.serving.distribution import build_backend_dir, find_distribution, server_environment
from triton_ocr.serving.errors import ServerError
from triton_ocr.serving.flags import (
    ADMIN_HEADER,
    MALLOC_ENVIRONMENT,
    ServerOptions,
    admin_key,
    container_command,
    server_command,
)
from triton_ocr.serving.layout import (
    cores_to_lay_out,
    describe,
    laid_out_repository,
    openvino_pays,
    shapes_pay,
)
from triton_ocr.serving.processes import clean_up_after
from triton_ocr.serving.supervisor import (
    StubSupervisor,
    admin_post,
    repository_index,
    supervisor_log,
)

PR_SET_PDEATHSIG = 1  # linux/prctl.h
# a server that crashes within CRASH_WINDOW_S of its start is restarted after a pause, so a crash
# loop does not spin
CRASH_WINDOW_S = 60.0
RESTART_PAUSE_S = 5.0
# A stop drains the entry points first (the requests inside finish, for at most DRAIN_TIMEOUT_S),
# then tells Triton to stop and kills it if it still runs after STOP_TIMEOUT_S (above Triton's
# own exit timeout, flags.EXIT_TIMEOUT_S). So a stop takes at most their sum: a supervisor's
# grace period (Kubernetes' terminationGracePeriodSeconds, deploy/) must be longer.
DRAIN_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 40.0


# Run before the server's own command: Linux sends the server SIGTERM if its parent dies, so a
# killed test run or CLI never leaves an orphaned tritonserver holding ports and /dev/shm. An exec
# shim and not a preexec_fn: a preexec_fn makes CPython fork, and grpc's fork handlers can abort
# the forked child before its exec once the parent holds gRPC channels (grpc/grpc#43055).
_DIE_WITH_PARENT = (
    "import ctypes, os, sys\n"
    f"ctypes.CDLL(None).prctl({PR_SET_PDEATHSIG}, {int(signal.SIGTERM)})\n"
    "if os.getppid() != int(sys.argv[1]): sys.exit(1)\n"  # the parent died before the prctl
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def dying_with_parent(command: list[str]) -> list[str]:
    """`command`, started so that it ends when this process does (Linux only)."""
    if sys.platform != "linux":
        return command
    return [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


def wait_ready(url: str, process: subprocess.Popen, timeout: float) -> None:
    """Poll `url` (the HTTP readiness endpoint) until it answers 200 or the server dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(f"tritonserver exited with code {process.returncode} before ready")
        with (
            contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError),
            urllib.request.urlopen(url, timeout=1) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.2)
    raise ServerError(f"tritonserver not ready after {timeout:.0f} s ({url})")


def keeps_shapes(opts: ServerOptions) -> bool:
    """`serve --keep-shapes/--no-keep-shapes`, or (neither) where this CPU pays for it."""
    return shapes_pay() if opts.keep_shapes is None else opts.keep_shapes


@contextlib.contextmanager
def running_server(
    opts: ServerOptions, ready_timeout: float = 120.0, log_file: Path | None = None
) -> Iterator[subprocess.Popen]:
    """Start tritonserver on `opts.repository`, wait until ready, stop it on exit."""
    if not (opts.repository / "ensemble_model" / "config.pbtxt").is_file():
        raise ServerError(f"{opts.repository} is not a model repository (no ensemble_model)")
    key = admin_key(opts.admin_key)
    opts = dataclasses.replace(opts, admin_key=key)  # one key, known here
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-backends-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        cores = cores_to_lay_out(opts.cores)
        if cores:  # Triton serves the configs laid out for the cores (layout.py)
            laid_out = Path(tmp) / "repository"
            laid_out_repository(
                opts.repository, laid_out, cores, openvino_pays(), keeps_shapes(opts)
            )
            opts = dataclasses.replace(opts, repository=laid_out)
        if opts.system_triton:
            command = container_command(opts)
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
            marker = str(opts.repository.resolve())  # this server's own, or the container's one
        else:
            dist = find_distribution()
            backend_dir = build_backend_dir(dist, Path(tmp) / "backends")
            command = server_command(dist, backend_dir, opts)
            env = server_environment(dist)
            marker = str(backend_dir)  # this server's own
        env = {**MALLOC_ENVIRONMENT, **env}
        if log_file:  # appending, so the supervisor's lines and Triton's never overwrite
            log_file.write_bytes(b"")
        log = stack.enter_context(open(log_file, "ab")) if log_file else None
        supervisor: StubSupervisor | None = None
        process = subprocess.Popen(
            dying_with_parent(command),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT if log else None,
            cwd=tmp,  # nothing lands in the caller's working directory
        )
        try:
            host = "127.0.0.1" if opts.host in ("0.0.0.0", "") else opts.host
            try:
                wait_ready(
                    f"http://{host}:{opts.http_port}/v2/health/ready", process, ready_timeout
                )
            except ServerError as exc:
                if log and log_file:
                    log.flush()
                    raise ServerError(f"{exc}\n{log_tail(log_file)}") from exc
                raise
            if opts.supervise:
                supervisor = StubSupervisor(
                    process.pid,
                    f"{host}:{opts.http_port}",
                    ADMIN_HEADER,
                    key,
                    log=supervisor_log(log_file),
                ).start()
            yield process
        finally:
            if supervisor:  # first, so stubs ending with the server are not "brought back"
                supervisor.stop()
            if process.poll() is None:
                drain(f"{host}:{opts.http_port}", key, opts.entry_points)
            stop(process)
            # a crashed server leaves its stubs and /dev/shm regions behind
            clean_up_after(marker, supervisor.regions if supervisor else set())


def serve_forever(opts: ServerOptions, restart: bool, say: Callable[[str], None]) -> int:
    """Serve until Ctrl-C or SIGTERM, then return 0 once Triton has finished the requests in
    flight. A tritonserver that exits on its own (a crash) is started again with `restart`
    (pausing first if it lived under a minute, so a crash loop does not spin); without it, its
    exit code is returned. `say` gets the status lines (ready, restarting, stopped).
    Raises ServerError if the server cannot start."""
    # SIGTERM stops like Ctrl-C: Triton finishes in-flight requests, then we exit 0.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    host = opts.host
    try:
        cores = cores_to_lay_out(opts.cores)
        own = "layout: the config files' own"
        say(describe(cores, openvino_pays(), opts.pack, keeps_shapes(opts)) if cores else own)
        while True:
            started = time.monotonic()
            with running_server(opts) as process:
                say(
                    f"ready: http://{host}:{opts.http_port}  grpc {host}:{opts.grpc_port}  "
                    f"metrics http://{host}:{opts.metrics_port}/metrics  (Ctrl-C stops)"
                )
                code = process.wait()
            if not restart:
                return code or 0
            say(f"tritonserver exited on its own (code {code}); starting it again")
            if time.monotonic() - started < CRASH_WINDOW_S:
                time.sleep(RESTART_PAUSE_S)
    except KeyboardInterrupt:
        say("stopped")
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def drain(
    http_url: str, key: str, models: tuple[str, ...], timeout: float = DRAIN_TIMEOUT_S
) -> None:
    """Unload the entry points and wait for their requests before Triton is told to stop.

    Triton 2.51 on SIGTERM refuses every new request at once, the internal ones too, so an
    ensemble or BLS request in flight fails at its next step (measured: docs/reliability.md).
    An entry point being unloaded refuses new callers ("no available versions") and stays
    UNLOADING until the requests already inside have finished on the models they call, which
    stay loaded; then Triton can stop with nothing in flight."""

    def call(path: str) -> bytes:
        return admin_post(http_url, ADMIN_HEADER, key, path, timeout=10)

    deadline = time.monotonic() + timeout
    try:
        for model in models:
            call(f"/v2/repository/models/{model}/unload")
        while time.monotonic() < deadline:
            index = repository_index(http_url, ADMIN_HEADER, key)
            if not any(m.get("state") == "UNLOADING" for m in index if m["name"] in models):
                return
            time.sleep(0.2)
    except (OSError, ValueError):
        return  # the server is already going: SIGTERM follows anyway


def drain_ahead(http_url: str, key: str, delay_s: float) -> list[dict]:
    """What a Kubernetes preStop hook runs before the pod gets SIGTERM: keep serving for
    `delay_s` (the Service stops routing here meanwhile; requests still arriving are answered),
    then drain the entry points (callers get "no available versions", which the client library
    retries on another pod, and the requests inside finish). Returns the entry points' index
    entries after the drain; raises OSError when the server or the admin API cannot be reached.
    """
    time.sleep(delay_s)
    index = repository_index(http_url, ADMIN_HEADER, key)
    served = tuple(
        e["name"] for e in index if e["name"] in ENTRY_POINTS and e.get("state") == "READY"
    )
    drain(http_url, key, served)  # those it loaded (`serve --entry-points`)
    index = repository_index(http_url, ADMIN_HEADER, key)
    return [entry for entry in index if entry["name"] in served]


def log_tail(path: Path, lines: int = 30) -> str:
    """The end of a server log, with the errors Triton printed, for a failure message."""
    text = path.read_text(errors="replace").splitlines()
    return "--- end of the tritonserver log ---\n" + "\n".join(text[-lines:])


def stop(process: subprocess.Popen, timeout: float = STOP_TIMEOUT_S) -> int:
    """SIGTERM lets Triton finish in-flight requests (within its exit timeout), then kill."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def gateway_process(host: str, grpc_port: int, rest_port: int) -> subprocess.Popen:
    """`triton-ocr gateway` as a child process, bound where Triton is and calling its gRPC port
    (over loopback when Triton binds every address); the caller terminates it."""
    target = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    beside = Path(sys.executable).parent / "triton-ocr"  # this environment's, before PATH's
    command = str(beside) if beside.exists() else shutil.which("triton-ocr") or str(beside)
    arguments = ["--triton-url", f"{target}:{grpc_port}", "--host", host, "--port", str(rest_port)]
    return subprocess.Popen([command, "gateway", *arguments])


def wait_until_ready(process: subprocess.Popen, base: str, timeout_s: float = 60.0) -> None:
    """Return once the gateway at `base` answers /readyz (the service behind it is ready);
    ServerError if its process ends or `timeout_s` passes first."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"{base}/readyz", timeout=2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise ServerError(f"the REST gateway did not become ready on {base}") from None
            time.sleep(0.2)
