"""Typed client: one encoded image in, one network call, text lines out.

Before sending, each image passes the server's own header checks (size, pixel count, format;
limits read once from the server's detection_preprocessing config), so a file the server would
refuse never travels. Reading is idempotent, so a call that fails for a transient reason (the
server unreachable or restarting a model's process) is retried with exponential backoff until
the call's deadline; bad input is never retried.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.config.repository import step_settings
from triton_ocr.preprocessing.header import ImageDecodeError, check_encoded
from triton_ocr.settings import ImageLimits

T = TypeVar("T")
# Errors worth another try: the server unreachable, or a model's process being restarted
# (Triton answers INTERNAL "Stub process ... is not healthy" meanwhile). Never bad input.
TRANSIENT_STATUSES = {"StatusCode.UNAVAILABLE", "StatusCode.INTERNAL", "500", "502", "503"}


# A model being reloaded (the server's stub supervisor unloads and loads it) is briefly unknown.
RELOADING = "has no available versions"


def is_transient(error: Exception) -> bool:
    if isinstance(error, InferenceServerException):
        status = str(error.status())
        reloading = status in ("StatusCode.NOT_FOUND", "400", "404") and RELOADING in str(error)
        return status in TRANSIENT_STATUSES or reloading
    return isinstance(error, (ConnectionError, TimeoutError, OSError))


def with_retries(
    call: Callable[[float], T],
    deadline_s: float,
    retries: int,
    backoff_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """`call(seconds_left)`, again after transient failures (at most `retries` more times, the
    waits doubling from `backoff_s` with jitter), never past `deadline_s` from now."""
    end = clock() + deadline_s
    for attempt in range(retries + 1):
        try:
            return call(max(0.001, end - clock()))
        except Exception as error:
            wait = backoff_s * 2**attempt * random.uniform(0.5, 1.0)
            if attempt == retries or not is_transient(error) or clock() + wait >= end:
                raise
            sleep(wait)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class TextLine:
    """One recognized text: its content, 4-point polygon (original pixels) and confidence."""

    text: str
    polygon: tuple[tuple[float, float], ...]  # tl, tr, br, bl as (x, y)
    score: float

    def as_dict(self) -> dict:
        return {"text": self.text, "polygon": [list(p) for p in self.polygon], "score": self.score}


def parse_lines(texts: np.ndarray, polygons: np.ndarray, scores: np.ndarray) -> list[TextLine]:
    """Turn the three output tensors of one image into TextLines (reading order kept)."""
    texts = np.asarray(texts).reshape(-1)
    polygons = np.asarray(polygons, dtype=np.float32).reshape(-1, 4, 2)
    scores = np.asarray(scores, dtype=np.float32).reshape(-1)
    if not len(texts) == len(polygons) == len(scores):
        raise ValueError(
            f"inconsistent response: {len(texts)} texts, {len(polygons)} polygons, "
            f"{len(scores)} scores"
        )
    return [
        TextLine(
            text=t.decode("utf-8") if isinstance(t, bytes) else str(t),
            polygon=tuple((float(x), float(y)) for x, y in poly),
            score=float(s),
        )
        for t, poly, s in zip(texts, polygons, scores, strict=True)
    ]


def as_bytes(image: bytes | str | Path) -> bytes:
    return Path(image).read_bytes() if isinstance(image, (str, Path)) else bytes(image)


class OcrClient:
    """Talks to `ensemble_model` over HTTP (default, port 8000) or gRPC (port 8001)."""

    def __init__(
        self,
        url: str = "localhost:8000",
        protocol: str = "http",
        model: str = contract.ENSEMBLE_MODEL,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        limits: ImageLimits | None = None,
    ) -> None:
        """`timeout`: seconds one read may take, retries included; `retries`: further attempts
        after a transient failure; `limits`: the server's are fetched when not given."""
        if protocol not in ("http", "grpc"):
            raise ValueError(f"protocol must be 'http' or 'grpc', not {protocol!r}")
        self.protocol = protocol
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._limits = limits
        if protocol == "http":
            import tritonclient.http as module

            self._client = module.InferenceServerClient(
                url, connection_timeout=timeout, network_timeout=timeout
            )
        else:
            import tritonclient.grpc as module

            self._client = module.InferenceServerClient(url)
        self._module = module

    def limits(self) -> ImageLimits:
        """The server's decode limits, from its detection_preprocessing config (fetched once)."""
        if self._limits is None:
            as_json = {"as_json": True} if self.protocol == "grpc" else {}  # HTTP: always
            config = self._client.get_model_config(contract.DETECTION_PREPROCESSING, **as_json)
            config = config.get("config", config)  # gRPC wraps it, HTTP does not
            self._limits, _ = step_settings(contract.DETECTION_PREPROCESSING, config)
        return self._limits

    def _infer(self, model: str, inputs, outputs, parameters=None):
        def attempt(seconds_left: float):
            extra = {"client_timeout": seconds_left} if self.protocol == "grpc" else {}
            return self._client.infer(
                model, inputs, outputs=outputs, parameters=parameters, **extra
            )

        return with_retries(attempt, self.timeout, self.retries, self.backoff)

    def read(self, image: bytes | str | Path) -> list[TextLine]:
        """OCR one encoded image (bytes, or a path to a file) with `ensemble_model`."""
        data = as_bytes(image)
        check_encoded(data, self.limits())
        array = np.frombuffer(data, dtype=np.uint8).reshape(1, -1)
        tensor = self._module.InferInput(contract.INPUT_IMAGE, list(array.shape), "UINT8")
        tensor.set_data_from_numpy(array)
        outputs = [self._module.InferRequestedOutput(name) for name in contract.OUTPUTS]
        result = self._infer(self.model, [tensor], outputs)
        return parse_lines(*(result.as_numpy(name) for name in contract.OUTPUTS))

    def read_many(
        self, images: Sequence[bytes | str | Path], **parameters: float | int
    ) -> list[list[TextLine]]:
        """OCR several images in ONE call to the `ocr` model; one list of lines per image.

        `parameters` override the server's settings for this request (e.g. text_score=0.3).
        """
        data = [as_bytes(image) for image in images]
        for index, item in enumerate(data):
            try:
                check_encoded(item, self.limits())
            except ImageDecodeError as exc:
                raise ImageDecodeError(f"image {index}: {exc}") from exc
        array = np.array(data, dtype=np.object_)
        tensor = self._module.InferInput(contract.OCR_INPUT_IMAGES, [len(data)], "BYTES")
        tensor.set_data_from_numpy(array)
        outputs = [self._module.InferRequestedOutput(name) for name in contract.OCR_OUTPUTS]
        result = self._infer(contract.OCR_MODEL, [tensor], outputs, parameters or None)
        index, texts, polygons, scores = (result.as_numpy(n) for n in contract.OCR_OUTPUTS)
        lines = parse_lines(texts, polygons, scores)
        per_image: list[list[TextLine]] = [[] for _ in data]
        for i, line in zip(np.asarray(index).reshape(-1), lines, strict=True):
            per_image[int(i)].append(line)
        return per_image

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OcrClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
