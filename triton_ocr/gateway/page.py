"""The gateway's page for people (`/`), its API description for people (`/docs`), and
`POST /v1/preview`, which gives that page the pages it draws the boxes over.

Browsers draw neither TIFF nor PDF pages, and the page loads nothing from other hosts (no
pdf.js, no Swagger UI from a CDN), so the gateway decodes each page with the server's own decoder
(`preprocessing.documents.open_pages`, the server's limits, its PDF DPI, EXIF orientation
applied) and sends it scaled down as a JPEG data URL beside the size the server reads it at:
the boxes `/v1/ocr` returns are in that size's pixels, on the page as sent (a page the server
read turned is reported with its `rotation`, its boxes already turned back), so the page draws
them over the image in an SVG whose viewBox is that size. The files in static/ are plain HTML,
CSS and JavaScript, read once when the app is made.

Refusals are HTTPExceptions, which the app answers as problem+json like its own (app.py imports
this module, so nothing here imports app.py).
"""

from __future__ import annotations

import asyncio
import base64
import importlib.resources
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from triton_ocr import contract
from triton_ocr.client import AsyncOcrClient, ImageDecodeError
from triton_ocr.preprocessing.documents import Pages, open_pages
from triton_ocr.settings import Documents, ImageLimits

from .uploads import REQUEST_BODY, UploadError, bounded_body, files_of

PREVIEW_SIDE = 1600  # the longest side of a page's preview image, pixels
JPEG_QUALITY = 85
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
}
# the page and /docs load their own files only: scripts, styles and fetches from this origin,
# images from it or made in the page (data: previews, blob: downloads)
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
}
UPLOAD_BODY = {
    "requestBody": REQUEST_BODY,
    "parameters": [{"name": "pdf_dpi", "in": "query", "schema": {"type": "integer"}}],
}


def static_files() -> dict[str, tuple[bytes, str]]:
    """name -> (bytes, media type) of every file in static/ (package data)."""
    folder = importlib.resources.files("triton_ocr.gateway").joinpath("static")
    found = {}
    for entry in folder.iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in STATIC_TYPES:
            found[entry.name] = (entry.read_bytes(), STATIC_TYPES[suffix])
    return found


@dataclass(frozen=True)
class ServerReads:
    """How the server reads an upload: its decode limits and its documents' settings."""

    limits: ImageLimits
    documents: Documents


async def server_reads(client: AsyncOcrClient) -> ServerReads:
    """The server's limits and `ocr` documents settings (each asked once by the client): the
    preview reads pages as the server will."""
    try:
        limits = await client.limits(contract.OCR_MODEL)
        _, documents = await client.request_limits()
    except Exception as exc:  # noqa: BLE001 (any failure to ask is the service's)
        raise HTTPException(503, f"the service cannot be reached: {exc}") from exc
    return ServerReads(limits, documents)


def pdf_dpi(request: Request, default: int) -> int:
    given = request.query_params.getlist(contract.PDF_DPI)
    if not given:
        return default
    if len(given) > 1 or not given[0].strip().isdigit():
        raise HTTPException(400, f"pdf_dpi must be one whole number, not {', '.join(given)}")
    return int(given[0])


def data_url(image: np.ndarray) -> str:
    """A BGR page as a JPEG data URL, its longest side at most PREVIEW_SIDE."""
    height, width = image.shape[:2]
    scale = PREVIEW_SIDE / max(height, width)
    if scale < 1:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise HTTPException(500, "the preview could not be encoded")
    return "data:image/jpeg;base64," + base64.b64encode(encoded.tobytes()).decode("ascii")


