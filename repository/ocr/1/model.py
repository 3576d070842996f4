"""Triton adapter for the BLS entry point: images and documents in, texts per page out.

The pipeline itself is triton_ocr.pipeline (open_pages, then read_page_async per page), the
ensemble's stages chained with the settings of the ensemble's models for the same pack; this
file only turns Triton tensors and request parameters into its arguments and its results into
tensors, and makes the network calls (detector, orientation classifier, recognizer) through
async BLS. The pages of one request (an image is one page) are read concurrently,
images_in_flight at a time, so one page's network calls overlap another's decoding and
cropping, and no more pages than that are held decoded at once. A request is read for at most
request_timeout_s, or the timeout its caller gave it when shorter (counted from the start of
its reading: Triton does not tell a model how long a request queued): past it, the caller has
given up, and the request's work stops (counted on /metrics).
"""

import asyncio
import json
from dataclasses import dataclass, field

import numpy as np

from triton_ocr import contract
from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.config.requests import with_overrides
from triton_ocr.contract import OCR_MODEL, PAGE_ORIENTATION, TEXT_DETECTION, TEXT_RECOGNITION
from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import Networks, open_pages, read_page_async
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.postprocessing.words import Words
from triton_ocr.runtime import timeouts
from triton_ocr.runtime.adapter import (
    bls_async,
    bls_classify_orientation,
    bls_classify_page,
    bls_gather,
    counter,
    execute_each,
    input_array,
    request_timeout_s,
    respond,
)
from triton_ocr.runtime.pages import PageReader, PageTimeout, RequestTimeout, all_or_none
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


async def page_size(reader: PageReader, page: int) -> tuple[int, int]:
    """A failed page's size as its header or page dictionary states it, (0, 0) if unreadable."""
    try:
        return await reader.size(page)
    except InvalidRequest:
        return (0, 0)


class TritonPythonModel:
    def initialize(self, args):
        repository = Repository.of_model(args)
        self.many = step_settings(OCR_MODEL, args["model_config"])[ManyImages]
        self.settings = repository.pipeline_settings()
        self.timeout_s = repository.bls().bls_timeout_s
        (self.input_name,) = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")
        self.detector_input, self.detector_outputs = repository.detector_tensors()
        self.recognizer_input, self.best_path = repository.recognizer_tensors()
        self.classifier = repository.classifier()
        self.page_classifier = repository.classifier(PAGE_ORIENTATION)
        self.networks = Networks(self.detect, self.recognize, self.classify, self.classify_page)
        self.deadline_family, self.deadlines = counter(
            "triton_ocr_deadline_exceeded_total",
            "Requests whose work stopped because their deadline passed while they were read",
            {"model": OCR_MODEL},
        )

    async def detect(self, tensor):
        inputs = {self.detector_input: tensor}
        return await bls_async(TEXT_DETECTION, inputs, self.detector_outputs, self.timeout_s)

    async def recognize(self, batches):
        name, outputs = self.recognizer_input, self.best_path
        return await bls_gather(TEXT_RECOGNITION, name, batches, outputs, self.timeout_s)

    async def classify(self, inputs):
        return await bls_classify_orientation(self.classifier, inputs, self.timeout_s)

    async def classify_page(self, looks):
        return await bls_classify_page(self.page_classifier, looks, self.timeout_s)

    async def read_all(
        self, items: np.ndarray, settings: PipelineSettings, caller_s: float | None
    ) -> list[PageRead]:
        """Every page of every item, in request order, within request_timeout_s or the
        caller's timeout (`caller_s`) if shorter. A document's page that cannot be read is
        listed with its error; an image that cannot be read fails the request, and any failure
        cancels the request's other pages before it is raised."""
        slots = asyncio.Semaphore(self.many.images_in_flight)
        readers: list[PageReader] = []
        try:
            for index, data in enumerate(items):
                try:
                    opened = open_pages(bytes(data), settings)
                except InvalidRequest as exc:
                    raise InvalidRequest(f"image {index}: {exc}") from exc
                readers.append(PageReader(opened, f"ocr-item-{index}"))
            pages = [(i, p) for i, reader in enumerate(readers) for p in range(reader.count)]
            limit = settings.documents.max_pages
            if len(pages) > limit:
                raise InvalidRequest(
                    f"the request holds {len(pages)} pages; at most {limit} per request"
                )

            async def read(index: int, page: int) -> PageRead:
                reader = readers[index]
                async with slots:
                    try:
                        image = await reader.page(page, self.many.page_timeout_s)
                    except InvalidRequest as exc:  # documents name the page (1-based) themselves
                        if reader.kind == "image":
                            raise InvalidRequest(f"image {index}: {exc}") from exc
                        # after a timeout the item's thread may still be busy with the page
                        timed_out = isinstance(exc, PageTimeout)
                        size = (0, 0) if timed_out else await page_size(reader, page)
                        return PageRead(index, page, size, error=str(exc))
                    texts = await read_page_async(image, settings, self.networks)
                    return PageRead(index, page, (image.shape[1], image.shape[0]), texts)

            calls = (read(i, p) for i, p in pages)
            if caller_s is not None and caller_s < self.many.request_timeout_s:
                return await all_or_none(calls, caller_s, "the timeout the request was sent with")
            return await all_or_none(calls, self.many.request_timeout_s)
        finally:
            for reader in readers:
                reader.close()

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        settings = with_overrides(self.settings, json.loads(request.parameters() or "{}"))
        items = input_array(request, self.input_name).reshape(-1)
        if items.size == 0:
            raise InvalidRequest("the request holds no images")
        limit = self.many.max_images_per_request
        if items.size > limit:
            raise InvalidRequest(
                f"the request holds {items.size} images; at most {limit} per request"
            )
        try:
            pages = timeouts.run(self.read_all(items, settings, request_timeout_s(request)))
        except RequestTimeout:
            self.deadlines.increment(1)
            raise
        outputs = ocr_outputs(pages)
        # max_batch_size 1: every output carries the request's batch dimension of one
        return respond(self.output_names, [outputs[name][None] for name in self.output_names])


