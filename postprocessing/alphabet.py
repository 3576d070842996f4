"""The recognizer's class list, read from the recognizer's own ONNX file (one source of truth)."""

from __future__ import annotations

from pathlib import Path


def alphabet_from_metadata(
    characters: str, blank: str = "", append_space: bool = True
) -> list[str]:
    """Class list of a CTC recognizer: blank at index 0, the model's characters, optional space.

    `characters` is newline-separated, as PaddleOCR stores it in the ONNX metadata key
    `character`; PaddleOCR appends the space class after the dictionary.
    """
    chars = characters.split("\n")
    if chars and chars[-1] == "":
        chars = chars[:-1]
    return [blank, *chars, *([" "] if append_space else [])]


def latest_version_file(model_dir: Path, filename: str = "model.onnx") -> Path:
    """`<model_dir>/<highest version>/<filename>`, the version Triton's default policy serves."""
    versions = sorted(
        (int(p.name) for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit()), reverse=True
    )
    for version in versions:
        candidate = model_dir / str(version) / filename
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no {filename} under {model_dir}/<version>/ (run `triton-ocr export`)")


def load_alphabet(
    model_dir: Path, filename: str, metadata_key: str, append_space: bool
) -> list[str]:
    """Alphabet stored under `metadata_key` in the ONNX metadata of `model_dir`'s `filename`."""
    import onnxruntime as ort  # only needed at load time

    path = latest_version_file(Path(model_dir), filename)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    metadata = session.get_modelmeta().custom_metadata_map
    if metadata_key not in metadata:
        raise ValueError(f"{path} has no metadata key {metadata_key!r} holding the alphabet")
    alphabet = alphabet_from_metadata(metadata[metadata_key], append_space=append_space)
    classes = session.get_outputs()[0].shape[-1]
    if isinstance(classes, int) and classes != len(alphabet):
        raise ValueError(f"{path} outputs {classes} classes but its alphabet has {len(alphabet)}")
    return alphabet