def preview_dpi(size: tuple[int, int], dpi: int) -> int:
    """The DPI a PDF page of `size` pixels at `dpi` is rendered at for its preview: its longest
    side about PREVIEW_SIDE pixels, never finer than the server reads it."""
    return max(1, min(dpi, PREVIEW_SIDE * dpi // max(size)))


def preview_pages(data: bytes, reads: ServerReads, dpi: int, budget: int) -> list[dict]:
    """Each page of one upload: its number, the size the server reads it at (`dpi` for PDFs),
    and its image; or, for a page that cannot be read, why. At most `budget` pages: the server
    reads no more per request. One page is held decoded at a time."""
    with open_pages(data, reads.limits, reads.documents, dpi) as pages:
        if pages.count > budget:
            raise HTTPException(400, f"the upload holds over {reads.documents.max_pages} pages")
        kind, sizes = pages.kind, [pages.size(index) for index in range(pages.count)]
    opened: dict[int, Pages] = {}  # by the DPI pages are rendered at (one for most PDFs)
    found = []
    try:
        for index, (width, height) in enumerate(sizes):
            shown = preview_dpi((width, height), dpi) if kind == "pdf" else dpi
            if shown not in opened:
                documents = Documents(shown, max(shown, reads.documents.max_pdf_dpi), budget)
                opened[shown] = open_pages(data, reads.limits, documents, shown)
            page: dict[str, Any] = {"page": index + 1, "width": width, "height": height}
            try:
                page["image"] = data_url(opened[shown].page(index))
            except ImageDecodeError as exc:  # a page the server would not read either
                if kind == "image":
                    raise
                page["error"] = str(exc)
            found.append(page)
    finally:
        for pages in opened.values():
            pages.close()
    return found


def page_router() -> APIRouter:
    """The page at /, its files at /static/…, and /docs: no token (they hold no data)."""
    files = static_files()
    router = APIRouter(include_in_schema=False)

    def static(name: str) -> Response:
        data, media_type = files[name]
        return Response(data, media_type=media_type, headers=SECURITY_HEADERS)

    @router.get("/")
    async def index() -> Response:
        return static("index.html")

    @router.get("/docs")
    async def docs() -> Response:
        """The endpoints and their parameters, read from /openapi.json by docs.js."""
        return static("docs.html")

    @router.get("/static/{name}")
    async def asset(name: str) -> Response:
        if name not in files:
            raise HTTPException(404, "Not Found")
        return static(name)

    return router


def preview_router(
    next_client: Callable[[], AsyncOcrClient], max_body_bytes: int | None
) -> APIRouter:
    """POST /v1/preview, the page's view of an upload (bodies up to `max_body_bytes`; None: the
    server's max_image_bytes, as for /v1/ocr); the app adds its dependencies (the token)."""
    router = APIRouter()

    @router.post("/v1/preview", openapi_extra=UPLOAD_BODY)
    async def preview(request: Request) -> Response:
        """The uploaded files' pages as the server reads them, for display: per file
        {"file", "pages": [{"page", "width", "height", "image"}]} (a list for several files;
        "image" a JPEG data URL at most 1600 pixels on its longest side, "width" and "height"
        the size of the page /v1/ocr's boxes refer to; a document's page that cannot be read
        has "error" instead of "image"). The same uploads, body limit and `pdf_dpi` as
        /v1/ocr; other query parameters are ignored."""
        reads = await server_reads(next_client())
        dpi = pdf_dpi(request, reads.documents.pdf_dpi)
        limit = max_body_bytes or reads.limits.max_image_bytes
        try:
            body = await bounded_body(
                request.stream(), request.headers.get("content-length"), limit
            )
            uploads = files_of(body, request.headers.get("content-type"))
        except UploadError as exc:
            raise HTTPException(exc.status, str(exc)) from exc
        budget = reads.documents.max_pages
        found = []
        for name, data in uploads:
            try:
                pages = await asyncio.to_thread(preview_pages, data, reads, dpi, budget)
            except ImageDecodeError as exc:  # what the server's decoder refuses
                raise HTTPException(400, str(exc)) from exc
            budget -= len(pages)
            found.append({"file": name, "pages": pages})
        return JSONResponse(found[0] if len(found) == 1 else found)

    return router
