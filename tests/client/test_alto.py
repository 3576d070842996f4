"""ALTO v4 output: valid against the ALTO 4.4 schema, with the JSON's blocks, lines and words."""

from __future__ import annotations

import numpy as np
import pytest
from lxml import etree

from tests.conftest import ROOT
from triton_ocr import contract
from triton_ocr.client import parse_ocr_outputs

from .outputs import LINES, PAGES, WORDS, box, ocr_outputs

SCHEMAS = ROOT / "tests" / "data" / "alto"
ALTO = "{http://www.loc.gov/standards/alto/ns-v4#}"


class OfflineXLink(etree.Resolver):
    """The ALTO schema imports XLink's from loc.gov: the local stand-in instead."""

    def resolve(self, url, public_id, context):
        if url.endswith("xlink.xsd"):
            return self.resolve_filename(str(SCHEMAS / "xlink.xsd"), context)
        return None


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(OfflineXLink())
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "alto-4-4.xsd"), parser))


def documents(with_blocks: bool = True):
    outputs = ocr_outputs(LINES, PAGES, WORDS)
    if with_blocks:
        outputs[contract.OCR_OUTPUT_LINE_BLOCK] = np.array([0, 0, 1, 2], np.int32)
        outputs[contract.OCR_OUTPUT_BLOCK_POLYGONS] = np.array(
            [box(10, 10, 200, 90), box(20, 30, 220, 70), box(5, 6, 301, 50)], np.float32
        )
        outputs[contract.OCR_OUTPUT_BLOCK_PAGE] = np.array([0, 2, 3], np.int32)
        outputs[contract.OCR_OUTPUT_BLOCK_TYPE] = np.array([b"heading", b"paragraph", b"caption"])
        outputs[contract.OCR_OUTPUT_PAGE_ROTATION] = np.array([90, 0, 0, 0], np.int32)
    return parse_ocr_outputs(outputs, 2, ['scans/a "b" & c.pdf', None])


@pytest.mark.parametrize("with_blocks", [True, False])
def test_alto_is_valid_and_holds_every_block_line_and_word(schema, with_blocks):
    scan, image = documents(with_blocks)
    for document in (scan, image):
        root = etree.fromstring(document.to_alto().encode("utf-8"))
        schema.assertValid(root)
    root = etree.fromstring(scan.to_alto().encode("utf-8"))
    pages = root.findall(f".//{ALTO}Page")
    assert [p.get("PHYSICAL_IMG_NR") for p in pages] == ["1", "2", "3"]
    assert [(p.get("WIDTH"), p.get("HEIGHT")) for p in pages] == [("600", "800")] * 2 + [
        ("600", "850")
    ]
    assert root.findtext(f".//{ALTO}fileName") == 'scans/a "b" & c.pdf'
    blocks = [len(p.findall(f".//{ALTO}TextBlock")) for p in pages]
    assert blocks == [1, 0, 1]  # the first page's two lines are one block (or one page's lines)
    first = pages[0].findall(f".//{ALTO}TextLine")
    strings = [[s.get("CONTENT") for s in line.findall(f"{ALTO}String")] for line in first]
    assert strings == [["Invoice", "42"], ["Total:", "12", "€"]]
    assert [len(line.findall(f"{ALTO}SP")) for line in first] == [1, 2]  # between words
    word = first[0].find(f"{ALTO}String")
    assert [word.get(k) for k in ("HPOS", "VPOS", "WIDTH", "HEIGHT", "WC")] == [
        "10",
        "10",
        "110",
        "30",
        "0.980",
    ]
    third = pages[2].find(f".//{ALTO}TextLine")  # no word boxes: cut at the space, by characters
    assert [s.get("CONTENT") for s in third.findall(f"{ALTO}String")] == ["Page", "three"]
    assert len(third.findall(f"{ALTO}SP")) == 1
    assert [
        (s.get("HPOS"), s.get("WIDTH"), s.get("VPOS"), s.get("HEIGHT"))
        for s in third.findall(f"{ALTO}String")
    ] == [("20", "80", "30", "40"), ("120", "100", "30", "40")]  # 20 px a character
    assert (pages[0].get("ROTATION") == "270") == with_blocks  # came turned 90 clockwise
    # each block's type a LayoutTag its TextBlock names
    tags = {t.get("ID"): t.get("LABEL") for t in root.iter(f"{ALTO}LayoutTag")}
    named = [tags[b.get("TAGREFS")] for b in root.iter(f"{ALTO}TextBlock") if b.get("TAGREFS")]
    assert named == (["heading", "paragraph"] if with_blocks else [])


