"""Typed model parameters parsed from a Triton config's `parameters` map.

The config.pbtxt files are the only place that holds the values: these dataclasses have no
defaults, so a missing parameter is an error at load time instead of a silent fallback.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class DetectionPreprocessing:
    min_side_len: int
    max_side_len: int
    mean: tuple[float, ...]
    std: tuple[float, ...]
    max_image_pixels: int


@dataclasses.dataclass(frozen=True)
class DetectionPostprocessing:
    thresh: float
    box_thresh: float
    unclip_ratio: float
    max_candidates: int
    min_box_size: float
    rec_height: int
    rec_min_width: int
    rec_max_width: int
    rec_mean: tuple[float, ...]
    rec_std: tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class RecognitionPostprocessing:
    text_score: float
    recognizer_model: str
    alphabet_metadata_key: str
    append_space: bool


def _convert(raw: str, kind: Any, name: str) -> Any:
    origin = typing.get_origin(kind)
    try:
        if kind is bool:
            lowered = raw.strip().lower()
            if lowered not in {"true", "false", "1", "0", "yes", "no"}:
                raise ValueError(raw)
            return lowered in {"true", "1", "yes"}
        if kind in (int, float, str):
            return kind(raw)
        if origin is tuple:
            (item,) = {a for a in typing.get_args(kind) if a is not Ellipsis}
            values = json.loads(raw) if raw.strip().startswith("[") else raw.split(",")
            return tuple(item(v) for v in values)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"parameter {name!r}: cannot read {raw!r} as {kind}") from exc
    raise TypeError(f"parameter {name!r}: unsupported type {kind}")


def parse_parameters(cls: type[T], parameters: Mapping[str, Any]) -> T:
    """Build `cls` from a config's parameters ({"key": {"string_value": "..."}} or plain strings).

    Unknown keys are errors too, so a typo in config.pbtxt cannot go unnoticed.
    """
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    raw = {
        key: value["string_value"] if isinstance(value, Mapping) else str(value)
        for key, value in parameters.items()
    }
    unknown = sorted(set(raw) - fields)
    missing = sorted(fields - set(raw))
    if unknown or missing:
        raise ValueError(
            f"{cls.__name__} parameters: missing {missing or 'none'}, unknown {unknown or 'none'}"
        )
    return cls(**{name: _convert(raw[name], hints[name], name) for name in fields})


def model_parameters(cls: type[T], model_config: Mapping[str, Any] | str) -> T:
    """Parse `cls` from a model config given as Triton passes it (JSON text or dict)."""
    config = json.loads(model_config) if isinstance(model_config, str) else model_config
    return parse_parameters(cls, config.get("parameters", {}))


def tensor_names(model_config: Mapping[str, Any] | str, kind: str) -> list[str]:
    """Names of a config's `input` or `output` tensors, in the order the config declares them."""
    config = json.loads(model_config) if isinstance(model_config, str) else model_config
    return [tensor["name"] for tensor in config.get(kind, [])]
