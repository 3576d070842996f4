"""Triton adapter: a batch padded to the widest crop -> the recognizer's best path per crop,
recognized in width-sorted groups through BLS (the same groups as the `ocr` entry point), each
group's upside-down crops turned back first when the orientation classifier is on."""

from pathlib import Path

import numpy as np

from triton_ocr import timeouts
from triton_ocr.packs import check_group_size, orientation_model, recognizer_best_path
from triton_ocr.params import GroupedRecognition, model_parameters, tensor_names
from triton_ocr.pipeline import orient_groups
from triton_ocr.postprocessing.crops import split_batch
from triton_ocr.triton_adapter import (
    bls_classify_orientation,
    bls_gather,
    execute_each,
    input_array,
    respond,
)

RECOGNIZER = "text_recognition"


def pad_steps(arrays: list[np.ndarray], length: int, value) -> np.ndarray:
    """Right-pad [T] arrays to one length into [n, length] (wider groups have more steps)."""
    out = np.full((len(arrays), length), value, dtype=arrays[0].dtype if arrays else np.float32)
    for row, array in enumerate(arrays):
        out[row, : len(array)] = array
    return out


class TritonPythonModel:
    def initialize(self, args):
        self.params = model_parameters(GroupedRecognition, args["model_config"])
        self.batch_name, self.padded_name, self.widths_name = tensor_names(
            args["model_config"], "input"
        )
        # our outputs are the recognizer's best-path outputs, under the same names
        self.output_names = tensor_names(args["model_config"], "output")
        repository = Path(args["model_repository"]).parent
        check_group_size(repository, self.params.pack, self.params.recognition_group_size)
        self.recognizer_input, best_path = recognizer_best_path(repository, self.params.pack)
        if self.output_names != best_path:
            raise ValueError(f"outputs must be the recognizer's best path {best_path}")
        self.orientation = orientation_model(repository, self.params.pack)

    def execute(self, requests):
        return execute_each(requests, self._run)

    async def classify(self, inputs):
        return await bls_classify_orientation(self.orientation, inputs, self.params.bls_timeout_s)

    async def recognize(self, batch, padded, widths):
        groups = split_batch(batch, padded, self.params.recognition_group_size)
        if self.params.classify_orientation:
            threshold = self.params.orientation_threshold
            groups = await orient_groups(groups, widths, self.classify, self.orientation, threshold)
        batches = [b for _, b in groups]
        results = await bls_gather(
            RECOGNIZER, self.recognizer_input, batches, self.output_names, self.params.bls_timeout_s
        )
        return groups, results

    def _run(self, request):
        batch = input_array(request, self.batch_name)
        padded = input_array(request, self.padded_name).reshape(-1).tolist()
        widths = input_array(request, self.widths_name).reshape(-1).tolist()
        if len(widths) != len(padded):
            raise ValueError(f"{len(padded)} padded widths but {len(widths)} crop widths")
        groups, results = timeouts.run(self.recognize(batch, padded, widths))
        classes: list[np.ndarray] = [np.zeros(0, np.int64)] * len(padded)
        scores: list[np.ndarray] = [np.zeros(0, np.float32)] * len(padded)
        for (indices, _), (best_class, best_score) in zip(groups, results, strict=True):
            for row, index in enumerate(indices):
                classes[index], scores[index] = best_class[row], best_score[row]
        steps = max((len(c) for c in classes), default=0)
        # padding steps: blank class with probability 0, which CTC decoding drops
        best_class = pad_steps(classes, steps, 0).astype(np.int64)
        best_score = pad_steps(scores, steps, 0.0).astype(np.float32)
        return respond(self.output_names, [best_class, best_score])
