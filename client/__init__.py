"""Client library for the OCR service: `OcrClient(url).read(image) -> list[TextLine]`."""

from .ocr_client import OcrClient, TextLine

__all__ = ["OcrClient", "TextLine"]
