"""The bound on waiting for another model, and the per-process event loop."""

import asyncio
import time

import pytest

from triton_ocr.runtime.timeouts import ModelTimeout, answer_within, run


async def answer(value, after: float):
    await asyncio.sleep(after)
    return value


def test_an_answer_in_time_comes_through():
    assert run(answer_within(answer(7, 0.01), 1.0, "text_recognition")) == 7


def test_a_stuck_model_fails_the_wait_naming_the_model():
    start = time.monotonic()
    with pytest.raises(ModelTimeout, match="text_detection gave no answer within 0.05 s"):
        run(answer_within(answer(7, 30), 0.05, "text_detection"))
    assert time.monotonic() - start < 5
    assert isinstance(ModelTimeout("x"), TimeoutError)


def test_an_abandoned_executor_call_does_not_hold_the_next_request():
    """BLS async_exec runs in the loop's executor: a call given up on keeps its thread, and the
    next request on the same loop is not made to wait for it (asyncio.run would)."""
    import threading

    release = threading.Event()

    async def stuck_then_fine():
        loop = asyncio.get_running_loop()
        with pytest.raises(ModelTimeout):
            await answer_within(loop.run_in_executor(None, release.wait), 0.05, "stub")
        return "answered"

    start = time.monotonic()
    assert run(stuck_then_fine()) == "answered"
    assert run(answer(1, 0)) == 1
    assert time.monotonic() - start < 5
    release.set()
