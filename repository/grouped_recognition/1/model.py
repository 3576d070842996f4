"""Triton adapter of stage 4, pipeline.recognize_rows: the rows of a batch padded to the widest
crop -> each crop's best path, recognized in width-sorted groups through BLS (the same groups as
the `ocr` entry point), each group's upside-down crops turned back first when the orientation
classifier is on."""

from triton_ocr.config.parse import tensor_names
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.contract import GROUPED_RECOGNITION, TEXT_RECOGNITION
from triton_ocr.errors import InvalidRequest
from triton_ocr.pipeline import recognize_rows
from triton_ocr.preprocessing.recognition import rows_of
from triton_ocr.runtime import timeouts
from triton_ocr.runtime.adapter import (
    bls_classify_orientation,
    bls_gather,
    execute_each,
    input_array,
    respond,
)
from triton_ocr.settings import Bls, Grouping, Orientation


class TritonPythonModel:
    def initialize(self, args):
        repository = Repository.of_model(args)
        config = args["model_config"]
        settings = step_settings(GROUPED_RECOGNITION, config)
        self.grouping, self.orientation = settings[Grouping], settings[Orientation]
        bls = settings[Bls]
        self.timeout_s = bls.bls_timeout_s
        repository.check_group_size(self.grouping)
        self.batch_name, self.padded_name, self.widths_name = tensor_names(config, "input")
        # our outputs are the recognizer's best-path outputs, under the same names
        self.output_names = tensor_names(config, "output")
        self.recognizer_input, best_path = repository.recognizer_tensors()
        if self.output_names != best_path:
            raise ValueError(f"outputs must be the recognizer's best path {best_path}")
        self.classifier = repository.classifier()

    def execute(self, requests):
        return execute_each(requests, self._run)

    async def recognize(self, batches):
        name, outputs = self.recognizer_input, self.output_names
        return await bls_gather(TEXT_RECOGNITION, name, batches, outputs, self.timeout_s)

    async def classify(self, inputs):
        return await bls_classify_orientation(self.classifier, inputs, self.timeout_s)

    def _run(self, request):
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
        return respond(self.output_names, [best.best_class, best.best_score])
