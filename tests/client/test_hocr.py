"""hOCR output: well-formed XHTML whose boxes and confidences are the JSON result's."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from triton_ocr.client import Document, Page, TextLine, Word, parse_ocr_outputs
from triton_ocr.client.hocr import bbox_of, to_hocr

from .outputs import LINES, PAGES, WORDS, box, ocr_outputs

XHTML = "{http://www.w3.org/1999/xhtml}"
TRICKY = "Hello <world> & \"friends\" 'too'"


def documents(words=WORDS):
    return parse_ocr_outputs(ocr_outputs(LINES, PAGES, words), 2, ['scans/a "b" & c.pdf', None])


def properties(title: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in title.split(";"))


def elements(root, kind: str):
    return [e for e in root.iter() if e.get("class") == kind]


def bbox(element) -> tuple[int, ...]:
    return tuple(int(v) for v in properties(element.get("title"))["bbox"].split())


def test_bbox_of_is_the_integer_bounds_clamped_to_the_page():
    assert bbox_of(box(5.5, 6.25, 300.75, 50), 320, 60) == (5, 6, 301, 50)
    assert bbox_of([(-3, 2), (400, 1), (410, 70), (-1, 65)], 320, 60) == (0, 1, 320, 60)
    assert bbox_of([(10.0004, 20), (30, 20), (30, 39.9996), (10, 40)], 100, 100) == (10, 20, 30, 40)
    rotated = [(50, 10), (90, 50), (50, 90), (10, 50)]
    assert bbox_of(rotated, 100, 100) == (10, 10, 90, 90)


def test_hocr_is_xhtml_with_the_json_boxes_and_confidences():
    scan, _ = documents()
    hocr = scan.to_hocr()
    assert hocr.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html PUBLIC')
    assert "<meta name='ocr-system' content='triton-ocr'/>" in hocr
    assert (
        "<meta name='ocr-capabilities' "
        "content='ocr_page ocr_carea ocr_par ocr_line ocr_header ocr_caption ocrx_word "
        "ocr_table ocr_photo'/>" in hocr
    )
    root = ET.fromstring(hocr)
    assert root.tag == f"{XHTML}html"
    pages = elements(root, "ocr_page")
    assert [p.get("id") for p in pages] == ["page_1", "page_2", "page_3"]
    first = properties(pages[0].get("title"))
    assert first == {"image": '"scans/a \\"b\\" & c.pdf"', "bbox": "0 0 600 800", "ppageno": "0"}
    assert [properties(p.get("title"))["ppageno"] for p in pages] == ["0", "1", "2"]
    assert properties(pages[2].get("title"))["bbox"] == "0 0 600 850"
    assert elements(pages[1], "ocr_line") == []  # listed, though empty

    record = scan.to_dict()
    for page, page_record in zip(pages, record["pages"], strict=True):
        lines = elements(page, "ocr_line")
        assert len(lines) == len(page_record["lines"])
        for line, line_record in zip(lines, page_record["lines"], strict=True):
            size = page_record["width"], page_record["height"]
            assert bbox(line) == bbox_of(line_record["polygon"], *size)
            title = properties(line.get("title"))
            assert int(title["x_wconf"]) == round(line_record["score"] * 100)
            words = elements(line, "ocrx_word")
            for word, word_record in zip(
                words, line_record.get("words") or [line_record], strict=True
            ):
                assert word.text == word_record["text"]
                assert bbox(word) == bbox_of(word_record["polygon"], *size)
                assert int(properties(word.get("title"))["x_wconf"]) == round(
                    word_record["score"] * 100
                )
    lines = elements(root, "ocr_line")
    assert [line.get("id") for line in lines] == ["line_1_1", "line_1_2", "line_3_1"]
    words = elements(root, "ocrx_word")
    assert [w.get("id") for w in words][:5] == [f"word_1_{n}" for n in range(1, 6)]
    assert [w.text for w in elements(lines[1], "ocrx_word")] == ["Total:", "12", "€"]
    assert properties(words[0].get("title"))["x_wconf"] == "98"


def test_a_line_without_words_is_one_word_with_its_text_and_box():
    _, image = documents(words=[])
    root = ET.fromstring(image.to_hocr())
    (line,) = elements(root, "ocr_line")
    (word,) = elements(line, "ocrx_word")
    assert word.text == TRICKY  # escaped in the file, itself once parsed
    assert bbox(word) == bbox(line) == (5, 6, 301, 50)
    assert properties(word.get("title"))["x_wconf"] == "50"
    assert "<title></title>" in image.to_hocr()  # no source: no image property either
    assert "image" not in properties(elements(root, "ocr_page")[0].get("title"))


def test_text_is_escaped_and_control_characters_dropped():
    page = Page(0, 100, 40, (TextLine("a\x00b<\x1f>&'\"", tuple(box(0, 0, 50, 20)), 1.0),))
    hocr = to_hocr([page], "x'y<z>.png")
    root = ET.fromstring(hocr)
    assert elements(root, "ocrx_word")[0].text == "a\ufffdb<\ufffd>&'\""
    assert properties(elements(root, "ocr_page")[0].get("title"))["image"] == '"x\'y<z>.png"'
    assert root.find(f"{XHTML}head/{XHTML}title").text == "x'y<z>.png"


def test_an_empty_document_is_still_a_document():
    root = ET.fromstring(Document(()).to_hocr())
    assert elements(root, "ocr_page") == [] and root.find(f"{XHTML}body") is not None


def test_html_parsers_read_it_too():
    """lxml's HTML parser (what hocr-tools and most hOCR readers use), where installed."""
    html = pytest.importorskip("lxml.html")
    scan, image = documents()
    for document in (scan, image):
        tree = html.document_fromstring(document.to_hocr().encode("utf-8"))
        words = tree.xpath("//span[@class='ocrx_word']")
        expected = [w.text for line in document.lines for w in (line.words or [line])]
        assert [w.text_content() for w in words] == expected
        pages = tree.xpath("//div[@class='ocr_page']")
        assert len(pages) == len(document)
        assert all(re.search(r"bbox 0 0 \d+ \d+", p.get("title")) for p in pages)


def test_words_of_a_line_keep_their_order_and_ids_count_per_page():
    words = (Word("b", tuple(box(30, 0, 40, 10)), 0.5), Word("a", tuple(box(0, 0, 20, 10)), 0.25))
    pages = [
        Page(n, 50, 20, (TextLine("b a", tuple(box(0, 0, 40, 10)), 0.5, words),)) for n in (0, 1)
    ]
    root = ET.fromstring(to_hocr(pages))
    ids = [w.get("id") for w in elements(root, "ocrx_word")]
    assert ids == ["word_1_1", "word_1_2", "word_2_1", "word_2_2"]
    assert [w.text for w in elements(root, "ocrx_word")][:2] == ["b", "a"]


def test_a_headings_and_a_captions_lines_are_of_their_classes():
    """As Tesseract writes them: a heading's lines ocr_header, a caption's ocr_caption."""
    from triton_ocr.client.results import Block

    heading, caption = (TextLine(t, ((0, 0), (90, 0), (90, 20), (0, 20)), 0.9) for t in "ab")
    blocks = (
        Block(heading.polygon, (heading,), "heading"),
        Block(caption.polygon, (caption,), "caption"),
    )
    page = Page(0, 100, 100, (heading, caption), blocks=blocks)
    root = ET.fromstring(Document((page,)).to_hocr())
    classes = [e.get("class") for e in root.iter() if e.get("id", "").startswith("line_")]
    assert classes == ["ocr_header", "ocr_caption"]
