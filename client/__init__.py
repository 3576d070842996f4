"""Client library for the OCR service: `OcrClient(url).read(image) -> list[TextLine]`, and
`read_document(path) -> Document` for PDFs and multi-page TIFFs (pages, lines, words; as JSON
with `to_dict()`, as hOCR with `to_hocr()`); `AsyncOcrClient` is the same for asyncio.

Needs tritonclient, numpy and Pillow only (the base install, `pip install triton-ocr`; the
service is the `server` extra). `ImageDecodeError` is what its pre-check raises for an image the
server would refuse (a ValueError); `ServerOverloaded` what a read raises when the server refused
it as overloaded until its deadline; `WrongAddress` what the first call raises when the address
answers the other protocol (Triton's gRPC port for HTTP, or the reverse) or is not Triton's.
`overlay.draw_overlay` draws a page's result on its image.
"""

from .address import WrongAddress
from .async_client import AsyncOcrClient
from .ocr_client import DocumentGiven, ImageDecodeError, OcrClient, ServerOverloaded
from .results import Document, Page, TextLine, Word, parse_ocr_outputs

__all__ = [
    "AsyncOcrClient",
    "Document",
    "DocumentGiven",
    "ImageDecodeError",
    "OcrClient",
    "Page",
    "ServerOverloaded",
    "TextLine",
    "Word",
    "WrongAddress",
    "parse_ocr_outputs",
]
