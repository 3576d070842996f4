"""Retry-After on Triton's HTTP API: what an overloaded server, or a proxy or gateway in front of
it, asks a refused caller to wait (Triton itself never sends one). tritonclient's HTTP clients
drop the answer's headers when they raise, so the clients here use subclasses that read the
header of a 429 or 503 answer and raise its error with the wait attached (`retry_after`, seconds),
which the retry rule honours (ocr_client.retry_wait).
"""

from __future__ import annotations

import email.utils
import json
import time
from types import ModuleType
from typing import Any

from tritonclient.utils import InferenceServerException

REFUSED = (429, 503)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A Retry-After value (delay-seconds or an HTTP date) as seconds from `now` (None: none
    given, or not readable)."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def hinted_refusal(body: bytes, status: int, seconds: float | None) -> InferenceServerException:
    """The refusal's error, as tritonclient would raise it, with the wait it asked for (None:
    it asked for none)."""
    try:
        message = str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace") or f"HTTP {status}"
    error = InferenceServerException(msg=message, status=str(status))
    error.retry_after = seconds
    return error


def hinting_client(module: ModuleType) -> type:
    """`module`'s InferenceServerClient (tritonclient.http or tritonclient.http.aio) that raises
    a refusal with a Retry-After as hinted_refusal."""
    base: type[Any] = module.InferenceServerClient
    if module.__name__.endswith(".aio"):

        class AsyncHinting(base):
            async def _post(self, request_uri, request_body, headers, query_params):
                response = await super()._post(request_uri, request_body, headers, query_params)
                seconds = retry_after_seconds(response.headers.get("Retry-After"))
                if response.status in REFUSED and seconds is not None:
                    raise hinted_refusal(await response.read(), response.status, seconds)
                return response

        return AsyncHinting

    class Hinting(base):
        def _post(self, request_uri, request_body, headers, query_params):
            response = super()._post(request_uri, request_body, headers, query_params)
            seconds = retry_after_seconds(response.get("Retry-After"))
            if response.status_code in REFUSED and seconds is not None:
                raise hinted_refusal(response.read(), response.status_code, seconds)
            return response

    return Hinting
