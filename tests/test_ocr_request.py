"""One `ocr` request's life without Triton: its limits, its items' pages, and the errors it
answers with (the networks are stand-ins; tests/e2e read real requests through the server)."""

import asyncio
import dataclasses
import io
import time

import numpy as np
import pytest
from PIL import Image

from tests.documents import BORN_DIGITAL_COLUMNS, BORN_DIGITAL_HEADING, born_digital_pdf
from tests.samples import render_blank
from tests.test_pipeline import dark_is_text, settings, upright, upright_page
from triton_ocr.errors import InvalidRequest
from triton_ocr.ocr_request import read_request
from triton_ocr.pipeline import Networks
from triton_ocr.runtime.pages import RequestTimeout
from triton_ocr.settings import ManyImages

MANY = ManyImages(
    images_in_flight=2, max_images_per_request=3, page_timeout_s=10.0, request_timeout_s=30.0
)


def now(network):
    async def call(value):
        return network(value)

    return call


def never(_):
    raise AssertionError("no network is called for a request refused at its limits")


def blank_paths(batches):
    """A stand-in recognizer that reads nothing (every step the CTC blank)."""
    return [(np.zeros((len(b), 8), np.int64), np.zeros((len(b), 8), np.float32)) for b in batches]


NETWORKS = Networks(now(dark_is_text), now(blank_paths), now(upright), now(upright_page))
REFUSED = Networks(now(never), now(never), now(never), now(never))


def tiff(frames: int) -> bytes:
    pages = [Image.new("RGB", (320, 240), "white") for _ in range(frames)]
    out = io.BytesIO()
    pages[0].save(out, format="TIFF", save_all=True, append_images=pages[1:])
    return out.getvalue()


def read(items, networks=NETWORKS, pipeline=None, caller_s=None):
    chosen = pipeline or settings()
    return asyncio.run(read_request(items, chosen, networks, MANY, caller_s))


def test_every_page_of_every_item_is_listed_in_request_order():
    pages = read([tiff(2), render_blank(), tiff(1)])
    assert [(p.item, p.page) for p in pages] == [(0, 0), (0, 1), (1, 0), (2, 0)]
    assert all(p.error == "" and p.texts.texts == [] for p in pages)
    assert pages[2].size == (640, 480) and pages[0].size == (320, 240)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([], "the request holds no images"),
        ([render_blank()] * 4, "the request holds 4 images; at most 3 per request"),
        ([render_blank(), b"not an image"], "image 1: "),
    ],
)
def test_a_request_beyond_its_limits_or_with_a_bad_image_is_refused(items, message):
    with pytest.raises(InvalidRequest, match=message):
        read(items, REFUSED)


def test_pages_are_counted_over_all_items_before_any_is_read():
    few = settings()
    few = dataclasses.replace(few, documents=dataclasses.replace(few.documents, max_pages=3))
    with pytest.raises(InvalidRequest, match="the request holds 4 pages; at most 3 per request"):
        read([tiff(2), tiff(2)], REFUSED, few)


def test_a_request_past_its_callers_timeout_stops_and_says_whose_limit_it_was():
    async def slow_detector(tensor):
        await asyncio.sleep(5)
        return dark_is_text(tensor)

    slow = dataclasses.replace(NETWORKS, detect=slow_detector)
    started = time.monotonic()
    with pytest.raises(RequestTimeout, match="the timeout the request was sent with"):
        read([render_blank()], slow, caller_s=0.2)
    assert time.monotonic() - started < 5  # stopped, not waited out


def test_a_born_digital_page_is_read_from_its_text_layer_without_a_network():
    """pdf_text auto: drawn text is read from the layer (no network called), its lines in
    reading order, block by block, with words when asked; pdf_text ocr reads it by OCR."""
    chosen = settings()
    chosen = dataclasses.replace(chosen, words=dataclasses.replace(chosen.words, word_boxes=True))
    (page,) = read([born_digital_pdf()], REFUSED, chosen)
    assert page.source == "layer" and page.error == ""
    assert page.texts.texts == [BORN_DIGITAL_HEADING, *(t for c in BORN_DIGITAL_COLUMNS for t in c)]
    assert page.texts.scores.tolist() == [1.0] * 7
    assert page.texts.line_block.tolist() == sorted(page.texts.line_block.tolist())
    assert len(page.texts.block_quads) == 3  # the heading, each column
    assert page.texts.words is not None
    assert " ".join(page.texts.words.texts) == " ".join(page.texts.texts)
    ocr = dataclasses.replace(
        chosen, documents=dataclasses.replace(chosen.documents, pdf_text="ocr")
    )
    (page,) = read([born_digital_pdf()], NETWORKS, ocr)
    assert page.source == "ocr"
