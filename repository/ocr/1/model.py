"""Triton adapter for the BLS entry point: images and documents in, texts per page out.

A request's life (limits, pages, deadlines, page errors) is triton_ocr.ocr_request, the
pipeline's stages chained with the settings of the ensemble's models for the same pack; this
file only turns Triton tensors and request parameters into its arguments and its PageReads into
tensors, and makes the network calls (detector, orientation classifiers, recognizer) through
async BLS. Requests whose deadline passed while they were read are counted on /metrics.
"""

import json

import numpy as np

from triton_ocr import contract
from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.config.requests import with_overrides
from triton_ocr.contract import OCR_MODEL, PAGE_ORIENTATION, TEXT_DETECTION, TEXT_RECOGNITION
from triton_ocr.ocr_request import PageRead, read_request
from triton_ocr.pipeline import Networks
from triton_ocr.postprocessing.geometry import Box, quad_of
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.postprocessing.tables import Table
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
from triton_ocr.runtime.pages import RequestTimeout
from triton_ocr.settings import ManyImages


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

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        settings = with_overrides(self.settings, json.loads(request.parameters() or "{}"))
        items = [bytes(data) for data in input_array(request, self.input_name).reshape(-1)]
        caller_s = request_timeout_s(request)
        try:
            pages = timeouts.run(read_request(items, settings, self.networks, self.many, caller_s))
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
        contract.OCR_OUTPUT_PAGE_SOURCE: encoded([page.source for page in pages]),
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
        contract.OCR_OUTPUT_BLOCK_TYPE: encoded([t for r in results for t in r.block_types]),
        **table_outputs([r.tables for r in results]),
    }


def table_outputs(pages: list[tuple[Table, ...]]) -> dict[str, np.ndarray]:
    """Each page's tables as the `ocr` table outputs: per table, per cell."""
    tables = [table for found in pages for table in found]
    cells = [cell for table in tables for cell in table.cells]
    return {
        contract.OCR_OUTPUT_TABLE_PAGE: np.repeat(
            np.arange(len(pages), dtype=np.int32), [len(found) for found in pages]
        ),
        contract.OCR_OUTPUT_TABLE_POLYGONS: quads([t.box for t in tables]),
        contract.OCR_OUTPUT_TABLE_GRID: np.array(
            [(t.rows, t.columns) for t in tables], np.int32
        ).reshape(-1, 2),
        contract.OCR_OUTPUT_CELL_TABLE: np.repeat(
            np.arange(len(tables), dtype=np.int32), [len(t.cells) for t in tables]
        ),
        contract.OCR_OUTPUT_CELL_GRID: np.array(
            [(c.row, c.column, c.row_span, c.column_span) for c in cells], np.int32
        ).reshape(-1, 4),
        contract.OCR_OUTPUT_CELL_POLYGONS: quads([c.box for c in cells]),
        contract.OCR_OUTPUT_CELL_TEXT: encoded([c.text for c in cells]),
    }


def quads(boxes: list[Box]) -> np.ndarray:
    return np.array([quad_of(box) for box in boxes], np.float32).reshape(-1, 4, 2)


def encoded(texts: list[str]) -> np.ndarray:
    return np.array([t.encode("utf-8") for t in texts], dtype=np.object_)
