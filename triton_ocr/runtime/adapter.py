"""Small helpers shared by the repository's model.py adapters (imports the Triton stub module).

Only the Python backend stub can import this module: it is where Triton tensors meet the pure
functions. Kept tiny on purpose.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable, Sequence

import numpy as np
import triton_python_backend_utils as pb_utils

from triton_ocr.contract import PAGE_ORIENTATION, TEXT_ORIENTATION
from triton_ocr.errors import InvalidRequest
from triton_ocr.runtime.gate import Overloaded
from triton_ocr.runtime.timeouts import ModelTimeout, ModelUnavailable, answer_within


def invalid_argument(message: str) -> pb_utils.InferenceResponse:
    """A per-request INVALID_ARG error response; the model and other requests carry on."""
    return pb_utils.InferenceResponse(
        error=pb_utils.TritonError(message, pb_utils.TritonError.INVALID_ARG)
    )


def input_array(request, name: str) -> np.ndarray:
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy()


def respond(names: Sequence[str], arrays: Sequence[np.ndarray]):
    return pb_utils.InferenceResponse(
        [pb_utils.Tensor(n, a) for n, a in zip(names, arrays, strict=True)]
    )


def execute_each(requests, handle: Callable[[object], pb_utils.InferenceResponse]) -> list:
    """Run `handle` per request; a failure becomes that request's error, never the others'.

    InvalidRequest means the caller's input was bad (INVALID_ARG); a model that did not answer
    in time, or is being restarted, and a request refused as overloaded are UNAVAILABLE (a
    client may retry); anything else is the server's own failure: INTERNAL, and logged (where in
    the code, never the request's content).
    """
    responses = []
    for request in requests:
        try:
            responses.append(handle(request))
        except InvalidRequest as exc:
            responses.append(invalid_argument(str(exc)))
        except (ModelTimeout, Overloaded) as exc:
            error = pb_utils.TritonError(str(exc), pb_utils.TritonError.UNAVAILABLE)
            responses.append(pb_utils.InferenceResponse(error=error))
        except Exception as exc:  # a failed BLS call, a bug: answer, don't crash the stub
            log_internal(exc)
            error = pb_utils.TritonError(
                f"{type(exc).__name__}: {exc}", pb_utils.TritonError.INTERNAL
            )
            responses.append(pb_utils.InferenceResponse(error=error))
    return responses


def request_timeout_s(request) -> float | None:
    """The timeout the caller gave its request (Triton's per-request timeout), in seconds; None
    when it gave none."""
    microseconds = request.timeout()
    return microseconds / 1e6 if microseconds > 0 else None


def counter(name: str, description: str, labels: dict[str, str]):
    """A Prometheus counter this model exports on Triton's /metrics, beside Triton's own: the
    (family, metric) pair, both kept for as long as the model counts (the family must outlive
    its metric)."""
    family = pb_utils.MetricFamily(
        name=name, description=description, kind=pb_utils.MetricFamily.COUNTER
    )
    return family, family.Metric(labels=labels)


def log_internal(exc: BaseException) -> None:
    """Log an internal failure by its type and traceback frames: the message is left out, for
    it may quote what the request held."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    pb_utils.Logger.log_error(f"internal error {type(exc).__name__}, at:\n{frames}")


def texts_as_tensors(found) -> list[np.ndarray]:
    """A Texts result as the contract's [1, N] texts, [1, N, 4, 2] polygons, [1, N] scores."""
    texts = np.array([t.encode("utf-8") for t in found.texts], dtype=np.object_).reshape(1, -1)
    return [texts, found.quads[None], found.scores[None]]


def bls_request(model: str, inputs: dict[str, np.ndarray], outputs: list[str]):
    return pb_utils.InferenceRequest(
        model_name=model,
        inputs=[pb_utils.Tensor(name, value) for name, value in inputs.items()],
        requested_output_names=outputs,
    )


# Triton's answers while a called model's process is being replaced (the supervisor reloads it)
RESTARTING = ("is not healthy", "has no available versions")


def bls_outputs(model: str, response, outputs: list[str]) -> list[np.ndarray]:
    if response.has_error():
        error = response.error()
        message = f"{model}: {error.message()}"
        if error.code() == pb_utils.TritonError.UNAVAILABLE or any(
            sign in error.message() for sign in RESTARTING
        ):
            raise ModelUnavailable(message)  # worth a retry, not the server's bug
        raise pb_utils.TritonModelException(message)
    tensors = [pb_utils.get_output_tensor_by_name(response, name) for name in outputs]
    missing = [name for name, tensor in zip(outputs, tensors, strict=True) if tensor is None]
    if missing:  # seen when the called model's process fails mid-request
        raise pb_utils.TritonModelException(f"{model}: answered without outputs {missing}")
    return [tensor.as_numpy() for tensor in tensors]


async def bls_async(
    model: str, inputs: dict[str, np.ndarray], outputs: list[str], timeout_s: float
) -> list:
    """One call to another model of this server, awaited (others may be in flight meanwhile),
    at most `timeout_s` seconds."""
    call = bls_request(model, inputs, outputs).async_exec()
    response = await answer_within(call, timeout_s, model)
    return bls_outputs(model, response, outputs)


async def bls_gather(
    model: str, name: str, batches: list[np.ndarray], outputs: list[str], timeout_s: float
):
    """One call per batch, all in flight at once so several model instances share the work."""
    calls = (bls_async(model, {name: batch}, outputs, timeout_s) for batch in batches)
    return [tuple(result) for result in await asyncio.gather(*calls)]


async def bls_classify_orientation(
    model, inputs: list[np.ndarray], timeout_s: float
) -> list[np.ndarray]:
    """text_orientation's class probabilities for each input (`model`: a
    config.repository.ClassifierModel)."""
    results = await bls_gather(TEXT_ORIENTATION, model.input, inputs, [model.output], timeout_s)
    return [probabilities for (probabilities,) in results]


async def bls_classify_page(model, looks: np.ndarray, timeout_s: float) -> np.ndarray:
    """page_orientation's class probabilities of one page's looks (`model`: a
    config.repository.ClassifierModel)."""
    inputs = {model.input: looks}
    (probabilities,) = await bls_async(PAGE_ORIENTATION, inputs, [model.output], timeout_s)
    return probabilities
