"""Triton adapter of stages 4 and 5, pipeline.recognize_rows and read_lines: the rows of a batch
padded to the widest crop, their boxes, whether the last box is the whole image's rival reading
and the admitting gate's token -> (texts, polygons, scores). The crops are recognized in
width-sorted groups through BLS (the same groups as the `ocr` entry point), each group's
upside-down crops turned back first when the orientation classifier is on. The ensemble's last
step: it tells the gate the request is done (runtime/gate.py)."""

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import AlphabetSource, Repository, step_settings
from triton_ocr.contract import GROUPED_RECOGNITION, TEXT_RECOGNITION
from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import read_lines, recognize_rows
from triton_ocr.preprocessing.recognition import rows_of
from triton_ocr.runtime import gate, timeouts
from triton_ocr.runtime.adapter import (
    bls_classify_orientation,
    bls_gather,
    execute_each,
    input_array,
    respond,
    texts_as_tensors,
)
from triton_ocr.settings import Bls, Grouping, Orientation, TextFilter


class TritonPythonModel:
    def initialize(self, args):
        repository = Repository.of_model(args)
        config = args["model_config"]
        settings = step_settings(GROUPED_RECOGNITION, config)
        self.grouping, self.orientation = settings[Grouping], settings[Orientation]
        self.text_filter = settings[TextFilter]
        self.alphabet = repository.alphabet(settings[AlphabetSource])
        self.timeout_s = settings[Bls].bls_timeout_s
        repository.check_group_size(self.grouping)
        (
            self.batch_name,
            self.padded_name,
            self.widths_name,
            self.boxes_name,
            self.rival_name,
            self.token_name,
        ) = tensor_names(config, "input")
        self.output_names = tensor_names(config, "output")
        self.recognizer_input, self.best_path = repository.recognizer_tensors()
        self.classifier = repository.classifier()

    def execute(self, requests):
        return execute_each(requests, self._run)

    async def recognize(self, batches):
        name, outputs = self.recognizer_input, self.best_path
        return await bls_gather(TEXT_RECOGNITION, name, batches, outputs, self.timeout_s)

    async def classify(self, inputs):
        return await bls_classify_orientation(self.classifier, inputs, self.timeout_s)

    def _run(self, request):
        try:
            return self._read(request)
        finally:
            gate.done(int(input_array(request, self.token_name).reshape(-1)[0]))

    def _read(self, request):
        batch = input_array(request, self.batch_name)
        padded = input_array(request, self.padded_name).reshape(-1).tolist()
        widths = input_array(request, self.widths_name).reshape(-1).tolist()
        if len(widths) != len(padded):
            raise InvalidRequest(f"{len(padded)} padded widths but {len(widths)} crop widths")
        rows = rows_of(batch, widths)
        best = timeouts.run(
            recognize_rows(
                rows,
                widths,
                padded,
                self.grouping,
                self.orientation,
                self.classifier.size,
                self.recognize,
                self.classify,
            )
        )
        quads = input_array(request, self.boxes_name)
        rival = bool(input_array(request, self.rival_name).reshape(-1)[0])
        found = read_lines(best, quads, self.alphabet, self.text_filter, rival)
        return respond(self.output_names, texts_as_tensors(found))
