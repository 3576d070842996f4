"""Request parameters of the `ocr` entry point: a request's settings on top of the server's."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from triton_ocr.config.parse import convert_value, field_types
from triton_ocr.errors import InvalidRequest
from triton_ocr.settings import (
    PAGE_ORIENTATION_MODES,
    PDF_TEXT_MODES,
    SINGLE_LINE_MODES,
    PipelineSettings,
)


@dataclass(frozen=True)
class Range:
    """What a request parameter may be: a closed interval (numbers), or `choices`. `server`
    names a server setting that caps the interval's top instead of `high` (a request may ask for
    less than the server's limit, never more)."""

    low: float | None = None
    high: float | None = None
    server: str = ""  # e.g. "max_side_len": the top is the server's own value of it
    choices: tuple[Any, ...] = ()

    def describe(self, settings: PipelineSettings | None = None) -> str:
        if self.choices:
            return " or ".join(repr(c) for c in self.choices)
        if not self.server:
            top = f"{self.high:g}"
        elif settings is None:
            top = f"the server's {self.server}"
        else:
            top = f"{server_value(settings, self.server):g} (the server's {self.server})"
        return f"between {self.low:g} and {top}"

    def high_for(self, settings: PipelineSettings) -> float:
        if self.server:
            return server_value(settings, self.server)
        assert self.high is not None  # a numeric range has `high` or `server`
        return float(self.high)


BOOL = Range(choices=(True, False))
FRACTION = Range(0.0, 1.0)
# What a request may change, each within its range: thresholds and sizes that trade recall,
# precision and cost; never the model-defined ones (normalisation, recognizer input shape) nor
# the safety limits. docs/api.md's table of request parameters states the same ranges (a test
# compares them).
REQUEST_PARAMETERS: dict[str, Range] = {
    "text_score": FRACTION,
    "single_line": Range(choices=SINGLE_LINE_MODES),
    "classify_orientation": BOOL,
    "orientation_threshold": Range(0.5, 1.0),
    "min_side_len": Range(32, server="max_side_len"),
    "max_side_len": Range(32, server="max_side_len"),
    "min_box_size": Range(0, 1000),
    "crop_margin": FRACTION,
    "thresh": Range(0.01, 0.99),
    "box_thresh": FRACTION,
    "unclip_ratio": Range(0.5, 4.0),
    "score_thresh": Range(0.01, 0.99),
    "merge_iou": FRACTION,
    "nms_iou": FRACTION,
    "pdf_dpi": Range(36, server="max_pdf_dpi"),
    "pdf_text": Range(choices=PDF_TEXT_MODES),
    "word_boxes": BOOL,
    "tables": BOOL,
    "page_orientation": Range(choices=PAGE_ORIENTATION_MODES),
}
# the settings objects a request parameter may belong to
OVERRIDABLE = (
    "detector_input",
    "page_orientation",
    "boxes",
    "lines",
    "orientation",
    "text_filter",
    "documents",
    "words",
    "tables",
)


def owner_of(settings: PipelineSettings, name: str) -> str | None:
    """Which of the OVERRIDABLE settings objects has the field `name` (None: none, in this
    pack)."""
    return next((p for p in OVERRIDABLE if name in field_types(type(getattr(settings, p)))), None)


def server_value(settings: PipelineSettings, name: str) -> float:
    """A server setting by field name, from whichever settings object holds it."""
    owner = owner_of(settings, name)
    if owner is None:
        raise KeyError(name)
    return cast(float, getattr(getattr(settings, owner), name))


def checked(name: str, value: Any, allowed: Range, settings: PipelineSettings) -> Any:
    """`value` if it lies in `allowed`, else an InvalidRequest naming the parameter, the value
    and the range (NaN and infinities lie in no range)."""
    if allowed.choices:
        ok = value in allowed.choices
    else:
        ok = math.isfinite(value) and allowed.low <= value <= allowed.high_for(settings)
    if not ok:
        raise InvalidRequest(
            f"request parameter {name}={value!r} is out of range: it must be "
            f"{allowed.describe(settings)}"
        )
    return value


def with_overrides(settings: PipelineSettings, overrides: Mapping[str, Any]) -> PipelineSettings:
    """Settings for one request; unknown names, wrong types and values outside their range are
    InvalidRequest errors."""
    if not overrides:
        return settings
    unknown = sorted(set(overrides) - set(REQUEST_PARAMETERS))
    if unknown:
        raise InvalidRequest(
            f"unknown request parameters {unknown}; accepted: {sorted(REQUEST_PARAMETERS)}"
        )
    parts = {name: getattr(settings, name) for name in OVERRIDABLE}
    changed: dict[str, dict[str, Any]] = {}
    for name, raw in overrides.items():
        owner = owner_of(settings, name)
        if owner is None:
            raise InvalidRequest(f"request parameter {name!r} does not apply to this model pack")
        kind = field_types(type(parts[owner]))[name]
        try:
            value = convert_value(str(raw), kind, name)
        except ValueError as exc:
            raise InvalidRequest(f"request {exc}") from exc
        changed.setdefault(owner, {})[name] = checked(
            name, value, REQUEST_PARAMETERS[name], settings
        )
    try:
        new = {k: dataclasses.replace(parts[k], **v) for k, v in changed.items()}
    except ValueError as exc:
        raise InvalidRequest(f"request parameters: {exc}") from exc
    detector = new.get("detector_input", settings.detector_input)
    if "min_side_len" not in overrides and detector.min_side_len > detector.max_side_len:
        # a lower max_side_len alone takes the server's min_side_len down with it
        detector = new["detector_input"] = dataclasses.replace(
            detector, min_side_len=detector.max_side_len
        )
    if detector.min_side_len > detector.max_side_len:
        raise InvalidRequest(
            f"request parameters must keep min_side_len ({detector.min_side_len}) <= "
            f"max_side_len ({detector.max_side_len})"
        )
    try:  # the settings' own checks (choices, cross-field rules) are the caller's errors here
        return dataclasses.replace(settings, **new)
    except ValueError as exc:
        raise InvalidRequest(f"request parameters: {exc}") from exc
