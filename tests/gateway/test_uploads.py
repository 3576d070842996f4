"""The gateway's request reading without a server: bodies within their limit, multipart parts
in memory, query parameters as the `ocr` entry point wants them."""

from __future__ import annotations

import asyncio

import pytest

from triton_ocr.gateway.app import Problem, Query, query_parameters, query_value
from triton_ocr.gateway.uploads import UploadError, bounded_body, files_of


async def chunks(*parts: bytes):
    for part in parts:
        yield part


def test_a_body_over_its_limit_is_refused_by_length_or_as_it_arrives():
    assert asyncio.run(bounded_body(chunks(b"ab", b"cd"), "4", 4)) == b"abcd"
    for declared in ("5", None):
        with pytest.raises(UploadError) as refused:
            asyncio.run(bounded_body(chunks(b"abc", b"de"), declared, 4))
        assert refused.value.status == 413


def form(*parts: tuple[str, str | None, bytes]) -> tuple[bytes, str]:
    body = b""
    for name, filename, data in parts:
        named = f'; filename="{filename}"' if filename else ""
        body += (
            f'--XyZ\r\nContent-Disposition: form-data; name="{name}"{named}\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    return body + b"--XyZ--\r\n", "multipart/form-data; boundary=XyZ"


def test_multipart_file_parts_are_read_in_memory_and_other_fields_ignored():
    body, kind = form(
        ("file", "a.png", b"\x89PNG one"), ("note", None, b"hi"), ("file", "b.pdf", b"%PDF two")
    )
    assert files_of(body, kind) == [("a.png", b"\x89PNG one"), ("b.pdf", b"%PDF two")]
    assert files_of(b"raw bytes", "image/jpeg") == [(None, b"raw bytes")]


@pytest.mark.parametrize(
    ("body", "kind", "status"),
    [
        (form(("note", None, b"hi"))[0], "multipart/form-data; boundary=XyZ", 400),
        (b"x", "multipart/form-data", 400),
        (b"x", "text/html", 415),
        (b"", "image/png", 400),
    ],
)
def test_uploads_that_cannot_be_read_say_why(body, kind, status):
    with pytest.raises(UploadError) as refused:
        files_of(body, kind)
    assert refused.value.status == status and str(refused.value)


def test_query_parameters_become_the_ocr_parameters():
    assert [query_value(v) for v in ("true", "False", "3", "0.5", "auto")] == [
        True,
        False,
        3,
        0.5,
        "auto",
    ]
    query = query_parameters([("format", "hocr"), ("text_score", "0.4")])
    assert query == Query("hocr", True, False, {"text_score": 0.4})  # hOCR has words
    query = query_parameters([("format", "markdown"), ("headers_footers", "true")])
    assert query == Query("markdown", False, True, {"tables": True})  # Markdown writes tables
    query = query_parameters([("format", "markdown"), ("tables", "false")])
    assert query == Query("markdown", False, False, {"tables": False})
    assert query_parameters([("format", "json")]) == Query("json", False, False, {})
    refused_queries = (
        [("format", "docx")],
        [("words", "maybe")],
        [("headers_footers", "1")],
        [("pdf_dpi", "1"), ("pdf_dpi", "2")],
    )
    for query in refused_queries:
        with pytest.raises(Problem) as refused:
            query_parameters(query)
        assert refused.value.status == 400
