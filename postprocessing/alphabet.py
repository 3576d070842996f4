"""The recognizer's class list from the text its ONNX file keeps in its metadata (the file is
read by triton_ocr.config: one source of truth)."""

from __future__ import annotations


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
