"""Check an exported ONNX file against the config that will serve it, before it is installed.

Triton's C++ ONNX Runtime backend (the NGC container's) refuses to load a model whose tensors
disagree with its config, while the local Python stand-in would fail only at the first request,
or inside the ensemble at the next model. So every export checks, with the C++ backend's rules
(onnxruntime_backend's ValidateInputs/ValidateOutputs): the input names are the config's, every
config output exists, data types match, ranks match (a batch dimension first when
max_batch_size > 0, dynamic in the file), an input's fixed dims equal the config's, an output's
dims equal the config's one for one (-1 where the file's is dynamic). Then one inference on a
small input built by the pipeline's own preprocessing, whose outputs must have the ranks and
fixed dims of the config and of the next model in the ensemble that reads them. A recognizer
must also hold its alphabet in its metadata, one class for each of its output's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tritonclient.grpc import model_config_pb2

from triton_ocr import contract
from triton_ocr.config.repository import AlphabetSource, Repository
from triton_ocr.postprocessing.alphabet import alphabet_from_metadata
from triton_ocr.preprocessing.detection import detection_input
from triton_ocr.preprocessing.page_orientation import page_classifier_input
from triton_ocr.preprocessing.recognition import recognizer_rows, whole_batch
from triton_ocr.settings import DetectorInput, PageOrientation, RecognizerInput

DYNAMIC = -1

# ONNX Runtime's tensor types -> Triton config data types (those these models can use)
TRITON_TYPES = {
    "tensor(float)": "TYPE_FP32",
    "tensor(float16)": "TYPE_FP16",
    "tensor(double)": "TYPE_FP64",
    "tensor(int64)": "TYPE_INT64",
    "tensor(int32)": "TYPE_INT32",
    "tensor(int8)": "TYPE_INT8",
    "tensor(uint8)": "TYPE_UINT8",
    "tensor(bool)": "TYPE_BOOL",
    "tensor(string)": "TYPE_STRING",
}


class ExportCheckError(ValueError):
    """The exported file disagrees with the config that would serve it."""


@dataclass(frozen=True)
class Tensor:
    name: str
    data_type: str  # Triton's name, e.g. TYPE_FP32
    shape: tuple[int, ...]  # -1 where dynamic


def show(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def matches(shape: Sequence[int], pattern: Sequence[int]) -> bool:
    """`shape` has `pattern`'s rank and its dims wherever the pattern's are not dynamic."""
    return len(shape) == len(pattern) and all(
        p in (DYNAMIC, s) for s, p in zip(shape, pattern, strict=True)
    )


def file_tensors(session) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The inputs and outputs as ONNX Runtime loads them (what Triton's backend compares: the
    file's declared shapes merged with ONNX Runtime's shape inference)."""

    def tensor(arg) -> Tensor:
        dims = tuple(d if isinstance(d, int) else DYNAMIC for d in arg.shape)
        return Tensor(arg.name, TRITON_TYPES.get(arg.type, arg.type), dims)

    inputs = {arg.name: tensor(arg) for arg in session.get_inputs()}
    return inputs, {arg.name: tensor(arg) for arg in session.get_outputs()}


def config_tensors(config, kind: str) -> dict[str, Tensor]:
    """The config's `input` or `output` tensors, with the batch dimension when it batches."""
    batch = (DYNAMIC,) if config.max_batch_size > 0 else ()
    return {
        t.name: Tensor(t.name, model_config_pb2.DataType.Name(t.data_type), batch + tuple(t.dims))
        for t in getattr(config, kind)
    }


