"""What `triton-ocr eval` reads the service with (either entry point); the in-process RapidOCR
reference is in reference.py."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from triton_ocr.client import OcrClient
from triton_ocr.client.ocr_client import TextLine
from triton_ocr.contract import ENTRY_POINTS

from .runner import Reader


def _as_result(lines: list[TextLine]) -> tuple[list[str], np.ndarray]:
    quads = np.array([line.polygon for line in lines], np.float32).reshape(-1, 4, 2)
    return [line.text for line in lines], quads


def service_reader(
    client: OcrClient, model: str, parameters: Mapping[str, str] | None = None
) -> Reader:
    """One image per request to `model`; request parameters only reach the `ocr` model."""
    if model not in ENTRY_POINTS:
        raise ValueError(f"model must be one of {list(ENTRY_POINTS)}, not {model!r}")
    if model == "ocr":
        return lambda data: _as_result(client.read_many([data], **(parameters or {}))[0])
    if parameters:
        raise ValueError("request parameters need the `ocr` entry point")
    return lambda data: _as_result(client.read(data))
