"""Model packs: one model repository, one config variant per pack.

Every model folder holds `config.pbtxt` (the default pack, ppocr-v6: PP-OCRv6 small) and
`configs/<pack>.pbtxt` for the others (ppocr: PP-OCRv4 mobile, the lighter pack; east-str);
Triton picks the variant with `--model-config-name=<pack>`. The model.py adapters are shared;
what differs between packs (tensor names, parameters, model file names) is config data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format, text_format
from tritonclient.grpc import model_config_pb2

DEFAULT_PACK = "ppocr-v6"
PACKS = ("ppocr-v6", "ppocr", "east-str")


def config_path(repository: Path, model: str, pack: str = DEFAULT_PACK) -> Path:
    """The config file Triton reads for `model` when serving `pack`."""
    if pack not in PACKS:
        raise ValueError(f"unknown pack {pack!r}; choose from {list(PACKS)}")
    variant = repository / model / "configs" / f"{pack}.pbtxt"
    return (
        variant
        if pack != DEFAULT_PACK and variant.is_file()
        else repository / model / "config.pbtxt"
    )


def load_config(
    repository: Path, model: str, pack: str = DEFAULT_PACK
) -> model_config_pb2.ModelConfig:
    text = config_path(repository, model, pack).read_text()
    return text_format.Parse(text, model_config_pb2.ModelConfig())


def load_config_dict(repository: Path, model: str, pack: str = DEFAULT_PACK) -> dict:
    """The config as Triton hands it to a Python model (JSON-like dict, proto field names)."""
    proto = load_config(repository, model, pack)
    return json_format.MessageToDict(proto, preserving_proto_field_name=True)


def model_file(repository: Path, model: str, pack: str = DEFAULT_PACK) -> Path:
    """Where `model`'s file lives for `pack`: version 1, the config's default_model_filename."""
    config = load_config(repository, model, pack)
    return repository / model / "1" / (config.default_model_filename or "model.onnx")


def model_config_name(pack: str) -> str | None:
    """The value of tritonserver's --model-config-name for `pack` (None for the default)."""
    if pack not in PACKS:
        raise ValueError(f"unknown pack {pack!r}; choose from {list(PACKS)}")
    return None if pack == DEFAULT_PACK else pack


def recognizer_best_path(repository: Path, pack: str = DEFAULT_PACK) -> tuple[str, list[str]]:
    """text_recognition's input name and best-path output names, checked against its config."""
    from triton_ocr.export.recognizer_head import BEST_CLASS, BEST_SCORE

    config = load_config(repository, "text_recognition", pack)
    outputs = [BEST_CLASS, BEST_SCORE]
    missing = sorted(set(outputs) - {o.name for o in config.output})
    if missing:
        raise ValueError(f"text_recognition ({pack}) has no best-path outputs {missing}")
    return config.input[0].name, outputs


def check_group_size(repository: Path, pack: str, group_size: int) -> None:
    """Recognition groups must fit text_recognition's max_batch_size (when it batches)."""
    limit = load_config(repository, "text_recognition", pack).max_batch_size
    if group_size < 1 or (limit and group_size > limit):
        raise ValueError(
            f"recognition_group_size {group_size} must be between 1 and text_recognition's "
            f"max_batch_size {limit} ({pack})"
        )


ORIENTATION_MODEL = "text_orientation"


@dataclass(frozen=True)
class OrientationModel:
    """What callers of the 0/180-degree classifier need from its config."""

    input: str
    output: str  # [n, 2] class probabilities
    channels: int
    height: int
    width: int


def orientation_model(repository: Path, pack: str = DEFAULT_PACK) -> OrientationModel:
    """text_orientation's tensor names and input size ([n, C, H, W]), from its config."""
    config = load_config(repository, ORIENTATION_MODEL, pack)
    if len(config.input) != 1 or len(config.output) != 1:
        raise ValueError(f"{ORIENTATION_MODEL} ({pack}) must have one input and one output")
    (inp,), (out,) = config.input, config.output
    *_, channels, height, width = (int(d) for d in inp.dims)
    if min(channels, height, width) < 1:
        raise ValueError(f"{ORIENTATION_MODEL} ({pack}) needs a fixed [C, H, W] input size")
    return OrientationModel(inp.name, out.name, channels, height, width)