def ocr_outputs(pages: list[PageRead]) -> dict[str, np.ndarray]:
    """The pages' texts as the `ocr` outputs by name (contract): per line, per page, per word,
    per block."""
    results = [page.texts for page in pages]
    counts = [len(r.texts) for r in results]
    words = [r.words or Words.empty() for r in results]
    first_line = np.cumsum([0, *counts[:-1]])  # each page's first line among all the lines
    blocks = [len(r.block_quads) for r in results]
    first_block = np.cumsum([0, *blocks[:-1]])
    items = np.array([page.item for page in pages], dtype=np.int32)
    numbers = np.array([page.page for page in pages], dtype=np.int32)
    empty = Texts.empty()
    return {
        contract.OCR_OUTPUT_IMAGE_INDEX: np.repeat(items, counts),
        contract.OUTPUT_TEXT: encoded([t for r in results for t in r.texts]),
        contract.OUTPUT_POLYGONS: np.concatenate([r.quads for r in results] or [empty.quads]),
        contract.OUTPUT_SCORES: np.concatenate([r.scores for r in results] or [empty.scores]),
        contract.OCR_OUTPUT_PAGE_INDEX: np.repeat(numbers, counts),
        contract.OCR_OUTPUT_PAGE_IMAGE: items,
        contract.OCR_OUTPUT_PAGE_SIZE: np.array([p.size for p in pages], np.int32).reshape(-1, 2),
        contract.OCR_OUTPUT_PAGE_ERROR: encoded([page.error for page in pages]),
        contract.OCR_OUTPUT_PAGE_ROTATION: np.array([r.rotation for r in results], np.int32),
        contract.OCR_OUTPUT_WORD_TEXT: encoded([t for w in words for t in w.texts]),
        contract.OCR_OUTPUT_WORD_POLYGONS: np.concatenate([w.quads for w in words]),
        contract.OCR_OUTPUT_WORD_SCORES: np.concatenate([w.scores for w in words]),
        contract.OCR_OUTPUT_WORD_LINE: np.concatenate(
            [w.lines + first for w, first in zip(words, first_line, strict=True)]
        ).astype(np.int32),
        contract.OCR_OUTPUT_LINE_BLOCK: np.concatenate(
            [r.line_block + first for r, first in zip(results, first_block, strict=True)]
            or [empty.line_block]
        ).astype(np.int32),
        contract.OCR_OUTPUT_BLOCK_POLYGONS: np.concatenate(
            [r.block_quads for r in results] or [empty.block_quads]
        ).astype(np.float32),
        contract.OCR_OUTPUT_BLOCK_PAGE: np.repeat(np.arange(len(pages), dtype=np.int32), blocks),
    }


def encoded(texts: list[str]) -> np.ndarray:
    return np.array([t.encode("utf-8") for t in texts], dtype=np.object_)
