"""Triton adapter: (best class, best score, boxes) -> (texts, polygons, scores)."""

from pathlib import Path

from triton_ocr.params import RecognitionPostprocessing, model_parameters, tensor_names
from triton_ocr.postprocessing.alphabet import load_alphabet
from triton_ocr.postprocessing.recognition import read_texts
from triton_ocr.triton_adapter import execute_each, input_array, respond, texts_as_tensors


class TritonPythonModel:
    def initialize(self, args):
        self.params = model_parameters(RecognitionPostprocessing, args["model_config"])
        self.class_name, self.score_name, self.boxes_name = tensor_names(
            args["model_config"], "input"
        )
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
        found = read_texts(
            input_array(request, self.class_name),
            input_array(request, self.score_name),
            input_array(request, self.boxes_name),
            self.alphabet,
            self.params.text_score,
        )
        return respond(self.output_names, texts_as_tensors(found))
