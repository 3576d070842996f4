"""The whole OCR of one image as one function, with the two networks passed in as callables.

The `ocr` BLS model calls it with Triton model calls, the benchmark's in-process compute floor
with onnxruntime sessions: the same code, so they measure the same work. No Triton import here.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from triton_ocr import packs
from triton_ocr.params import (
    DBParameters,
    DetectionPostprocessing,
    DetectionPreprocessing,
    EASTParameters,
    GroupedRecognition,
    RecognitionPostprocessing,
    convert_value,
    detection_postprocessing_parameters,
    model_parameters,
)
from triton_ocr.postprocessing.alphabet import load_alphabet
from triton_ocr.postprocessing.crops import crop_widths, recognition_groups
from triton_ocr.postprocessing.ctc import ctc_greedy_decode
from triton_ocr.postprocessing.detection import detect_texts, whole_image
from triton_ocr.postprocessing.orientation import classifier_input, turn_over, upside_down
from triton_ocr.postprocessing.recognition import Texts, select_texts
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.preprocessing.detection import detection_input

# detector input [1, ...] -> its output maps, in the order the detector config declares them
Detect = Callable[[np.ndarray], list[np.ndarray]]
# recognizer batches [n, C, H, W] -> (best class [n, T], best score [n, T]) for each batch;
# all the batches of an image come at once so a caller may run them concurrently
Recognize = Callable[[list[np.ndarray]], list[tuple[np.ndarray, np.ndarray]]]
# orientation classifier inputs [n, C, H, W] -> [n, 2] class probabilities for each
Classify = Callable[[list[np.ndarray]], list[np.ndarray]]
AsyncDetect = Callable[[np.ndarray], Awaitable[list[np.ndarray]]]
AsyncRecognize = Callable[[list[np.ndarray]], Awaitable[list[tuple[np.ndarray, np.ndarray]]]]
AsyncClassify = Callable[[list[np.ndarray]], Awaitable[list[np.ndarray]]]
Groups = list[tuple[list[int], np.ndarray]]  # (crop indices, recognizer batch) per group

# Parameters a request may change: thresholds and sizes that trade recall, precision and cost;
# never the model-defined ones (normalisation, recognizer input shape) nor the safety limit.
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
    }
)


@dataclasses.dataclass(frozen=True)
class PipelineSettings:
    preprocessing: DetectionPreprocessing
    postprocessing: DetectionPostprocessing
    detector: DBParameters | EASTParameters
    recognition: RecognitionPostprocessing
    alphabet: Sequence[str]
    grouping: GroupedRecognition  # group size and the orientation classifier's use
    orientation: packs.OrientationModel

    def __post_init__(self) -> None:
        channels = self.postprocessing.rec_channels
        if self.grouping.classify_orientation and channels != self.orientation.channels:
            raise ValueError(
                f"classify_orientation needs {self.orientation.channels}-channel recognizer "
                f"crops; this pack's recognizer takes {channels} (turn it off)"
            )

    @property
    def group_size(self) -> int:  # crops per recognizer call, after sorting by width
        return self.grouping.recognition_group_size

    @classmethod
    def from_repository(cls, repository: Path, pack: str) -> PipelineSettings:
        """Read every parameter from the pack's configs of the ensemble's models."""

        def config(model: str) -> dict:
            return packs.load_config_dict(repository, model, pack)

        post, detector = detection_postprocessing_parameters(
            config("detection_postprocessing").get("parameters", {})
        )
        recognition = model_parameters(
            RecognitionPostprocessing, config("recognition_postprocessing")
        )
        alphabet = load_alphabet(
            repository / recognition.recognizer_model,
            recognition.recognizer_file,
            recognition.alphabet_metadata_key,
            recognition.append_space,
        )
        grouping = model_parameters(GroupedRecognition, config("grouped_recognition"))
        packs.check_group_size(repository, pack, grouping.recognition_group_size)
        return cls(
            preprocessing=model_parameters(
                DetectionPreprocessing, config("detection_preprocessing")
            ),
            postprocessing=post,
            detector=detector,
            recognition=recognition,
            alphabet=alphabet,
            grouping=grouping,
            orientation=packs.orientation_model(repository, pack),
        )

    def with_overrides(self, overrides: Mapping[str, Any]) -> PipelineSettings:
        """Settings for one request; unknown names, wrong types and raised limits are errors."""
        if not overrides:
            return self
        unknown = sorted(set(overrides) - REQUEST_PARAMETERS)
        if unknown:
            raise ValueError(
                f"unknown request parameters {unknown}; accepted: {sorted(REQUEST_PARAMETERS)}"
            )
        parts = {
            "preprocessing": self.preprocessing,
            "postprocessing": self.postprocessing,
            "detector": self.detector,
            "recognition": self.recognition,
            "grouping": self.grouping,
        }
        changed = {}
        for name, raw in overrides.items():
            owner = next((k for k, part in parts.items() if _has_field(part, name)), None)
            if owner is None:
                raise ValueError(f"request parameter {name!r} does not apply to this model pack")
            current = getattr(parts[owner], name)
            value = convert_value(str(raw), type(current), name)
            changed.setdefault(owner, {})[name] = value
        new = {k: dataclasses.replace(parts[k], **v) for k, v in changed.items()}
        pre = new.get("preprocessing", self.preprocessing)
        if (
            pre.max_side_len > self.preprocessing.max_side_len
            or pre.min_side_len > pre.max_side_len
        ):
            raise ValueError(
                f"request parameters must keep min_side_len <= max_side_len <= "
                f"{self.preprocessing.max_side_len} (the server's limit)"
            )
        return dataclasses.replace(self, **new)


def _has_field(obj: Any, name: str) -> bool:
    return any(f.name == name for f in dataclasses.fields(obj))


def decode_groups(
    groups: Sequence[tuple[list[int], np.ndarray]],
    results: Sequence[tuple[np.ndarray, np.ndarray]],
    count: int,
    alphabet: Sequence[str],
) -> list[tuple[str, float]]:
    """(text, confidence) per crop, in crop order, from each group's best path."""
    decoded: list[tuple[str, float]] = [("", 0.0)] * count
    for (indices, _), (best_class, best_score) in zip(groups, results, strict=True):
        for index, result in zip(
            indices, ctc_greedy_decode(best_class, best_score, alphabet), strict=True
        ):
            decoded[index] = result
    return decoded


