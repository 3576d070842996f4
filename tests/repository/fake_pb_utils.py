"""A stand-in for `triton_python_backend_utils` (the module only the Python backend stub has),
with the few names the adapters use, so their request handling runs in a unit test. What it
cannot show (the stub's own behaviour) the end-to-end tests check against the real server."""

from __future__ import annotations

import json

import numpy as np


class TritonError:
    INVALID_ARG = "INVALID_ARG"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"

    def __init__(self, message: str, code: str = INTERNAL):
        self._message, self._code = message, code

    def message(self) -> str:
        return self._message

    def code(self) -> str:
        return self._code


class TritonModelException(Exception):
    pass


class Logger:
    """The stub's logger: what was logged, kept for the test to read."""

    lines: list[str] = []

    @classmethod
    def log_error(cls, message: str) -> None:
        cls.lines.append(message)


class Tensor:
    def __init__(self, name: str, array):
        self._name, self._array = name, np.asarray(array)

    def name(self) -> str:
        return self._name

    def as_numpy(self) -> np.ndarray:
        return self._array


class InferenceResponse:
    def __init__(self, output_tensors=(), error: TritonError | None = None):
        self.output_tensors, self._error = list(output_tensors), error

    def has_error(self) -> bool:
        return self._error is not None

    def error(self) -> TritonError | None:
        return self._error


class InferenceRequest:
    def __init__(self, model_name: str, inputs, requested_output_names):
        self.model_name, self.inputs, self.outputs = model_name, inputs, requested_output_names


class Request:
    """A request as an adapter's execute() receives it: named inputs, its parameters and the
    timeout its caller gave (microseconds, 0: none)."""

    def __init__(
        self, inputs: dict[str, np.ndarray], parameters: dict | None = None, timeout: int = 0
    ):
        self.tensors = {name: Tensor(name, value) for name, value in inputs.items()}
        self._parameters = json.dumps(parameters or {})
        self._timeout = timeout

    def parameters(self) -> str:
        return self._parameters

    def timeout(self) -> int:
        return self._timeout


class MetricFamily:
    """The stub's custom metrics: each counter's value, kept for the test to read."""

    COUNTER = "COUNTER"

    def __init__(self, name: str, description: str, kind: str):
        self.name, self.kind = name, kind

    def Metric(self, labels: dict[str, str]) -> Metric:  # noqa: N802 (the stub's name)
        return Metric(self.name, labels)


class Metric:
    def __init__(self, name: str, labels: dict[str, str]):
        self.name, self.labels, self.value = name, labels, 0.0

    def increment(self, value: float) -> None:
        self.value += value


def get_input_tensor_by_name(request: Request, name: str) -> Tensor | None:
    return request.tensors.get(name)


def get_output_tensor_by_name(response: InferenceResponse, name: str) -> Tensor | None:
    return next((t for t in response.output_tensors if t.name() == name), None)
