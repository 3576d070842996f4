"""The gateway's page and /docs without a server: their files ship as package data and name
no other host; the preview's pages are the server decoder's, at the size its boxes refer to."""

from __future__ import annotations

import base64
import io
import re

import pytest
from fastapi import HTTPException
from PIL import Image

from tests.documents import make_pdf, make_tiff, text_page
from triton_ocr.gateway.page import PREVIEW_SIDE, ServerReads, preview_pages, static_files
from triton_ocr.preprocessing.documents import open_pages
from triton_ocr.settings import Documents, ImageLimits

# names that look like addresses but fetch nothing: XML namespaces
NAMESPACES = {"http://www.w3.org/2000/svg"}
READS = ServerReads(ImageLimits(50_000_000, 40_000_000), Documents(200, 600, 5))


def test_the_static_files_ship_and_name_no_other_host():
    files = static_files()
    assert {"index.html", "page.js", "page.css", "docs.html", "docs.js"} <= set(files)
    for name, (data, media_type) in files.items():
        text = data.decode("utf-8")
        assert set(re.findall(r"https?://[^\s\"'`)<>]+", text)) <= NAMESPACES, name
        assert "//" not in "".join(re.findall(r"(?:src|href)=\"([^\"]*)\"", text)), name
        assert media_type.split(";")[0] in ("text/html", "text/css", "text/javascript")
    for page in ("index.html", "docs.html"):  # every file a page loads is served
        text = files[page][0].decode()
        for reference in re.findall(r"(?:src|href)=\"static/([^\"]+)\"", text):
            assert reference in files, (page, reference)


def decoded(url: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def test_pdf_pages_have_the_size_the_server_renders_them_at_and_a_smaller_image():
    pdf = make_pdf([text_page("one", (1700, 2200)), text_page("two", (400, 300))], 200)
    pages = preview_pages(pdf, READS, 200, 5)
    with open_pages(pdf, READS.limits, READS.documents, 200) as served:
        sizes = [served.size(i) for i in range(served.count)]
    assert [(p["page"], p["width"], p["height"]) for p in pages] == [(1, *sizes[0]), (2, *sizes[1])]
    for page in pages:
        image = decoded(page["image"])
        assert max(image.size) <= PREVIEW_SIDE and image.format == "JPEG"
        assert abs(image.width / image.height - page["width"] / page["height"]) < 0.01
    assert preview_pages(pdf, READS, 300, 5)[0]["width"] == round(sizes[0][0] * 1.5)


def test_a_tiff_frame_is_shown_as_its_orientation_tag_says():
    stored = text_page("sideways", (400, 300)).transpose(Image.Transpose.ROTATE_90)
    for page in preview_pages(make_tiff([stored, stored], [6, 6]), READS, 200, 5):
        assert (page["width"], page["height"]) == (400, 300)
        assert decoded(page["image"]).size == (400, 300)


def test_no_more_pages_than_the_server_reads_per_request():
    pdf = make_pdf([text_page("a"), text_page("b"), text_page("c")])
    with pytest.raises(HTTPException) as refused:
        preview_pages(pdf, READS, 200, 2)
    assert refused.value.status_code == 400
