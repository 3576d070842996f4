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

from triton_ocr.preprocessing.decode import DecodeLimits

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Ocr:
    pack: str  # whose configs of the ensemble's models hold the pipeline's parameters
    # images of one request read concurrently (1: one after the other); bounds the memory
    # of decoded images a request holds at once
    images_in_flight: int
    max_images_per_request: int  # more is an INVALID_ARG: bounds one request's work and memory
    bls_timeout_s: float  # the longest wait for one call to another model (then UNAVAILABLE)

    def __post_init__(self) -> None:
        if self.images_in_flight < 1:
            raise ValueError(f"images_in_flight must be >= 1, not {self.images_in_flight}")
        if self.max_images_per_request < 1:
            raise ValueError(
                f"max_images_per_request must be >= 1, not {self.max_images_per_request}"
            )


@dataclasses.dataclass(frozen=True)
class GroupedRecognition:
    pack: str  # whose text_recognition config names the recognizer's input
    recognition_group_size: int  # crops per recognizer call, after sorting by width
    # Upside-down lines: each group goes through the 0/180-degree classifier (text_orientation)
    # first, and crops it finds turned over with at least orientation_threshold are turned back.
    classify_orientation: bool
    orientation_threshold: float
    bls_timeout_s: float  # the longest wait for one call to another model (then UNAVAILABLE)

    def __post_init__(self) -> None:
        if not 0.5 <= self.orientation_threshold <= 1.0:
            value = self.orientation_threshold
            raise ValueError(f"orientation_threshold must be in [0.5, 1], not {value}")


SINGLE_LINE_MODES = ("auto", "always", "never")


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"parameter {name!r} must be one of {list(allowed)}, not {value!r}")


def _check_length(names: tuple[str, ...], values: tuple[tuple, ...], length: int) -> None:
    for name, value in zip(names, values, strict=True):
        if len(value) != length:
            raise ValueError(f"parameter {name!r} needs {length} values, got {len(value)}")


@dataclasses.dataclass(frozen=True)
class DetectionPreprocessing:
    min_side_len: int  # short side scaled up to at least this
    max_side_len: int  # long side capped at this
    channel_order: str  # "BGR" or "RGB": what the detector was trained on
    layout: str  # "NCHW" or "NHWC"
    scale: float  # input = (pixel * scale - mean) / std
    mean: tuple[float, ...]
    std: tuple[float, ...]
    max_image_pixels: int  # refused before decoding above this
    max_image_bytes: int  # encoded size refused above this (Triton 2.51 has no body limit)

    @property
    def limits(self) -> DecodeLimits:
        return DecodeLimits(max_bytes=self.max_image_bytes, max_pixels=self.max_image_pixels)

    def __post_init__(self) -> None:
        _check_choice("channel_order", self.channel_order, ("BGR", "RGB"))
        _check_choice("layout", self.layout, ("NCHW", "NHWC"))
        _check_length(("mean", "std"), (self.mean, self.std), 3)


@dataclasses.dataclass(frozen=True)
class DetectionPostprocessing:
    detector: str  # "db" or "east": which parameter group below applies
    min_box_size: float  # boxes thinner than this (original pixels) are dropped
    # Each box grows by this fraction of its height above and below before it is cropped (the
    # returned polygon stays the detector's): the recognizer keeps the spaces between words only
    # with room around the text, and detector boxes hug it.
    crop_margin: float
    # The whole image as one text line: "always" (the caller sends crops), "never", or "auto":
    # when the image is line-shaped (at most line_max_height px tall, at least line_min_aspect
    # times wider than tall) and detection found nothing or boxes on a single row only.
    single_line: str
    line_max_height: int
    line_min_aspect: float
    rec_height: int
    rec_min_width: int
    rec_max_width: int
    # padded widths are rounded up to a multiple of this, so crops of different images share
    # batch shapes and text_recognition's dynamic batcher can merge their groups (1: exact)
    rec_width_bucket: int
    rec_keep_aspect: bool  # False: every crop is stretched to rec_max_width
    rec_channels: int  # 3 (BGR) or 1 (grayscale)
    rec_mean: tuple[float, ...]
    rec_std: tuple[float, ...]

    def __post_init__(self) -> None:
        _check_choice("rec_channels", self.rec_channels, (1, 3))
        if not 0 <= self.crop_margin <= 1:
            raise ValueError(
                f"parameter 'crop_margin' must be between 0 and 1, not {self.crop_margin}"
            )
        _check_choice("single_line", self.single_line, SINGLE_LINE_MODES)
        if self.rec_width_bucket < 1:
            bucket = self.rec_width_bucket
            raise ValueError(f"parameter 'rec_width_bucket' must be >= 1, not {bucket}")
        _check_length(("rec_mean", "rec_std"), (self.rec_mean, self.rec_std), self.rec_channels)


