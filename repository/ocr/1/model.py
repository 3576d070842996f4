"""Triton adapter for the BLS entry point: images in, texts per image out.

The pipeline itself is triton_ocr.pipeline.read_image_async, the ensemble's stages chained with
the settings of the ensemble's models for the same pack; this file only turns Triton tensors
and request parameters into its arguments and its results into tensors, and makes the network
calls (detector, orientation classifier, recognizer) through async BLS. The images of one
request are read concurrently, so one image's network calls overlap another's decoding and
cropping.
"""

import asyncio
import json

import numpy as np

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.config.requests import with_overrides
from triton_ocr.contract import OCR_MODEL, TEXT_DETECTION, TEXT_RECOGNITION
from triton_ocr.pipeline import read_image_async
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.runtime import timeouts
from triton_ocr.runtime.adapter import (
    bls_async,
    bls_classify_orientation,
    bls_gather,
    execute_each,
    input_array,
    respond,
)
from triton_ocr.settings import PipelineSettings


class TritonPythonModel:
    def initialize(self, args):
        repository = Repository.of_model(args)
        _, self.many = step_settings(OCR_MODEL, args["model_config"])
        self.settings = repository.pipeline_settings()
        self.timeout_s = repository.bls().bls_timeout_s
        (self.input_name,) = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")
        self.detector_input, self.detector_outputs = repository.detector_tensors()
        self.recognizer_input, self.best_path = repository.recognizer_tensors()
        self.classifier = repository.classifier()

    async def detect(self, tensor):
        inputs = {self.detector_input: tensor}
        return await bls_async(TEXT_DETECTION, inputs, self.detector_outputs, self.timeout_s)

    async def recognize(self, batches):
        name, outputs = self.recognizer_input, self.best_path
        return await bls_gather(TEXT_RECOGNITION, name, batches, outputs, self.timeout_s)

    async def classify(self, inputs):
        return await bls_classify_orientation(self.classifier, inputs, self.timeout_s)

    async def read_all(self, images: np.ndarray, settings: PipelineSettings) -> list[Texts]:
        slots = asyncio.Semaphore(self.many.images_in_flight)

        async def read(index: int, data: bytes) -> Texts:
            async with slots:
                try:
                    return await read_image_async(
                        data, settings, self.detect, self.recognize, self.classify
                    )
                except ValueError as exc:
                    raise ValueError(f"image {index}: {exc}") from exc

        return list(await asyncio.gather(*(read(i, bytes(d)) for i, d in enumerate(images))))

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        settings = with_overrides(self.settings, json.loads(request.parameters() or "{}"))
        images = input_array(request, self.input_name).reshape(-1)
        if images.size == 0:
            raise ValueError("the request holds no images")
        limit = self.many.max_images_per_request
        if images.size > limit:
            raise ValueError(f"the request holds {images.size} images; at most {limit} per request")
        results = timeouts.run(self.read_all(images, settings))
        counts = [len(r.texts) for r in results]
        texts = [t.encode("utf-8") for r in results for t in r.texts]
        return respond(
            self.output_names,
            [
                np.repeat(np.arange(len(results), dtype=np.int32), counts),
                np.array(texts, dtype=np.object_),
                np.concatenate([r.quads for r in results] or [Texts.empty().quads]),
                np.concatenate([r.scores for r in results] or [Texts.empty().scores]),
            ],
        )