async def orient_groups(
    groups: Groups,
    widths: Sequence[int],
    classify: AsyncClassify,
    model: packs.OrientationModel,
    threshold: float,
) -> Groups:
    """Each group's crops that the classifier finds upside down, turned back (one classifier
    call per group, all in flight together). `widths` are the crops' own widths, by index."""
    own = [[widths[i] for i in indices] for indices, _ in groups]
    inputs = [
        classifier_input(batch, w, model.height, model.width)
        for (_, batch), w in zip(groups, own, strict=True)
    ]
    probabilities = await classify(inputs)
    return [
        (indices, turn_over(batch, w, upside_down(p, threshold)))
        for (indices, batch), w, p in zip(groups, own, probabilities, strict=True)
    ]


async def read_image_async(
    data: bytes,
    settings: PipelineSettings,
    detect: AsyncDetect,
    recognize: AsyncRecognize,
    classify: AsyncClassify,
) -> Texts:
    """Encoded image -> texts, polygons (original pixels, reading order) and confidences.

    The two networks are awaited, so a caller reading several images at once (the `ocr`
    model, with async BLS) overlaps one image's network calls with another's Python work.
    """
    image = decode_image(data, settings.preprocessing.limits)
    if settings.postprocessing.single_line == "always":
        found = whole_image(image)  # the caller sent a crop: no detector call
    else:
        maps = await detect(detection_input(image, settings.preprocessing))
        found = detect_texts(maps, image, settings.postprocessing, settings.detector)
    if not found.crops:
        return Texts.empty()  # no recognizer call at all
    groups = recognition_groups(found.crops, settings.postprocessing, settings.group_size)
    if settings.grouping.classify_orientation:
        widths = crop_widths(found.crops, settings.postprocessing)
        threshold = settings.grouping.orientation_threshold
        groups = await orient_groups(groups, widths, classify, settings.orientation, threshold)
    results = await recognize([batch for _, batch in groups])
    decoded = decode_groups(groups, results, len(found.crops), settings.alphabet)
    return select_texts(decoded, found.quads, settings.recognition.text_score)


def read_image(
    data: bytes,
    settings: PipelineSettings,
    detect: Detect,
    recognize: Recognize,
    classify: Classify,
) -> Texts:
    """`read_image_async` with plain (blocking) network callables, for in-process use."""

    async def detect_now(tensor: np.ndarray) -> list[np.ndarray]:
        return detect(tensor)

    async def recognize_now(batches: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        return recognize(batches)

    async def classify_now(inputs: list[np.ndarray]) -> list[np.ndarray]:
        return classify(inputs)

    return asyncio.run(read_image_async(data, settings, detect_now, recognize_now, classify_now))