@dataclasses.dataclass(frozen=True)
class DBParameters:
    thresh: float  # pixel probability threshold
    box_thresh: float  # minimum mean probability inside a box
    unclip_ratio: float  # growth of the shrunk text kernel
    max_candidates: int


@dataclasses.dataclass(frozen=True)
class EASTParameters:
    score_thresh: float  # cell score threshold
    merge_iou: float  # locality-aware merge of neighbouring cells' boxes
    nms_iou: float  # rotated NMS between merged boxes
    max_candidates: int  # cells kept (strongest first) before merging


DETECTORS = {"db": DBParameters, "east": EASTParameters}


@dataclasses.dataclass(frozen=True)
class RecognitionPostprocessing:
    text_score: float  # texts below this mean CTC confidence are dropped
    recognizer_model: str  # model folder whose ONNX file holds the alphabet
    recognizer_file: str  # that model's file name (its config's default_model_filename)
    alphabet_metadata_key: str
    append_space: bool  # PaddleOCR appends a space class after its dictionary


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


def _raw(parameters: Mapping[str, Any]) -> dict[str, str]:
    return {
        key: value["string_value"] if isinstance(value, Mapping) else str(value)
        for key, value in parameters.items()
    }


def _build(cls: type[T], raw: Mapping[str, str]) -> T:
    hints = typing.get_type_hints(cls)
    fields = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    missing = sorted(set(fields) - set(raw))
    if missing:
        raise ValueError(f"{cls.__name__} parameters: missing {missing}")
    return cls(**{name: convert_value(raw[name], hints[name], name) for name in fields})


def parse_groups(parameters: Mapping[str, Any], *classes: type) -> tuple:
    """Build each dataclass in `classes` from the keys it declares.

    Every class must find all its fields, and every key must belong to some class, so a typo in
    config.pbtxt cannot go unnoticed.
    """
    raw = _raw(parameters)
    known = {f.name for cls in classes for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        names = ", ".join(cls.__name__ for cls in classes)
        raise ValueError(f"unknown parameters {unknown} (expected those of {names})")
    return tuple(_build(cls, raw) for cls in classes)


def parse_parameters(cls: type[T], parameters: Mapping[str, Any]) -> T:
    """Build `cls` from a config's parameters ({"key": {"string_value": "..."}} or strings)."""
    (result,) = parse_groups(parameters, cls)
    return result


def detection_postprocessing_parameters(
    parameters: Mapping[str, Any],
) -> tuple[DetectionPostprocessing, DBParameters | EASTParameters]:
    """The common crop/recognizer-input parameters plus those of the configured detector."""
    detector = _raw(parameters).get("detector", "")
    if detector not in DETECTORS:
        raise ValueError(
            f"parameter 'detector' must be one of {sorted(DETECTORS)}, not {detector!r}"
        )
    return parse_groups(parameters, DetectionPostprocessing, DETECTORS[detector])


def config_parameters(model_config: Mapping[str, Any] | str) -> Mapping[str, Any]:
    """The `parameters` map of a model config given as Triton passes it (JSON text or dict)."""
    config = json.loads(model_config) if isinstance(model_config, str) else model_config
    return config.get("parameters", {})


def model_parameters(cls: type[T], model_config: Mapping[str, Any] | str) -> T:
    """Parse `cls` from a model config given as Triton passes it (JSON text or dict)."""
    return parse_parameters(cls, config_parameters(model_config))


def tensor_names(model_config: Mapping[str, Any] | str, kind: str) -> list[str]:
    """Names of a config's `input` or `output` tensors, in the order the config declares them."""
    config = json.loads(model_config) if isinstance(model_config, str) else model_config
    return [tensor["name"] for tensor in config.get(kind, [])]
