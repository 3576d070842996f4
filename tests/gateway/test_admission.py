"""The gateway's admission as an ASGI wrapper: uploads counted in all and per caller while they
are answered, refusals after the delay (at once beyond the ones that may wait), the counts
freed when an answer ends, whichever way it ends. The end-to-end behaviour, against the real
gateway and server: tests/e2e/test_overload.py."""

from __future__ import annotations

import asyncio
import time

import pytest
from starlette.responses import Response

from triton_ocr.gateway.admission import Refusal, UploadGate


class Held:
    """An app whose answers to uploads wait until released: each stays in flight until then."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def __call__(self, scope, receive, send) -> None:
        if scope["method"] == "POST":
            await self.release.wait()
        await Response("read", 200)(scope, receive, send)


def upload(who: str, path: str = "/v1/ocr", method: str = "POST") -> dict:
    return {"type": "http", "method": method, "path": path, "client": (who, 5000), "headers": []}


async def answer(admission: UploadGate, scope: dict) -> tuple[int, float]:
    """(status, seconds) of one request through `admission`."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    start = time.monotonic()
    await admission(scope, receive, send)
    return sent[0]["status"], time.monotonic() - start


def refuse(why: Refusal) -> Response:
    return Response(str(why), 429 if why.per_client else 503)


def test_uploads_are_bounded_per_caller_and_in_all_and_refused_after_the_delay():
    async def run() -> None:
        held = Held()
        admission = UploadGate(held, limit=3, per_client=2, refuse=refuse, delay_s=0.2)
        inside = [asyncio.create_task(answer(admission, upload(w))) for w in ("a", "a", "b")]
        await asyncio.sleep(0.05)
        assert admission.in_flight == 3 and admission.by_caller == {"a": 2, "b": 1}
        status, seconds = await answer(admission, upload("a"))
        assert status == 429 and seconds >= 0.2  # a's share
        status, seconds = await answer(admission, upload("c"))
        assert status == 503 and seconds >= 0.2  # all of it
        page, _ = await answer(admission, upload("a", "/healthz", "GET"))  # not an upload
        held.release.set()
        assert page == 200 and [(await t)[0] for t in inside] == [200, 200, 200]
        assert admission.in_flight == 0 and not admission.by_caller  # no caller kept

    asyncio.run(run())


def test_beyond_the_refusals_that_may_wait_one_is_sent_at_once():
    async def run() -> None:
        held = Held()
        admission = UploadGate(held, 1, 1, refuse, delay_s=5.0, max_delayed=2)
        inside = asyncio.create_task(answer(admission, upload("a")))
        waiting = [asyncio.create_task(answer(admission, upload("a"))) for _ in range(2)]
        await asyncio.sleep(0.05)
        assert admission.delayed == 2
        status, seconds = await answer(admission, upload("a"))
        assert status == 429 and seconds < 1.0
        for task in waiting:
            task.cancel()  # their callers went away
        await asyncio.gather(*waiting, return_exceptions=True)
        assert admission.delayed == 0
        held.release.set()
        assert (await inside)[0] == 200

    asyncio.run(run())


def test_an_answer_that_fails_frees_its_place():
    async def run() -> None:
        async def broken(scope, receive, send) -> None:
            raise RuntimeError("the app failed")

        admission = UploadGate(broken, 1, 1, refuse, delay_s=0.0)
        for _ in range(2):  # the second is let in too: the first's place was freed
            with pytest.raises(RuntimeError):
                await answer(admission, upload("a"))
        assert admission.in_flight == 0 and not admission.by_caller

    asyncio.run(run())
