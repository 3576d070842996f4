"""The gateway's bounds on uploads answered at once: at most `limit` in all and `per_client` from
one caller (its address, as uvicorn gives it: a trusted proxy's X-Forwarded-For). Beyond them a
POST under /v1/ is refused before its body is read, so a crowd of callers costs the gateway
neither memory (bodies are read whole) nor waiting work it could not finish in time; the refusal
is sent after `delay_s`, so a caller that sends again as soon as it is refused slows itself down
instead of turning refusals into a busy loop. At most `max_delayed` refusals wait at once (each is
a sleeping task and an open connection): beyond, they go out at once. A pure ASGI wrapper, so an
upload counts until its answer is sent in full, a streamed one (jsonl) included, or its caller is
gone.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send


@dataclass(frozen=True)
class Refusal:
    """Why an upload was refused: the caller's own share was full (`per_client`) or the
    gateway's (`in_flight` uploads in all)."""

    per_client: bool
    in_flight: int  # the caller's uploads being answered, or everyone's
    limit: int


def caller(scope: Scope) -> str:
    """The caller's address: uvicorn puts a trusted proxy's X-Forwarded-For client there."""
    client = scope.get("client")
    return client[0] if client else ""


class UploadGate:
    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        per_client: int,
        refuse: Callable[[Refusal], Response],
        delay_s: float,
        max_delayed: int = 1024,
    ) -> None:
        """`refuse(why)`: the answer to an upload beyond a bound."""
        self.app, self.refuse = app, refuse
        self.limit, self.per_client = limit, per_client
        self.delay_s, self.max_delayed = delay_s, max_delayed
        self.in_flight = 0  # one event loop: no lock needed
        self.by_caller: Counter[str] = Counter()  # callers with uploads inside only: bounded
        self.delayed = 0

    def refusal(self, who: str) -> Refusal | None:
        if self.by_caller[who] >= self.per_client:
            return Refusal(True, self.by_caller[who], self.per_client)
        if self.in_flight >= self.limit:
            return Refusal(False, self.in_flight, self.limit)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bounded = scope["type"] == "http" and scope["method"] == "POST"
        if not bounded or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        who = caller(scope)
        why = self.refusal(who)
        if why is not None:
            await self.slowly(self.refuse(why), scope, receive, send)
            return
        self.in_flight += 1
        self.by_caller[who] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            self.by_caller[who] -= 1
            if self.by_caller[who] <= 0:
                del self.by_caller[who]

    async def slowly(self, answer: Response, scope: Scope, receive: Receive, send: Send) -> None:
        """Send a refusal after delay_s (at once when max_delayed are already waiting)."""
        if self.delayed < self.max_delayed:
            self.delayed += 1
            try:
                await asyncio.sleep(self.delay_s)
            finally:
                self.delayed -= 1
        await answer(scope, receive, send)
