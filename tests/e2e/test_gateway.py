"""The REST gateway (`triton-ocr gateway`) in front of the real server, over real HTTP:
uploads as curl sends them, every format, the errors callers get, health, metrics, the token."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path
from xml.etree import ElementTree

import pikepdf
import pypdfium2 as pdfium
import pytest
from markdown_it import MarkdownIt

from tests.documents import (
    BORN_DIGITAL_COLUMNS,
    BORN_DIGITAL_HEADING,
    born_digital_pdf,
    make_pdf,
    text_page,
)
from tests.samples import layout_page, ruled_table
from triton_ocr import contract
from triton_ocr.config.repository import Repository, step_settings
from triton_ocr.serving.flags import free_ports
from triton_ocr.settings import Documents
from triton_ocr.tools.samples import DEMO_LINES

CLI = str(Path(sys.executable).parent / "triton-ocr")
BODY_LIMIT = 3_000_000
TOKEN = "s3cret-token"


@contextmanager
def running_gateway(triton_url: str, *arguments: str, env: dict | None = None):
    (port,) = free_ports(1)
    command = [CLI, "gateway", "--triton-url", triton_url, "--port", str(port), *arguments]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    message = f"the gateway did not start: {process.stderr.read()}"
                    raise AssertionError(message) from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def gateway(server):
    with running_gateway(server.grpc, "--max-body-bytes", str(BODY_LIMIT)) as base:
        yield base


def call(url: str, body: bytes = b"", content_type: str | None = None, headers=None, method=None):
    """(status, headers, body) of one request; HTTP errors are answers too."""
    request = urllib.request.Request(url, data=body or None, method=method)
    if content_type:
        request.add_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def slow_upload(base: str, source: str = "127.0.0.1", headers: str = "") -> socket.socket:
    """An upload (from the loopback address `source`, with more `headers` lines) whose body is
    still on its way: headers and a first piece sent, the rest never, so it stays in flight
    until its socket is closed."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30, source_address=(source, 0))
    head = (
        f"POST /v1/ocr HTTP/1.1\r\nHost: {host}\r\nContent-Type: image/png\r\n{headers}"
        f"Content-Length: 100000\r\n\r\n"
    )
    sock.sendall(head.encode() + bytes(1000))
    return sock


