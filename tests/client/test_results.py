"""The `ocr` entry point's outputs as Documents: pages, lines, words, and refused nonsense."""

from __future__ import annotations

import json

import numpy as np
import pytest

from triton_ocr import contract
from triton_ocr.client import Document, Page, TextLine, Word, parse_ocr_outputs
from triton_ocr.client.ocr_client import TextLine as OldTextLine
from triton_ocr.client.ocr_client import parse_lines

from .outputs import LINES, PAGES, WORDS, box, ocr_outputs


def test_every_page_is_listed_and_lines_land_on_theirs():
    documents = parse_ocr_outputs(ocr_outputs(LINES, PAGES), 2, ["scan.pdf", None])
    assert [len(d) for d in documents] == [3, 1]
    scan, image = documents
    assert scan.source == "scan.pdf" and image.source is None
    assert [(p.number, p.width, p.height) for p in scan] == [
        (0, 600, 800),
        (1, 600, 800),
        (2, 600, 850),
    ]
    assert [line.text for line in scan[0].lines] == ["Invoice 42", "Total: 12 €"]
    assert scan[1].lines == () and scan[1].text == ""  # read, nothing found: still listed
    assert scan[2].text == "Page three"
    assert scan.text == "Invoice 42\nTotal: 12 €\n\f\n\fPage three"
    assert image[0].lines[0].polygon == ((5.5, 6.25), (300.75, 6.25), (300.75, 50.0), (5.5, 50.0))
    assert image[0].lines[0].score == pytest.approx(0.5)
    assert all(line.words == () for d in documents for line in d.lines)  # none asked for


def test_words_are_attached_to_their_lines():
    scan, image = parse_ocr_outputs(ocr_outputs(LINES, PAGES, WORDS), 2)
    assert [w.text for w in scan[0].lines[0].words] == ["Invoice", "42"]
    assert [w.text for w in scan[0].lines[1].words] == ["Total:", "12", "€"]
    assert scan[2].lines[0].words == ()  # a line with no words given keeps none
    (hello,) = image[0].lines[0].words
    assert hello == Word(
        "Hello", ((5.5, 6.25), (60.0, 6.25), (60.0, 50.0), (5.5, 50.0)), hello.score
    )
    assert hello.score == pytest.approx(0.55)


def test_dicts_count_pages_from_one_and_hold_words_only_when_read():
    scan, _ = parse_ocr_outputs(ocr_outputs(LINES, PAGES, WORDS), 2, ["scan.pdf", None])
    record = json.loads(json.dumps(scan.to_dict()))  # plain JSON types
    assert record["file"] == "scan.pdf"
    assert [p["page"] for p in record["pages"]] == [1, 2, 3]
    assert record["pages"][0]["width"] == 600 and record["pages"][2]["height"] == 850
    first = record["pages"][0]["lines"][0]
    assert first["text"] == "Invoice 42" and first["polygon"][2] == [200.0, 40.0]
    assert [w["text"] for w in first["words"]] == ["Invoice", "42"]
    assert "words" not in record["pages"][2]["lines"][0]
    line = TextLine("a", ((0.0, 0.0),) * 4, 0.5)
    assert (
        line.as_dict() == line.to_dict() == {"text": "a", "polygon": [[0.0, 0.0]] * 4, "score": 0.5}
    )
    assert TextLine is OldTextLine


def test_no_lines_at_all_still_gives_every_page():
    (document,) = parse_ocr_outputs(ocr_outputs([], [(0, 100, 50)]), 1)
    assert document == Document((Page(0, 100, 50, ()),), None)
    assert document.to_dict() == {
        "file": None,
        "pages": [
            {
                "page": 1,
                "width": 100,
                "height": 50,
                "rotation": 0,
                "read_from": "ocr",
                "lines": [],
                "blocks": [],
                "tables": [],
            }
        ],
    }


