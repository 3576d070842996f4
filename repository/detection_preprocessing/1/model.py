"""Triton adapter: image bytes -> (detector input, original image)."""

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
        p = self.params
        image = decode_image(input_array(request, self.input_name).tobytes(), p.max_image_pixels)
        tensor = detection_input(image, p)
        return respond(self.output_names, [tensor, image])
