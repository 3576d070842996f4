"""`Repository(path, pack)`: a model repository's configs read for one pack.

The one place that turns config.pbtxt files (and the recognizer's ONNX metadata) into what
code needs: each step's settings objects, tensor names, model files, the alphabet, and the
whole pipeline's settings, which the `ocr` model and the in-process floor use alike.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import UnionType
from typing import Any, TypeVar, cast, overload

from google.protobuf import json_format, text_format

from triton_ocr import contract
from triton_ocr.config.model_config import ModelConfig
from triton_ocr.config.onnx_file import read_onnx_file
from triton_ocr.config.packs import DEFAULT_PACK, check_pack, config_path
from triton_ocr.config.parse import config_parameters, parse_groups, raw_parameters
from triton_ocr.postprocessing.alphabet import alphabet_from_metadata
from triton_ocr.settings import (
    DETECTORS,
    Blocks,
    Bls,
    Boxes,
    ClassifierInput,
    DetectorInput,
    Documents,
    Grouping,
    ImageLimits,
    ManyImages,
    Orientation,
    PageOrientation,
    PipelineSettings,
    RecognizerInput,
    Tables,
    TextFilter,
    TextLines,
    WordBoxes,
)


@dataclasses.dataclass(frozen=True)
class Pack:
    """Which config variant a Python model's config belongs to: a model that reads other
    models' configs (`ocr`, detection_preprocessing, grouped_recognition) reads this pack's."""

    pack: str


@dataclasses.dataclass(frozen=True)
class AlphabetSource:
    """Where the recognizer's ONNX file (text_recognition's) keeps its class list."""

    alphabet_metadata_key: str
    append_space: bool  # PaddleOCR appends a space class after its dictionary


@dataclasses.dataclass(frozen=True)
class Admission:
    """ensemble_model's bound on the requests inside it (its own config's parameters): its first
    step admits a request only while fewer than this many are between that step and the last
    (runtime/gate.py), so the work waiting inside the ensemble is bounded as `ocr`'s queue is.
    Each instance of that step holds a gate of its own (it has one)."""

    max_in_flight: int

    def __post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, not {self.max_in_flight}")


# Each Python model's `parameters`, as settings objects; detection_postprocessing also takes
# the box settings of its `detector` (TextLines.detector).
STEP_SETTINGS: dict[str, tuple[type, ...]] = {
    contract.DETECTION_PREPROCESSING: (Pack, ImageLimits, DetectorInput, PageOrientation),
    contract.DETECTION_POSTPROCESSING: (TextLines, RecognizerInput, Blocks),
    contract.GROUPED_RECOGNITION: (Pack, Grouping, Orientation, Bls, TextFilter, AlphabetSource),
    contract.OCR_MODEL: (Pack, ManyImages, ImageLimits, Documents, WordBoxes, Tables),
}


def as_given(config: ModelConfig) -> dict[str, Any]:
    """A config as Triton hands it to a Python model (JSON-like dict, proto field names)."""
    return cast(
        "dict[str, Any]", json_format.MessageToDict(config, preserving_proto_field_name=True)
    )


T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class StepSettings:
    """A Python model's settings objects (its STEP_SETTINGS), each found by its class, not by
    its place: `settings[ImageLimits]`; `settings[Boxes]`, the detector's (DBBoxes or
    EASTBoxes, as the config's `detector` says)."""

    model: str
    found: tuple[Any, ...]

    @overload
    def __getitem__(self, kind: type[T]) -> T: ...
    @overload
    def __getitem__(self, kind: UnionType) -> Any: ...
    def __getitem__(self, kind: Any) -> Any:
        matches = [each for each in self.found if isinstance(each, kind)]
        if len(matches) != 1:
            name = getattr(kind, "__name__", str(kind))
            raise KeyError(f"{self.model}'s config has no {name} settings")
        return matches[0]


def agreed_limits(first_steps: Mapping[str, StepSettings]) -> ImageLimits:
    """The decode limits that the entry points' first models (contract.ENTRY_STEPS, each's
    settings) state alike: both entry points must read an image alike."""
    found = {step: first_steps[step][ImageLimits] for step in contract.ENTRY_STEPS.values()}
    if len(set(found.values())) > 1:
        raise ValueError(f"the entry points' decode limits differ: {found}")
    return found[contract.ENTRY_STEPS[contract.OCR_MODEL]]


