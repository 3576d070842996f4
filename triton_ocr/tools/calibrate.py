"""`triton-ocr calibrate`: the INT8 ranges of a pack's recognizer, measured on the dev split.

The float pack with the same wheel reads the dev split's images in-process; every batch its
recognizer is sent is a calibration batch, and ONNX Runtime's calibration writes the ranges to
export/calibration/ (committed). Export builds the INT8 file from them alone, so it prints the
file's checksum for the pack's declaration (packs.Int8.sha256). Run it only on the dev split:
the report split measures the result (docs/benchmarks.md, "INT8: the ppocr-v6-int8 pack").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onnxruntime.quantization import CalibrationDataReader

from triton_ocr import contract
from triton_ocr.config.packs import PACK_LIST, pack_named
from triton_ocr.config.repository import Repository
from triton_ocr.export.ppocr import float_recognizer
from triton_ocr.export.quantize import CALIBRATION, with_int8_convolutions
from triton_ocr.tools.bench.networks import recorded_inputs
from triton_ocr.tools.evaluation.labels import DEV_SPLIT
from triton_ocr.tools.workload import real_images

# the dev split: ../shared/eval and the layout pages (the report split never calibrates)
DEV_FOLDERS = (DEV_SPLIT, Path("tests/data/layout"))


class Batches(CalibrationDataReader):
    """Recorded recognizer feeds, one calibration batch each."""

    def __init__(self, feeds: Sequence[dict[str, np.ndarray]]) -> None:
        self.feeds: Iterator[dict[str, np.ndarray]] = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)


@dataclass(frozen=True)
class Calibrated:
    ranges: Path
    batches: int
    rows: int
    sha256: str  # of the INT8 file export writes from these ranges


def float_pack(pack: str) -> str:
    """The pack serving `pack`'s networks in float: the same wheel, no INT8 file."""
    wheel = pack_named(pack).wheel
    return next(p.name for p in PACK_LIST if p.wheel == wheel and p.recognizer.int8 is None)


def calibrate(pack: str, repository: Path, folders: Sequence[Path]) -> Calibrated:
    """Measure `pack`'s INT8 recognizer ranges on `folders`' labelled images, read by its float
    pack from `repository` (exported), and write them where export reads them."""
    int8 = pack_named(pack).recognizer.int8
    if int8 is None:
        raise ValueError(f"pack {pack!r} has no INT8 recognizer")
    images = [data for _, data in real_images(folders)]
    if not images:
        raise ValueError(f"no labelled images in {', '.join(map(str, folders))}")
    feeds = recorded_inputs(Repository(repository, float_pack(pack)), images)
    batches = feeds[contract.TEXT_RECOGNITION]
    ranges = CALIBRATION / int8.ranges
    model = with_int8_convolutions(float_recognizer(pack), ranges, Batches(batches))
    digest = hashlib.sha256(model.SerializeToString()).hexdigest()
    rows = sum(next(iter(feed.values())).shape[0] for feed in batches)
    return Calibrated(ranges, len(batches), rows, digest)
