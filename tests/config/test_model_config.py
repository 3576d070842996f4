"""Triton's model config message without gRPC: what each Python stub that reads a config
file loads (fresh interpreters: the test process has gRPC loaded already)."""

import subprocess
import sys

STUB = """
import sys
from triton_ocr.config.repository import Repository
assert "grpc" not in sys.modules, "gRPC was loaded"
assert "tritonclient.grpc" not in sys.modules
"""

THEN_THE_CLIENT = """
from triton_ocr.config.model_config import ModelConfig
import tritonclient.grpc
from tritonclient.grpc import model_config_pb2
assert model_config_pb2.ModelConfig is ModelConfig
assert tritonclient.grpc.model_config_pb2 is model_config_pb2
"""

CLIENT_FIRST = """
from tritonclient.grpc import model_config_pb2
from triton_ocr.config.model_config import ModelConfig
assert model_config_pb2.ModelConfig is ModelConfig
"""


def run(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_reading_configs_does_not_load_grpc():
    run(STUB)


def test_the_clients_share_the_message_classes_whichever_comes_first():
    run(THEN_THE_CLIENT)
    run(CLIENT_FIRST)
