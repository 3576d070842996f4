"""Triton adapter of stage 1, pipeline.prepare: image bytes -> (detector input, original image)."""

import json

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import step_settings
from triton_ocr.contract import DETECTION_PREPROCESSING, DOCUMENT_REFUSED
from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import prepare
from triton_ocr.preprocessing.header import DocumentGiven
from triton_ocr.runtime.adapter import execute_each, input_array, respond


class TritonPythonModel:
    def initialize(self, args):
        config = args["model_config"]
        self.limits, self.detector = step_settings(DETECTION_PREPROCESSING, config)
        (self.input_name,) = tensor_names(config, "input")
        self.output_names = tensor_names(config, "output")

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
            prepared = prepare(data, self.limits, self.detector)
        except DocumentGiven as exc:  # the guide's contract is one image per call
            raise InvalidRequest(DOCUMENT_REFUSED.format(what=exc.what)) from exc
        return respond(self.output_names, [prepared.detector_input, prepared.image])
