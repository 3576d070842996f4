"""Read the repository's config.pbtxt files as Triton does (protobuf text format)."""

from pathlib import Path

from google.protobuf import json_format, text_format
from tritonclient.grpc import model_config_pb2

REPOSITORY = Path(__file__).resolve().parents[2] / "repository"


def load_config(model: str) -> model_config_pb2.ModelConfig:
    text = (REPOSITORY / model / "config.pbtxt").read_text()
    return text_format.Parse(text, model_config_pb2.ModelConfig())


def config_dict(model: str) -> dict:
    """The config as the Python backend receives it (JSON field names)."""
    return json_format.MessageToDict(load_config(model), preserving_proto_field_name=True)
