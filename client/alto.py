"""ALTO XML v4 output: one file per document, as libraries and archives read it.

Each page is a `Page` (its number, its size in pixels, the `ROTATION` its text stands at when
it came turned) holding one `PrintSpace`; each block a `TextBlock`, each line a `TextLine`, each
word a `String` (its `CONTENT`, its box and its confidence `WC`), with an `SP` between words: in
ALTO a `String` is one word, as viewers, search highlighting and ALTO tools read it. A line read
without word boxes is cut at its spaces, each word's box its share of the line's box by
characters. A word split at a line end (a hyphen after a letter, the block's next line going on
in lower case) ends its line with `HYP`, and both parts carry the whole word (`SUBS_CONTENT`).
A table (when read) is a `ComposedBlock` of `TYPE` table holding a `TextBlock` per cell, the
cell's lines in it. A block's type (heading, paragraph, list, header, footer, caption...) is a
`LayoutTag` its `TextBlock` names in `TAGREFS`. Boxes are axis-aligned, in integer pixels of
the page (`MeasurementUnit` pixel), clamped to it.
Schema: https://www.loc.gov/standards/alto/

Works on anything shaped like results.Page (read by attribute), as hocr.py does.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .hocr import (
    NOT_XML,
    OCR_SYSTEM,
    BlockRegion,
    LineLike,
    PageLike,
    TableRegion,
    WordLike,
    bbox_of,
    page_regions,
    picture,
)

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


# what ends the first part of a word split at a line end: hyphen-minus, hyphen, soft hyphen, and
# the not sign old typefaces hyphenate with
HYPHENS = "-\u2010\u00ad\u00ac"


@dataclass(frozen=True)
class Word:
    text: str
    polygon: Sequence[Sequence[float]]
    score: float


def line_words(line: LineLike) -> list[WordLike]:
    """The line's words, none holding a space: its word boxes, or (a line read without them)
    its text cut at spaces, each word given its share of the line's box by characters."""
    given = [piece for w in line.words if w.text.strip() for piece in spaced(w)]
    return given or spaced(line) or [Word("", line.polygon, line.score)]


def spaced(word: WordLike) -> list[WordLike]:
    """`word` cut at its spaces (one word stays as it is; only spaces: none)."""
    parts = word.text.split()
    if len(parts) <= 1 and "".join(parts) == word.text:
        return [word]
    xs = [float(x) for x, _ in word.polygon]
    ys = [float(y) for _, y in word.polygon]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    step = (x1 - x0) / max(len(word.text), 1)
    pieces: list[WordLike] = []
    start = 0
    for part in parts:
        start = word.text.index(part, start)
        left, right = x0 + start * step, x0 + (start + len(part)) * step
        pieces.append(Word(part, [(left, y0), (right, y0), (right, y1), (left, y1)], word.score))
        start += len(part)
    return pieces


def hyphen_split(last: str, following: str | None) -> bool:
    """Whether `last`, a line's last word, is the first part of a word split at the line end and
    going on in `following`, the next line's first word in the same block."""
    return (
        following is not None
        and len(last) > 1
        and last[-1] in HYPHENS
        and last[-2].isalpha()
        and following[:1].islower()
    )


def string(
    parent: ET.Element, word: WordLike, page: PageLike, ident: str, content: str, subs: dict
) -> None:
    attributes = {"ID": ident, **box(word.polygon, page), "CONTENT": clean(content), **subs}
    attributes["WC"] = f"{min(max(float(word.score), 0.0), 1.0):.3f}"
    ET.SubElement(parent, "String", attributes)


def text_line(
    parent: ET.Element,
    words: list[WordLike],
    box_of_line: dict[str, str],
    page: PageLike,
    ident: str,
    joins: tuple[str | None, str | None],
) -> None:
    """A TextLine of `words`; `joins`: the whole word split across the end of the line before
    (its first word's) and of this one (its last word's), if any."""
    element = ET.SubElement(parent, "TextLine", {"ID": ident, **box_of_line})
    before, after = joins
    for k, word in enumerate(words, start=1):
        content, subs = word.text, {}
        if k > 1:
            ET.SubElement(element, "SP")
        if k == 1 and before is not None:
            subs = {"SUBS_TYPE": "HypPart2", "SUBS_CONTENT": clean(before)}
        if k == len(words) and after is not None:
            content = word.text[:-1]
            subs = {"SUBS_TYPE": "HypPart1", "SUBS_CONTENT": clean(after)}
        string(element, word, page, f"{ident}_w{k}", content, subs)
    if after is not None:
        ET.SubElement(element, "HYP", {"CONTENT": clean(words[-1].text[-1])})


