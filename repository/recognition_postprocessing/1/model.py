"""Triton adapter of stage 5, pipeline.read_lines: (best class, best score, boxes, whether the
last box is the whole image's rival reading, the admitting gate's token) -> (texts, polygons,
scores). The ensemble's last step: it tells the gate the request is done (runtime/gate.py)."""

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import AlphabetSource, Repository, step_settings
from triton_ocr.contract import RECOGNITION_POSTPROCESSING
from triton_ocr.pipeline import BestPath, read_lines
from triton_ocr.runtime import gate
from triton_ocr.runtime.adapter import execute_each, input_array, respond, texts_as_tensors
from triton_ocr.settings import TextFilter


class TritonPythonModel:
    def initialize(self, args):
        repository = Repository.of_model(args)
        config = args["model_config"]
        settings = step_settings(RECOGNITION_POSTPROCESSING, config)
        self.text_filter, source = settings[TextFilter], settings[AlphabetSource]
        self.alphabet = repository.alphabet(source)
        names = tensor_names(config, "input")
        self.class_name, self.score_name, self.boxes_name, self.rival_name, self.token_name = names
        self.output_names = tensor_names(config, "output")

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        try:
            return self._read(request)
        finally:
            gate.done(int(input_array(request, self.token_name).reshape(-1)[0]))

    def _read(self, request):
        best = BestPath(
            input_array(request, self.class_name), input_array(request, self.score_name)
        )
        quads = input_array(request, self.boxes_name)
        rival = bool(input_array(request, self.rival_name).reshape(-1)[0])
        found = read_lines(best, quads, self.alphabet, self.text_filter, rival)
        return respond(self.output_names, texts_as_tensors(found))
