"""What the server is told: its options, the admin-key policy, and tritonserver's command line.

One set of flags wherever Triton comes from (the wheel's binary or the NGC container's), so the
local server and the container behave alike; only the backend directory differs.
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from triton_ocr.config.packs import DEFAULT_PACK, model_config_name
from triton_ocr.contract import (
    ENTRY_POINT_MODELS,
    ENTRY_POINTS,
    GRPC_PORT,
    HTTP_PORT,
    METRICS_PORT,
    MODELS,
)
from triton_ocr.serving.distribution import TritonDistribution
from triton_ocr.serving.errors import ServerError

# Python models exchange whole images through /dev/shm: start with room for a typical photo and
# grow in large steps instead of the backend's 1 MiB default.
SHM_DEFAULT_BYTES = 16 * 1024 * 1024
SHM_GROWTH_BYTES = 16 * 1024 * 1024
# glibc's malloc in tritonserver and its stubs: two arenas, not eight per core (Triton's and the
# runtimes' many threads each kept freed memory in their own), and blocks of 1 MiB or more
# (images, tensors) mapped and handed back to the system when freed rather than kept on the
# heap; the operator's own MALLOC_* settings win (docs/benchmarks.md, "Where the memory goes").
MALLOC_ENVIRONMENT = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": str(1024 * 1024)}
# Triton's APIs that change the server or reach into its memory (model load/unload and the
# repository index, shared-memory registration, tracing, logging settings): only callers that
# present the operator's key, from this environment variable, in this header. Inference, health,
# metadata, model config and statistics stay open.
ADMIN_KEY_ENV = "TRITON_OCR_ADMIN_KEY"
ADMIN_HEADER = "triton-ocr-admin-key"
RESTRICTED_APIS = ("model-repository", "shared-memory", "trace", "logging")
# Triton's own wait for requests in flight once told to stop (--exit-timeout-secs)
EXIT_TIMEOUT_S = 30


@dataclass
class ServerOptions:
    repository: Path
    host: str = "127.0.0.1"
    http_port: int = HTTP_PORT
    grpc_port: int = GRPC_PORT
    metrics_port: int = METRICS_PORT
    log_verbose: int = 0
    pack: str = DEFAULT_PACK
    # the admin APIs' key; None: $TRITON_OCR_ADMIN_KEY, or (unset) a random one nobody is told,
    # which keeps those APIs closed
    admin_key: str | None = None
    supervise: bool = True  # reload a model whose stub process died (supervisor.py)
    system_triton: bool = False  # the container's tritonserver and backends, not the wheel's
    gpu: bool = False  # the pack's GPU variant (packs.GPU_VARIANTS)
    # the entry points to load (`serve --entry-points`), each with the models it calls
    entry_points: tuple[str, ...] = ENTRY_POINTS
    # the cores to lay threads and instances out for (layout.py); None: those this process finds;
    # 0: the config files' own
    cores: int | None = None
    # whether OpenVINO networks keep their compiled shapes where a config says none (the laid-out
    # configs only); None: where this CPU pays for it (layout.shapes_pay)
    keep_shapes: bool | None = None


def free_ports(count: int) -> list[int]:
    """`count` distinct free TCP ports on loopback, for a server started next to others (the
    tests' and the tools' own servers)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


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


def served_models(entry_points: tuple[str, ...]) -> tuple[str, ...]:
    """The models to load for `entry_points` ("*": all of them), in the repository's order; a
    model left out starts no stub process and holds no memory."""
    unknown = sorted(set(entry_points) - set(ENTRY_POINTS))
    if unknown or not entry_points:
        raise ServerError(
            f"entry points must be among {', '.join(ENTRY_POINTS)}, "
            f"not {', '.join(unknown) or 'none'}"
        )
    needed = {model for entry in entry_points for model in ENTRY_POINT_MODELS[entry]}
    return ("*",) if needed == set(MODELS) else tuple(m for m in MODELS if m in needed)


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
        f"--exit-timeout-secs={EXIT_TIMEOUT_S}",
        # every model loads at once (Triton's default is 4 at a time): cold start to ready here
        # went from 5.7-6.1 s to 4.3-5.1 s (docs/benchmarks.md)
        "--model-load-thread-count=16",
        # the entry points' models loaded at start; explicit control lets the supervisor reload
        # a model whose stub died (load/unload are behind the admin key)
        "--model-control-mode=explicit",
        *(f"--load-model={model}" for model in served_models(opts.entry_points)),
        *restriction_flags(admin_key(opts.admin_key)),
        *(
            [f"--model-config-name={name}"]
            if (name := model_config_name(opts.pack, opts.gpu))
            else []
        ),
    ]


def server_command(dist: TritonDistribution, backend_dir: Path, opts: ServerOptions) -> list[str]:
    """The wheel's tritonserver with our private backend directory."""
    return [str(dist.binary), f"--backend-directory={backend_dir}", *triton_flags(opts)]


def container_command(opts: ServerOptions) -> list[str]:
    """The NGC container's own tritonserver (on PATH) with its own backends (C++ onnxruntime)."""
    return ["tritonserver", *triton_flags(opts)]
