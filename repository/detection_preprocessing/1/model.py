"""Triton adapter of stage 1, pipeline.prepare and pipeline.turn_page: image bytes -> (detector
input, the page turned upright, the turn)."""

import json

import numpy as np

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.contract import (
    DETECTION_POSTPROCESSING,
    DETECTION_PREPROCESSING,
    DOCUMENT_REFUSED,
    PAGE_ORIENTATION,
    TEXT_DETECTION,
)
from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import prepare_image, turn_page
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.preprocessing.header import DocumentGiven
from triton_ocr.runtime import timeouts
from triton_ocr.runtime.adapter import (
    bls_async,
    bls_classify_page,
    execute_each,
    input_array,
    respond,
)


class TritonPythonModel:
    def initialize(self, args):
        config = args["model_config"]
        repository = Repository.of_model(args)
        _, self.limits, self.detector, self.page = step_settings(DETECTION_PREPROCESSING, config)
        # the box settings the turn's check finds lines with (no recognizer needed here)
        self.lines, _, _, self.boxes = repository.step(DETECTION_POSTPROCESSING)
        self.timeout_s = repository.bls().bls_timeout_s
        self.page_classifier = repository.classifier(PAGE_ORIENTATION)
        self.detector_input, self.detector_outputs = repository.detector_tensors()
        (self.input_name,) = tensor_names(config, "input")
        self.output_names = tensor_names(config, "output")

    async def classify_page(self, looks):
        return await bls_classify_page(self.page_classifier, looks, self.timeout_s)

    async def detect(self, tensor):
        inputs = {self.detector_input: tensor}
        return await bls_async(TEXT_DETECTION, inputs, self.detector_outputs, self.timeout_s)

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        # the ensemble's first step sees its request's parameters: none are accepted, so a
        # setting a caller believes applied cannot be silently ignored
        given = sorted(json.loads(request.parameters() or "{}"))
        if given:
            raise InvalidRequest(
                f"ensemble_model takes no request parameters (got {given}); the `ocr` model "
                "takes per-request settings"
            )
        data = input_array(request, self.input_name).tobytes()
        try:
            image = decode_image(data, self.limits)
        except DocumentGiven as exc:  # the guide's contract is one image per call
            raise InvalidRequest(DOCUMENT_REFUSED.format(what=exc.what)) from exc
        # the ensemble's text_detection step runs on the page as turned (a turned page's maps,
        # found here to check the turn, are found again there)
        upright = timeouts.run(
            turn_page(
                image,
                self.page,
                self.page_classifier.size,
                self.detector,
                self.lines,
                self.boxes,
                self.classify_page,
                self.detect,
            )
        )
        prepared = prepare_image(upright.image, self.detector)
        rotation = np.array([upright.rotation], np.int32)
        return respond(self.output_names, [prepared.detector_input, prepared.image, rotation])
