"""Run a real Triton 2.51 server without Docker, from the `nvidia-pytriton` wheel.

The wheel ships `tritonserver`, its Python backend and one backend stub per Python version. We lay
out a private backend directory (in a temporary folder, never the working directory) holding:
  python/       the Python backend library, utils and the stub for this interpreter's version;
  onnxruntime/  our Python-based `onnxruntime` backend (model.py), standing in for the C++ one.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from triton_ocr.client.contract import ENTRY_POINTS
from triton_ocr.packs import DEFAULT_PACK, model_config_name
from triton_ocr.processes import clean_up_after
from triton_ocr.supervisor import StubSupervisor, admin_post, supervisor_log

BACKEND_MODEL = Path(__file__).parent / "backends" / "onnxruntime" / "model.py"
# Python models exchange whole images through /dev/shm: start with room for a typical photo and
# grow in large steps instead of the backend's 1 MiB default.
SHM_DEFAULT_BYTES = 16 * 1024 * 1024
SHM_GROWTH_BYTES = 16 * 1024 * 1024
PR_SET_PDEATHSIG = 1  # linux/prctl.h
# Triton's APIs that change the server or reach into its memory (model load/unload and the
# repository index, shared-memory registration, tracing, logging settings): only callers that
# present the operator's key, from this environment variable, in this header. Inference, health,
# metadata, model config and statistics stay open.
ADMIN_KEY_ENV = "TRITON_OCR_ADMIN_KEY"
ADMIN_HEADER = "triton-ocr-admin-key"
RESTRICTED_APIS = ("model-repository", "shared-memory", "trace", "logging")


class ServerError(RuntimeError):
    """The server could not be started or did not become ready."""


@dataclass(frozen=True)
class TritonDistribution:
    """Where the pytriton wheel put the server binary, its libraries and backend parts."""

    root: Path  # site-packages/pytriton/tritonserver
    libs: Path  # site-packages/nvidia_pytriton.libs

    @property
    def binary(self) -> Path:
        return self.root / "bin" / "tritonserver"

    @property
    def python_backend(self) -> Path:
        return self.root / "backends" / "python"

    def stub(self, version: tuple[int, int] = sys.version_info[:2]) -> Path:
        return (
            self.root
            / "python_backend_stubs"
            / f"{version[0]}.{version[1]}"
            / ("triton_python_backend_stub")
        )


def find_distribution() -> TritonDistribution:
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            "the local Triton server comes from the nvidia-pytriton wheel: "
            "pip install 'triton-ocr[serve]' (or make demo)"
        )
    package = Path(next(iter(spec.submodule_search_locations)))
    dist = TritonDistribution(package / "tritonserver", package.parent / "nvidia_pytriton.libs")
    if not dist.binary.is_file():
        raise ServerError(f"{dist.binary} is missing: reinstall nvidia-pytriton==0.7.0")
    return dist


def missing_libraries(binary: Path, library_path: Path) -> list[str]:
    """Shared libraries `binary` needs that the dynamic loader cannot find (via ldd)."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(library_path)}
    try:
        out = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, env=env, check=False
        ).stdout
    except FileNotFoundError:
        return []
    return [line.split()[0] for line in out.splitlines() if "not found" in line]


LIBPYTHON_PACKAGE = "libpython{major}.{minor}"  # Debian/Ubuntu package of the shared runtime


def check_stub(dist: TritonDistribution) -> Path:
    """The stub for this Python, with a precise message if it or its libpython is missing."""
    major, minor = sys.version_info[:2]
    stub = dist.stub()
    if not stub.is_file():
        raise ServerError(
            f"nvidia-pytriton ships no Python backend stub for Python {major}.{minor}"
        )
    missing = missing_libraries(stub, dist.libs)
    if missing:
        package = LIBPYTHON_PACKAGE.format(major=major, minor=minor)
        raise ServerError(
            f"the Python backend stub needs {', '.join(missing)}: the shared Python runtime of "
            f"the same version. Install it: `apt-get install {package}` (Debian/Ubuntu), "
            "`dnf install python3-libs` (Fedora/RHEL), or run `triton-ocr doctor --fix`"
        )
    return stub