def declared_problems(
    inputs: dict[str, Tensor], outputs: dict[str, Tensor], config, where: str
) -> list[str]:
    """What the C++ ONNX Runtime backend would refuse at load time."""
    problems = []
    expected_inputs = config_tensors(config, "input")
    if set(inputs) != set(expected_inputs):
        problems.append(
            f"{where}: inputs {sorted(inputs)} in the file, {sorted(expected_inputs)} in the config"
        )
    pairs = [("input", name, t, inputs.get(name)) for name, t in expected_inputs.items()]
    pairs += [
        ("output", name, t, outputs.get(name))
        for name, t in config_tensors(config, "output").items()
    ]
    for kind, name, want, have in pairs:
        if have is None:
            if kind == "output":
                problems.append(
                    f"{where}: output {name!r} is not in the file (it has {sorted(outputs)})"
                )
            continue
        if have.data_type != want.data_type:
            problems.append(
                f"{where}: {kind} {name!r} is {have.data_type} in the file, "
                f"{want.data_type} in the config"
            )
        if config.max_batch_size > 0 and (not have.shape or have.shape[0] != DYNAMIC):
            problems.append(
                f"{where}: {kind} {name!r} has shape {show(have.shape)} in the file; the config "
                f"batches (max_batch_size {config.max_batch_size}), so its first dim must be "
                "dynamic"
            )
        if len(have.shape) != len(want.shape):
            problems.append(
                f"{where}: {kind} {name!r} has rank {len(have.shape)} {show(have.shape)} in the "
                f"file; the config expects rank {len(want.shape)} {show(want.shape)}"
            )
            continue
        # outputs must match dim for dim, inputs wherever the file's dims are fixed
        fits = have.shape == want.shape if kind == "output" else matches(want.shape, have.shape)
        if not fits:
            problems.append(
                f"{where}: {kind} {name!r} has shape {show(have.shape)} in the file; the config "
                f"expects {show(want.shape)}"
            )
    return problems


def sample_image() -> np.ndarray:
    """A small BGR page: white with a dark bar, so detectors have something to score."""
    image = np.full((96, 160, 3), 255, dtype=np.uint8)
    image[40:56, 16:144] = 20
    return image


def detector_sample(repository: Path, pack: str) -> np.ndarray:
    detector = Repository(repository, pack).step(contract.DETECTION_PREPROCESSING)[DetectorInput]
    return detection_input(sample_image(), detector)


def recognizer_sample(repository: Path, pack: str) -> np.ndarray:
    recognizer = Repository(repository, pack).step(contract.DETECTION_POSTPROCESSING)[
        RecognizerInput
    ]
    crops = [sample_image()[30:66, :], sample_image()[36:60, 8:100]]  # two widths: a real batch
    rows, _, padded = recognizer_rows(crops, recognizer)
    return whole_batch(rows, padded, recognizer)


def classifier_sample(repository: Path, pack: str) -> np.ndarray:
    size = Repository(repository, pack).classifier().size
    return np.zeros((2, size.channels, size.height, size.width), dtype=np.float32)


def page_classifier_sample(repository: Path, pack: str) -> np.ndarray:
    settings = Repository(repository, pack)
    page = settings.step(contract.DETECTION_PREPROCESSING)[PageOrientation]
    size = settings.classifier(contract.PAGE_ORIENTATION).size
    return page_classifier_input(sample_image(), page, size)


# the model's input as the pipeline builds it (one input each)
SAMPLES: dict[str, Callable[[Path, str], np.ndarray]] = {
    contract.TEXT_DETECTION: detector_sample,
    contract.TEXT_RECOGNITION: recognizer_sample,
    contract.TEXT_ORIENTATION: classifier_sample,
    contract.PAGE_ORIENTATION: page_classifier_sample,
}


def readers(repository: Path, pack: str, model: str) -> dict[str, tuple[str, Tensor]]:
    """model output -> (model, its input) that reads it next in the ensemble."""
    configs = Repository(repository, pack)
    ensemble = configs.config(contract.ENSEMBLE_MODEL)
    steps = ensemble.ensemble_scheduling.step
    produced = {
        tensor: output
        for step in steps
        if step.model_name == model
        for output, tensor in step.output_map.items()
    }
    found = {}
    for step in steps:
        for name, tensor in step.input_map.items():
            if tensor in produced:
                inputs = config_tensors(configs.config(step.model_name), "input")
                found[produced[tensor]] = (step.model_name, inputs[name])
    return found


