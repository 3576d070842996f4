"""Searchable PDFs: the input's own pages under an invisible text layer, from the word boxes.

A PDF keeps its pages as they are; an image (each page of a TIFF) becomes a page at its own
resolution (img2pdf: stored losslessly, its DPI, 96 when it states none, and its EXIF turn as
the page's /Rotate). Over each page read goes one Form XObject of text in render mode 3
(invisible, yet selectable and extractable): a run per word over the word's box, a stretched
space between words, lines in reading order. The font is glyphless (built here with fontTools):
every character half an em wide, each run stretched to its box by horizontal scaling, its em box
the box's height. Boxes are pixels of the page as the server read it; pdfium's own pixel-to-page
mapping, the one it renders with, takes them to the page's user space, so /Rotate, crop boxes
and a turned page's sideways lines need no arithmetic of ours.

Pages of a PDF that already have text, as OCRmyPDF offers: `skip` (the default, --skip-text)
leaves them as they are and does not send them; `redo` (--redo-ocr) removes their invisible text,
sends the pages with every text hidden and lays the new text over what their images show, the
visible text kept; `force` (--force-ocr) replaces each page by its rendering, read anew. A PDF
pikepdf cannot open is sent as it is, so it gets the service's error; an owner-protected one
keeps its protection. Needs the server extra (pikepdf, img2pdf, fontTools, pypdfium2).
"""

from __future__ import annotations

import ctypes
import functools
import io
import logging
import math
import zlib
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, replace

import img2pdf
import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pikepdf import Array, ContentStreamInstruction, Dictionary, Name, Operator, Stream, String
from pikepdf.canvas import ContentStreamBuilder
from PIL import Image, ImageOps

from triton_ocr.preprocessing.documents import PDFIUM_LOCK
from triton_ocr.preprocessing.header import is_pdf, orientation_of, page_count_of_tiff

from .results import Document, Page, Polygon

MODES = ("skip", "redo", "force")  # OCRmyPDF's --skip-text, --redo-ocr, --force-ocr
FONT_NAME = "TritonOcrGlyphless"
EM = 1000  # font units
ADVANCE = 500  # every character's width
ASCENT, DESCENT = 800, -200  # a run of size h spans its box: baseline 0.2 h above its bottom
INVISIBLE = 3  # text render mode: neither fill nor stroke
MIRRORED = (2, 4, 5, 7)  # EXIF orientations that flip the image (a /Rotate cannot)
SHOW_TEXT = {"Tj", "TJ", "'", '"'}
# img2pdf warns of every image with alpha that it keeps it as a soft mask: wanted here (the page
# shows it over white, as the server reads it), so not worth a line per file
logging.getLogger("img2pdf").setLevel(logging.ERROR)
BFCHAR_BLOCK = 100  # a CMap's bfchar sections hold at most 100 entries
SPACE = 0.25  # the least width of a space between words, in ems of the line's height
MAX_TAKEN = 0.2  # the most of a word's length its space may take


@dataclass(frozen=True)
class Job:
    """One input on its way to a searchable PDF: the PDF the text goes over, what the service
    reads (None: every page keeps its text, nothing to read) and the source page of each page
    sent."""

    source: bytes | None  # None: pikepdf could not open the input (the service says why)
    send: bytes | None
    pages: tuple[int, ...]
    mode: str


