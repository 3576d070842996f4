"""Triton adapter: image bytes -> (detector input, original image)."""

import json

from triton_ocr.params import DetectionPreprocessing, model_parameters, tensor_names
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.preprocessing.detection import detection_input
from triton_ocr.triton_adapter import execute_each, input_array, respond


class TritonPythonModel:
    def initialize(self, args):
        self.params = model_parameters(DetectionPreprocessing, args["model_config"])
        (self.input_name,) = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        # the ensemble's first step sees its request's parameters: none are accepted, so a
        # setting a caller believes applied cannot be silently ignored
        given = sorted(json.loads(request.parameters() or "{}"))
        if given:
            raise ValueError(
                f"ensemble_model takes no request parameters (got {given}); the `ocr` model "
                "takes per-request settings"
            )
        p = self.params
        image = decode_image(input_array(request, self.input_name).tobytes(), p.limits)
        tensor = detection_input(image, p)
        return respond(self.output_names, [tensor, image])
