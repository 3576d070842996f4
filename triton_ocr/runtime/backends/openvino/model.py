"""A Python-based Triton backend named `openvino`, for servers without the C++ one
(backends/shim.py says how; engines.py which config parameters it reads)."""

from triton_ocr.runtime.backends.shim import NetworkModel


class TritonPythonModel(NetworkModel):
    backend = "openvino"