def prepare(data: bytes, mode: str = "skip") -> Job:
    """What to send for `data` (an image or a PDF) under `mode` (MODES)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, not {mode!r}")
    if not is_pdf(data):  # an image's pages have no text of their own: nothing to redo
        source = image_pdf(data)
        return Job(source, data, tuple(range(page_count(source))), "skip")
    try:
        pdf = pikepdf.open(io.BytesIO(data))
        has_text = pages_with_text(data) if mode == "skip" else []
    except (pikepdf.PdfError, pikepdf.PasswordError, pdfium.PdfiumError, ValueError):
        return Job(None, data, (), mode)  # encrypted or broken: the service's error
    with pdf:
        count = len(pdf.pages)
        if mode == "force":
            return Job(data, data, tuple(range(count)), mode)
        if mode == "redo":
            for page in pdf.pages:
                strip_text(pdf, page, invisible_only=False)
            return Job(data, saved(pdf), tuple(range(count)), mode)
        bare = tuple(index for index, has in enumerate(has_text) if not has)
        if len(bare) == count:
            return Job(data, data, bare, mode)
        if not bare:
            return Job(data, None, (), mode)
        subset = pikepdf.new()
        subset.pages.extend(pdf.pages[index] for index in bare)
        return Job(data, saved(subset), bare, mode)


def renumbered(job: Job, document: Document) -> Document:
    """The document the service returned for `job.send`, its pages numbered as in the input."""
    pages = tuple(replace(page, number=job.pages[page.number]) for page in document.pages)
    return Document(pages, document.source)


def searchable_pdf(job: Job, document: Document) -> bytes:
    """The input with a text layer over each page read (`document`, renumbered: its page
    numbers are the input's). Pages not read, or read with an error, are left as they are."""
    if job.source is None:
        raise ValueError("cannot open the PDF to write its text layer")
    read = {page.number: page for page in document.pages if not page.error}
    if not read:
        return job.source
    try:
        return with_text_layers(job, read)
    except (pikepdf.PdfError, pdfium.PdfiumError) as exc:
        raise ValueError(f"cannot write the searchable PDF: {exc}") from exc


def with_text_layers(job: Job, read: dict[int, Page]) -> bytes:
    """searchable_pdf's work: each page read gets its layer (after --redo-ocr's or
    --force-ocr's change to it)."""
    assert job.source is not None  # searchable_pdf checked it
    with pikepdf.open(io.BytesIO(job.source)) as pdf:
        font = TextFont(pdf)
        with PDFIUM_LOCK:
            rendered = pdfium.PdfDocument(job.source)
            try:
                for number, page in read.items():
                    target = pdf.pages[number]
                    view = rendered[number]
                    try:
                        to_page = pixel_to_page(view, page.width, page.height)
                        if job.mode == "force":
                            replace_with_image(pdf, target, render(view, page), to_page)
                        elif job.mode == "redo":
                            strip_text(pdf, target, invisible_only=True)
                    finally:
                        view.close()
                    add_text_layer(pdf, target, page, to_page, font)
            finally:
                rendered.close()
        font.finish()
        return saved(pdf, keep_encryption=True)


# -- the input's pages ---------------------------------------------------------------------


def saved(pdf: pikepdf.Pdf, keep_encryption: bool = False) -> bytes:
    buffer = io.BytesIO()
    pdf.save(buffer, encryption=True if keep_encryption and pdf.is_encrypted else None)
    return buffer.getvalue()


def page_count(source: bytes) -> int:
    with pikepdf.open(io.BytesIO(source)) as pdf:
        return len(pdf.pages)


def split_pages(data: bytes) -> tuple[int, Generator[bytes, None, None] | None]:
    """The pages an item holds as the server counts them (a PDF's, 1 when pikepdf cannot open
    it: the service then says why; a TIFF's frames, up to header.TIFF_PAGES_COUNTED; 1 for an
    image) and, for a PDF of two or more, each page as a PDF of its own, made as it is asked
    for (the gateway's jsonl reads a long PDF page by page)."""
    if not is_pdf(data):
        return page_count_of_tiff(data), None
    try:
        count = page_count(data)
    except (pikepdf.PdfError, pikepdf.PasswordError, ValueError):
        return 1, None
    return count, (pages_apart(data) if count > 1 else None)


def pages_apart(data: bytes) -> Generator[bytes, None, None]:
    """Each page of a PDF as a PDF of its own. pikepdf copies a page's inherited attributes
    with it (MediaBox, /Rotate, Resources), so it renders as it does in its document."""
    with pikepdf.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            single = pikepdf.new()
            single.pages.append(page)
            yield saved(single)


def image_pdf(data: bytes) -> bytes:
    """An image (every page of a TIFF) as PDF pages at its resolution, as the server reads it:
    img2pdf's lossless embedding where it can, else Pillow's pages (EXIF flips applied, alpha
    over white) re-encoded losslessly as PNG. img2pdf turns pages by /Rotate, which cannot
    mirror: an EXIF flip takes Pillow's way."""
    try:
        # img2pdf would make a page of each picture of an MPO (a JPEG whose further pictures,
        # a camera's large preview or a stereo pair's other eye, the server does not read)
        if not any(orientation in MIRRORED for orientation in orientations(data)) and not mpo(data):
            return img2pdf.convert(data, rotation=img2pdf.Rotation.ifvalid)
    except (img2pdf.AlphaChannelError, img2pdf.ExifOrientationError, img2pdf.ImageOpenError):
        pass
    except (img2pdf.PdfTooLargeError, img2pdf.NegativeDimensionError) as exc:
        raise ValueError(f"cannot make a PDF page of this image: {exc}") from exc
    return img2pdf.convert([png_of(frame) for frame in frames(data)])


def mpo(data: bytes) -> bool:
    """Whether Pillow reads the image as an MPO: a JPEG with more pictures after its first."""
    with Image.open(io.BytesIO(data)) as image:
        return bool(image.format == "MPO")


def orientations(data: bytes) -> list[int]:
    """Each page's EXIF orientation (1: as stored), read from the headers only, as the server
    reads it (header.orientation_of)."""
    with Image.open(io.BytesIO(data)) as image:
        found = []
        for index in range(page_count_of_tiff(data)):
            image.seek(index)
            found.append(orientation_of(image, data))
        return found


def frames(data: bytes) -> Iterable[Image.Image]:
    """Each page's frame as the server reads it: a TIFF's every frame, an image's first."""
    with Image.open(io.BytesIO(data)) as image:
        for index in range(page_count_of_tiff(data)):
            image.seek(index)
            frame = ImageOps.exif_transpose(image)
            frame.info["dpi"] = image.info.get("dpi")
            yield frame


def png_of(frame: Image.Image) -> bytes:
    """A frame as PNG: RGB or grey, alpha composited over white, its DPI kept."""
    dpi = frame.info.get("dpi")
    if frame.mode in ("RGBA", "LA", "PA") or "transparency" in frame.info:
        rgba = frame.convert("RGBA")
        frame = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba)
    frame = frame.convert("L" if frame.mode in ("1", "L", "LA", "I;16", "I", "F") else "RGB")
    buffer = io.BytesIO()
    frame.save(buffer, "PNG", **({"dpi": dpi} if dpi else {}))
    return buffer.getvalue()