def block_lines(element: ET.Element, lines: Sequence[LineLike], page: PageLike, ident: str) -> None:
    """The block's TextLines, a word split at a line end marked where the next line goes on."""
    words = [line_words(line) for line in lines]  # a line without text: one empty String
    joined: list[str | None] = []  # the whole word split at each line's end
    for n, these in enumerate(words):
        following = words[n + 1][0].text if n + 1 < len(words) else None
        last = these[-1].text
        joined.append(
            last[:-1] + following if following and hyphen_split(last, following) else None
        )
    for n, line in enumerate(lines):
        joins = (joined[n - 1] if n else None, joined[n])
        text_line(element, words[n], box(line.polygon, page), page, f"{ident}_l{n + 1}", joins)


def page_element(layout: ET.Element, page: PageLike) -> None:
    number = page.number + 1
    size = {"WIDTH": str(page.width), "HEIGHT": str(page.height)}
    attributes = {"ID": f"p{number}", **size, "PHYSICAL_IMG_NR": str(number)}
    rotation = getattr(page, "rotation", 0)
    if rotation:  # ALTO's ROTATION: counter-clockwise degrees of the text on the page
        attributes["ROTATION"] = str((360 - rotation) % 360)
    element = ET.SubElement(layout, "Page", attributes)
    space = ET.SubElement(element, "PrintSpace", {"HPOS": "0", "VPOS": "0", **size})
    for b, region in enumerate(page_regions(page), start=1):
        ident = f"p{number}_b{b}"
        if isinstance(region, TableRegion):
            table_element(space, region, page, ident)
            continue
        attributes = {"ID": ident, **box(region.polygon, page)}
        if region.type:
            attributes["TAGREFS"] = layout_tag(region.type)
        if picture(region):
            ET.SubElement(space, "Illustration", attributes)
            continue
        block_element = ET.SubElement(space, "TextBlock", attributes)
        block_lines(block_element, region.lines, page, ident)


def layout_tag(kind: str) -> str:
    """The ID of the LayoutTag naming a block type."""
    return f"type_{kind}"


def table_element(space: ET.Element, region: TableRegion, page: PageLike, ident: str) -> None:
    """A table as a ComposedBlock of TYPE table holding a TextBlock per cell, row by row (ALTO
    has no rows or spans: each cell's box says where it lies), the lines in it inside."""
    table = region.table
    element = ET.SubElement(
        space, "ComposedBlock", {"ID": ident, "TYPE": "table", **box(table.polygon, page)}
    )
    for k, (cell, lines) in enumerate(region.cells, start=1):
        cell_ident = f"{ident}_c{k}"
        cell_element = ET.SubElement(
            element, "TextBlock", {"ID": cell_ident, **box(cell.polygon, page)}
        )
        block_lines(cell_element, lines, page, cell_ident)


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
    pages = list(pages)  # read twice: the tags, then the pages
    kinds = sorted({r.type for p in pages for r in page_regions(p) if isinstance(r, BlockRegion)})
    if any(kinds):  # each block type named once, a TextBlock's TAGREFS naming its own
        tags = ET.SubElement(root, "Tags")
        for kind in filter(None, kinds):
            ET.SubElement(tags, "LayoutTag", {"ID": layout_tag(kind), "LABEL": kind})
    layout = ET.SubElement(root, "Layout")
    for page in pages:
        page_element(layout, page)
    for element in root.iter():  # the ALTO namespace on every element
        if not element.tag.startswith("{"):
            element.tag = f"{{{NAMESPACE}}}{element.tag}"
    ET.indent(root, space=" ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