def multipart(*files: tuple[str, bytes]) -> tuple[bytes, str]:
    """A multipart/form-data body of `file` parts, as `curl -F file=@…` sends it."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, data in files:
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def test_a_multipart_upload_as_text_prints_the_lines(gateway, demo):
    body, kind = multipart(("demo.png", demo))
    status, headers, answer = call(f"{gateway}/v1/ocr?format=text", body, kind)
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    for line in DEMO_LINES[:3]:
        assert line.text in answer.decode()


def test_json_is_the_read_json_document_one_or_a_list(gateway, demo, two_pages):
    status, _, answer = call(f"{gateway}/v1/ocr?words=true", two_pages, "application/pdf")
    assert status == 200
    document = json.loads(answer)
    assert [page["page"] for page in document["pages"]] == [1, 2]
    assert "words" in document["pages"][0]["lines"][0]
    body, kind = multipart(("a.png", demo), ("b.pdf", two_pages))
    status, _, answer = call(f"{gateway}/v1/ocr", body, kind)
    assert status == 200
    assert [d["file"] for d in json.loads(answer)] == ["a.png", "b.pdf"]


def test_jsonl_answers_a_page_per_line(gateway, two_pages):
    status, headers, answer = call(f"{gateway}/v1/ocr?format=jsonl", two_pages, "application/pdf")
    assert status == 200 and headers["Content-Type"].startswith("application/x-ndjson")
    pages = [json.loads(row) for row in answer.decode().splitlines()]
    assert [(p["page"], p["pages"]) for p in pages] == [(1, 2), (2, 2)]


def chunks_of(url: str, body: bytes, content_type: str) -> list[bytes]:
    """The chunks of a chunked HTTP answer as they came (http.client joins them)."""
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    path = "/" + url.removeprefix("http://").split("/", 1)[1]
    with socket.create_connection((host, int(port)), timeout=120) as connection:
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        stream = connection.makefile("rb")
        head = b"".join(iter(lambda: stream.readline(), b"\r\n"))
        assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower(), head
        found = []
        while size := int(stream.readline().strip(), 16):
            found.append(stream.read(size))
            stream.readline()
        return found


def test_jsonl_streams_a_pdf_page_by_page(gateway):
    """Each page of a PDF is its own request and its own chunk of the answer, in page order:
    a long PDF answers as its pages are read, not when the whole file is."""
    texts = [f"page number {n} here" for n in range(1, 6)]
    document = make_pdf([text_page(text) for text in texts])
    chunks = chunks_of(f"{gateway}/v1/ocr?format=jsonl", document, "application/pdf")
    assert [chunk.count(b"\n") for chunk in chunks] == [1] * len(texts)
    pages = [json.loads(chunk) for chunk in chunks]
    assert [(p["page"], p["pages"], p["file"]) for p in pages] == [
        (n, 5, None) for n in range(1, 6)
    ]
    for page, text in zip(pages, texts, strict=True):
        assert text in " ".join(line["text"] for line in page["lines"])


def test_jsonl_holds_the_request_limits_of_one_request(gateway, repository, demo):
    """Reading page by page must not lift the service's limit on the pages of one request,
    nor may several files; a file the service refuses after the first is a line of its own."""
    config = Repository(repository).config_dict(contract.OCR_MODEL)
    documents = step_settings(contract.OCR_MODEL, config)[Documents]
    blank = pikepdf.new()
    for _ in range(documents.max_pages + 1):
        blank.add_blank_page()
    buffer = io.BytesIO()
    blank.save(buffer)
    for chosen in ("jsonl", "json"):
        url = f"{gateway}/v1/ocr?format={chosen}"
        status, _, answer = call(url, buffer.getvalue(), "application/pdf")
        assert status == 400, answer
        assert f"at most {documents.max_pages} per request" in json.loads(answer)["error"]
    body, kind = multipart(("a.png", demo), ("b.png", b"\x89PNG\r\n\x1a\n broken"))
    status, _, answer = call(f"{gateway}/v1/ocr?format=jsonl", body, kind)
    assert status == 200
    first, second = (json.loads(row) for row in answer.decode().splitlines())
    assert first["file"] == "a.png" and first["lines"]
    assert second["file"] == "b.png" and second["error"]


def test_documents_as_hocr_alto_and_searchable_pdf(gateway, two_pages):
    status, headers, answer = call(f"{gateway}/v1/ocr?format=hocr", two_pages, "application/pdf")
    assert status == 200 and b"ocrx_word" in answer
    status, headers, answer = call(f"{gateway}/v1/ocr?format=alto", two_pages, "application/pdf")
    assert status == 200 and b"<String " in answer
    strings = [
        e.get("CONTENT")
        for e in ElementTree.fromstring(answer).iter(
            "{http://www.loc.gov/standards/alto/ns-v4#}String"
        )
    ]
    assert "second" in strings and not any(" " in s for s in strings)  # words, not lines
    status, headers, answer = call(f"{gateway}/v1/ocr?format=pdf", two_pages, "application/pdf")
    assert status == 200 and headers["Content-Type"] == "application/pdf"
    document = pdfium.PdfDocument(io.BytesIO(answer).getvalue())
    assert "second page here" in document[1].get_textpage().get_text_range()
    document.close()


def test_markdown_reads_a_page_as_people_do(gateway, two_pages):
    """A headline over two columns between a running head and a foot: the headline a heading,
    each column's text one paragraph going on across the gutter, head and foot left out unless
    asked for; a PDF's pages marked; CommonMark a parser reads."""
    page = layout_page("headline")
    status, headers, answer = call(f"{gateway}/v1/ocr?format=markdown", page.png, "image/png")
    assert status == 200 and headers["Content-Type"].startswith("text/markdown")
    markdown = answer.decode()
    blocks = markdown.strip().split("\n\n")
    assert blocks[0] == "# Reading pages the way people do"
    assert len(blocks) == 2 and blocks[1].startswith("Serving models close to the data")
    assert "Journal of Served Models" not in markdown and "Printed in Berlin" not in markdown
    parsed = [t.type for t in MarkdownIt("commonmark").parse(markdown)]
    assert parsed.count("heading_open") == 1 and parsed.count("paragraph_open") == 1
    query = "format=markdown&headers_footers=true"
    status, _, answer = call(f"{gateway}/v1/ocr?{query}", page.png, "image/png")
    assert status == 200 and "Printed in Berlin" in answer.decode()
    status, _, answer = call(f"{gateway}/v1/ocr?format=markdown", two_pages, "application/pdf")
    assert status == 200 and "<!-- page 2 -->" in answer.decode()
    # a born-digital page, read from its text layer: its heading and its two columns' text
    pdf = born_digital_pdf()
    status, _, answer = call(f"{gateway}/v1/ocr?format=markdown", pdf, "application/pdf")
    assert status == 200
    assert answer.decode().strip().split("\n\n") == [
        f"# {BORN_DIGITAL_HEADING}",
        *(" ".join(column) for column in BORN_DIGITAL_COLUMNS),
    ]


