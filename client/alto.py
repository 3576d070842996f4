"""ALTO XML v4 output: one file per document, as libraries and archives read it.

Each page is a `Page` (its number, its size in pixels, the `ROTATION` its text stands at when
it came turned) holding one `PrintSpace`; each block a `TextBlock`, each line a `TextLine`, each
word a `String` (its `CONTENT`, its box and its confidence `WC`), with an `SP` between words.
A line read without word boxes is one `String`. Boxes are axis-aligned, in integer pixels of the
page (`MeasurementUnit` pixel), clamped to it. Schema: https://www.loc.gov/standards/alto/

Works on anything shaped like results.Page (read by attribute), as hocr.py does.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from .hocr import NOT_XML, OCR_SYSTEM, LineLike, PageLike, WordLike, bbox_of, page_blocks

NAMESPACE = "http://www.loc.gov/standards/alto/ns-v4#"
SCHEMA_VERSION = "4.4"
SCHEMA_LOCATION = f"{NAMESPACE} http://www.loc.gov/standards/alto/v4/alto-4-4.xsd"
XSI = "http://www.w3.org/2001/XMLSchema-instance"


def box(points: Iterable[Sequence[float]], page: PageLike) -> dict[str, str]:
    x0, y0, x1, y1 = bbox_of(points, page.width, page.height)
    return {"HPOS": str(x0), "VPOS": str(y0), "WIDTH": str(x1 - x0), "HEIGHT": str(y1 - y0)}


def clean(text: str) -> str:
    """Text an XML attribute may hold (characters XML forbids replaced)."""
    return NOT_XML.sub("\ufffd", text)


def string(parent: ET.Element, word: WordLike, page: PageLike, ident: str) -> None:
    attributes = {"ID": ident, **box(word.polygon, page), "CONTENT": clean(word.text)}
    attributes["WC"] = f"{min(max(float(word.score), 0.0), 1.0):.3f}"
    ET.SubElement(parent, "String", attributes)


def text_line(parent: ET.Element, line: LineLike, page: PageLike, ident: str) -> None:
    element = ET.SubElement(parent, "TextLine", {"ID": ident, **box(line.polygon, page)})
    words = [w for w in line.words if w.text.strip()] or [line]  # no word boxes: one String
    for k, word in enumerate(words, start=1):
        if k > 1:
            ET.SubElement(element, "SP")
        string(element, word, page, f"{ident}_w{k}")


def page_element(layout: ET.Element, page: PageLike) -> None:
    number = page.number + 1
    size = {"WIDTH": str(page.width), "HEIGHT": str(page.height)}
    attributes = {"ID": f"p{number}", **size, "PHYSICAL_IMG_NR": str(number)}
    rotation = getattr(page, "rotation", 0)
    if rotation:  # ALTO's ROTATION: counter-clockwise degrees of the text on the page
        attributes["ROTATION"] = str((360 - rotation) % 360)
    element = ET.SubElement(layout, "Page", attributes)
    space = ET.SubElement(element, "PrintSpace", {"HPOS": "0", "VPOS": "0", **size})
    for b, (points, lines) in enumerate(page_blocks(page), start=1):
        ident = f"p{number}_b{b}"
        block_element = ET.SubElement(space, "TextBlock", {"ID": ident, **box(points, page)})
        for n, line in enumerate(lines, start=1):
            text_line(block_element, line, page, f"{ident}_l{n}")


def to_alto(pages: Iterable[PageLike], source: str | None = None) -> str:
    """One ALTO v4 document holding `pages`, read from the file `source` (if any)."""
    ET.register_namespace("", NAMESPACE)
    root = ET.Element(
        "alto",
        {"SCHEMAVERSION": SCHEMA_VERSION, f"{{{XSI}}}schemaLocation": SCHEMA_LOCATION},
    )
    description = ET.SubElement(root, "Description")
    ET.SubElement(description, "MeasurementUnit").text = "pixel"
    if source is not None:
        image = ET.SubElement(description, "sourceImageInformation")
        ET.SubElement(image, "fileName").text = clean(source)
    processing = ET.SubElement(description, "Processing", {"ID": "ocr"})
    software = ET.SubElement(processing, "processingSoftware")
    ET.SubElement(software, "softwareName").text = OCR_SYSTEM
    layout = ET.SubElement(root, "Layout")
    for page in pages:
        page_element(layout, page)
    for element in root.iter():  # the ALTO namespace on every element
        if not element.tag.startswith("{"):
            element.tag = f"{{{NAMESPACE}}}{element.tag}"
    ET.indent(root, space=" ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
