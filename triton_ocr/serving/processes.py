"""The running server seen from outside, through /proc (Linux): its stub processes, their
memory, and the shared-memory regions they exchange tensors through.

Runtime: `serve` cleans up after its stubs and the supervisor finds them here; the soak and the
fault drills (tools) read the server's memory through it too, never the other way round."""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Set
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
SHM = Path("/dev/shm")
STUB = "triton_python_backend_stub"
INSTANCE = re.compile(r".+_\d+_\d+")  # "<model>_<group>_<index>"


@dataclass(frozen=True)
class Stub:
    pid: int
    instance: str  # e.g. "detection_postprocessing_0_0"
    shm_region: str  # its file name in /dev/shm

    @property
    def is_instance(self) -> bool:
        """A model instance's stub. While Triton loads a model it also runs a stub named as the
        model, to complete its config, which ends once that is done."""
        return INSTANCE.fullmatch(self.instance) is not None

    @property
    def model(self) -> str:
        return self.instance.rsplit("_", 2)[0] if self.is_instance else self.instance


def _cmdline(pid: int) -> list[str]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _parent(pid: int) -> int | None:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def stubs(server_pid: int) -> list[Stub]:
    """The Python backend stubs the server process started: one per model instance, and one
    per model while it loads (Stub.is_instance)."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or _parent(int(entry.name)) != server_pid:
            continue
        command = _cmdline(int(entry.name))
        if command and command[0].endswith(STUB) and len(command) >= 9:
            found.append(Stub(int(entry.name), command[8], command[2]))
    return sorted(found, key=lambda s: s.instance)


def _kib_field(pid: int, file: str, field: str) -> int:
    """A "Field:   N kB" line of /proc/<pid>/<file>, in bytes (0 if the process is gone)."""
    try:
        for line in (PROC / str(pid) / file).read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def rss_bytes(pid: int) -> int:
    """Resident memory of one process (0 if it is gone)."""
    return _kib_field(pid, "status", "VmRSS:")


def pss_bytes(pid: int) -> int:
    """Proportional memory of one process (0 if it is gone): its own pages plus its share of
    pages mapped by several (libraries, numpy, the stub): summed over processes, what they take
    together, where a sum of RSS counts every shared page once per process."""
    return _kib_field(pid, "smaps_rollup", "Pss:")


def shm_bytes(regions: list[str]) -> tuple[int, int]:
    """(pages in use, sizes) of the named /dev/shm regions, in bytes."""
    used = size = 0
    for name in regions:
        try:
            stat = os.stat(SHM / name)
        except OSError:
            continue
        used += stat.st_blocks * 512
        size += stat.st_size
    return used, size


@dataclass(frozen=True)
class MemorySample:
    seconds: float  # since the run started
    server_rss: int
    stubs_rss: int
    shm_used: int
    shm_size: int
    total_pss: int = 0  # server + stubs, proportional (pss_bytes)

    @property
    def total_rss(self) -> int:
        return self.server_rss + self.stubs_rss


def sample(server_pid: int, seconds: float) -> MemorySample:
    current = stubs(server_pid)
    used, size = shm_bytes([s.shm_region for s in current])
    return MemorySample(
        seconds,
        rss_bytes(server_pid),
        sum(rss_bytes(s.pid) for s in current),
        used,
        size,
        pss_bytes(server_pid) + sum(pss_bytes(s.pid) for s in current),
    )


def clean_up_after(marker: str, regions: Set[str] = frozenset()) -> list[str]:
    """Kill stub processes left behind by a server that is gone (their command line holds
    `marker`, e.g. that server's private backend directory, and their parent is no longer a
    tritonserver) and remove their /dev/shm regions. A crashed tritonserver leaves its stubs
    running, each holding its memory and its region, and the regions of stubs that did exit;
    `regions`: region names seen while the server ran (call only once it is gone). Return what
    was removed."""
    removed = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        command = _cmdline(int(entry.name))
        if not command or not command[0].endswith(STUB) or marker not in " ".join(command):
            continue
        parent = _cmdline(_parent(int(entry.name)) or 0)
        if parent and parent[0].endswith("tritonserver"):
            continue  # still served
        with contextlib.suppress(OSError):
            os.kill(int(entry.name), signal.SIGKILL)
            removed.append(f"stub {entry.name}")
        if len(command) > 2:
            regions = {*regions, command[2]}
    for region in sorted(regions):  # those of stubs gone with their server, too
        with contextlib.suppress(OSError):
            (SHM / region).unlink()
            removed.append(region)
    return removed