def test_markdown_writes_the_tables_read(gateway):
    """Markdown asks for tables: an unruled grid as a GitHub table, a ruled table whose header
    cell spans two columns as an HTML table; `tables=false` leaves the lines as rows."""
    gfm = MarkdownIt("commonmark").enable("table")
    status, _, answer = call(
        f"{gateway}/v1/ocr?format=markdown", layout_page("grid").png, "image/png"
    )
    assert status == 200
    assert answer.decode() == (
        "| Item | Qty | Price | Total |\n| --- | --- | --- | --- |\n"
        "| Apples | 3 | 0.40 | 1.20 |\n| Bread | 1 | 2.10 | 2.10 |\n"
        "| Cheese | 2 | 3.75 | 7.50 |\n| Olive oil | 1 | 6.90 | 6.90 |\n"
    )
    assert [t.type for t in gfm.parse(answer.decode())].count("tr_open") == 5
    status, _, answer = call(f"{gateway}/v1/ocr?format=markdown", ruled_table().png, "image/png")
    assert status == 200
    assert answer.decode().startswith('<table>\n<tr><td>Region</td><td colspan="2">Sales</td>')
    query = "format=markdown&tables=false"
    status, _, answer = call(f"{gateway}/v1/ocr?{query}", layout_page("grid").png, "image/png")
    assert status == 200 and "|" not in answer.decode() and "Olive oil" in answer.decode()


@pytest.mark.parametrize(
    ("query", "body", "kind", "status", "says"),
    [
        ("text_score=5", b"png", "image/png", 400, "text_score"),
        ("format=jsonl&text_score=5", b"png", "image/png", 400, "text_score"),
        ("no_such_parameter=1", b"png", "image/png", 400, "no_such_parameter"),
        ("format=docx", b"x", "image/png", 400, "format must be one of"),
        ("", b"hello", "text/plain", 415, "unsupported Content-Type"),
        ("", b"\x89PNG\r\n\x1a\n broken", "image/png", 400, ""),
        ("", b"", "image/png", 400, "empty"),
    ],
)
def test_bad_input_gets_a_json_problem_naming_it(gateway, demo, query, body, kind, status, says):
    if body == b"png":
        body = demo
    got, headers, answer = call(f"{gateway}/v1/ocr?{query}", body, kind, method="POST")
    assert got == status, answer
    assert headers["Content-Type"] == "application/problem+json"
    assert says in json.loads(answer)["error"]


def test_a_body_over_the_limit_is_refused_before_it_is_sent(gateway):
    """As curl sends a large upload (Expect: 100-continue): the 413 comes before the body."""
    host, port = gateway.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(
            f"POST /v1/ocr HTTP/1.1\r\nHost: {host}\r\nContent-Type: image/png\r\n"
            f"Content-Length: {BODY_LIMIT + 1}\r\nExpect: 100-continue\r\n\r\n".encode()
        )
        answer = connection.makefile("rb").read()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"application/problem+json" in head
    assert f"at most {BODY_LIMIT}".encode() in body


def test_unknown_routes_and_methods_are_json_problems_too(gateway):
    for url, method, status in (("/v2/nothing", "GET", 404), ("/v1/ocr", "GET", 405)):
        got, headers, answer = call(f"{gateway}{url}", method=method)
        assert got == status and headers["Content-Type"] == "application/problem+json"
        assert json.loads(answer)["error"]


def test_health_metrics_and_the_openapi_description(gateway):
    assert call(f"{gateway}/healthz")[0] == 200
    assert call(f"{gateway}/readyz")[0] == 200
    status, _, answer = call(f"{gateway}/openapi.json")
    assert status == 200 and "/v1/ocr" in json.loads(answer)["paths"]
    status, _, answer = call(f"{gateway}/metrics")
    assert status == 200 and b"triton_ocr_rest_requests_total" in answer


def test_a_service_that_is_not_there_is_a_503_with_retry_after(demo):
    (closed,) = free_ports(1)
    with running_gateway(f"127.0.0.1:{closed}", "--timeout", "3") as base:
        status, headers, _ = call(f"{base}/readyz")
        assert status == 503 and headers["Retry-After"]
        status, headers, answer = call(f"{base}/v1/ocr", demo, "image/png")
        assert status == 503 and headers["Retry-After"] and json.loads(answer)["error"]


def test_the_bearer_token_is_asked_for_when_set(server, demo, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with running_gateway(server.grpc, "--token-file", str(token_file)) as base:
        assert call(f"{base}/v1/ocr", demo, "image/png")[0] == 401
        wrong = {"Authorization": "Bearer nope"}
        assert call(f"{base}/v1/ocr", demo, "image/png", wrong)[0] == 401
        right = {"Authorization": f"Bearer {TOKEN}"}
        assert call(f"{base}/v1/ocr?format=text", demo, "image/png", right)[0] == 200
        assert call(f"{base}/healthz")[0] == 200  # probes need no token
        assert call(f"{base}/v1/preview", demo, "image/png")[0] == 401
        assert call(f"{base}/v1/preview", demo, "image/png", right)[0] == 200
        # the token is declared where callers read the API: /openapi.json (and /docs from it)
        api = json.loads(call(f"{base}/openapi.json")[2])
        for path in ("/v1/ocr", "/v1/preview"):
            assert api["paths"][path]["post"]["security"] == [{"HTTPBearer": []}]
        assert api["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
        assert "security" not in api["paths"]["/healthz"]["get"]
