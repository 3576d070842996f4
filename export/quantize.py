"""A network's convolutions at INT8: ONNX Runtime's static quantization from committed ranges.

The activation ranges are ONNX Runtime's own calibration cache (export/calibration/), written
once from the dev split by `triton-ocr calibrate` and committed: export needs no images, and
every export writes the same bytes, checked against the pack's checksum (packs.Int8) as a
wheel's are. The settings, chosen on the dev split (docs/benchmarks.md, "INT8: the
ppocr-v6-int8 pack"): only the convolutions, their inputs and weights quantized and not their
outputs or biases (OpenVINO fuses each into one INT8 convolution; ONNX Runtime's CPU provider
does not, so such a file runs on OpenVINO), weights per output channel (opset 13), activations
as unsigned 8 bits over the moving average of each batch's range (one outlying batch does not
widen every step).
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import onnx
from onnx import version_converter
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_static,
)

CALIBRATION = Path(__file__).parent / "calibration"
PER_CHANNEL_OPSET = 13  # QuantizeLinear's axis, for weights per output channel
QUANTIZED = ["Conv"]


class NoPreprocessingAdvice(logging.Filter):
    """ONNX Runtime's quantizer advises shape inference and graph optimisation first (on the root
    logger, every call): not for these files, which keep the graph their configs serve."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing" not in record.getMessage()


@contextlib.contextmanager
def without_preprocessing_advice() -> Iterator[None]:
    root = logging.getLogger()
    quiet = NoPreprocessingAdvice()
    root.addFilter(quiet)
    try:
        yield
    finally:
        root.removeFilter(quiet)


def with_int8_convolutions(
    model: onnx.ModelProto, ranges: Path, batches: CalibrationDataReader | None = None
) -> onnx.ModelProto:
    """`model` with its convolutions at INT8 (QDQ), from the calibration cache `ranges`. With
    `batches`, the ranges are measured on them first and written to `ranges`."""
    if batches is None and not ranges.is_file():
        raise FileNotFoundError(f"{ranges} is missing: no INT8 ranges (`triton-ocr calibrate`)")
    if batches is not None:
        ranges.unlink(missing_ok=True)
    model = version_converter.convert_version(model, PER_CHANNEL_OPSET)
    with (
        tempfile.TemporaryDirectory(prefix="triton-ocr-int8-") as folder,
        without_preprocessing_advice(),
    ):
        quantized = Path(folder) / "int8.onnx"
        quantize_static(
            model,
            quantized,
            batches,
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=QUANTIZED,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax,
            extra_options={
                "OpTypesToExcludeOutputQuantization": QUANTIZED,
                "QuantizeBias": False,
                "CalibMovingAverage": True,
            },
            calibration_cache_path=ranges,
        )
        return onnx.load(quantized)