def pages_with_text(data: bytes) -> list[bool]:
    """Per page, whether pdfium extracts any text from it."""
    with PDFIUM_LOCK:
        document = pdfium.PdfDocument(data)
        try:
            found = []
            for index in range(len(document)):
                page = document[index]
                try:
                    text = page.get_textpage()
                    found.append(bool(text.get_text_range().strip()))
                    text.close()
                finally:
                    page.close()
            return found
        finally:
            document.close()


def strip_text(pdf: pikepdf.Pdf, page: pikepdf.Page, invisible_only: bool) -> None:
    """Remove what the page shows as text, in its content streams and the Form XObjects it
    draws (OCRmyPDF's layer and ours are such forms): all of it, or only what is shown in
    render mode 3 (an earlier OCR's layer). A form other pages draw too changes for them as
    well, which is what an earlier OCR's shared layer needs."""
    page.Contents = pdf.make_stream(
        without_text(pikepdf.parse_content_stream(page), invisible_only)
    )
    for form in forms_of(page.obj.get("/Resources")):
        form.write(without_text(pikepdf.parse_content_stream(form), invisible_only))


def forms_of(resources: pikepdf.Object | None, seen: set[tuple[int, int]] | None = None) -> list:
    """The Form XObjects of `resources`, and of theirs, each once."""
    seen = set() if seen is None else seen
    found = []
    objects = resources.get("/XObject") if isinstance(resources, Dictionary) else None
    for candidate in objects.values() if isinstance(objects, Dictionary) else ():
        if not isinstance(candidate, Stream) or candidate.get("/Subtype") != Name.Form:
            continue
        if candidate.objgen in seen and candidate.objgen != (0, 0):
            continue
        seen.add(candidate.objgen)
        found.append(candidate)
        found.extend(forms_of(candidate.get("/Resources"), seen))
    return found


