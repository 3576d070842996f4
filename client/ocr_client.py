"""Typed client: encoded images and documents in, one network call, text out.

Before sending, each image passes the server's own header checks (size, pixel count, format;
limits read once from the server's detection_preprocessing config), so a file the server would
refuse never travels; documents (PDFs, multi-page TIFFs) go to the `ocr` entry point, which
checks them itself. Reading is idempotent, so a call that fails for a transient reason (the
server unreachable or restarting a model's process) is retried with exponential backoff, at
most `retries` times; one the server refuses as overloaded is retried until the call's deadline
(waiting at least what its Retry-After asks), then given up with ServerOverloaded; bad input is
never retried.

The requests are built and the responses parsed by the pure functions below, shared with the
asyncio client (async_client.py); the classes only add the network calls.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.config.repository import step_settings
from triton_ocr.preprocessing.header import DocumentGiven, ImageDecodeError, check_encoded
from triton_ocr.settings import Documents, ImageLimits, ManyImages

from .address import NothingAnswers, check_protocol
from .results import Document, TextLine, parse_lines, parse_ocr_outputs
from .retry_after import hinting_client

T = TypeVar("T")
Item = bytes | str | Path
# Errors worth another try: the server unavailable or past its deadline (gRPC status or HTTP
# code). Never bad input (INVALID_ARG), never the server's own failure (INTERNAL).
TRANSIENT_STATUSES = {
    "StatusCode.UNAVAILABLE",
    "StatusCode.DEADLINE_EXCEEDED",
    "502",
    "503",
    "504",
}
# Triton's own answers while a model's process is being replaced by the server's supervisor:
# an INTERNAL "Stub process '<instance>' is not healthy", then, while the model reloads, a
# NOT_FOUND "... has no available versions". These two, by their words, are retried as well.
RESTARTING = {
    ("StatusCode.INTERNAL", "is not healthy"),
    ("500", "is not healthy"),
    ("StatusCode.NOT_FOUND", "has no available versions"),
    ("400", "has no available versions"),
    ("404", "has no available versions"),
}


# Refusals that say the server is too busy now (not down, not at fault): Triton's queue policy
# (its queue full; the request's timeout passed while it waited), the REST gateway's bound, and
# any HTTP answer that says when to come back. Retried until the caller's deadline.
OVERLOAD_STATUSES = {"StatusCode.UNAVAILABLE", "503"}
OVERLOAD_SIGNS = ("Exceeds maximum queue size", "Request timeout expired", "overloaded")
BACKOFF_S = 0.5  # the first wait after a transient failure, doubling with each try
# a try that failed this close to the call's deadline ran out of its time (timers and gRPC's
# own deadline may fire a little early)
DEADLINE_SLACK_S = 0.01
MAX_BACKOFF_S = 16.0  # the longest wait between two tries, however many were refused


class ServerOverloaded(InferenceServerException):
    """The server refused every try as overloaded until the caller's deadline (its status is
    the last refusal's: UNAVAILABLE or 503)."""


def is_overload(error: Exception) -> bool:
    if not isinstance(error, InferenceServerException):
        return False
    status = str(error.status())
    hinted = getattr(error, "retry_after", None) is not None
    said = any(sign in str(error) for sign in OVERLOAD_SIGNS)
    return status == "429" or (status in OVERLOAD_STATUSES and (hinted or said))


def is_transient(error: Exception) -> bool:
    if isinstance(error, InferenceServerException):
        status = str(error.status())
        restarting = any(status == code and sign in str(error) for code, sign in RESTARTING)
        return status in TRANSIENT_STATUSES or restarting
    # the asyncio HTTP client's connection errors (aiohttp: loaded only when that client is)
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(error, aiohttp.ClientConnectionError):
        return True
    return isinstance(error, (ConnectionError, TimeoutError, OSError, asyncio.TimeoutError))


def backoff_delay(attempt: int, backoff_s: float) -> float:
    """The wait before try `attempt + 1`: doubling from `backoff_s` up to MAX_BACKOFF_S, with
    jitter (half to all of it), so refused clients spread out instead of coming back together."""
    return min(MAX_BACKOFF_S, backoff_s * 2.0 ** min(attempt, 32)) * random.uniform(0.5, 1.0)


def retry_wait(
    error: Exception,
    attempt: int,
    retries: int,
    backoff_s: float,
    left_s: float,
    overload_left_s: float | None = None,
) -> float | None:
    """Seconds to wait before trying again after `error` on attempt `attempt` (0-based), or
    None to give up: the error is not transient, no retry is left (an overload refusal is
    retried whatever the count), or the wait would end past the deadline (`left_s` from now;
    for an overload refusal also `overload_left_s`, when given). The waits double from
    `backoff_s`, with jitter, and are at least what the server's Retry-After asked, stretched by
    up to a fifth so its callers do not come back together."""
    overloaded = is_overload(error)
    if not (overloaded or is_transient(error)) or (attempt >= retries and not overloaded):
        return None
    wait = backoff_delay(attempt, backoff_s)
    asked = getattr(error, "retry_after", None)
    if asked is not None:
        wait = max(wait, asked * random.uniform(1.0, 1.2))
    if overloaded and overload_left_s is not None:
        left_s = min(left_s, overload_left_s)
    return wait if wait < left_s else None


