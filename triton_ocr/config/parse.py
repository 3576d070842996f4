"""A Triton config's `parameters` map -> the plain settings objects of triton_ocr.settings.

Every class must find all its fields and every key must belong to some class, so a typo in
config.pbtxt cannot go unnoticed. A field's key is its name after the class's `PREFIX`.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def convert_value(raw: str, kind: Any, name: str) -> Any:
    """`raw` (a config or request string) as `kind`; ValueError naming `name` if it is not."""
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
        kind_name = getattr(kind, "__name__", str(kind))
        raise ValueError(f"parameter {name!r}: cannot read {raw!r} as {kind_name}") from exc
    raise TypeError(f"parameter {name!r}: unsupported type {kind}")


def keys(cls: type) -> dict[str, str]:
    """Config key -> field name of a settings class."""
    prefix = getattr(cls, "PREFIX", "")
    return {prefix + f.name: f.name for f in dataclasses.fields(cls)}


def field_types(cls: type) -> dict[str, Any]:
    """Field name -> its type (the hints resolved, `from __future__` annotations included)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def raw_parameters(parameters: Mapping[str, Any]) -> dict[str, str]:
    """{"key": {"string_value": "..."}} (as Triton hands it) or {"key": "..."} -> strings."""
    return {
        key: value["string_value"] if isinstance(value, Mapping) else str(value)
        for key, value in parameters.items()
    }


def _build(cls: type[T], raw: Mapping[str, str]) -> T:
    names = keys(cls)
    missing = sorted(set(names) - set(raw))
    if missing:
        raise ValueError(f"{cls.__name__} parameters: missing {missing}")
    types = field_types(cls)
    values = {field: convert_value(raw[key], types[field], key) for key, field in names.items()}
    return cls(**values)


def parse_groups(parameters: Mapping[str, Any], *classes: type) -> tuple[Any, ...]:
    """Build each settings class in `classes` from the keys it declares."""
    raw = raw_parameters(parameters)
    known = {key for cls in classes for key in keys(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        names = ", ".join(cls.__name__ for cls in classes)
        raise ValueError(f"unknown parameters {unknown} (expected those of {names})")
    return tuple(_build(cls, raw) for cls in classes)


def config_dict(model_config: Mapping[str, Any] | str) -> Mapping[str, Any]:
    """A model config as Triton passes it to a Python model (JSON text) or as a dict."""
    return json.loads(model_config) if isinstance(model_config, str) else model_config


def config_parameters(model_config: Mapping[str, Any] | str) -> Mapping[str, Any]:
    """The `parameters` map of a model config (JSON text or dict)."""
    parameters: Mapping[str, Any] = config_dict(model_config).get("parameters", {})
    return parameters


def tensor_names(model_config: Mapping[str, Any] | str, kind: str) -> list[str]:
    """Names of a config's `input` or `output` tensors, in the order the config declares them."""
    return [tensor["name"] for tensor in config_dict(model_config).get(kind, [])]


def queue_timeout_s(model_config: Mapping[str, Any] | str) -> float:
    """The default request timeout of a model's queue policy (dynamic_batching), in seconds:
    what a request that names no timeout of its own may wait."""
    policy = config_dict(model_config).get("dynamic_batching", {}).get("default_queue_policy", {})
    microseconds = int(policy.get("default_timeout_microseconds", 0))
    if microseconds <= 0:
        raise ValueError(
            "the model's config has no default_timeout_microseconds in its queue policy"
        )
    return microseconds / 1e6
