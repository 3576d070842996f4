"""A Python-based Triton backend named `onnxruntime`, for servers without the C++ one.

Triton loads this file for every model whose config says `backend: "onnxruntime"` when the
backend directory holds `onnxruntime/model.py` instead of `libtriton_onnxruntime.so` (the pytriton
wheel ships no ONNX Runtime backend). It honours the same config as the real backend, so one model
repository serves in the NGC container and on a plain Linux box:
  - `<model>/<version>/<default_model_filename or model.onnx>` is the model;
  - `intra_op_thread_count` / `inter_op_thread_count` parameters set the session threads;
  - the instance kind (KIND_AUTO resolves to GPU where present) picks the CUDA provider when the
    installed onnxruntime has one, CPU otherwise;
  - input and output tensors are matched by the names in the config.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import triton_python_backend_utils as pb_utils


def _session_options(parameters: dict) -> ort.SessionOptions:
    options = ort.SessionOptions()
    for key, attribute in (
        ("intra_op_thread_count", "intra_op_num_threads"),
        ("inter_op_thread_count", "inter_op_num_threads"),
    ):
        if key in parameters:
            setattr(options, attribute, int(parameters[key]["string_value"]))
    return options


def _providers(kind: str, device_id: str) -> list:
    if kind == "GPU" and "CUDAExecutionProvider" in ort.get_available_providers():
        return [("CUDAExecutionProvider", {"device_id": int(device_id)}), "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        filename = config.get("default_model_filename") or "model.onnx"
        path = Path(args["model_repository"]) / args["model_version"] / filename
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing (run `triton-ocr export`)")
        self.session = ort.InferenceSession(
            str(path),
            _session_options(config.get("parameters", {})),
            providers=_providers(args["model_instance_kind"], args["model_instance_device_id"]),
        )
        self.inputs = [t["name"] for t in config["input"]]
        # requests carry a batch dimension that Triton may merge across requests
        self.batching = int(config.get("max_batch_size", 0)) > 0
        self.outputs = [t["name"] for t in config["output"]]
        self.output_dtypes = {
            t["name"]: pb_utils.triton_string_to_numpy(t["data_type"]) for t in config["output"]
        }
        onnx_inputs = {i.name for i in self.session.get_inputs()}
        onnx_outputs = {o.name for o in self.session.get_outputs()}
        missing = (set(self.inputs) - onnx_inputs) | (set(self.outputs) - onnx_outputs)
        if missing:
            raise ValueError(
                f"{path}: config names {sorted(missing)} not in the ONNX graph "
                f"(inputs {sorted(onnx_inputs)}, outputs {sorted(onnx_outputs)})"
            )

    def execute(self, requests):
        """Run the requests, those with equal shapes and outputs as one batch.

        With `max_batch_size` > 0 and `dynamic_batching`, Triton hands over several queued
        requests at once (it batches only equal shapes); they share one session run, as in the
        C++ backend. Otherwise each request runs alone.
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
        """One session run for requests with equal shapes and outputs; one response each."""
        wanted = list(calls[0][1])
        sizes = [len(next(iter(feeds.values()))) for feeds, _ in calls]
        feeds = (
            calls[0][0]
            if len(calls) == 1
            else {name: np.concatenate([f[name] for f, _ in calls]) for name in self.inputs}
        )
        try:
            results = self.session.run(wanted, feeds)
        except (ort.capi.onnxruntime_pybind11_state.InvalidArgument, ValueError) as exc:
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
