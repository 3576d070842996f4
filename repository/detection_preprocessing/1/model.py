"""Triton adapter of stage 1, pipeline.prepare and pipeline.turn_page: image bytes -> (detector
input, the page turned upright, the turn, the token of the gate that admitted the request).

The ensemble's first step, so it holds the ensemble's gate (runtime/gate.py): a request is
admitted, or refused at once as overloaded, before its bytes are decoded."""

import json

import numpy as np

from triton_ocr.config.parse import queue_timeout_s, tensor_names
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.contract import (
    DETECTION_POSTPROCESSING,
    DETECTION_PREPROCESSING,
    DOCUMENT_REFUSED,
    ENSEMBLE_MODEL,
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
    counter,
    execute_each,
    input_array,
    request_timeout_s,
    respond,
)
from triton_ocr.runtime.gate import InFlightGate, Overloaded
from triton_ocr.settings import Boxes, DetectorInput, ImageLimits, PageOrientation, TextLines


class TritonPythonModel:
    def initialize(self, args):
        config = args["model_config"]
        repository = Repository.of_model(args)
        settings = step_settings(DETECTION_PREPROCESSING, config)
        self.limits, self.detector = settings[ImageLimits], settings[DetectorInput]
        self.page = settings[PageOrientation]
        # the box settings the turn's check finds lines with (no recognizer needed here)
        located = repository.step(DETECTION_POSTPROCESSING)
        self.lines, self.boxes = located[TextLines], located[Boxes]
        self.timeout_s = repository.bls().bls_timeout_s
        self.page_classifier = repository.classifier(PAGE_ORIENTATION)
        self.detector_input, self.detector_outputs = repository.detector_tensors()
        (self.input_name,) = tensor_names(config, "input")
        self.output_names = tensor_names(config, "output")
        self.gate = InFlightGate(repository.admission().max_in_flight)
        self.default_lease_s = queue_timeout_s(config)  # a request's deadline when it names none
        self.shed_family, self.shed = counter(
            "triton_ocr_shed_total",
            "Requests refused as overloaded by the ensemble's bound on requests in flight",
            {"model": ENSEMBLE_MODEL},
        )

    async def classify_page(self, looks):
        return await bls_classify_page(self.page_classifier, looks, self.timeout_s)

    async def detect(self, tensor):
        inputs = {self.detector_input: tensor}
        return await bls_async(TEXT_DETECTION, inputs, self.detector_outputs, self.timeout_s)

    def execute(self, requests):
        return execute_each(requests, self._admit)

    def _admit(self, request):
        """Admit the request into the ensemble (it counts until the last step is done with it, or
        its deadline passes), or refuse it unread; a request that fails here stops counting."""
        try:
            self.gate.admit(request_timeout_s(request) or self.default_lease_s)
        except Overloaded:
            self.shed.increment(1)
            raise
        try:
            return self._run(request)
        except BaseException:
            self.gate.release()
            raise

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
        token = np.array([self.gate.token], np.int64)
        outputs = [prepared.detector_input, prepared.image, rotation, token]
        return respond(self.output_names, outputs)
