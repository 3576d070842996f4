"""Triton's model config message (`ModelConfig`), without gRPC.

tritonclient ships it as generated code in `tritonclient.grpc.model_config_pb2`, but importing it
so runs the `tritonclient.grpc` package, which loads gRPC: ~4 MiB of private memory and ~12 MiB
of shared libraries in every Python stub that reads a config file, none of which a stub uses
(docs/benchmarks.md, "Where the memory goes"). The generated module needs only protobuf, so it is
loaded from its file under its own name; a later `import tritonclient.grpc` (the clients, the
tools) finds it there and shares its message classes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

MODULE = "tritonclient.grpc.model_config_pb2"


def _load() -> ModuleType:
    if MODULE in sys.modules:
        return sys.modules[MODULE]
    package = importlib.util.find_spec("tritonclient")
    if package is None or not package.submodule_search_locations:
        raise ImportError("tritonclient is not installed: it holds Triton's model config message")
    path = Path(package.submodule_search_locations[0]) / "grpc" / "model_config_pb2.py"
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[MODULE]
        raise
    return module


if TYPE_CHECKING:  # the type checker reads the generated stubs as they are
    from tritonclient.grpc.model_config_pb2 import ModelConfig as ModelConfig
else:
    ModelConfig = _load().ModelConfig