def without_text(instructions: Iterable, invisible_only: bool) -> bytes:
    """A content stream's instructions less the text they show (all, or in render mode 3).
    Every other operator stays, text state and positioning included, so what remains draws as
    before."""
    kept = []
    mode, saved_modes = 0, []
    for instruction in instructions:
        operator = str(instruction.operator)
        if operator == "q":
            saved_modes.append(mode)
        elif operator == "Q" and saved_modes:
            mode = saved_modes.pop()
        elif operator == "Tr":
            mode = int(instruction.operands[0])
        elif operator in SHOW_TEXT and (not invisible_only or mode == INVISIBLE):
            if operator == '"':  # aw ac string ": the spacing it sets stays
                word_spacing, char_spacing = instruction.operands[:2]
                kept.append(ContentStreamInstruction([word_spacing], Operator("Tw")))
                kept.append(ContentStreamInstruction([char_spacing], Operator("Tc")))
            if operator in ("'", '"'):  # each moves to the next line first
                kept.append(ContentStreamInstruction([], Operator("T*")))
            continue
        kept.append(instruction)
    return pikepdf.unparse_content_stream(kept)


def render(view: pdfium.PdfPage, page: Page) -> Image.Image:
    """The page as pdfium draws it (annotations and forms too), at the size the server read."""
    scale = page.width / view.get_width()
    image = view.render(scale=scale, may_draw_forms=True, draw_annots=True).to_pil()
    if image.size != (page.width, page.height):  # pypdfium2 rounds sizes up
        image = image.resize((page.width, page.height), Image.Resampling.LANCZOS)
    return image.convert("RGB")


def replace_with_image(
    pdf: pikepdf.Pdf, target: pikepdf.Page, image: Image.Image, to_page: np.ndarray
) -> None:
    """--force-ocr: the page's content becomes its rendering, drawn where pdfium drew it (its
    boxes and /Rotate are kept, so it looks and measures as before)."""
    grey = image.mode == "L" or not np.any(np.ptp(np.asarray(image), axis=2))
    pixels = image.convert("L" if grey else "RGB")
    picture = Stream(
        pdf,
        zlib.compress(pixels.tobytes()),
        Type=Name.XObject,
        Subtype=Name.Image,
        Width=pixels.width,
        Height=pixels.height,
        ColorSpace=Name.DeviceGray if grey else Name.DeviceRGB,
        BitsPerComponent=8,
        Filter=Name.FlateDecode,
    )
    (a, c, e), (b, d, f) = to_page
    width, height = pixels.size
    # the image's unit square, (0, 0) at its bottom-left: pixel (u W, (1 - v) H) -> page
    matrix = pikepdf.Matrix(
        a * width, b * width, -c * height, -d * height, c * height + e, d * height + f
    )
    target.Resources = Dictionary(XObject=Dictionary(Page=picture))
    drawing = ContentStreamBuilder().push().cm(matrix).draw_xobject(Name.Page).pop().build()
    target.Contents = pdf.make_stream(drawing)


# -- the text layer ------------------------------------------------------------------------


def pixel_to_page(view: pdfium.PdfPage, width: int, height: int) -> np.ndarray:
    """The affine map (2x3) from pixels of the page drawn at width x height to its user space:
    pdfium's own, inverse of how it renders (FPDF_DeviceToPage)."""

    def point(x: int, y: int) -> np.ndarray:
        page_x, page_y = ctypes.c_double(), ctypes.c_double()
        pdfium_c.FPDF_DeviceToPage(view.raw, 0, 0, width, height, 0, x, y, page_x, page_y)
        return np.array([page_x.value, page_y.value])

    origin = point(0, 0)
    across, down = (point(width, 0) - origin) / width, (point(0, height) - origin) / height
    return np.column_stack((across, down, origin))


@dataclass(frozen=True)
class Run:
    """One word (or a line without words) in page space: where its text begins on the
    baseline, the unit vector along it, its length and its height."""

    text: str
    origin: np.ndarray
    along: np.ndarray
    length: float
    height: float


