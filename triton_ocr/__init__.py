"""OCR service on NVIDIA Triton Inference Server.

Installed layout (one namespace): triton_ocr.preprocessing, triton_ocr.postprocessing,
triton_ocr.export, triton_ocr.client, plus the runtime and CLI in this package.
"""

__version__ = "0.1.0"
