"""Triton adapter: (probability map, original image) -> (recognizer batch, text boxes)."""

from triton_ocr.params import DetectionPostprocessing, model_parameters, tensor_names
from triton_ocr.postprocessing.detection import detect_texts
from triton_ocr.triton_adapter import execute_each, input_array, respond


class TritonPythonModel:
    def initialize(self, args):
        self.params = model_parameters(DetectionPostprocessing, args["model_config"])
        self.prob_name, self.image_name = tensor_names(args["model_config"], "input")
        self.output_names = tensor_names(args["model_config"], "output")

    def execute(self, requests):
        return execute_each(requests, self._run)

    def _run(self, request):
        prob = input_array(request, self.prob_name)
        image = input_array(request, self.image_name)
        found = detect_texts(prob, image, self.params)
        return respond(self.output_names, [found.batch, found.quads])
