"""The gateway's answers to what the service says, without a server: each refusal or failure of
the service as the caller's HTTP status, with Retry-After where trying again helps, and the
problem+json body every error has."""

from __future__ import annotations

import asyncio
import json

import pytest
from tritonclient.utils import InferenceServerException

from triton_ocr.client import ImageDecodeError
from triton_ocr.gateway.app import RETRY_AFTER_S, problem, service_problem


def refused(message: str, status: str) -> InferenceServerException:
    return InferenceServerException(message, status=status)


@pytest.mark.parametrize(
    ("error", "status", "retry", "shed", "said"),
    [
        (refused("bad image", "StatusCode.INVALID_ARGUMENT"), 400, False, False, "bad image"),
        (
            refused("Exceeds maximum queue size", "StatusCode.UNAVAILABLE"),
            503, True, True, "the service is overloaded: Exceeds maximum queue size",
        ),
        (
            refused("Stub process 'ocr_0' is not healthy", "StatusCode.UNAVAILABLE"),
            503, True, False, "is not healthy",
        ),
        (refused("took too long", "StatusCode.DEADLINE_EXCEEDED"), 504, False, False,
         "the service did not answer in time"),
        (refused("what", "StatusCode.INTERNAL"), 502, False, False, "what"),
        (ImageDecodeError("not an image: 12 bytes"), 400, False, False, "not an image"),
        (asyncio.TimeoutError(), 504, False, False, "did not answer in time"),
        (ConnectionRefusedError("refused"), 503, True, False, "cannot be reached"),
    ],
)  # fmt: skip
def test_the_services_answer_becomes_the_callers_status(error, status, retry, shed, said):
    found = service_problem(error)
    assert (found.status, found.shed) == (status, shed)
    assert (found.retry_after == RETRY_AFTER_S) is retry
    assert said in str(found)


def test_every_problem_is_problem_json_with_its_status():
    answer = problem(429, "too many uploads from one caller", RETRY_AFTER_S)
    assert answer.status_code == 429 and answer.media_type == "application/problem+json"
    assert answer.headers["Retry-After"] == str(RETRY_AFTER_S)
    assert json.loads(answer.body) == {"error": "too many uploads from one caller", "status": 429}
    assert "retry-after" not in problem(400, "bad").headers
