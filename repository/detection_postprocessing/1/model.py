"""Triton adapter: (detector maps..., original image) -> (recognizer batch, boxes, padded and
own widths)."""

import numpy as np

from triton_ocr.params import config_parameters, detection_postprocessing_parameters, tensor_names
from triton_ocr.postprocessing.crops import crop_widths, padded_widths, recognition_batch
from triton_ocr.postprocessing.detection import detect_texts
from triton_ocr.triton_adapter import execute_each, input_array, respond


class TritonPythonModel:
    def initialize(self, args):
        parameters = config_parameters(args["model_config"])
        self.params, self.detector = detection_postprocessing_parameters(parameters)
        # the detector's output maps first (DB: one, EAST: two), the original image last
        *self.map_names, self.image_name = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        maps = [input_array(request, name) for name in self.map_names]
        image = input_array(request, self.image_name)
        found = detect_texts(maps, image, self.params, self.detector)
        widths = crop_widths(found.crops, self.params)
        padded = padded_widths(widths, self.params)
        batch = recognition_batch(found.crops, self.params)
        as_int = [np.asarray(w, np.int32) for w in (padded, widths)]
        return respond(self.output_names, [batch, found.quads, *as_int])
