"""What a REST request uploads: its body read whole within a byte limit, and the files in it.

A body is either multipart/form-data (each `file` part one file) or one file sent raw with its
own Content-Type. Everything stays in memory, bounded by the limit (Starlette's form parser
would spool large parts to temporary files: nothing of a request is written to disk here).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from python_multipart.multipart import MultipartParser, parse_options_header

if TYPE_CHECKING:  # defined for type checkers only
    from python_multipart.multipart import MultipartCallbacks

FILE_FIELD = "file"
# what a raw body or a part may be: images, PDFs and TIFFs (the server tells them apart by
# their bytes), or bytes of no stated type
RAW_TYPES = ("image/", "application/pdf", "application/octet-stream")
# the uploads as the OpenAPI description gives them (every route that takes files)
REQUEST_BODY = {
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    FILE_FIELD: {"type": "array", "items": {"type": "string", "format": "binary"}}
                },
            }
        },
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
    }
}


class UploadError(ValueError):
    """The upload cannot be read: `status` is the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def bounded_body(chunks: AsyncIterator[bytes], declared: str | None, limit: int) -> bytes:
    """The body, refused (413) as soon as it is over `limit` bytes, by its Content-Length or
    while it arrives."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise UploadError(413, f"the body is {declared} bytes; at most {limit} per request")
    body = bytearray()
    async for chunk in chunks:
        body.extend(chunk)
        if len(body) > limit:
            raise UploadError(413, f"the body is over {limit} bytes, the most per request")
    return bytes(body)


def accepted(content_type: str) -> bool:
    return any(content_type.startswith(kind) for kind in RAW_TYPES)


def files_of(body: bytes, content_type: str | None) -> list[tuple[str | None, bytes]]:
    """The uploaded files as (name, bytes): the `file` parts of a multipart body, or the raw
    body. 415 for a type that is neither, 400 for a form without files or an empty body."""
    raw_kind, options = parse_options_header(content_type or "application/octet-stream")
    kind = raw_kind.decode("latin-1").lower()
    if kind == "multipart/form-data":
        boundary = options.get(b"boundary")
        if not boundary:
            raise UploadError(400, "multipart/form-data without a boundary")
        files = multipart_files(body, boundary)
        if not files:
            raise UploadError(400, f"the form has no {FILE_FIELD!r} part: send -F {FILE_FIELD}=@…")
        return files
    if not accepted(kind):
        raise UploadError(
            415,
            f"unsupported Content-Type {kind!r}: send an image, a PDF or a TIFF, raw or as "
            f"multipart/form-data {FILE_FIELD!r} parts",
        )
    if not body:
        raise UploadError(400, "the body is empty: send an image, a PDF or a TIFF")
    return [(None, body)]


def multipart_files(body: bytes, boundary: bytes) -> list[tuple[str | None, bytes]]:
    """The `file` parts of a multipart body (other fields are ignored), parsed in memory."""
    parts: list[tuple[dict[bytes, bytes], bytearray]] = []
    header: list[bytearray] = [bytearray(), bytearray()]

    def begin() -> None:
        parts.append(({}, bytearray()))

    def field_data(data: bytes, start: int, end: int) -> None:
        header[0].extend(data[start:end])

    def value_data(data: bytes, start: int, end: int) -> None:
        header[1].extend(data[start:end])

    def header_end() -> None:
        parts[-1][0][bytes(header[0]).lower()] = bytes(header[1])
        header[0].clear()
        header[1].clear()

    def part_data(data: bytes, start: int, end: int) -> None:
        parts[-1][1].extend(data[start:end])

    callbacks: MultipartCallbacks = {
        "on_part_begin": begin,
        "on_header_field": field_data,
        "on_header_value": value_data,
        "on_header_end": header_end,
        "on_part_data": part_data,
    }
    parser = MultipartParser(boundary, callbacks)
    try:
        parser.write(body)
        parser.finalize()
    except Exception as exc:  # python-multipart raises its own errors for malformed forms
        raise UploadError(400, f"malformed multipart/form-data: {exc}") from exc
    files = []
    for headers, data in parts:
        disposition, options = parse_options_header(headers.get(b"content-disposition", b""))
        if options.get(b"name") != FILE_FIELD.encode():
            continue
        filename = options.get(b"filename")
        files.append((filename.decode("utf-8", "replace") if filename else None, bytes(data)))
    return files
