"""The asyncio twin of the retry rule: transient failures again with backoff, within the
deadline; bad input never."""

from __future__ import annotations

import asyncio

import pytest
from tritonclient.utils import InferenceServerException

from triton_ocr.client.ocr_client import is_transient, with_retries_async

from .test_client import INTERNAL, INVALID, UNAVAILABLE, FakeClock


class AsyncClock(FakeClock):
    async def sleep(self, seconds: float) -> None:  # type: ignore[override]
        self.sleeps.append(seconds)
        self.now += seconds


def failing(errors, result="ok", clock=None, spend=0.0):
    calls = []

    async def call(seconds_left):
        calls.append(seconds_left)
        if clock:
            clock.now += spend
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return call, calls


def retried(call, deadline, retries, clock):
    return asyncio.run(with_retries_async(call, deadline, retries, 0.5, clock, clock.sleep))


def test_transient_failures_are_retried_with_growing_waits():
    clock = AsyncClock()
    call, calls = failing([UNAVAILABLE, INTERNAL], clock=clock)
    assert retried(call, 30.0, 3, clock) == "ok"
    assert len(calls) == 3 and len(clock.sleeps) == 2
    assert 0.25 <= clock.sleeps[0] <= 0.5 and 0.5 <= clock.sleeps[1] <= 1.0
    assert calls[0] == 30.0 and calls[2] < calls[1] < 30.0  # each attempt gets what is left


def test_bad_input_is_never_retried():
    clock = AsyncClock()
    call, calls = failing([INVALID], clock=clock)
    with pytest.raises(InferenceServerException, match="cannot decode"):
        retried(call, 30.0, 3, clock)
    assert len(calls) == 1 and clock.sleeps == []
    call, calls = failing([ValueError("inconsistent response")], clock=clock)
    with pytest.raises(ValueError):
        retried(call, 30.0, 3, clock)
    assert len(calls) == 1 and clock.sleeps == []


def test_retries_stop_at_the_count_and_at_the_deadline():
    clock = AsyncClock()
    call, calls = failing([UNAVAILABLE] * 10, clock=clock)
    with pytest.raises(InferenceServerException):
        retried(call, 1000.0, 2, clock)
    assert len(calls) == 3
    clock = AsyncClock()
    call, calls = failing([UNAVAILABLE] * 10, clock=clock, spend=0.9)
    with pytest.raises(InferenceServerException):
        retried(call, 2.0, 10, clock)
    assert clock.now < 2.0 + 0.9  # no wait that would end past the deadline


def test_the_asyncio_clients_failures_count_as_the_blocking_ones():
    import aiohttp

    assert is_transient(asyncio.TimeoutError()) and is_transient(TimeoutError())
    assert is_transient(aiohttp.ServerDisconnectedError())
    assert is_transient(aiohttp.ClientConnectionError("refused"))
    assert not is_transient(aiohttp.ClientPayloadError("bad body"))


def test_cancelling_is_not_a_failure_to_retry():
    clock = AsyncClock()

    async def cancelled(seconds_left):
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        retried(cancelled, 30.0, 3, clock)
    assert clock.sleeps == []


def test_a_real_timeout_ends_the_attempt_and_is_retried_within_the_deadline():
    """The client bounds each attempt with asyncio.wait_for: a hung server costs the deadline,
    not forever, and the waits use the real event loop."""
    calls = []

    async def hangs_then_answers(seconds_left):
        calls.append(seconds_left)
        if len(calls) == 1:
            return await asyncio.wait_for(asyncio.sleep(10), min(seconds_left, 0.05))
        return "ok"

    async def main():
        return await with_retries_async(hangs_then_answers, 2.0, 3, 0.01)

    assert asyncio.run(main()) == "ok" and len(calls) == 2
