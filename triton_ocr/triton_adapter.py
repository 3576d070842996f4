"""Small helpers shared by the repository's model.py adapters (imports the Triton stub module).

Only the Python backend stub can import this module: it is where Triton tensors meet the pure
functions. Kept tiny on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import triton_python_backend_utils as pb_utils


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
    """Run `handle` per request; a ValueError becomes that request's INVALID_ARG error."""
    responses = []
    for request in requests:
        try:
            responses.append(handle(request))
        except ValueError as exc:
            responses.append(invalid_argument(str(exc)))
    return responses