def inference_problems(session, repository: Path, pack: str, model: str, config, where: str):
    """Run the file once on the pipeline's own input and check what comes out."""
    import onnxruntime as ort

    sample = SAMPLES[model](repository, pack)
    wanted = config_tensors(config, "output")
    try:
        (input_name,) = [i.name for i in session.get_inputs()]
        names = [name for name in wanted if name in {o.name for o in session.get_outputs()}]
        results = session.run(names, {input_name: sample})
    except Exception as exc:  # noqa: BLE001 - whatever ONNX Runtime raises, say it
        return [
            f"{where}: onnxruntime {ort.__version__} could not run it on a "
            f"{show(sample.shape)} input: {exc}"
        ]
    problems = []
    next_models = readers(repository, pack, model)
    for name, value in zip(names, results, strict=True):
        expectations = [("the config", wanted[name])]
        if name in next_models:
            reader, tensor = next_models[name]
            expectations.append((f"{reader}'s input {tensor.name!r}", tensor))
        for who, want in expectations:
            if not matches(value.shape, want.shape):
                problems.append(
                    f"{where}: output {name!r} came out {show(value.shape)} for a "
                    f"{show(sample.shape)} input; {who} expects {show(want.shape)}"
                )
    return problems


def alphabet_problems(session, repository: Path, pack: str, config, where: str) -> list[str]:
    """The recognizer's metadata must hold its class list where grouped_recognition
    reads it (Repository.alphabet, at load), one class per class of its first output."""
    source = Repository(repository, pack).step(contract.GROUPED_RECOGNITION)[AlphabetSource]
    key = source.alphabet_metadata_key
    metadata = session.get_modelmeta().custom_metadata_map
    if key not in metadata:
        return [f"{where}: no metadata key {key!r} holding the alphabet"]
    alphabet = alphabet_from_metadata(metadata[key], append_space=source.append_space)
    classes = config.output[0].dims[-1]
    if classes != len(alphabet):
        return [
            f"{where}: its alphabet ({key!r}) gives {len(alphabet)} classes; "
            f"the config's output {config.output[0].name!r} has {classes}"
        ]
    return []


def check_model(path: Path, repository: Path, model: str, pack: str) -> list[str]:
    """Every disagreement between `path` and `model`'s config for `pack` (empty: it fits)."""
    import onnxruntime as ort

    config = Repository(repository, pack).config(model)
    where = f"{model} ({pack}, {path.name.removesuffix('.partial')})"
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - whatever ONNX Runtime raises, say it
        return [f"{where}: onnxruntime {ort.__version__} cannot load it: {exc}"]
    problems = declared_problems(*file_tensors(session), config, where)
    if problems:  # no point running a file the server would not load
        return problems
    if model == contract.TEXT_RECOGNITION:
        problems = alphabet_problems(session, repository, pack, config, where)
    return problems + inference_problems(session, repository, pack, model, config, where)


def install(partial: Path, repository: Path, model: str, pack: str) -> Path:
    """Check `partial` and move it to where `model`'s config says it lives (atomically, so a
    running server never sees half a file); a file that does not fit is deleted, never moved."""
    target = Repository(repository, pack).model_file(model)
    problems = check_model(partial, repository, model, pack)
    if problems:
        partial.unlink(missing_ok=True)
        raise ExportCheckError(
            "the exported model does not fit its config, so it was not written:\n  "
            + "\n  ".join(problems)
        )
    partial.replace(target)
    return target


def partial_path(repository: Path, model: str, pack: str) -> Path:
    """Where an export writes `model`'s file before `install` checks it."""
    target = Repository(repository, pack).model_file(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(target.name + ".partial")
