"""Reading a request's pages under deadlines, and cancelling all of a request's work at once.

Each opened item (preprocessing.documents.Pages, not thread-safe) is owned by a thread of its
own, which decodes or renders its pages one at a time. The event loop only awaits them, so a
page that takes longer than `page_timeout_s` is answered at once with an error while its thread
is told to stop (a PDF render stops at pdfium's next pause; an image decoder, bounded by the
pixel limits, runs to its end and its result is dropped). The item is closed by its own thread
after whatever it is still doing, never under it. No Triton import: unit-tested with slow
stand-in pages.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

import numpy as np

from triton_ocr.errors import InvalidRequest
from triton_ocr.runtime.timeouts import ModelTimeout

T = TypeVar("T")


class OpenedPages(Protocol):
    """An opened item, as preprocessing.documents.Pages is (the runtime does not import it)."""

    kind: str
    count: int

    def page(self, index: int, stop: Callable[[], bool] | None = None) -> np.ndarray: ...

    def size(self, index: int) -> tuple[int, int]: ...

    def text_layer(self, index: int, mode: str) -> Any: ...

    def look(self, index: int, side: int, stop: Callable[[], bool] | None = None) -> np.ndarray: ...

    def close(self) -> None: ...


class PageTimeout(InvalidRequest):
    """A page took longer than page_timeout_s to decode or render: the input's cost, so the
    caller's (a document reports it as that page's error)."""


class RequestTimeout(ModelTimeout):
    """The whole request took longer than request_timeout_s, or than the timeout its caller
    gave it (UNAVAILABLE)."""


class PageReader:
    """One item's pages, read in a thread that owns the item (see the module's docstring)."""

    def __init__(self, pages: OpenedPages, name: str) -> None:
        self.pages = pages
        self.kind, self.count = pages.kind, pages.count
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._stops: set[threading.Event] = set()

    async def page(self, index: int, timeout_s: float) -> np.ndarray:
        """Page `index`, or PageTimeout after `timeout_s` (the page's render told to stop)."""
        return await self._stoppable(
            self.pages.page, (index,), timeout_s, "decoding or rendering it"
        )

    async def look(self, index: int, side: int, timeout_s: float) -> np.ndarray:
        """Page `index` rendered with its long side `side` pixels (Pages.look), or
        PageTimeout after `timeout_s` (the render told to stop)."""
        return await self._stoppable(self.pages.look, (index, side), timeout_s, "rendering it")

    async def _stoppable(
        self, render: Callable[..., np.ndarray], args: tuple, timeout_s: float, doing: str
    ) -> np.ndarray:
        """`render(*args, stop)` in the item's thread, told to stop once nobody waits for it."""
        stop = threading.Event()
        self._stops.add(stop)
        call = self._thread.submit(render, *args, stop.is_set)
        try:
            return await self._within(call, args[0], timeout_s, doing)
        finally:
            stop.set()  # done, timed out or cancelled: in every case nobody waits any more
            self._stops.discard(stop)

    async def text_layer(self, index: int, mode: str, timeout_s: float) -> Any:
        """Page `index`'s text layer, or None where it is OCRed (Pages.text_layer), or
        PageTimeout after `timeout_s`."""
        call = self._thread.submit(self.pages.text_layer, index, mode)
        return await self._within(call, index, timeout_s, "reading its text layer")

    @staticmethod
    async def _within(call: Future[T], index: int, timeout_s: float, doing: str) -> T:
        try:
            return await asyncio.wait_for(asyncio.wrap_future(call), timeout_s)
        except asyncio.TimeoutError as exc:
            raise PageTimeout(
                f"page {index + 1}: {doing} took longer than {timeout_s:g} s (page_timeout_s)"
            ) from exc

    async def size(self, index: int) -> tuple[int, int]:
        """Page `index`'s size (read from its header or page dictionary, in the item's thread)."""
        return await asyncio.wrap_future(self._thread.submit(self.pages.size, index))

    def close(self) -> None:
        """Stop what is running, then close the item in its own thread, after it; returns at
        once."""
        for stop in list(self._stops):
            stop.set()
        self._thread.submit(self.pages.close)
        self._thread.shutdown(wait=False)


async def all_or_none(
    calls: Iterable[Awaitable[T]], timeout_s: float, limit: str = "request_timeout_s"
) -> list[T]:
    """Every call's result in order; on the first failure, or after `timeout_s` in all
    (RequestTimeout, naming the `limit` that set it), every call still running is cancelled
    before the error is raised, so a failed request leaves no work behind for the next."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    if not tasks:
        return []
    try:
        done, _ = await asyncio.wait(tasks, timeout=timeout_s, return_when=asyncio.FIRST_EXCEPTION)
        error = next((e for t in tasks if t in done and (e := t.exception()) is not None), None)
        if error is not None:
            raise error
        if len(done) < len(tasks):
            raise RequestTimeout(f"the request took longer than {timeout_s:g} s ({limit})")
        return [task.result() for task in tasks]
    finally:
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for task in tasks:  # every failure seen, so asyncio does not log it as unretrieved
            if not task.cancelled():
                task.exception()
