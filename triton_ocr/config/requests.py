"""Request parameters of the `ocr` entry point: a request's settings on top of the server's."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from triton_ocr.config.parse import convert_value, field_types
from triton_ocr.settings import PipelineSettings

# What a request may change: thresholds and sizes that trade recall, precision and cost; never
# the model-defined ones (normalisation, recognizer input shape) nor the safety limits.
REQUEST_PARAMETERS = frozenset(
    {
        "text_score",
        "single_line",
        "classify_orientation",
        "orientation_threshold",
        "min_side_len",
        "max_side_len",
        "min_box_size",
        "crop_margin",
        "thresh",
        "box_thresh",
        "unclip_ratio",
        "score_thresh",
        "merge_iou",
        "nms_iou",
        "pdf_dpi",  # up to the server's max_pdf_dpi (Documents checks it)
        "word_boxes",
    }
)
# the settings objects a request parameter may belong to
OVERRIDABLE = (
    "detector_input",
    "boxes",
    "lines",
    "orientation",
    "text_filter",
    "documents",
    "words",
)


def with_overrides(settings: PipelineSettings, overrides: Mapping[str, Any]) -> PipelineSettings:
    """Settings for one request; unknown names, wrong types and raised limits are errors."""
    if not overrides:
        return settings
    unknown = sorted(set(overrides) - REQUEST_PARAMETERS)
    if unknown:
        raise ValueError(
            f"unknown request parameters {unknown}; accepted: {sorted(REQUEST_PARAMETERS)}"
        )
    parts = {name: getattr(settings, name) for name in OVERRIDABLE}
    changed: dict[str, dict[str, Any]] = {}
    for name, raw in overrides.items():
        owner = next((k for k, part in parts.items() if name in field_types(type(part))), None)
        if owner is None:
            raise ValueError(f"request parameter {name!r} does not apply to this model pack")
        kind = field_types(type(parts[owner]))[name]
        changed.setdefault(owner, {})[name] = convert_value(str(raw), kind, name)
    new = {k: dataclasses.replace(parts[k], **v) for k, v in changed.items()}
    limit = settings.detector_input.max_side_len
    detector = new.get("detector_input", settings.detector_input)
    if detector.max_side_len > limit or detector.min_side_len > detector.max_side_len:
        raise ValueError(
            f"request parameters must keep min_side_len <= max_side_len <= {limit} "
            "(the server's limit)"
        )
    return dataclasses.replace(settings, **new)