def wait_or_raise(
    error: Exception,
    attempt: int,
    start: float,
    end: float,
    clock: Callable[[], float],
    retries: int,
    backoff_s: float,
    overload_s: float | None,
    refusal: InferenceServerException | None,
) -> float:
    """After `error` on attempt `attempt` of a call begun at `start` with its deadline at `end`:
    the wait before the next try (retry_wait), or, when there is none, raise ServerOverloaded in
    place of an overload refusal and `error` itself in place of anything else. A try that ran
    out of the call's time after the server had refused it as overloaded (`refusal`, the call's
    last such answer, last_refusal: `error` itself when it is one) ends as overloaded too: that
    refusal is the server's last word."""
    spent = clock() - start
    busy_left = None if overload_s is None else overload_s - spent
    wait = retry_wait(error, attempt, retries, backoff_s, end - clock(), busy_left)
    if wait is not None:
        return wait
    out_of_time = is_transient(error) and clock() >= end - DEADLINE_SLACK_S
    if refusal is None or (refusal is not error and not out_of_time):
        raise error
    raise ServerOverloaded(
        f"the server was overloaded: {attempt + 1} tries in {spent:.1f} s were refused or ran "
        f"out of time, the last refusal with {refusal.message() or refusal}; send again later, "
        "or give the call more time",
        status=str(refusal.status()),
    ) from error


def last_refusal(
    error: Exception, refusal: InferenceServerException | None
) -> InferenceServerException | None:
    """The last overload refusal of a call, after `error`."""
    if isinstance(error, InferenceServerException) and is_overload(error):
        return error
    return refusal


def with_retries(
    call: Callable[[float], T],
    deadline_s: float,
    retries: int,
    backoff_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    overload_s: float | None = None,
) -> T:
    """`call(seconds_left)`, again after transient failures (retry_wait: at most `retries` more
    times, overload refusals until the deadline, or for at most `overload_s`), never past
    `deadline_s` from now."""
    start = clock()
    end = start + deadline_s
    refusal = None
    for attempt in itertools.count():
        try:
            return call(max(0.001, end - clock()))
        except Exception as error:
            refusal = last_refusal(error, refusal)
            args = (retries, backoff_s, overload_s, refusal)
            sleep(wait_or_raise(error, attempt, start, end, clock, *args))
    raise AssertionError("unreachable")


async def with_retries_async(
    call: Callable[[float], Awaitable[T]],
    deadline_s: float,
    retries: int,
    backoff_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    overload_s: float | None = None,
) -> T:
    """with_retries for a coroutine: `await call(seconds_left)`, the same rule, waits awaited."""
    start = clock()
    end = start + deadline_s
    refusal = None
    for attempt in itertools.count():
        try:
            return await call(max(0.001, end - clock()))
        except Exception as error:
            refusal = last_refusal(error, refusal)
            args = (retries, backoff_s, overload_s, refusal)
            await sleep(wait_or_raise(error, attempt, start, end, clock, *args))
    raise AssertionError("unreachable")


# --- requests and responses: pure, shared by OcrClient and AsyncOcrClient --------------------


def as_bytes(image: Item) -> bytes:
    return Path(image).read_bytes() if isinstance(image, (str, Path)) else bytes(image)


def source_of(item: Item) -> str | None:
    """The path an item was read from, as given (None for bytes)."""
    return str(item) if isinstance(item, (str, Path)) else None


def check_image(data: bytes, limits: ImageLimits, model: str) -> None:
    """The header pre-check of one image for `model` (one image per call): a document is
    refused here with a message that says where to send it."""
    try:
        check_encoded(data, limits)
    except DocumentGiven as exc:
        raise ImageDecodeError(
            f"{exc.what}: {model} reads one image per call; send documents to the "
            f"`{contract.OCR_MODEL}` model (OcrClient.read_document)"
        ) from exc


def check_items(data: Sequence[bytes], limits: ImageLimits) -> None:
    """The header pre-check of each item of an `ocr` request, the failing one named by its
    index; documents pass (the server checks their pages)."""
    for index, item in enumerate(data):
        try:
            check_encoded(item, limits)
        except DocumentGiven:
            continue
        except ImageDecodeError as exc:
            raise ImageDecodeError(f"image {index}: {exc}") from exc