def step_settings(model: str, model_config: Mapping[str, Any] | str) -> StepSettings:
    """The settings objects of Python model `model` from its config (as Triton passes it, JSON
    text, or a dict)."""
    parameters = config_parameters(model_config)
    classes = STEP_SETTINGS[model]
    if model == contract.DETECTION_POSTPROCESSING:
        detector = raw_parameters(parameters).get("detector", "")
        if detector not in DETECTORS:
            raise ValueError(
                f"parameter 'detector' must be one of {sorted(DETECTORS)}, not {detector!r}"
            )
        classes = (*classes, DETECTORS[detector])
    return StepSettings(model, parse_groups(parameters, *classes))


def pack_of(model_config: Mapping[str, Any] | str) -> str:
    """The `pack` parameter of a Python model's config."""
    pack = raw_parameters(config_parameters(model_config)).get("pack")
    if pack is None:
        raise ValueError("the model's config has no 'pack' parameter")
    return pack


@dataclasses.dataclass(frozen=True)
class ClassifierModel:
    """What callers of the orientation classifier need from its config."""

    input: str
    output: str  # [n, classes] class probabilities
    size: ClassifierInput


@dataclasses.dataclass(frozen=True)
class Repository:
    path: Path
    pack: str = DEFAULT_PACK

    def __post_init__(self) -> None:
        check_pack(self.pack)

    @classmethod
    def of_model(cls, args: Mapping[str, Any]) -> Repository:
        """The repository a Python model was loaded from (its `initialize` args), for the pack
        its config names."""
        return cls(Path(args["model_repository"]).parent, pack_of(args["model_config"]))

    # --- configs and files ---------------------------------------------------------------

    def config_path(self, model: str) -> Path:
        return config_path(self.path, model, self.pack)

    def config(self, model: str) -> ModelConfig:
        text = self.config_path(model).read_text()
        return text_format.Parse(text, ModelConfig())

    def config_dict(self, model: str) -> dict[str, Any]:
        """The config as Triton hands it to a Python model (JSON-like dict, proto field names)."""
        return as_given(self.config(model))

    def write_config(self, model: str, config: ModelConfig) -> None:
        """Replace `model`'s config for this pack (tools edit copies of a repository)."""
        self.config_path(model).write_text(text_format.MessageToString(config))

    def copy_to(self, target: Path) -> Repository:
        """A copy of the whole repository (configs and model files) at `target`, same pack."""
        shutil.copytree(self.path, target, ignore=shutil.ignore_patterns("__pycache__"))
        return Repository(target, self.pack)

    def model_file(self, model: str) -> Path:
        """Where `model`'s file lives: version 1, the config's default_model_filename."""
        name = self.config(model).default_model_filename or "model.onnx"
        return self.path / model / "1" / name

    def step(self, model: str) -> StepSettings:
        """The settings objects of a Python model of this pack (see STEP_SETTINGS)."""
        return step_settings(model, self.config_dict(model))

    # --- tensor names --------------------------------------------------------------------

    def detector_tensors(self) -> tuple[str, list[str]]:
        """text_detection's input name and output names (in the config's order)."""
        config = self.config(contract.TEXT_DETECTION)
        return config.input[0].name, [o.name for o in config.output]

    def recognizer_tensors(self) -> tuple[str, list[str]]:
        """text_recognition's input name and best-path output names, checked in its config."""
        config = self.config(contract.TEXT_RECOGNITION)
        outputs = [contract.BEST_CLASS, contract.BEST_SCORE]
        missing = sorted(set(outputs) - {o.name for o in config.output})
        if missing:
            raise ValueError(f"text_recognition ({self.pack}) has no best-path outputs {missing}")
        return config.input[0].name, outputs

    def classifier(self, model: str = contract.TEXT_ORIENTATION) -> ClassifierModel:
        """A classifier's tensor names and input size ([n, C, H, W]), from its config: the
        line classifier text_orientation, or the page classifier page_orientation."""
        config = self.config(model)
        if len(config.input) != 1 or len(config.output) != 1:
            raise ValueError(f"{model} ({self.pack}) must have one input and one output")
        (inp,), (out,) = config.input, config.output
        *_, channels, height, width = (int(d) for d in inp.dims)
        if min(channels, height, width) < 1:
            raise ValueError(f"{model} ({self.pack}) needs a fixed [C, H, W] input size")
        return ClassifierModel(inp.name, out.name, ClassifierInput(channels, height, width))

    # --- settings ------------------------------------------------------------------------

    def check_group_size(self, grouping: Grouping) -> None:
        """Recognition groups must fit text_recognition's max_batch_size (when it batches)."""
        size = grouping.recognition_group_size
        limit = self.config(contract.TEXT_RECOGNITION).max_batch_size
        if size < 1 or (limit and size > limit):
            raise ValueError(
                f"recognition_group_size {size} must be between 1 and text_recognition's "
                f"max_batch_size {limit} ({self.pack})"
            )

    def alphabet(self, source: AlphabetSource) -> list[str]:
        """The recognizer's class list, from its ONNX file's metadata (one source of truth)."""
        path = self.model_file(contract.TEXT_RECOGNITION)
        if not path.is_file():
            raise FileNotFoundError(f"no {path} (run `triton-ocr export {self.pack}`)")
        found = read_onnx_file(path)
        key = source.alphabet_metadata_key
        if key not in found.metadata:
            raise ValueError(f"{path} has no metadata key {key!r} holding the alphabet")
        alphabet = alphabet_from_metadata(found.metadata[key], append_space=source.append_space)
        classes = found.outputs[0][-1] if found.outputs and found.outputs[0] else None
        if classes is not None and classes != len(alphabet):
            raise ValueError(
                f"{path} outputs {classes} classes but its alphabet has {len(alphabet)}"
            )
        return alphabet

    def admission(self) -> Admission:
        """ensemble_model's bound on requests in flight, stated in its own config."""
        admission: Admission
        (admission,) = parse_groups(
            config_parameters(self.config_dict(contract.ENSEMBLE_MODEL)), Admission
        )
        return admission

    def bls(self) -> Bls:
        """The BLS timeout, stated once in grouped_recognition's config."""
        return self.step(contract.GROUPED_RECOGNITION)[Bls]

    def image_limits(self) -> ImageLimits:
        """The decode limits, which each entry point's first model states (contract.ENTRY_STEPS:
        its clients read them there)."""
        return agreed_limits({step: self.step(step) for step in contract.ENTRY_STEPS.values()})

    def pipeline_settings(self, alphabet: Sequence[str] | None = None) -> PipelineSettings:
        """Every setting of the ensemble's steps for this pack: what `ocr` and the in-process
        floor run with, so they read every image as `ensemble_model` does. `alphabet`: the
        recognizer's classes when known (tests); by default read from its ONNX file."""
        first = self.step(contract.DETECTION_PREPROCESSING)
        detector_input, page = first[DetectorInput], first[PageOrientation]
        located = self.step(contract.DETECTION_POSTPROCESSING)
        lines, recognizer_input = located[TextLines], located[RecognizerInput]
        blocks, boxes = located[Blocks], located[Boxes]
        grouped = self.step(contract.GROUPED_RECOGNITION)
        grouping, orientation = grouped[Grouping], grouped[Orientation]
        text_filter, source = grouped[TextFilter], grouped[AlphabetSource]
        whole = self.step(contract.OCR_MODEL)
        documents, words, tables = whole[Documents], whole[WordBoxes], whole[Tables]
        limits = agreed_limits({contract.DETECTION_PREPROCESSING: first, contract.OCR_MODEL: whole})
        self.check_group_size(grouping)
        return PipelineSettings(
            limits=limits,
            detector_input=detector_input,
            page_orientation=page,
            page_classifier_input=self.classifier(contract.PAGE_ORIENTATION).size,
            boxes=boxes,
            blocks=blocks,
            lines=lines,
            recognizer_input=recognizer_input,
            grouping=grouping,
            orientation=orientation,
            classifier_input=self.classifier().size,
            text_filter=text_filter,
            alphabet=tuple(self.alphabet(source) if alphabet is None else alphabet),
            documents=documents,
            words=words,
            tables=tables,
        )

    def missing_files(self) -> list[Path]:
        """The model files this pack still lacks (empty: ready to serve)."""
        return [path for path in map(self.model_file, contract.NETWORKS) if not path.is_file()]
