"""Bring back a model whose stub process died.

Triton 2.51's Python backend (the one in the pytriton wheel and in the 24.10 container) does not
restart a stub that died: the instance answers "Stub process '<instance>' is not healthy" to
every request routed to it, for as long as the server runs, while the model still reports
ready (measured: docs/reliability.md). The supervisor watches the server's stub processes and,
when one is gone, unloads and loads its model through the model-repository API (explicit model
control, with the admin key), which starts fresh stubs; requests in the gap of a second or two
fail UNAVAILABLE, and the client library retries them.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from triton_ocr.serving.processes import PROC, stubs


def admin_post(http_url: str, header: str, key: str, path: str, timeout: float) -> bytes:
    """POST to one of Triton's restricted (admin) HTTP APIs with the key."""
    request = urllib.request.Request(
        f"http://{http_url}{path}", data=b"{}", method="POST", headers={header: key}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def repository_index(http_url: str, header: str, key: str) -> list[dict]:
    """Triton's repository index (admin API): every model's name and state."""
    return json.loads(admin_post(http_url, header, key, "/v2/repository/index", timeout=10))


def running(pid: int) -> bool:
    """The process exists and is neither a zombie nor dead."""
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@dataclass
class StubSupervisor:
    server_pid: int
    http_url: str  # host:port
    admin_header: str
    admin_key: str
    poll_s: float = 0.5
    log: Callable[[str], None] = field(default=lambda text: print(text, file=sys.stderr))
    # every /dev/shm region a stub of this server used: what to remove if the server crashes
    regions: set[str] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> StubSupervisor:
        known = self._running_stubs()  # now, so a stub that dies right after is noticed
        self._thread = threading.Thread(
            target=self._watch, args=(known,), name="stub-supervisor", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=130)

    def server_ready(self) -> bool:
        """False while the server stops (its stubs end then, and must not be brought back)."""
        url = f"http://{self.http_url}/v2/health/ready"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def loaded(self, model: str) -> bool:
        """Whether `model` is meant to be loaded: READY in the repository index (a stub that
        died leaves it READY). Unloaded on purpose, as `triton-ocr drain` does, it is not."""
        index = repository_index(self.http_url, self.admin_header, self.admin_key)
        return any(entry.get("name") == model and entry.get("state") == "READY" for entry in index)

    def reload(self, model: str) -> None:
        """Unload, then load: a plain load of an unchanged model is a no-op in Triton (measured),
        which would leave the dead instance in place."""
        for action in ("unload", "load"):
            path = f"/v2/repository/models/{model}/{action}"
            admin_post(self.http_url, self.admin_header, self.admin_key, path, timeout=120)

    def _running_stubs(self) -> dict[str, int]:
        """The running instances' stubs; a loading model's own stub, which ends by design, is
        not watched (taken for dead, it made the model reload just after the server started)."""
        current = [s for s in stubs(self.server_pid) if running(s.pid)]
        self.regions.update(s.shm_region for s in current)
        return {s.instance: s.pid for s in current if s.is_instance}

    def _watch(self, known: dict[str, int]) -> None:
        while not self._stop.wait(self.poll_s) and running(self.server_pid):
            dead = sorted(i for i, pid in known.items() if not running(pid))
            if dead and not self.server_ready():
                continue  # stopping (or between loads): look again at the next poll
            failed = False
            by_model: dict[str, list[str]] = {}
            for instance in dead:
                by_model.setdefault(instance.rsplit("_", 2)[0], []).append(instance)
            for model, instances in sorted(by_model.items()):
                start = time.monotonic()
                try:
                    if not self.loaded(model):  # unloaded on purpose: its stubs ended with it
                        continue
                    died = ", ".join(instances)
                    self.log(f"a stub of {model} died ({died}): reloading the model")
                    self.reload(model)
                    self.log(f"{model} reloaded in {time.monotonic() - start:.1f} s")
                except Exception as exc:  # the server may be stopping: try again later
                    failed = True
                    self.log(f"reloading {model} failed: {exc}")
            if dead and not failed:
                known = self._running_stubs()  # the reloaded models' instances are new
            else:
                known.update({i: p for i, p in self._running_stubs().items() if i not in dead})
            if failed:
                self._stop.wait(2.0)


def supervisor_log(path: Path | None) -> Callable[[str], None]:
    """Supervisor messages into the server's log file when there is one, else stderr."""
    if path is None:
        return lambda text: print(text, file=sys.stderr)

    def write(text: str) -> None:
        with open(path, "a") as log:
            log.write(f"triton-ocr supervisor: {text}\n")

    return write
