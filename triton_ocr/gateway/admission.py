"""The gateway's bound on uploads answered at once: beyond it, a POST under /v1/ is refused at once,
before its body is read, so a crowd of callers costs the gateway neither memory (bodies are read
whole) nor waiting work it could not finish in time. A pure ASGI wrapper, so an upload counts
until its answer is sent in full, a streamed one (jsonl) included, or its caller is gone.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send


class Admission:
    def __init__(self, app: ASGIApp, limit: int, refuse: Callable[[int], Response]) -> None:
        """`refuse(in_flight)`: the answer to an upload beyond `limit`."""
        self.app, self.limit, self.refuse = app, limit, refuse
        self.in_flight = 0  # one event loop: no lock needed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bounded = scope["type"] == "http" and scope["method"] == "POST"
        if not bounded or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            await self.refuse(self.in_flight)(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