@dataclass(frozen=True)
class Request:
    """One inference call, ready for `client.infer(model, inputs, outputs=..., parameters=...)`
    (the classes of `module`: tritonclient.http or tritonclient.grpc, also their aio twins)."""

    model: str
    inputs: list
    outputs: list
    parameters: dict[str, Any] | None = None


def image_request(module: ModuleType, data: bytes, model: str = contract.ENSEMBLE_MODEL):
    """`ensemble_model`'s request: one encoded image, UINT8 [1, nbytes]."""
    array = np.frombuffer(data, dtype=np.uint8).reshape(1, -1)
    tensor = module.InferInput(contract.INPUT_IMAGE, list(array.shape), "UINT8")
    tensor.set_data_from_numpy(array)
    outputs = [module.InferRequestedOutput(name) for name in contract.OUTPUTS]
    return Request(model, [tensor], outputs)


OCR_ALL_OUTPUTS = contract.OCR_ALL_OUTPUTS


def call_options(protocol: str, seconds_left: float) -> dict[str, Any]:
    """The keyword arguments of one `infer` call with `seconds_left` until the caller's deadline:
    gRPC's own client-side timeout, and the deadline as Triton's per-request timeout
    (microseconds), so a request still waiting at either entry point when it passes is dropped
    there, unread, instead of being worked on for a caller who is gone."""
    options: dict[str, Any] = {"client_timeout": seconds_left} if protocol == "grpc" else {}
    options["timeout"] = max(1, int(seconds_left * 1e6))
    return options