def test_word_outputs_may_be_absent():
    outputs = ocr_outputs(LINES, PAGES)
    for name in contract.OCR_WORD_OUTPUTS:
        outputs[name] = None
    assert parse_ocr_outputs(outputs, 2)[0][0].lines[0].words == ()


def broken(change):
    outputs = ocr_outputs(LINES, PAGES, WORDS)
    change(outputs)
    return outputs


@pytest.mark.parametrize(
    ("change", "items", "message"),
    [
        (lambda o: o.pop(contract.OCR_OUTPUT_PAGE_SIZE), 2, "'page_size' is missing"),
        (lambda o: o.update(text_scores=o["text_scores"][:-1]), 2, "4 texts, 4 polygons, 3 scores"),
        (
            lambda o: o.update(page_index=o["page_index"][:-1]),
            2,
            "4 lines, 4 image indices, 3 page",
        ),
        (lambda o: o.update(page_size=o["page_size"][:-1]), 2, "4 page_image_index entries, 3"),
        (lambda o: o.update(text_polygons=np.zeros((4, 3), np.float32)), 2, "not a list of [4, 2]"),
        (lambda o: o["page_index"].__setitem__(2, 3), 2, "line 2 is on page 3 of item 0"),
        (lambda o: o["image_index"].__setitem__(3, 2), 2, "line 3 is on page 0 of item 2"),
        (lambda o: None, 1, "page_image_index [0, 1] names items outside the 1 items"),
        (
            lambda o: o.update(page_image_index=np.array([1, 0, 0, 0])),
            2,
            "pages are not in request order",
        ),
        (lambda o: o["page_size"].__setitem__((1, 0), 0), 2, "zero width or height"),
        (lambda o: o["word_line"].__setitem__(5, 4), 2, "names lines outside the 4 lines"),
        (lambda o: o.update(word_line=np.array([1, 0, 1, 1, 1, 3])), 2, "not grouped by line"),
        (
            lambda o: o.update(word_scores=o["word_scores"][:2]),
            2,
            "6 word texts, 6 word polygons, 2",
        ),
    ],
)
def test_inconsistent_responses_are_refused(change, items, message):
    with pytest.raises(ValueError, match="inconsistent response") as raised:
        parse_ocr_outputs(broken(change), items)
    assert message in str(raised.value)


def test_sources_must_match_the_items():
    with pytest.raises(ValueError, match="1 sources given for 2 items"):
        parse_ocr_outputs(ocr_outputs(LINES, PAGES), 2, ["a.pdf"])


def test_parse_lines_reads_the_ensembles_outputs():
    texts = np.array([[b"caf\xc3\xa9", b"x"]], np.object_)  # [1, N] as ensemble_model gives
    polygons = np.array([[box(0, 0, 10, 5), box(1, 2, 3, 4)]], np.float32)
    lines = parse_lines(texts, polygons, np.array([[0.9, 0.25]], np.float32))
    assert [line.text for line in lines] == ["café", "x"]
    assert lines[1].polygon == ((1.0, 2.0), (3.0, 2.0), (3.0, 4.0), (1.0, 4.0))
    with pytest.raises(ValueError, match="2 texts, 2 polygons, 1 scores"):
        parse_lines(texts, polygons, np.array([0.5], np.float32))


def test_a_page_not_read_carries_its_error_everywhere():
    """The server's page_error: the page listed with its error (and size, or 0x0), its
    document's other pages read; the error in to_dict, JSON Lines, text and hOCR."""
    from triton_ocr.client.formats import jsonl_records, render_text

    pages = [(0, 600, 800), (0, 0, 0, "page 2: cannot read PDF page"), (0, 600, 850), *PAGES[3:]]
    lines = [line for line in LINES if line[:2] != (0, 1)]
    scan, image = parse_ocr_outputs(ocr_outputs(lines, pages), 2, ["scan.pdf", None])
    assert [p.error for p in scan] == ["", "page 2: cannot read PDF page", ""]
    assert scan.errors == ["page 2: cannot read PDF page"] and image.errors == []
    assert scan[2].text == "Page three"
    assert scan[1].to_dict() == {
        "page": 2,
        "width": 0,
        "height": 0,
        "rotation": 0,
        "read_from": "ocr",
        "lines": [],
        "blocks": [],
        "tables": [],
        "error": "page 2: cannot read PDF page",
    }
    assert "error" not in scan[0].to_dict()
    records = [json.loads(r) for r in jsonl_records(scan).splitlines()]
    assert [r.get("error", "") for r in records] == [p.error for p in scan]
    assert "[page 2 not read: page 2: cannot read PDF page]" in render_text(scan, False)
    assert "<!-- not read: page 2: cannot read PDF page -->" in scan.to_hocr()


