"""Triton adapter of stage 3, pipeline.locate: (detector maps..., original image) -> (recognizer
rows in one batch, boxes, padded and own widths)."""

import numpy as np

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import step_settings
from triton_ocr.contract import DETECTION_POSTPROCESSING
from triton_ocr.pipeline import locate
from triton_ocr.preprocessing.recognition import whole_batch
from triton_ocr.runtime.adapter import execute_each, input_array, respond


class TritonPythonModel:
    def initialize(self, args):
        config = args["model_config"]
        self.lines, self.recognizer, self.boxes = step_settings(DETECTION_POSTPROCESSING, config)
        # the detector's output maps first (DB: one, EAST: two), the original image last
        *self.map_names, self.image_name = tensor_names(config, "input")
        self.output_names = tensor_names(config, "output")

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        maps = [input_array(request, name) for name in self.map_names]
        image = input_array(request, self.image_name)
        found = locate(maps, image, self.lines, self.boxes, self.recognizer)
        batch = whole_batch(found.rows, found.padded, self.recognizer)
        widths = [np.asarray(w, np.int32) for w in (found.padded, found.widths)]
        return respond(self.output_names, [batch, found.quads, *widths])