def run_of(text: str, polygon: Polygon, to_page: np.ndarray) -> Run | None:
    """The run of a box (tl, tr, br, bl of its text, pixels), or None when it has no extent."""
    quad = np.asarray(polygon, dtype=np.float64) @ to_page[:, :2].T + to_page[:, 2]
    top_left, top_right, bottom_right, bottom_left = quad
    along = ((top_right - top_left) + (bottom_right - bottom_left)) / 2
    length = float(np.hypot(*along))
    if not text or length <= 0 or not math.isfinite(length):
        return None
    unit = along / length
    up = (top_left - bottom_left + top_right - bottom_right) / 2
    height = abs(float(unit[0] * up[1] - unit[1] * up[0]))
    if height <= 0:
        return None
    normal = np.array([-unit[1], unit[0]])
    origin = bottom_left + normal * height * (-DESCENT / EM)
    return Run(text, origin, unit, length, height)


def line_runs(page: Page, to_page: np.ndarray) -> list[list[Run]]:
    """Each line's runs, lines in reading order: its words, or the whole line when the
    service gave none."""
    found = []
    for line in page.lines:
        parts = [(word.text, word.polygon) for word in line.words] or [(line.text, line.polygon)]
        runs = [run for text, polygon in parts if (run := run_of(text, polygon, to_page))]
        if runs:
            found.append(runs)
    return found


def spans(run: Run, following: Run | None) -> tuple[float, float]:
    """How long `run`'s text and the space after it are drawn, along its baseline. Word boxes
    may abut (the service splits a gap between them), so a space narrower than SPACE em takes
    what it lacks from the end of the word: readers see a space, not one run-on word."""
    if following is None:
        return run.length, 0.0
    end = run.origin + run.along * run.length
    gap = float(np.dot(following.origin - end, run.along))
    lacking = max(0.0, SPACE * run.height - max(gap, 0.0))
    taken = min(lacking, run.length * MAX_TAKEN)
    return run.length - taken, max(gap, 0.0) + taken


def layer_content(lines: Sequence[Sequence[Run]], font: TextFont) -> bytes:
    """The content stream drawing every run invisibly, a space stretched over each gap."""
    draw = ContentStreamBuilder().push().begin_text().set_text_rendering(INVISIBLE)
    for runs in lines:
        for index, run in enumerate(runs):
            (ux, uy), (ox, oy) = run.along, run.origin
            text_length, space_length = spans(
                run, runs[index + 1] if index + 1 < len(runs) else None
            )
            em = run.height * ADVANCE / EM  # one character's natural width
            draw.set_text_matrix(pikepdf.Matrix(*map(float, (ux, uy, -uy, ux, ox, oy))))
            draw.set_text_font(Name.F, round(run.height, 3))
            draw.set_text_horizontal_scaling(round(100 * text_length / (len(run.text) * em), 3))
            draw.show_text(font.encode(run.text))
            if space_length > 0:
                draw.set_text_horizontal_scaling(round(100 * space_length / em, 3))
                draw.show_text(font.encode(" "))
    return draw.end_text().pop().build()


def add_text_layer(
    pdf: pikepdf.Pdf, target: pikepdf.Page, page: Page, to_page: np.ndarray, font: TextFont
) -> None:
    """Draw the page's text over it as a Form XObject in the page's user space; the page's own
    content is wrapped in q/Q first, so whatever state it leaves does not move the text."""
    lines = line_runs(page, to_page)
    if not lines:
        return
    layer = Stream(
        pdf,
        layer_content(lines, font),
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array(target.mediabox),
        Resources=Dictionary(Font=Dictionary(F=font.font)),
    )
    name = target.add_resource(layer, Name.XObject, prefix="OCR")
    target.contents_add(Stream(pdf, b"q\n"), prepend=True)
    target.contents_add(Stream(pdf, b"\nQ q " + name.unparse() + b" Do Q\n"))


