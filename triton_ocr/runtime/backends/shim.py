"""What the Python-based network backends share: Triton's request handling around an Engine.

Triton loads `<backend-dir>/<backend>/model.py` for every model whose config names that backend
when no C++ library `libtriton_<backend>.so` is there (the pytriton wheel ships neither an
ONNX Runtime nor an OpenVINO backend). Each model.py names its backend and inherits this class,
which honours the config as the C++ backend does, so one model repository serves in the NGC
container and on a plain Linux box:
  - `<model>/<version>/<default_model_filename or model.onnx>` is the model;
  - `parameters` configure the runtime (engines.py);
  - input and output tensors are matched by the names in the config.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils

from triton_ocr.runtime.backends.engines import BadInput, open_engine


class NetworkModel:
    backend = ""  # set by each backend's model.py

    def initialize(self, args):
        config = json.loads(args["model_config"])
        filename = config.get("default_model_filename") or "model.onnx"
        path = Path(args["model_repository"]) / args["model_version"] / filename
        if config.get("backend") != self.backend:
            raise ValueError(f"{self.backend} backend loaded for a {config.get('backend')} config")
        self.engine = open_engine(
            config, path, args["model_instance_kind"], int(args["model_instance_device_id"])
        )
        self.inputs = [t["name"] for t in config["input"]]
        # requests carry a batch dimension that Triton may merge across requests
        self.batching = int(config.get("max_batch_size", 0)) > 0
        self.outputs = [t["name"] for t in config["output"]]
        self.output_dtypes = {
            t["name"]: pb_utils.triton_string_to_numpy(t["data_type"]) for t in config["output"]
        }
        missing = (set(self.inputs) - set(self.engine.inputs)) | (
            set(self.outputs) - set(self.engine.outputs)
        )
        if missing:
            raise ValueError(
                f"{path}: config names {sorted(missing)} not in the ONNX graph "
                f"(inputs {sorted(self.engine.inputs)}, outputs {sorted(self.engine.outputs)})"
            )
        pb_utils.Logger.log_info(f"{args['model_name']}: {self.engine.describe}")

    def execute(self, requests):
        """Run the requests, those with equal shapes and outputs as one batch.

        With `max_batch_size` > 0 and `dynamic_batching`, Triton hands over several queued
        requests at once (it batches only equal shapes); they share one run, as in the C++
        backends. Otherwise each request runs alone.
        """
        groups: dict[object, list[int]] = {}
        calls = []
        for index, request in enumerate(requests):
            feeds = {
                name: pb_utils.get_input_tensor_by_name(request, name).as_numpy()
                for name in self.inputs
            }
            # compute and send only what the caller asked for (an ensemble step asks for the
            # outputs it maps; a BLS call names them)
            requested = set(request.requested_output_names())
            wanted = tuple(n for n in self.outputs if n in requested) or tuple(self.outputs)
            calls.append((feeds, wanted))
            key = (wanted, tuple(f.shape[1:] for f in feeds.values())) if self.batching else index
            groups.setdefault(key, []).append(index)
        responses = [None] * len(requests)
        for members in groups.values():
            for index, response in zip(
                members, self._run([calls[i] for i in members]), strict=True
            ):
                responses[index] = response
        return responses

    def _run(self, calls):
        """One run for requests with equal shapes and outputs; one response each."""
        wanted = list(calls[0][1])
        sizes = [len(next(iter(feeds.values()))) for feeds, _ in calls]
        feeds = (
            calls[0][0]
            if len(calls) == 1
            else {name: np.concatenate([f[name] for f, _ in calls]) for name in self.inputs}
        )
        try:
            results = self.engine.run(wanted, feeds)
        except BadInput as exc:
            error = pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG)
            return [pb_utils.InferenceResponse(error=error) for _ in calls]
        bounds = np.cumsum(sizes)[:-1]
        parts = [np.split(value, bounds) for value in results]
        return [
            pb_utils.InferenceResponse(
                [
                    pb_utils.Tensor(name, np.ascontiguousarray(part[i], self.output_dtypes[name]))
                    for name, part in zip(wanted, parts, strict=True)
                ]
            )
            for i in range(len(calls))
        ]