def ensure_libpython(fix: bool) -> str:
    """Check the local runtime's prerequisites; with `fix`, apt-get install a missing libpython."""
    dist = find_distribution()
    try:
        check_stub(dist)
        return "ok: tritonserver, the python backend stub and its libpython are present"
    except ServerError:
        if not fix or shutil.which("apt-get") is None or os.geteuid() != 0:
            raise
    package = LIBPYTHON_PACKAGE.format(major=sys.version_info[0], minor=sys.version_info[1])
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    installed = subprocess.run(["apt-get", "install", "-y", "-qq", package], env=env, check=False)
    if installed.returncode != 0:  # e.g. a Python the distribution does not ship (pyenv)
        raise ServerError(
            f"apt-get could not install {package} (exit {installed.returncode}): use a Python "
            "whose shared runtime the system has, e.g. `make PYTHON=/usr/bin/python3`"
        )
    check_stub(dist)
    return f"ok: installed {package}"


def build_backend_dir(dist: TritonDistribution, target: Path) -> Path:
    """Populate `target` with the python backend and our `onnxruntime` Python-based backend."""
    python_dir = target / "python"
    python_dir.mkdir(parents=True)
    # Copies, not symlinks: Triton refuses backend files whose real path leaves the directory.
    # The copied stub finds its libraries through LD_LIBRARY_PATH (server_environment).
    for item in ("libtriton_python.so", "triton_python_backend_utils.py"):
        shutil.copy2(dist.python_backend / item, python_dir / item)
    shutil.copy2(check_stub(dist), python_dir / "triton_python_backend_stub")
    ort_dir = target / "onnxruntime"
    ort_dir.mkdir()
    shutil.copy2(BACKEND_MODEL, ort_dir / "model.py")
    return target


@dataclass
class ServerOptions:
    repository: Path
    host: str = "127.0.0.1"
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002
    log_verbose: int = 0
    pack: str = DEFAULT_PACK
    # the admin APIs' key; None: $TRITON_OCR_ADMIN_KEY, or (unset) a random one nobody is told,
    # which keeps those APIs closed
    admin_key: str | None = None
    supervise: bool = True  # reload a model whose stub process died (supervisor.py)
    system_triton: bool = False  # the container's tritonserver and backends, not the wheel's


def admin_key(configured: str | None) -> str:
    """The key for the restricted APIs (see RESTRICTED_APIS); it goes into Triton's flags."""
    key = configured or os.environ.get(ADMIN_KEY_ENV) or secrets.token_urlsafe(32)
    if not key.isascii() or any(c in key for c in ",:= \t\n") or not key.isprintable():
        raise ServerError(f"{ADMIN_KEY_ENV} must be printable ASCII without , : = or spaces")
    return key


def restriction_flags(key: str) -> list[str]:
    """Triton flags that close RESTRICTED_APIS on HTTP and gRPC to callers without `key`."""
    apis = ",".join(RESTRICTED_APIS)
    return [
        f"--http-restricted-api={apis}:{ADMIN_HEADER}={key}",
        f"--grpc-restricted-protocol={apis}:{ADMIN_HEADER}={key}",
    ]


def free_ports(count: int) -> list[int]:
    """`count` distinct free TCP ports on loopback (for tests and the benchmark's server)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def server_command(dist: TritonDistribution, backend_dir: Path, opts: ServerOptions) -> list[str]:
    """The wheel's tritonserver with our private backend directory."""
    return [str(dist.binary), f"--backend-directory={backend_dir}", *triton_flags(opts)]


def container_command(opts: ServerOptions) -> list[str]:
    """The NGC container's own tritonserver (on PATH) with its own backends (C++ onnxruntime)."""
    return ["tritonserver", *triton_flags(opts)]


