"""Client library for the OCR service: `OcrClient(url).read(image) -> list[TextLine]`.

Needs tritonclient, numpy and Pillow only (the base install, `pip install triton-ocr`; the
service is the `server` extra). `ImageDecodeError` is what its pre-check raises for an image the
server would refuse (a ValueError).
"""

from .ocr_client import ImageDecodeError, OcrClient, TextLine

__all__ = ["ImageDecodeError", "OcrClient", "TextLine"]
