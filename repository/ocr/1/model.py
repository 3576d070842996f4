"""Triton adapter for the BLS entry point: images in, texts per image out.

The pipeline itself is triton_ocr.pipeline.read_image; this file only turns Triton tensors and
request parameters into its arguments and its results into tensors, and makes the two network
calls through BLS.
"""

import json
from pathlib import Path

import numpy as np

from triton_ocr.packs import load_config, recognizer_best_path
from triton_ocr.params import Ocr, model_parameters, tensor_names
from triton_ocr.pipeline import PipelineSettings, read_image
from triton_ocr.postprocessing.recognition import Texts
from triton_ocr.triton_adapter import bls, bls_each, execute_each, input_array, respond

DETECTOR, RECOGNIZER = "text_detection", "text_recognition"


class TritonPythonModel:
    def initialize(self, args):
        own = model_parameters(Ocr, args["model_config"])
        repository = Path(args["model_repository"]).parent
        self.settings = PipelineSettings.from_repository(repository, own.pack)
        (self.input_name,) = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")
        detector = load_config(repository, DETECTOR, own.pack)
        self.detector_input = detector.input[0].name
        self.detector_outputs = [o.name for o in detector.output]
        self.recognizer_input, self.best_path = recognizer_best_path(repository, own.pack)

    def detect(self, tensor):
        return bls(DETECTOR, {self.detector_input: tensor}, self.detector_outputs)

    def recognize(self, batches):
        return bls_each(RECOGNIZER, self.recognizer_input, batches, self.best_path)

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        settings = self.settings.with_overrides(json.loads(request.parameters() or "{}"))
        images = input_array(request, self.input_name).reshape(-1)
        if images.size == 0:
            raise ValueError("the request holds no images")
        results: list[Texts] = []
        for index, data in enumerate(images):
            try:
                results.append(read_image(bytes(data), settings, self.detect, self.recognize))
            except ValueError as exc:
                raise ValueError(f"image {index}: {exc}") from exc
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