def triton_flags(opts: ServerOptions) -> list[str]:
    """Every flag but the backends': the same server settings wherever Triton comes from."""
    return [
        f"--model-repository={opts.repository.resolve()}",
        f"--http-address={opts.host}",
        f"--http-port={opts.http_port}",
        f"--grpc-address={opts.host}",
        f"--grpc-port={opts.grpc_port}",
        f"--metrics-address={opts.host}",
        f"--metrics-port={opts.metrics_port}",
        f"--backend-config=python,shm-default-byte-size={SHM_DEFAULT_BYTES}",
        f"--backend-config=python,shm-growth-byte-size={SHM_GROWTH_BYTES}",
        f"--log-verbose={opts.log_verbose}",
        "--exit-timeout-secs=30",
        # every model loaded at start, as before; explicit control lets the supervisor reload a
        # model whose stub died (load/unload are behind the admin key)
        "--model-control-mode=explicit",
        "--load-model=*",
        *restriction_flags(admin_key(opts.admin_key)),
        *([f"--model-config-name={name}"] if (name := model_config_name(opts.pack)) else []),
    ]


def server_environment(dist: TritonDistribution) -> dict[str, str]:
    """The stub runs isolated from PYTHONPATH; it finds our packages through `python3` on PATH."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(dist.libs), env.get("LD_LIBRARY_PATH", "")) if p
    )
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the model repository
    return env


def _die_with_parent() -> None:
    """Runs in the child before exec: Linux sends it SIGTERM if the parent dies, so a killed
    test run or CLI never leaves an orphaned tritonserver holding ports and /dev/shm."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


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


@contextlib.contextmanager
def running_server(
    opts: ServerOptions, ready_timeout: float = 120.0, log_file: Path | None = None
) -> Iterator[subprocess.Popen]:
    """Start tritonserver on `opts.repository`, wait until ready, stop it on exit."""
    if not (opts.repository / "ensemble_model" / "config.pbtxt").is_file():
        raise ServerError(f"{opts.repository} is not a model repository (no ensemble_model)")
    opts = dataclasses.replace(opts, admin_key=admin_key(opts.admin_key))  # one key, known here
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-backends-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        if opts.system_triton:
            command = container_command(opts)
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
            marker = str(opts.repository.resolve())  # one server per container
        else:
            dist = find_distribution()
            backend_dir = build_backend_dir(dist, Path(tmp) / "backends")
            command = server_command(dist, backend_dir, opts)
            env = server_environment(dist)
            marker = str(backend_dir)  # this server's own
        if log_file:  # appending, so the supervisor's lines and Triton's never overwrite
            log_file.write_bytes(b"")
        log = stack.enter_context(open(log_file, "ab")) if log_file else None
        supervisor: StubSupervisor | None = None
        process = subprocess.Popen(
            command,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT if log else None,
            cwd=tmp,  # nothing lands in the caller's working directory
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        try:
            host = "127.0.0.1" if opts.host in ("0.0.0.0", "") else opts.host
            try:
                wait_ready(
                    f"http://{host}:{opts.http_port}/v2/health/ready", process, ready_timeout
                )
            except ServerError as exc:
                if log:
                    log.flush()
                    raise ServerError(f"{exc}\n{log_tail(log_file)}") from exc
                raise
            if opts.supervise:
                supervisor = StubSupervisor(
                    process.pid,
                    f"{host}:{opts.http_port}",
                    ADMIN_HEADER,
                    opts.admin_key,
                    log=supervisor_log(log_file),
                ).start()
            yield process
        finally:
            if supervisor:  # first, so stubs ending with the server are not "brought back"
                supervisor.stop()
            if process.poll() is None:
                drain(f"{host}:{opts.http_port}", opts.admin_key, ENTRY_POINTS)
            stop(process)
            # a crashed server leaves its stubs and /dev/shm regions behind
            clean_up_after(marker, supervisor.regions if supervisor else set())


def drain(http_url: str, key: str, models: tuple[str, ...], timeout: float = 30.0) -> None:
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
            index = json.loads(call("/v2/repository/index"))
            if not any(m.get("state") == "UNLOADING" for m in index if m["name"] in models):
                return
            time.sleep(0.2)
    except (OSError, ValueError):
        return  # the server is already going: SIGTERM follows anyway


def log_tail(path: Path, lines: int = 30) -> str:
    """The end of a server log, with the errors Triton printed, for a failure message."""
    text = path.read_text(errors="replace").splitlines()
    return "--- end of the tritonserver log ---\n" + "\n".join(text[-lines:])


def stop(process: subprocess.Popen, timeout: float = 40.0) -> int:
    """SIGTERM lets Triton finish in-flight requests (within its exit timeout), then kill."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode
