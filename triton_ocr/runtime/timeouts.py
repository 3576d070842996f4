"""A bound on how long a model waits for another: a stuck model must not hang requests forever.

No Triton import: the model adapters wrap their BLS calls with it, the unit tests drive it with
plain coroutines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


class ModelTimeout(TimeoutError):
    """A model call gave no answer in time; the request fails as UNAVAILABLE (worth a retry)."""


class ModelUnavailable(ModelTimeout):
    """A called model cannot answer now (its process is being replaced): UNAVAILABLE too."""


async def answer_within(call: Awaitable[T], seconds: float, what: str) -> T:
    """`await call`, or ModelTimeout naming `what` after `seconds`. The waiting stops; work
    already running in the other model finishes on its own and its answer is dropped."""
    try:
        return await asyncio.wait_for(call, seconds)
    except asyncio.TimeoutError as exc:  # not the builtin TimeoutError before Python 3.11
        raise ModelTimeout(f"{what} gave no answer within {seconds:g} s") from exc


_LOOP: asyncio.AbstractEventLoop | None = None


def run(coroutine: Awaitable[T]) -> T:
    """Run `coroutine` on this process's one event loop. Unlike asyncio.run, nothing waits at
    the end for BLS calls abandoned by a timeout (their executor threads finish on their own)."""
    global _LOOP
    if _LOOP is None or _LOOP.is_closed():
        _LOOP = asyncio.new_event_loop()
    return _LOOP.run_until_complete(coroutine)
