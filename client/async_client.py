"""The asyncio client: OcrClient's methods as coroutines, on tritonclient's aio clients.

Many reads can be in flight from one event loop (`asyncio.gather`); each is checked, built,
retried and parsed exactly as OcrClient does (the shared functions of ocr_client.py). The
HTTP twin needs aiohttp (tritonclient[http]'s dependency, in the client install).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.settings import Documents, ImageLimits, ManyImages

from .ocr_client import (
    ClientOptions,
    Item,
    Request,
    as_bytes,
    call_options,
    check_image,
    check_items,
    flat_lines,
    image_lines,
    image_request,
    limits_from,
    limits_unread,
    ocr_documents,
    ocr_request,
    request_limits_from,
    source_of,
    with_retries_async,
)
from .results import Document, TextLine
from .retry_after import hinting_client


async def read_all(items: Sequence[Item]) -> list[bytes]:
    """The items' bytes; files read in a worker thread, so the event loop goes on meanwhile."""
    if any(isinstance(item, (str, Path)) for item in items):
        return await asyncio.to_thread(lambda: [as_bytes(item) for item in items])
    return [as_bytes(item) for item in items]


class AsyncOcrClient(ClientOptions):
    """OcrClient for asyncio: the same arguments, the same methods, awaited.

    The connection is opened by the first call (tritonclient's HTTP client needs a running
    event loop); `async with AsyncOcrClient(url) as client:` closes it at the end.
    """

    def _connect(self) -> None:
        if self.protocol == "http":
            import tritonclient.http.aio as module
        else:
            import tritonclient.grpc.aio as module
        self._module = module
        self._client: Any = None
        self._request_limits: tuple[ManyImages, Documents] | None = None

    @property
    def client(self) -> Any:
        """tritonclient's aio client, made on first use (inside the event loop)."""
        if self._client is None:
            if self.protocol == "http":
                self._client = hinting_client(self._module)(self.url, conn_timeout=self.timeout)
            else:
                self._client = self._module.InferenceServerClient(self.url)
        return self._client

    async def _address_checked_async(self) -> None:
        if not self._address_checked:  # the probe's socket blocks: off the event loop
            await asyncio.to_thread(self._check_address)

    async def limits(self, entry: str | None = None) -> ImageLimits:
        """The server's decode limits for entry point `entry` (default: the one `read` calls),
        from its first model's config (fetched once)."""
        entry = entry or self.model
        if entry not in self._limits:
            await self._address_checked_async()
            as_json = {"as_json": True} if self.protocol == "grpc" else {}  # HTTP: always
            try:
                config = await self.client.get_model_config(contract.ENTRY_STEPS[entry], **as_json)
            except InferenceServerException as exc:
                raise limits_unread(entry, exc) from exc
            self._limits[entry] = limits_from(config, entry)
        return self._limits[entry]

    async def request_limits(self) -> tuple[ManyImages, Documents]:
        """What one `ocr` request may hold (items; pages of all of them), from its config."""
        if self._request_limits is None:
            await self._address_checked_async()
            as_json = {"as_json": True} if self.protocol == "grpc" else {}
            config = await self.client.get_model_config(contract.OCR_MODEL, **as_json)
            self._request_limits = request_limits_from(config)
        return self._request_limits

    async def _infer(self, request: Request):
        await self._address_checked_async()

        async def attempt(seconds_left: float):
            extra = call_options(self.protocol, seconds_left)
            call = self.client.infer(
                request.model,
                request.inputs,
                outputs=request.outputs,
                parameters=request.parameters,
                **extra,
            )
            return await asyncio.wait_for(call, seconds_left)  # HTTP: no per-call timeout

        return await with_retries_async(
            attempt,
            self.timeout,
            self.retries,
            self.backoff,
            overload_s=self.overload_timeout,
        )

    async def read(self, image: Item) -> list[TextLine]:
        """OCR one encoded image (bytes, or a path to a file) with `ensemble_model`."""
        (data,) = await read_all([image])
        check_image(data, await self.limits(), self.model)
        return image_lines(await self._infer(image_request(self._module, data, self.model)))

    async def read_documents(
        self, items: Sequence[Item], word_boxes: bool = False, **parameters: Any
    ) -> list[Document]:
        """OCR several images and documents in ONE call to the `ocr` model: one Document per
        item (OcrClient.read_documents)."""
        if not items:
            return []
        data = await read_all(items)
        check_items(data, await self.limits(contract.OCR_MODEL))
        result = await self._infer(ocr_request(self._module, data, word_boxes, **parameters))
        return ocr_documents(result, [source_of(item) for item in items])

    async def read_document(
        self, item: Item, word_boxes: bool = False, **parameters: Any
    ) -> Document:
        """OCR one image or document with the `ocr` model."""
        return (await self.read_documents([item], word_boxes, **parameters))[0]

    async def read_many(self, images: Sequence[Item], **parameters: Any) -> list[list[TextLine]]:
        """OCR several images in ONE call to the `ocr` model; one list of lines per image."""
        return flat_lines(await self.read_documents(images, **parameters))

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def __aenter__(self) -> AsyncOcrClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