class TextFont:
    """The glyphless Type0 font of one PDF: each character gets a code (CID) the first time it
    is drawn; `finish` writes the CID -> Unicode map extraction reads, once all are known."""

    def __init__(self, pdf: pikepdf.Pdf) -> None:
        self.pdf = pdf
        self.codes: dict[str, int] = {}
        descriptor = Dictionary(
            Type=Name.FontDescriptor,
            FontName=Name("/" + FONT_NAME),
            Flags=4,  # symbolic: no standard encoding applies
            FontBBox=Array([0, DESCENT, ADVANCE, ASCENT]),
            ItalicAngle=0,
            Ascent=ASCENT,
            Descent=DESCENT,
            CapHeight=ASCENT,
            StemV=80,
            FontFile2=Stream(pdf, glyphless_font()),
        )
        self.cid_font = pdf.make_indirect(
            Dictionary(
                Type=Name.Font,
                Subtype=Name.CIDFontType2,
                BaseFont=Name("/" + FONT_NAME),
                CIDSystemInfo=Dictionary(
                    Registry=String("Adobe"), Ordering=String("Identity"), Supplement=0
                ),
                FontDescriptor=descriptor,
                DW=ADVANCE,
            )
        )
        self.font = pdf.make_indirect(
            Dictionary(
                Type=Name.Font,
                Subtype=Name.Type0,
                BaseFont=Name("/" + FONT_NAME),
                Encoding=Name("/Identity-H"),
                DescendantFonts=Array([self.cid_font]),
            )
        )

    def encode(self, text: str) -> bytes:
        codes = (self.codes.setdefault(char, len(self.codes) + 1) for char in text)
        return b"".join(code.to_bytes(2, "big") for code in codes)

    def finish(self) -> None:
        # every code draws glyph 1, the blank one (code 0 is unused: .notdef)
        self.cid_font.CIDToGIDMap = Stream(self.pdf, b"\0\0" + b"\0\1" * len(self.codes))
        self.font.ToUnicode = Stream(self.pdf, to_unicode_cmap(self.codes))


def to_unicode_cmap(codes: dict[str, int]) -> bytes:
    """The ToUnicode CMap of `codes` (character -> 2-byte code)."""
    entries = [
        f"<{code:04X}> <{char.encode('utf-16-be').hex().upper()}>" for char, code in codes.items()
    ]
    sections = []
    for start in range(0, len(entries), BFCHAR_BLOCK):
        block = entries[start : start + BFCHAR_BLOCK]
        sections.append(f"{len(block)} beginbfchar\n" + "\n".join(block) + "\nendbfchar")
    return "\n".join(
        [
            "/CIDInit /ProcSet findresource begin",
            "12 dict begin",
            "begincmap",
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
            "/CMapName /Adobe-Identity-UCS def",
            "/CMapType 2 def",
            "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange",
            *sections,
            "endcmap",
            "CMapName currentdict /CMap defineresource pop",
            "end",
            "end",
        ]
    ).encode("ascii")


@functools.cache
def glyphless_font() -> bytes:
    """A TrueType font of two empty glyphs (.notdef and a blank), each half an em wide."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    builder = FontBuilder(EM, isTTF=True)
    builder.setupGlyphOrder([".notdef", "blank"])
    builder.setupCharacterMap({})
    empty = TTGlyphPen(None).glyph()
    # the blank glyph is one stroke corner to corner of its em box: no area to paint, yet the
    # box readers measure it by (pdfium skips text whose glyphs have no extent across a line)
    pen = TTGlyphPen(None)
    pen.moveTo((0, DESCENT))
    pen.lineTo((ADVANCE, ASCENT))
    pen.closePath()
    builder.setupGlyf({".notdef": empty, "blank": pen.glyph()})
    builder.setupHorizontalMetrics({".notdef": (ADVANCE, 0), "blank": (ADVANCE, 0)})
    builder.setupHorizontalHeader(ascent=ASCENT, descent=DESCENT)
    builder.setupNameTable({"familyName": FONT_NAME, "styleName": "Regular"})
    builder.setupOS2(
        sTypoAscender=ASCENT, sTypoDescender=DESCENT, usWinAscent=ASCENT, usWinDescent=-DESCENT
    )
    builder.setupPost()
    buffer = io.BytesIO()
    builder.save(buffer)
    return buffer.getvalue()
