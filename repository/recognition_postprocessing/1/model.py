"""Triton adapter: (class probabilities, boxes) -> (texts, polygons, scores)."""

from pathlib import Path

import numpy as np

from triton_ocr.params import RecognitionPostprocessing, model_parameters, tensor_names
from triton_ocr.postprocessing.alphabet import load_alphabet
from triton_ocr.postprocessing.recognition import read_texts
from triton_ocr.triton_adapter import execute_each, input_array, respond


class TritonPythonModel:
    def initialize(self, args):
        self.params = model_parameters(RecognitionPostprocessing, args["model_config"])
        self.prob_name, self.boxes_name = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")
        repository = Path(args["model_repository"]).parent
        self.alphabet = load_alphabet(
            repository / self.params.recognizer_model,
            self.params.recognizer_file,
            self.params.alphabet_metadata_key,
            self.params.append_space,
        )

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        probabilities = input_array(request, self.prob_name)
        boxes = input_array(request, self.boxes_name)
        found = read_texts(probabilities, boxes, self.alphabet, self.params.text_score)
        texts = np.array([[t.encode("utf-8") for t in found.texts]], dtype=np.object_)
        return respond(
            self.output_names,
            [texts.reshape(1, -1), found.quads[None], found.scores[None]],
        )
