"""Triton adapter of stage 3, pipeline.locate: (detector maps..., the upright page, its turn) ->
(recognizer rows in one batch, boxes on the page as sent, padded and own widths, whether the
last box is the whole image read against the others)."""

import numpy as np

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import step_settings
from triton_ocr.contract import DETECTION_POSTPROCESSING
from triton_ocr.pipeline import locate
from triton_ocr.postprocessing.geometry import turned_back
from triton_ocr.preprocessing.recognition import whole_batch
from triton_ocr.runtime.adapter import execute_each, input_array, respond
from triton_ocr.settings import Blocks, Boxes, RecognizerInput, TextLines


class TritonPythonModel:
    def initialize(self, args):
        config = args["model_config"]
        settings = step_settings(DETECTION_POSTPROCESSING, config)
        self.lines, self.recognizer = settings[TextLines], settings[RecognizerInput]
        self.blocks, self.boxes = settings[Blocks], settings[Boxes]
        # the detector's output maps first (DB: one, EAST: two), then the page and its turn
        *self.map_names, self.image_name, self.rotation_name = tensor_names(config, "input")
        self.output_names = tensor_names(config, "output")

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        maps = [input_array(request, name) for name in self.map_names]
        image = input_array(request, self.image_name)
        rotation = int(input_array(request, self.rotation_name).reshape(-1)[0])
        found = locate(maps, image, self.lines, self.boxes, self.recognizer, self.blocks)
        batch = whole_batch(found.rows, found.padded, self.recognizer)
        widths = [np.asarray(w, np.int32) for w in (found.padded, found.widths)]
        quads = turned_back(found.quads, rotation, image.shape[:2])
        rival = np.int32([found.rival])
        return respond(self.output_names, [batch, quads, *widths, rival])
