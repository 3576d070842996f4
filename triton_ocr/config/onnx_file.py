"""What a served ONNX file says about itself, read without a runtime: its metadata and its
outputs' shapes.

The steps that only need the recognizer's alphabet (`ocr`, grouped_recognition) used to
open the file in an ONNX Runtime session for it, which left ~20 MiB more in each of their stub
processes for as long as they ran (docs/benchmarks.md, "Where the memory goes"). protobuf
(tritonclient's gRPC dependency) reads the few fields of onnx.proto declared here; everything
else, the weights included, is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

# (message, [(field, number, type, repeated, message type)]) of onnx.proto (proto2), only the
# fields read here: ModelProto.graph and .metadata_props, GraphProto.output, and a value's shape
_STRING, _INT64, _MESSAGE = (
    descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
)
_MESSAGES = (
    ("Entry", [("key", 1, _STRING, False, ""), ("value", 2, _STRING, False, "")]),
    ("Dimension", [("dim_value", 1, _INT64, False, ""), ("dim_param", 2, _STRING, False, "")]),
    ("Shape", [("dim", 1, _MESSAGE, True, "Dimension")]),
    ("Tensor", [("shape", 2, _MESSAGE, False, "Shape")]),
    ("Type", [("tensor_type", 1, _MESSAGE, False, "Tensor")]),
    ("Value", [("name", 1, _STRING, False, ""), ("type", 2, _MESSAGE, False, "Type")]),
    ("Graph", [("output", 12, _MESSAGE, True, "Value")]),
    (
        "Model",
        [("graph", 7, _MESSAGE, False, "Graph"), ("metadata_props", 14, _MESSAGE, True, "Entry")],
    ),
)
_PACKAGE = "triton_ocr_onnx_file"


@cache
def _model_class() -> Any:
    proto = descriptor_pb2.FileDescriptorProto(
        name=f"{_PACKAGE}.proto", package=_PACKAGE, syntax="proto2"
    )
    repeated, optional = (
        descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
        descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    for name, fields in _MESSAGES:
        message = proto.message_type.add(name=name)
        for field, number, kind, many, of in fields:
            message.field.add(
                name=field,
                number=number,
                type=kind,
                label=repeated if many else optional,
                **({"type_name": f".{_PACKAGE}.{of}"} if of else {}),
            )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Model"))


@dataclass(frozen=True)
class OnnxFile:
    metadata: dict[str, str]
    # each output's dims in order: an int where fixed, None where dynamic
    outputs: tuple[tuple[int | None, ...], ...]


def read_onnx_file(path: Path) -> OnnxFile:
    """`path`'s metadata and output shapes; ValueError if it is not an ONNX model."""
    try:
        model = _model_class().FromString(Path(path).read_bytes())
    except DecodeError as error:
        raise ValueError(f"{path} is not an ONNX model: {error}") from error
    outputs = tuple(
        tuple(
            d.dim_value if d.HasField("dim_value") else None
            for d in value.type.tensor_type.shape.dim
        )
        for value in model.graph.output
    )
    return OnnxFile({p.key: p.value for p in model.metadata_props}, outputs)
