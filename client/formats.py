"""The output formats, one room for every writer that `triton-ocr read` and the REST gateway
share: which formats there are, each one's media type, and the text, Markdown and JSON-lines
renderings of a Document (Markdown, hOCR, ALTO and the searchable PDF are written by
markdown.py, hocr.py, alto.py and pdf.py, named here)."""

from __future__ import annotations

import json

from triton_ocr.client.markdown import comment
from triton_ocr.client.results import Document, Page

FORMATS = ("text", "json", "jsonl", "markdown", "hocr", "alto", "pdf")
FILE_FORMATS = ("hocr", "alto", "pdf")  # one document per file (`read` writes them into --out)
# the formats that ask the service for tables unless told not to (a table is their point there)
TABLE_FORMATS = ("markdown",)
MEDIA_TYPES = {
    "json": "application/json",
    "jsonl": "application/x-ndjson",
    "text": "text/plain; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "hocr": "application/xhtml+xml",
    "alto": "application/xml",
    "pdf": "application/pdf",
}


def render_text(document: Document, several: bool) -> str:
    """The text output: the lines of each page, a blank line between its blocks, headed by the
    file's name when there are several files, and by the page number when it has several
    pages."""
    parts = [f"== {document.source}"] if several else []
    for page in document.pages:
        if len(document.pages) > 1:
            parts.append(f"-- page {page.number + 1}")
        if page.error:
            parts.append(f"[page {page.number + 1} not read: {page.error}]")
        if page.lines:
            parts.append(page.text)
    return "".join(f"{part}\n" for part in parts)


def render_markdown(document: Document, several: bool, headers_footers: bool = False) -> str:
    """The Markdown output (markdown.py), headed by a comment naming the file when there are
    several files; `headers_footers` keeps running headers and footers."""
    text = document.to_markdown(headers_footers)
    return f"{comment(f'file: {document.source}')}\n\n{text}" if several else text


def jsonl_records(document: Document) -> str:
    """One JSON object per page: file, page (1-based), pages (the file's), size and lines."""
    return "".join(
        page_record(document.source, page, len(document.pages)) for page in document.pages
    )


def page_record(source: str | None, page: Page, pages: int) -> str:
    """A page's JSON line: its file, the page's fields, the file's page count."""
    return json.dumps({"file": source, **page.to_dict(), "pages": pages}, ensure_ascii=False) + "\n"
