"""ensemble_model's bound on the requests inside it.

Triton 2.51 bounds the queue in front of a model, not the work inside an ensemble: its first
step clears a request in a fraction of the time the networks after it take, so under load the
requests pile up in the later steps' queues, where no policy refuses them. So the first step
(detection_preprocessing) holds a gate: it admits a request only while fewer than
`max_in_flight` are between it and the last step (grouped_recognition), and refuses the
rest at once as overloaded, before any work is spent on them. The last step tells the gate a
request is done with one datagram to the gate's socket, named by the token the first step hands
down the ensemble. Linux abstract sockets: nothing on disk, gone with the process.

A request that never reaches the last step (a later step failed, its caller went away) is
counted until its lease ends: its deadline, the timeout its caller gave, else the queue's
default. The count errs toward refusing, for at most that long; only a request that outlives
its own deadline inside the ensemble can make it admit one more than the bound.

No Triton import: the adapters wire it, the unit tests drive it directly.
"""

from __future__ import annotations

import contextlib
import heapq
import secrets
import socket
import threading
import time
from collections.abc import Callable

DONE = b"done"


class Overloaded(Exception):
    """A request refused because the server is busy: UNAVAILABLE, worth a retry later."""


def gate_address(token: int) -> bytes:
    """The abstract socket name of the gate whose token is `token`."""
    return f"\0triton-ocr-ensemble-gate-{token:x}".encode()


class InFlightGate:
    """Admits at most `limit` requests at once; each is counted until `done(token)` reaches
    the gate, or its lease runs out."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.clock = limit, clock
        self.token = secrets.randbits(62)  # unique per process, whatever PID namespace it is in
        self._leases: list[float] = []  # a heap of the admitted requests' lease ends
        self._lock = threading.Lock()
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(gate_address(self.token))
        threading.Thread(target=self._listen, name="ensemble-gate", daemon=True).start()

    def admit(self, lease_s: float) -> None:
        """Count one more request, for at most `lease_s` seconds, or raise Overloaded."""
        with self._lock:
            now = self.clock()
            while self._leases and self._leases[0] <= now:
                heapq.heappop(self._leases)
            if len(self._leases) >= self.limit:
                raise Overloaded(
                    f"the server is overloaded: ensemble_model holds as many requests as it "
                    f"may at once ({self.limit}); send again later"
                )
            heapq.heappush(self._leases, now + lease_s)

    def release(self) -> None:
        """One admitted request is done (the one whose lease ends first stops counting: the
        count is what matters, not which)."""
        with self._lock:
            if self._leases:
                heapq.heappop(self._leases)

    def in_flight(self) -> int:
        with self._lock:
            return len(self._leases)

    def _listen(self) -> None:
        while True:
            if self._socket.recv(16) == DONE:
                self.release()


_SENDER: socket.socket | None = None


def done(token: int) -> None:
    """Tell the gate `token` that one of its requests is done. A gate that is gone (its process
    restarted) has nothing to release: the error is ignored."""
    global _SENDER
    if _SENDER is None:
        _SENDER = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        _SENDER.setblocking(False)
    with contextlib.suppress(OSError):
        _SENDER.sendto(DONE, gate_address(token))
