"""One `ocr` request's life, apart from Triton: its limits (images per request, pages in all),
its items opened into pages, the pages read concurrently (`images_in_flight` at a time, so one
page's network calls overlap another's decoding and cropping, and no more pages than that are
held decoded at once), each page within its own timeout and the whole request within its
deadline, a document's unreadable page listed with its error while an unreadable image fails
the request. The deadline counts from the start of the reading (Triton does not tell a model how
long a request queued): past it the caller has given up, and the request's work stops.

The adapter (repository/ocr/1/model.py) turns tensors and parameters into `read_request`'s
arguments, runs it, and turns its PageReads into tensors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import (
    Networks,
    open_pages,
    read_layer,
    read_page_async,
    with_block_types,
    with_figures_on,
    with_layer,
    with_tables,
)
from triton_ocr.postprocessing.figures import SCALE_SIDE
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.runtime.pages import PageReader, PageTimeout, all_or_none
from triton_ocr.settings import ManyImages, PipelineSettings


@dataclass(frozen=True)
class PageRead:
    """One page of a request: its item, its index in the item, its size, what was read on it,
    and why it could not be read ("" when it was)."""

    item: int
    page: int
    size: tuple[int, int]
    texts: Texts = field(default_factory=Texts.empty)
    error: str = ""
    # how it was read: "ocr", "layer" (a PDF page's text layer) or "both" (a page of pictures:
    # its drawn text from the layer, OCR's lines where none of it lies)
    source: str = "ocr"


def check_item_count(count: int, many: ManyImages) -> None:
    """A request holds at least one item and at most max_images_per_request."""
    if count == 0:
        raise InvalidRequest("the request holds no images")
    limit = many.max_images_per_request
    if count > limit:
        raise InvalidRequest(f"the request holds {count} images; at most {limit} per request")


async def page_size(reader: PageReader, page: int) -> tuple[int, int]:
    """A failed page's size as its header or page dictionary states it, (0, 0) if unreadable."""
    try:
        return await reader.size(page)
    except InvalidRequest:
        return (0, 0)


async def read_request(
    items: Sequence[bytes],
    settings: PipelineSettings,
    networks: Networks,
    many: ManyImages,
    caller_s: float | None = None,
) -> list[PageRead]:
    """Every page of every item, in request order, within request_timeout_s or the caller's
    timeout (`caller_s`) if shorter. A document's page that cannot be read is listed with its
    error; an image that cannot be read fails the request, and any failure cancels the
    request's other pages before it is raised (RequestTimeout when the deadline passes)."""
    check_item_count(len(items), many)
    slots = asyncio.Semaphore(many.images_in_flight)
    readers: list[PageReader] = []
    try:
        for index, data in enumerate(items):
            try:
                opened = open_pages(data, settings)
            except InvalidRequest as exc:
                raise InvalidRequest(f"image {index}: {exc}") from exc
            readers.append(PageReader(opened, f"ocr-item-{index}"))
        pages = [(i, p) for i, reader in enumerate(readers) for p in range(reader.count)]
        limit, pdf_text = settings.documents.max_pages, settings.documents.pdf_text
        if len(pages) > limit:
            raise InvalidRequest(
                f"the request holds {len(pages)} pages; at most {limit} per request"
            )

        word_boxes, tables = settings.words.word_boxes, settings.tables.tables

        async def read(index: int, page: int) -> PageRead:
            reader = readers[index]
            async with slots:
                try:
                    layer = (
                        await reader.text_layer(page, pdf_text, many.page_timeout_s)
                        if reader.kind == "pdf"
                        else None
                    )
                    if layer is not None and not layer.ocr_too:
                        texts = read_layer(layer, settings.blocks, word_boxes or tables)
                        look = await reader.look(page, SCALE_SIDE, many.page_timeout_s)
                        texts = with_figures_on(texts, look, layer.size)
                        if tables:  # ruled tables are found in the rendered page's pixels
                            image = await reader.page(page, many.page_timeout_s)
                            texts = with_tables(texts, image, word_boxes)
                        return PageRead(index, page, layer.size, texts, source="layer")
                    image = await reader.page(page, many.page_timeout_s)
                except InvalidRequest as exc:  # documents name the page (1-based) themselves
                    if reader.kind == "image":
                        raise InvalidRequest(f"image {index}: {exc}") from exc
                    # after a timeout the item's thread may still be busy with the page
                    timed_out = isinstance(exc, PageTimeout)
                    size = (0, 0) if timed_out else await page_size(reader, page)
                    return PageRead(index, page, size, error=str(exc))
                texts = await read_page_async(image, settings, networks)
                size = (image.shape[1], image.shape[0])
                if layer is None:
                    return PageRead(index, page, size, texts)
                merged = with_layer(texts, layer, settings.blocks, word_boxes or tables)
                if tables and merged is not texts:  # texts of a turned page are kept alone
                    merged = with_tables(merged, image, word_boxes)
                return PageRead(index, page, size, merged, source="both")

        calls = (read(i, p) for i, p in pages)
        if caller_s is not None and caller_s < many.request_timeout_s:
            read_pages = await all_or_none(calls, caller_s, "the timeout the request was sent with")
        else:
            read_pages = await all_or_none(calls, many.request_timeout_s)
    finally:
        for reader in readers:
            reader.close()
    return typed(read_pages)


def typed(pages: list[PageRead]) -> list[PageRead]:
    """The pages with their blocks' types, judged item by item (an item's pages are one
    document); pages not read have no blocks."""
    items: dict[int, list[int]] = {}
    for k, page in enumerate(pages):
        if not page.error:
            items.setdefault(page.item, []).append(k)
    out = list(pages)
    for read in items.values():
        found = with_block_types([pages[k].texts for k in read], [pages[k].size for k in read])
        for k, texts in zip(read, found, strict=True):
            out[k] = replace(pages[k], texts=texts)
    return out
