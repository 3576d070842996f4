"""Typed client: one encoded image in, one network call, text lines out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import contract


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
        model: str = contract.MODEL_NAME,
        timeout: float = 60.0,
    ) -> None:
        if protocol not in ("http", "grpc"):
            raise ValueError(f"protocol must be 'http' or 'grpc', not {protocol!r}")
        self.protocol = protocol
        self.model = model
        self.timeout = timeout
        if protocol == "http":
            import tritonclient.http as module

            self._client = module.InferenceServerClient(
                url, connection_timeout=timeout, network_timeout=timeout
            )
        else:
            import tritonclient.grpc as module

            self._client = module.InferenceServerClient(url)
        self._module = module

    def read(self, image: bytes | str | Path) -> list[TextLine]:
        """OCR one encoded image (bytes, or a path to a file) with `ensemble_model`."""
        data = as_bytes(image)
        array = np.frombuffer(data, dtype=np.uint8).reshape(1, -1)
        tensor = self._module.InferInput(contract.INPUT_IMAGE, list(array.shape), "UINT8")
        tensor.set_data_from_numpy(array)
        outputs = [self._module.InferRequestedOutput(name) for name in contract.OUTPUTS]
        extra = {} if self.protocol == "http" else {"client_timeout": self.timeout}
        result = self._client.infer(self.model, [tensor], outputs=outputs, **extra)
        return parse_lines(*(result.as_numpy(name) for name in contract.OUTPUTS))

    def read_many(
        self, images: Sequence[bytes | str | Path], **parameters: float | int
    ) -> list[list[TextLine]]:
        """OCR several images in ONE call to the `ocr` model; one list of lines per image.

        `parameters` override the server's settings for this request (e.g. text_score=0.3).
        """
        data = [as_bytes(image) for image in images]
        array = np.array(data, dtype=np.object_)
        tensor = self._module.InferInput(contract.OCR_INPUT_IMAGES, [len(data)], "BYTES")
        tensor.set_data_from_numpy(array)
        outputs = [self._module.InferRequestedOutput(name) for name in contract.OCR_OUTPUTS]
        extra = {} if self.protocol == "http" else {"client_timeout": self.timeout}
        result = self._client.infer(
            contract.OCR_MODEL_NAME,
            [tensor],
            outputs=outputs,
            parameters=parameters or None,
            **extra,
        )
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