def strings_of(document) -> list[list[tuple[str, str | None]]]:
    root = etree.fromstring(document.to_alto().encode("utf-8"))
    return [
        [(s.get("CONTENT"), s.get("SUBS_CONTENT")) for s in line.findall(f"{ALTO}String")]
        for line in root.iter(f"{ALTO}TextLine")
    ]


def test_no_string_holds_a_space_and_a_word_split_at_a_line_end_is_marked(schema):
    texts = [
        "The prob-",  # goes on in lower case on the next line: split
        "lem is  here, twenty-",  # goes on in upper case: a hyphenated compound, kept
        "Five sea¬",  # the not sign old typefaces hyphenate with
        "sons of 3-",  # a digit before the hyphen: kept
        "4 and -",
        "x",
        "  ",  # no text: one empty String, as the schema wants one in a line
    ]
    lines = [
        (0, 0, text, box(10, 10 + 40 * n, 210, 40 + 40 * n), 0.9) for n, text in enumerate(texts)
    ]
    (document,) = parse_ocr_outputs(ocr_outputs(lines, [(0, 600, 800)]), 1, ["a.png"])
    root = etree.fromstring(document.to_alto().encode("utf-8"))
    schema.assertValid(root)
    assert all(" " not in s.get("CONTENT") for s in root.iter(f"{ALTO}String"))
    assert strings_of(document) == [
        [("The", None), ("prob", "problem")],
        [("lem", "problem"), ("is", None), ("here,", None), ("twenty-", None)],
        [("Five", None), ("sea", "seasons")],
        [("sons", "seasons"), ("of", None), ("3-", None)],
        [("4", None), ("and", None), ("-", None)],
        [("x", None)],
        [("", None)],
    ]
    hyphens = [
        [h.get("CONTENT") for h in line.findall(f"{ALTO}HYP")]
        for line in root.iter(f"{ALTO}TextLine")
    ]
    assert hyphens == [["-"], [], ["¬"], [], [], [], []]
    first = next(root.iter(f"{ALTO}TextLine"))
    assert first[-1].tag == f"{ALTO}HYP"  # after the line's last String, as the schema orders it
    kinds = [s.get("SUBS_TYPE") for s in root.iter(f"{ALTO}String") if s.get("SUBS_TYPE")]
    assert kinds == ["HypPart1", "HypPart2", "HypPart1", "HypPart2"]


def test_the_read_command_writes_alto_beside_the_others(tmp_path):
    from triton_ocr.client.client import save_outputs
    from triton_ocr.client.inputs import OUT_SUFFIXES, outputs_done

    scan, _ = documents()
    save_outputs(tmp_path, "scan", scan)
    assert outputs_done(tmp_path, "scan") and ".alto.xml" in OUT_SUFFIXES
    assert (tmp_path / "scan.alto.xml").read_text(encoding="utf-8") == scan.to_alto()


def test_a_figure_is_an_illustration_a_photo_and_a_comment_where_it_stands(schema):
    """A figure's own block (no lines) as the server sends it, between a page's heading and
    the next page: ALTO's Illustration, hOCR's ocr_photo, Markdown's comment."""
    outputs = ocr_outputs(LINES, PAGES, WORDS)
    outputs[contract.OCR_OUTPUT_LINE_BLOCK] = np.array([0, 0, 2, 3], np.int32)
    outputs[contract.OCR_OUTPUT_BLOCK_POLYGONS] = np.array(
        [box(10, 10, 200, 90), box(50, 300, 400, 600), box(20, 30, 220, 70), box(5, 6, 301, 50)],
        np.float32,
    )
    outputs[contract.OCR_OUTPUT_BLOCK_PAGE] = np.array([0, 0, 2, 3], np.int32)
    outputs[contract.OCR_OUTPUT_BLOCK_TYPE] = np.array(
        [b"heading", b"figure", b"paragraph", b"caption"]
    )
    scan, _ = parse_ocr_outputs(outputs, 2, ["scan.pdf", None])
    first = scan.pages[0]
    assert [(b.type, len(b.lines)) for b in first.blocks] == [("heading", 2), ("figure", 0)]
    root = etree.fromstring(scan.to_alto().encode("utf-8"))
    schema.assertValid(root)
    (picture,) = root.findall(f".//{ALTO}Illustration")
    assert (picture.get("HPOS"), picture.get("VPOS"), picture.get("WIDTH")) == ("50", "300", "350")
    assert picture.get("TAGREFS") == "type_figure"
    assert "<div class='ocr_photo' id='photo_1_1' title='bbox 50 300 400 600'></div>" in (
        scan.to_hocr()
    )
    markdown = scan.to_markdown()
    heading = markdown.index(first.blocks[0].lines[-1].text)
    assert heading < markdown.index("<!-- figure -->") < markdown.index("<!-- page 2 -->")