def test_a_zero_sized_page_without_an_error_is_refused():
    pages = [(0, 600, 800), (0, 0, 0), (0, 600, 850), *PAGES[3:]]
    with pytest.raises(ValueError, match="a page read of zero width or height"):
        parse_ocr_outputs(ocr_outputs(LINES, pages), 2)


def test_blocks_and_turns_come_with_their_pages():
    """Each page's blocks hold its lines in order; the text puts a blank line between blocks,
    hOCR a ocr_carea and ocr_par per block, and a turned page its textangle."""
    outputs = ocr_outputs(LINES, PAGES)
    outputs[contract.OCR_OUTPUT_LINE_BLOCK] = np.array([0, 1, 2, 3], np.int32)
    outputs[contract.OCR_OUTPUT_BLOCK_POLYGONS] = np.array(
        [box(10, 10, 200, 40), box(10, 60, 180, 90), box(20, 30, 220, 70), box(5, 6, 301, 50)],
        np.float32,
    )
    outputs[contract.OCR_OUTPUT_BLOCK_PAGE] = np.array([0, 0, 2, 3], np.int32)
    outputs[contract.OCR_OUTPUT_PAGE_ROTATION] = np.array([0, 0, 90, 0], np.int32)
    types = [b"heading", b"paragraph", b"list", b"footer"]
    outputs[contract.OCR_OUTPUT_BLOCK_TYPE] = np.array(types, np.object_)
    scan, image = parse_ocr_outputs(outputs, 2)
    assert [b.type for b in scan[0].blocks] == ["heading", "paragraph"]
    assert [len(page.blocks) for page in scan] == [2, 0, 1] and len(image[0].blocks) == 1
    assert scan[0].text == "Invoice 42\n\nTotal: 12 €"
    assert [p.rotation for p in scan] == [0, 0, 90]
    record = scan[0].to_dict()
    assert record["blocks"][1] == {
        "type": "paragraph",
        "polygon": box(10, 60, 180, 90),
        "lines": [record["lines"][1]],
    }
    hocr = scan.to_hocr()
    assert hocr.count("class='ocr_carea'") == 3 == hocr.count("class='ocr_par'")
    assert "textangle 270" in hocr  # 90 degrees clockwise: the text stands 270 counter-clockwise
    outputs[contract.OCR_OUTPUT_BLOCK_TYPE] = np.array([*types[:3], b"sidebar"], np.object_)
    with pytest.raises(ValueError, match="block types"):
        parse_ocr_outputs(outputs, 2)
    del outputs[contract.OCR_OUTPUT_BLOCK_TYPE]  # an older server's: blocks without types
    assert [b.type for b in parse_ocr_outputs(outputs, 2)[0][0].blocks] == ["", ""]
    outputs[contract.OCR_OUTPUT_LINE_BLOCK] = np.array([0, 1, 2, 7], np.int32)
    with pytest.raises(ValueError, match="line_block"):
        parse_ocr_outputs(outputs, 2)
    outputs[contract.OCR_OUTPUT_LINE_BLOCK] = np.array([1, 0, 2, 3], np.int32)
    with pytest.raises(ValueError, match="block by block"):
        parse_ocr_outputs(outputs, 2)
