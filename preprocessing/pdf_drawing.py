"""A PDF page's drawing, measured before pdfium parses it.

pdfium parses a page's whole drawing when it loads the page (its annotations' appearances when
it draws them), with no way to stop it: every operator of its content streams, and a form
XObject's again each time it is drawn. Both can be out of all proportion to the file: a content
stream compresses a thousandfold, and forms drawn 100 times by forms drawn 100 times multiply
(docs/reliability.md, "A PDF page's drawing before pdfium"). So the bytes of operators a page
holds, forms counted as often as they are drawn, are added up here from the file's objects
(pikepdf), each stream decompressed no further than what is left of the allowance, and a page
over it is refused before pdfium sees it.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter

import pikepdf

# a form drawn: its name, then the Do operator (a name's #xx escapes stand for bytes)
DRAWN = re.compile(rb"/([^\s/\[\]<>(){}%]+)\s*Do(?![^\s/\[\]<>(){}%])")
ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
# a page's drawing may hold this many bytes of operators: pdfium holds many times as much
# while it parses them (docs/reliability.md)
MOST_DRAWING_BYTES = 16 << 20
OTHER_FILTERS_EXPAND = 1400  # the most a byte of LZW (or the other filters) decodes to


def drawing_bytes(page: pikepdf.Dictionary, most: int) -> int:
    """The bytes of operators in the page's content streams and its annotations' appearances,
    each form XObject's counted as many times as it is drawn (within forms too), and each
    Type3 font's glyph procedures once, up to `most`: past it, `most` + 1. A form drawn
    within itself counts once (pdfium draws it once)."""
    resources = inherited(page, "/Resources")
    contents = page.get("/Contents")
    streams = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
    known: dict[tuple[int, int], int] = {}
    total = work(
        [s for s in streams if isinstance(s, pikepdf.Stream)], resources, most, known, frozenset()
    )
    for shown in appearances(page):
        if total > most:
            break
        total += work(
            [shown], shown.get("/Resources", resources), most, known, frozenset({shown.objgen})
        )
    return min(total, most + 1)


def appearances(page: pikepdf.Dictionary) -> list[pikepdf.Stream]:
    """The normal appearances of the page's annotations and form fields, each state's (pdfium
    draws them with the page)."""
    annotations = page.get("/Annots")
    found: list[pikepdf.Stream] = []
    for annotation in annotations if isinstance(annotations, pikepdf.Array) else []:
        shown = annotation.get("/AP") if isinstance(annotation, pikepdf.Dictionary) else None
        normal = shown.get("/N") if isinstance(shown, pikepdf.Dictionary) else None
        if isinstance(normal, pikepdf.Stream):
            found.append(normal)
        elif isinstance(normal, pikepdf.Dictionary):
            found += [state for state in normal.values() if isinstance(state, pikepdf.Stream)]
    return found


def work(
    streams: list[pikepdf.Stream],
    resources: pikepdf.Object,
    most: int,
    known: dict[tuple[int, int], int],
    within: frozenset[tuple[int, int]],
) -> int:
    """drawing_bytes of these streams read with these resources; `known`: the forms measured
    so far, `within`: the forms being drawn around these streams."""
    total = 0
    for font in type3_fonts(resources) if streams else []:  # glyph procedures, parsed once each
        if font.objgen not in known:
            procedures = font.get("/CharProcs")
            known[font.objgen] = work(
                [p for p in procedures.values() if isinstance(p, pikepdf.Stream)]
                if isinstance(procedures, pikepdf.Dictionary)
                else [],
                font.get("/Resources", resources),
                most,
                known,
                within | {font.objgen},
            )
            total += known[font.objgen]
    for stream in streams:
        if total > most:
            return most + 1
        data = decoded(stream, most - total + 1)
        total += len(data)
        drawn = Counter(unescaped(name) for name in DRAWN.findall(data))
        for name, times in drawn.items():
            form = form_named(resources, name.decode("latin-1"))
            if form is None or form.objgen in within:
                continue
            if form.objgen not in known:
                known[form.objgen] = work(
                    [form],
                    form.get("/Resources", resources),
                    most,
                    known,
                    within | {form.objgen},
                )
            total += times * known[form.objgen]
            if total > most:
                return most + 1
    return total


def type3_fonts(resources: pikepdf.Object) -> list[pikepdf.Dictionary]:
    """The Type3 fonts the resources name: fonts whose glyphs are drawn by procedures."""
    fonts = resources.get("/Font") if isinstance(resources, pikepdf.Dictionary) else None
    return [
        font
        for font in (fonts.values() if isinstance(fonts, pikepdf.Dictionary) else [])
        if isinstance(font, pikepdf.Dictionary) and font.get("/Subtype") == pikepdf.Name.Type3
    ]


def unescaped(name: bytes) -> bytes:
    """A name as written in a content stream, its #xx escapes read."""
    return ESCAPE.sub(lambda m: bytes([int(m[1], 16)]), name)


def inherited(page: pikepdf.Dictionary, key: str) -> pikepdf.Object:
    """The page's value of `key`, or its nearest ancestor's in the page tree (Resources are
    inherited), or an empty dictionary."""
    node: object = page
    for _ in range(64):  # a page tree deeper than this is a loop
        if not isinstance(node, pikepdf.Dictionary):
            break
        if key in node:
            return node[key]
        node = node.get("/Parent")
    return pikepdf.Dictionary()


def form_named(resources: pikepdf.Object, name: str) -> pikepdf.Stream | None:
    """The form XObject the resources name so, or None (an image, or nothing)."""
    xobjects = resources.get("/XObject") if isinstance(resources, pikepdf.Dictionary) else None
    found = xobjects.get("/" + name) if isinstance(xobjects, pikepdf.Dictionary) else None
    if isinstance(found, pikepdf.Stream) and found.get("/Subtype") == pikepdf.Name.Form:
        return found
    return None


def decoded(stream: pikepdf.Stream, most: int) -> bytes:
    """The stream's decoded bytes, no more than `most` of them: Flate (a content stream's usual
    filter, and the one that compresses a thousandfold) decompressed that far only; another
    filter decoded by qpdf where its encoded bytes are too few to pass `most` (LZW expands
    at most about 1:1400), else counted by those bytes; bytes that do not decode as what they
    say, as they are."""
    raw = stream.read_raw_bytes()
    filters = stream.get("/Filter")
    names = list(filters) if isinstance(filters, pikepdf.Array) else [filters]
    try:
        if filters is None:
            return raw[:most]
        if names == [pikepdf.Name.FlateDecode]:
            return zlib.decompressobj().decompress(raw, most)
        if len(raw) * OTHER_FILTERS_EXPAND <= most:
            return stream.read_bytes()[:most]
    except (zlib.error, pikepdf.PdfError):
        pass
    return raw[:most]
