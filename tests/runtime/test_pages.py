"""Pages read under deadlines: a slow page answers in time, its render is told to stop, and a
failed request cancels its other pages (stand-in slow pages and a real slow PDF page)."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from triton_ocr.preprocessing.documents import PageStopped, open_pages
from triton_ocr.runtime.pages import PageReader, PageTimeout, RequestTimeout, all_or_none
from triton_ocr.settings import Documents, ImageLimits
from triton_ocr.tools.reliability.bombs import image_bomb_pdf

LIMITS = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=50_000_000)
DOCS = Documents(pdf_dpi=200, max_pdf_dpi=600, max_pages=100)


class SlowPages:
    """Stand-in pages: page i takes delays[i] seconds (checking `stop` as a PDF render does,
    when `stoppable`), and each call is recorded."""

    kind = "pdf"

    def __init__(self, delays, stoppable=True):
        self.delays, self.stoppable = delays, stoppable
        self.count = len(delays)
        self.started, self.stopped, self.finished = [], [], []
        self.closed_after: list[int] = []

    def page(self, index, stop=None):
        self.started.append(index)
        end = time.monotonic() + self.delays[index]
        while time.monotonic() < end:
            if self.stoppable and stop is not None and stop():
                self.stopped.append(index)
                raise PageStopped(f"page {index + 1}: rendering stopped (too slow)")
            time.sleep(0.005)
        self.finished.append(index)
        return np.zeros((4, 4, 3), np.uint8)

    def size(self, index):
        return (4, 4)

    def close(self):
        self.closed_after = list(self.finished) + list(self.stopped)


def test_a_slow_page_is_answered_at_its_deadline_and_told_to_stop():
    pages = SlowPages([5.0, 0.0])
    reader = PageReader(pages, "test")

    async def main():
        start = time.monotonic()
        with pytest.raises(PageTimeout, match=r"page 1: .* longer than 0.2 s \(page_timeout_s\)"):
            await reader.page(0, 0.2)
        waited = time.monotonic() - start
        image = await reader.page(1, 1.0)  # the next page of the same item still reads
        return waited, image

    waited, image = asyncio.run(main())
    reader.close()
    assert waited < 0.5 and image.shape == (4, 4, 3)
    assert pages.stopped == [0] and pages.finished == [1]


def test_an_item_is_closed_by_its_own_thread_after_its_last_page():
    pages = SlowPages([0.3], stoppable=False)  # an image decoder: cannot be interrupted
    reader = PageReader(pages, "test")

    async def main():
        with pytest.raises(PageTimeout):
            await reader.page(0, 0.05)

    asyncio.run(main())
    reader.close()  # returns at once; the close waits for the decode still running
    assert pages.closed_after == []
    deadline = time.monotonic() + 2
    while not pages.closed_after and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pages.closed_after == [0]


def test_a_failure_cancels_every_other_page_of_the_request():
    pages = SlowPages([0.0, 3.0, 3.0, 3.0])
    reader = PageReader(pages, "test")
    slots = asyncio.Semaphore(2)

    async def read(index):
        async with slots:
            if index == 0:
                await asyncio.sleep(0.1)
                raise ValueError("page 1 failed")
            return await reader.page(index, 10.0)

    async def main():
        start = time.monotonic()
        with pytest.raises(ValueError, match="page 1 failed"):
            await all_or_none((read(i) for i in range(4)), 60)
        return time.monotonic() - start

    waited = asyncio.run(main())
    reader.close()
    time.sleep(0.1)
    assert waited < 0.5
    assert pages.stopped == [1]  # the page in flight was told to stop
    assert 2 not in pages.started and 3 not in pages.started  # the others never began
    assert threading.active_count() < 20


def test_a_request_over_its_deadline_is_cancelled_whole():
    async def slow(seconds, log):
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise

    async def main():
        log = []
        with pytest.raises(RequestTimeout, match=r"longer than 0.1 s \(request_timeout_s\)"):
            await all_or_none([slow(0.0, log), slow(5, log), slow(5, log)], 0.1)
        return log

    assert asyncio.run(main()) == ["cancelled", "cancelled"]


def test_all_or_none_keeps_the_order_of_the_calls():
    async def value(v, delay):
        await asyncio.sleep(delay)
        return v

    got = asyncio.run(all_or_none([value(1, 0.05), value(2, 0.0), value(3, 0.02)], 5))
    assert got == [1, 2, 3]


def test_a_slow_pdf_render_stops_when_told():
    """A page drawing a 60000x60000 image renders for over a second; told to stop after 0.1 s,
    pdfium's progressive render gives up at its next pause."""
    with open_pages(image_bomb_pdf(60000, 60000), LIMITS, DOCS, dpi=200) as pages:
        start = time.monotonic()
        pages.page(0)
        whole = time.monotonic() - start
        start = time.monotonic()
        with pytest.raises(PageStopped, match="page 1: rendering stopped"):
            pages.page(0, stop=lambda: time.monotonic() - start > 0.1)
        stopped = time.monotonic() - start
    assert whole > 0.5 and stopped < whole / 2, (whole, stopped)
