"""Triton adapter for the BLS entry point: images in, texts per image out.

The pipeline itself is triton_ocr.pipeline.read_image_async; this file only turns Triton tensors
and request parameters into its arguments and its results into tensors, and makes the network
calls (detector, orientation classifier, recognizer) through async BLS. The images of one
request are read concurrently, so one image's network calls overlap another's decoding and
cropping.
"""

import asyncio
import json
from pathlib import Path

import numpy as np

from triton_ocr import timeouts
from triton_ocr.packs import load_config, recognizer_best_path
from triton_ocr.params import Ocr, model_parameters, tensor_names
from triton_ocr.pipeline import PipelineSettings, read_image_async
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.triton_adapter import (
    bls_async,
    bls_classify_orientation,
    bls_gather,
    execute_each,
    input_array,
    respond,
)

DETECTOR, RECOGNIZER = "text_detection", "text_recognition"


class TritonPythonModel:
    def initialize(self, args):
        own = model_parameters(Ocr, args["model_config"])
        repository = Path(args["model_repository"]).parent
        self.settings = PipelineSettings.from_repository(repository, own.pack)
        self.images_in_flight = own.images_in_flight
        self.max_images = own.max_images_per_request
        self.timeout_s = own.bls_timeout_s
        (self.input_name,) = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")
        detector = load_config(repository, DETECTOR, own.pack)
        self.detector_input = detector.input[0].name
        self.detector_outputs = [o.name for o in detector.output]
        self.recognizer_input, self.best_path = recognizer_best_path(repository, own.pack)

    async def detect(self, tensor):
        inputs = {self.detector_input: tensor}
        return await bls_async(DETECTOR, inputs, self.detector_outputs, self.timeout_s)

    async def recognize(self, batches):
        return await bls_gather(
            RECOGNIZER, self.recognizer_input, batches, self.best_path, self.timeout_s
        )

    async def classify(self, inputs):
        return await bls_classify_orientation(self.settings.orientation, inputs, self.timeout_s)

    async def read_all(self, images: np.ndarray, settings: PipelineSettings) -> list[Texts]:
        slots = asyncio.Semaphore(self.images_in_flight)

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
        settings = self.settings.with_overrides(json.loads(request.parameters() or "{}"))
        images = input_array(request, self.input_name).reshape(-1)
        if images.size == 0:
            raise ValueError("the request holds no images")
        if images.size > self.max_images:
            raise ValueError(
                f"the request holds {images.size} images; at most {self.max_images} per request"
            )
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