def ocr_parameters(word_boxes: bool, parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    """The request parameters of an `ocr` call: `word_boxes` only when asked for."""
    found = dict(parameters)
    if word_boxes:
        found[contract.WORD_BOXES] = True
    return found or None


def ocr_request(
    module: ModuleType, data: Sequence[bytes], word_boxes: bool = False, **parameters: Any
) -> Request:
    """The `ocr` entry point's request: the items as BYTES [1, n] (a batch of one request),
    every output asked for."""
    array = np.empty((1, len(data)), dtype=np.object_)
    array[0, :] = list(data)
    tensor = module.InferInput(contract.OCR_INPUT_IMAGES, [1, len(data)], "BYTES")
    tensor.set_data_from_numpy(array)
    outputs = [module.InferRequestedOutput(name) for name in OCR_ALL_OUTPUTS]
    return Request(contract.OCR_MODEL, [tensor], outputs, ocr_parameters(word_boxes, parameters))


def image_lines(result) -> list[TextLine]:
    """`ensemble_model`'s answer (an InferResult) as lines."""
    return parse_lines(*(result.as_numpy(name) for name in contract.OUTPUTS))


def unbatched(array: np.ndarray | None) -> np.ndarray | None:
    """An `ocr` output without its batch dimension of one (None: not in the answer)."""
    return None if array is None else array[0]


def ocr_documents(result, sources: Sequence[str | None]) -> list[Document]:
    """The `ocr` entry point's answer (an InferResult) as one Document per item."""
    outputs = {name: unbatched(result.as_numpy(name)) for name in OCR_ALL_OUTPUTS}
    return parse_ocr_outputs(outputs, len(sources), sources)


def flat_lines(documents: Sequence[Document]) -> list[list[TextLine]]:
    """read_many's answer: per item, its pages' lines in page order."""
    return [document.lines for document in documents]


def limits_from(config: dict, entry: str) -> ImageLimits:
    """The decode limits in the config of entry point `entry`'s first model (gRPC wraps it,
    HTTP does not)."""
    model = contract.ENTRY_STEPS[entry]
    return step_settings(model, config.get("config", config))[ImageLimits]


def limits_unread(entry: str, error: InferenceServerException) -> InferenceServerException:
    """`error` from fetching entry point `entry`'s config, saying which entry point it was for
    (its first model is what the server names: detection_preprocessing for the ensemble)."""
    message = f"{entry}: the server's decode limits could not be read: {error.message()}"
    return InferenceServerException(message, error.status(), error.debug_details())


def request_limits_from(config: dict) -> tuple[ManyImages, Documents]:
    """What one `ocr` request may hold, from its config: items, and pages all together."""
    settings = step_settings(contract.OCR_MODEL, config.get("config", config))
    many, documents = settings[ManyImages], settings[Documents]
    return many, documents


class ClientOptions:
    """What both clients are made with (OcrClient, AsyncOcrClient): the server, the model `read`
    calls, and the retry policy."""

    def __init__(
        self,
        url: str = f"localhost:{contract.HTTP_PORT}",
        protocol: str = "http",
        model: str = contract.ENSEMBLE_MODEL,
        timeout: float = contract.REQUEST_TIMEOUT_S,
        retries: int = 3,
        backoff: float = BACKOFF_S,
        limits: ImageLimits | None = None,
        overload_timeout: float | None = None,
    ) -> None:
        """`timeout`: seconds one read may take, retries included; `retries`: further attempts
        after a transient failure (the server unreachable, a model restarting); a refusal as
        overloaded is retried until `timeout`, or for at most `overload_timeout` seconds (0: not
        retried), then raises ServerOverloaded; `limits`: the server's are fetched when not
        given."""
        if protocol not in ("http", "grpc"):
            raise ValueError(f"protocol must be 'http' or 'grpc', not {protocol!r}")
        if model not in contract.ENTRY_POINTS:
            raise ValueError(f"model must be one of {list(contract.ENTRY_POINTS)}, not {model!r}")
        self.url = url
        self.protocol = protocol
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.overload_timeout = overload_timeout
        # the decode limits by entry point: the caller's for both when given, else each fetched
        self._limits: dict[str, ImageLimits] = (
            dict.fromkeys(contract.ENTRY_STEPS, limits) if limits else {}
        )
        self._address_checked = False
        self._connect()

    def _connect(self) -> None:
        raise NotImplementedError

    def _check_address(self) -> None:
        """Before the first call: the other protocol's port, or a server that is not Triton,
        raises address.WrongAddress with one line saying what to pass. Nothing answering is
        left to the calls' retries (a server starting or restarting), and checked again."""
        if self._address_checked:
            return
        try:
            check_protocol(self.url, self.protocol, 'protocol="{}"')
        except NothingAnswers:
            return
        self._address_checked = True


# --- the blocking client ---------------------------------------------------------------------


class OcrClient(ClientOptions):
    """Talks to `ensemble_model` (`read`: one image) and to `ocr` (`read_many`,
    `read_documents`: several images and documents per call) over HTTP (default, port 8000) or
    gRPC (port 8001)."""

    def _connect(self) -> None:
        if self.protocol == "http":
            import tritonclient.http as module

            self._client = hinting_client(module)(
                self.url, connection_timeout=self.timeout, network_timeout=self.timeout
            )
        else:
            import tritonclient.grpc as module

            self._client = module.InferenceServerClient(self.url)
        self._module = module

    def limits(self, entry: str | None = None) -> ImageLimits:
        """The server's decode limits for entry point `entry` (default: the one `read` calls),
        from its first model's config (fetched once)."""
        entry = entry or self.model
        if entry not in self._limits:
            self._check_address()
            as_json = {"as_json": True} if self.protocol == "grpc" else {}  # HTTP: always
            try:
                config = self._client.get_model_config(contract.ENTRY_STEPS[entry], **as_json)
            except InferenceServerException as exc:
                raise limits_unread(entry, exc) from exc
            self._limits[entry] = limits_from(config, entry)
        return self._limits[entry]

    def _infer(self, request: Request):
        self._check_address()

        def attempt(seconds_left: float):
            extra = call_options(self.protocol, seconds_left)
            return self._client.infer(
                request.model,
                request.inputs,
                outputs=request.outputs,
                parameters=request.parameters,
                **extra,
            )

        return with_retries(
            attempt,
            self.timeout,
            self.retries,
            self.backoff,
            overload_s=self.overload_timeout,
        )

    def read(self, image: Item) -> list[TextLine]:
        """OCR one encoded image (bytes, or a path to a file) with `ensemble_model`."""
        data = as_bytes(image)
        check_image(data, self.limits(), self.model)
        return image_lines(self._infer(image_request(self._module, data, self.model)))

    def read_documents(
        self, items: Sequence[Item], word_boxes: bool = False, **parameters: Any
    ) -> list[Document]:
        """OCR several images and documents (PDFs, multi-page TIFFs) in ONE call to the `ocr`
        model: one Document per item, in order, each page read listed.

        `word_boxes`: each line's words with their polygons and scores too; `parameters`
        override the server's settings for this request (e.g. text_score=0.3, pdf_dpi=150).
        """
        if not items:
            return []
        data = [as_bytes(item) for item in items]
        check_items(data, self.limits(contract.OCR_MODEL))
        result = self._infer(ocr_request(self._module, data, word_boxes, **parameters))
        return ocr_documents(result, [source_of(item) for item in items])

    def read_document(self, item: Item, word_boxes: bool = False, **parameters: Any) -> Document:
        """OCR one image or document with the `ocr` model (read_documents of one item)."""
        return self.read_documents([item], word_boxes, **parameters)[0]

    def read_many(self, images: Sequence[Item], **parameters: Any) -> list[list[TextLine]]:
        """OCR several images in ONE call to the `ocr` model; one list of lines per image (a
        document's pages' lines one after the other).

        `parameters` override the server's settings for this request (e.g. text_score=0.3).
        """
        return flat_lines(self.read_documents(images, **parameters))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OcrClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
