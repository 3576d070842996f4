"""An item of the `ocr` entry point -> its pages, each an upright HxWx3 uint8 BGR image.

An item is a plain image (one page, decoded as decode.decode_image does), a PDF (pages rendered
by pdfium at the DPI the request asks for, on white) or a multi-page TIFF (frames decoded by
Pillow). Pages come one at a time, on demand, so a long document is never held decoded all at
once; every page's size is known before it is rendered or decoded, and a page over the pixel
limit is refused before any of its pixels is allocated. Nothing is written to disk, nothing of
the content is logged.

pdfium is not thread-safe, not even across documents: every call into it here holds one
process-wide lock, and a Pages object is meant to be used from one thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import math
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

import cv2
import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pypdfium2.internal as pdfium_i
import pypdfium2.raw as pdfium_c
from numpy.typing import NDArray
from PIL import Image

from triton_ocr.settings import Documents, ImageLimits

from .decode import STRIP_PIXELS, apply_exif_orientation, decode_image, to_bgr
from .header import (
    EXIF_ORIENTATION_TAG,
    DocumentGiven,
    ImageDecodeError,
    check_encoded,
    check_size,
    decoded_bytes_per_pixel,
    image_header,
    is_pdf,
    orientation_of,
    stored_size,
    tiff_pages,
)
from .pdf_drawing import MOST_DRAWING_BYTES, drawing_bytes
from .text_layer import TextLayer, read_text_layer

if TYPE_CHECKING:  # Image.open imports its plugins when it needs them
    from PIL import TiffImagePlugin

Stop = Callable[[], bool]  # asked during a render: True abandons it


class PageStopped(ImageDecodeError):
    """A page's render was abandoned because its caller stopped waiting for it."""


POINTS_PER_INCH = 72  # PDF user space units (pdfium ignores /UserUnit)
# pdfium keeps page sizes as 32-bit floats, so a page made from a 401-pixel-wide scan at 200
# dpi measures 144.36000061 pt, i.e. 401.0000017 px: rounding up as pypdfium2's render does
# would add a pixel. Up to this much over a whole pixel is float noise, not page.
PIXEL_SLACK = 0.01
SWAPPED = (5, 6, 7, 8)  # EXIF orientations that turn the image a quarter
PDFIUM_LOCK = threading.RLock()  # pdfium is not thread-safe
PDF_LOAD_ERRORS = {
    pdfium_c.FPDF_ERR_PASSWORD: "encrypted PDF: it needs a password",
    pdfium_c.FPDF_ERR_SECURITY: "encrypted PDF: unsupported security handler",
}


def never() -> bool:
    return False


class Pages:
    """The pages of one item, read one at a time (a context manager: close() frees them).

    `count` pages, `kind` "image", "pdf" or "tiff". page(i) decodes or renders page i (0-based)
    and refuses it (ImageDecodeError) when it is over the pixel limit or unreadable; size(i) is
    its (width, height) as page(i) returns it, without decoding or rendering it. `stop`, when
    given, is asked while a PDF page renders: once it answers True the render is abandoned
    (PageStopped); image decoders cannot be interrupted and run to their end.
    Not thread-safe: use one Pages object from one thread.
    """

    kind = ""
    count = 0

    def page(self, index: int, stop: Stop | None = None) -> NDArray[np.uint8]:
        raise NotImplementedError

    def size(self, index: int) -> tuple[int, int]:
        raise NotImplementedError

    def text_layer(self, index: int, mode: str) -> TextLayer | None:
        """Page `index`'s text layer when it is read from it (`mode`: Documents.pdf_text),
        else None: the page is rendered or decoded and OCRed. Only PDF pages have one."""
        return None

    def look(self, index: int, side: int, stop: Stop | None = None) -> NDArray[np.uint8]:
        """Page `index` rendered small, its long side `side` pixels: a page read from its
        text layer is looked at for its figures so, not rendered whole. PDF pages only."""
        raise NotImplementedError

    def close(self) -> None:
        """Free what the pages hold (pdfium's document, Pillow's open file)."""

    def __enter__(self) -> Pages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self.count:
            raise IndexError(f"page {index} of {self.count}")


def open_pages(data: bytes, limits: ImageLimits, documents: Documents, dpi: int) -> Pages:
    """Open an item as its pages; PDFs are rendered at `dpi` (1..documents.max_pdf_dpi).

    Refuses (ImageDecodeError) what the header check refuses, an unreadable or encrypted PDF, a
    document without pages and one of more than documents.max_pages pages: all before any page
    is rendered or decoded.
    """
    if not 1 <= dpi <= documents.max_pdf_dpi:
        raise ImageDecodeError(f"pdf_dpi must be between 1 and {documents.max_pdf_dpi}, not {dpi}")
    data = bytes(data)
    try:
        check_encoded(data, limits)
    except DocumentGiven:
        if is_pdf(data):
            return PdfPages(data, limits, documents, dpi)
        return TiffPages(data, limits, documents)
    return ImagePages(data, limits)


class ImagePages(Pages):
    """A plain image: one page, decode_image's array."""

    kind = "image"
    count = 1

    def __init__(self, data: bytes, limits: ImageLimits) -> None:
        self._data = data
        self._limits = limits
        self._size: tuple[int, int] | None = None

    def size(self, index: int) -> tuple[int, int]:
        self._check_index(index)
        if self._size is None:  # read when asked: page() alone needs no header read of its own
            _, size, orientation = image_header(self._data)
            assert size is not None  # check_encoded sized it
            width, height = size
            self._size = (height, width) if orientation in SWAPPED else (width, height)
        return self._size

    def page(self, index: int, stop: Stop | None = None) -> NDArray[np.uint8]:
        self._check_index(index)
        return decode_image(self._data, self._limits)


def pdf_pixels(points: float, scale: float) -> int:
    """Pixels a page side of `points` gets at `scale` pixels per point: rounded up, as
    pypdfium2's render does, less float noise (PIXEL_SLACK)."""
    return max(1, math.ceil(points * scale - PIXEL_SLACK))


class PdfPages(Pages):
    """A PDF's pages, rendered by pdfium one at a time at the requested DPI on white."""

    kind = "pdf"

    def __init__(self, data: bytes, limits: ImageLimits, documents: Documents, dpi: int) -> None:
        self._data = data  # pdfium reads from these bytes for as long as the document is open
        self._limits = limits
        self._dpi = dpi
        self._scale = dpi / POINTS_PER_INCH
        self._pdf: pdfium.PdfDocument | None = None
        self._objects = pdf_objects(data)  # each page's drawing, measured before pdfium's parse
        self._measured: set[int] = set()
        with PDFIUM_LOCK:
            # Loaded here rather than by PdfDocument(data): that reports a PDF without pages
            # as a stale error code of an earlier call, and leaks its handle.
            raw = pdfium_c.FPDF_LoadMemDocument64(data, len(data), None)
            if not raw:
                code = pdfium_c.FPDF_GetLastError()
                reason = pdfium_i.ErrorToStr.get(code, f"error {code}")
                raise ImageDecodeError(
                    PDF_LOAD_ERRORS.get(code, f"cannot read PDF: {reason.lower()}")
                )
            self._pdf = pdfium.PdfDocument(raw)  # owns the handle from here on
            # before pages are counted or loaded (pypdfium2's docs); should it fail, form fields
            # are drawn from their appearance streams only
            with contextlib.suppress(pdfium.PdfiumError):
                self._pdf.init_forms()
            self.count = len(self._pdf)  # the page tree's count: no page is loaded
        if self.count < 1:
            self.close()
            raise ImageDecodeError("empty PDF: it has no pages")
        if self.count > documents.max_pages:
            self.close()
            raise ImageDecodeError(
                f"PDF has {self.count} pages; at most {documents.max_pages} per request"
            )

    def _pixel_size(self, index: int, width_pt: float, height_pt: float) -> tuple[int, int]:
        if not (math.isfinite(width_pt) and math.isfinite(height_pt)):
            raise ImageDecodeError(f"page {index + 1}: invalid PDF page size")
        if width_pt <= 0 or height_pt <= 0:
            raise ImageDecodeError(f"page {index + 1}: empty PDF page ({width_pt}x{height_pt} pt)")
        return pdf_pixels(width_pt, self._scale), pdf_pixels(height_pt, self._scale)

    def _document(self) -> pdfium.PdfDocument:
        if self._pdf is None:
            raise ValueError("the PDF's pages are closed")
        return self._pdf

    def size(self, index: int) -> tuple[int, int]:
        """(width, height) from the page dictionary (rotation and crop box applied), without
        parsing the page's content."""
        self._check_index(index)
        with PDFIUM_LOCK:
            try:
                width_pt, height_pt = self._document().get_page_size(index)
            except pdfium.PdfiumError as exc:
                raise ImageDecodeError(f"page {index + 1}: cannot read PDF page") from exc
        return self._pixel_size(index, width_pt, height_pt)

    def _check_drawing(self, index: int) -> None:
        """Refuse page `index` before pdfium parses it (which it cannot stop) when its drawing
        holds more than MOST_DRAWING_BYTES of operators (pdf_drawing)."""
        if self._objects is None or index in self._measured:
            return
        try:
            size = drawing_bytes(self._objects.pages[index].obj, MOST_DRAWING_BYTES)
        except Exception:  # qpdf reads this page otherwise than pdfium: pdfium says what it is
            size = 0
        if size > MOST_DRAWING_BYTES:
            most = MOST_DRAWING_BYTES >> 20
            raise ImageDecodeError(
                f"page {index + 1}: its drawing holds more than {most} MB of operators (a form "
                f"counted each time it is drawn); at most {most} MB a page"
            )
        self._measured.add(index)

    @contextlib.contextmanager
    def _loaded(self, index: int) -> Iterator[tuple[pdfium.PdfPage, int, int]]:
        """Page `index` loaded under pdfium's lock, with its size in pixels at the DPI."""
        self._check_index(index)
        self._check_drawing(index)
        with PDFIUM_LOCK:
            try:
                page = self._document().get_page(index)
            except pdfium.PdfiumError as exc:
                raise ImageDecodeError(f"page {index + 1}: cannot read PDF page") from exc
            try:
                yield (page, *self._pixel_size(index, page.get_width(), page.get_height()))
            finally:
                page.close()

    def text_layer(self, index: int, mode: str) -> TextLayer | None:
        if mode == "ocr":
            return None
        with self._loaded(index) as (page, width, height):
            try:
                return read_text_layer(page, width, height, mode)
            except ValueError as exc:
                raise ImageDecodeError(f"page {index + 1}: {exc}") from exc

    def look(self, index: int, side: int, stop: Stop | None = None) -> NDArray[np.uint8]:
        with self._loaded(index) as (page, width, height):
            scale = side / max(width, height, 1)
            small = (max(1, round(width * scale)), max(1, round(height * scale)))
            return self._render(page, *small, stop or never, index)

    def page(self, index: int, stop: Stop | None = None) -> NDArray[np.uint8]:
        with self._loaded(index) as (page, width, height):
            if width * height > self._limits.max_image_pixels:
                raise ImageDecodeError(
                    f"page {index + 1}: {width}x{height} pixels at {self._dpi} dpi exceeds "
                    f"the limit of {self._limits.max_image_pixels} pixels (ask for a lower "
                    "pdf_dpi)"
                )
            return self._render(page, width, height, stop or never, index)

    @staticmethod
    def _render(
        page: pdfium.PdfPage, width: int, height: int, stop: Stop, index: int
    ) -> NDArray[np.uint8]:
        """pypdfium2's PdfPage.render at an exact size: the page (its /Rotate applied by
        pdfium) stretched onto width x height BGR pixels filled white, annotations and form
        fields drawn. Rendered progressively: pdfium asks between drawing steps whether to
        pause, and pauses once `stop` says so; the render is then abandoned."""
        # native: the buffer belongs to Python (ctypes), so the array outlives the bitmap
        bitmap = pdfium.PdfBitmap.new_native(width, height, pdfium_c.FPDFBitmap_BGR)
        try:
            bitmap.fill_rect((255, 255, 255, 255), 0, 0, width, height)
            args = (bitmap, page, 0, 0, width, height, 0, pdfium_c.FPDF_ANNOT)
            pause = pdfium_c.IFSDK_PAUSE(version=1)
            asked = type(pause.NeedToPauseNow)(lambda _: bool(stop()))  # alive through the render
            pause.NeedToPauseNow = asked
            status = pdfium_c.FPDF_RenderPageBitmap_Start(*args, ctypes.byref(pause))
            try:
                while status == pdfium_c.FPDF_RENDER_TOBECONTINUED and not stop():
                    status = pdfium_c.FPDF_RenderPage_Continue(page, ctypes.byref(pause))
            finally:
                pdfium_c.FPDF_RenderPage_Close(page)
            if status == pdfium_c.FPDF_RENDER_TOBECONTINUED:
                raise PageStopped(f"page {index + 1}: rendering stopped (too slow)")
            if status != pdfium_c.FPDF_RENDER_DONE:
                raise ImageDecodeError(f"page {index + 1}: cannot render PDF page")
            if page.formenv:
                pdfium_c.FPDF_FFLDraw(page.formenv, *args)
            return cast("NDArray[np.uint8]", bitmap.to_numpy())  # BGR, packed rows: (h, w, 3)
        finally:
            bitmap.close()

    def close(self) -> None:
        with PDFIUM_LOCK:
            if self._pdf is not None:
                self._pdf.close()
                self._pdf = None
        if self._objects is not None:
            self._objects.close()
            self._objects = None

    def __del__(self) -> None:  # close before the bytes pdfium reads from are released
        self.close()


def pdf_objects(data: bytes) -> pikepdf.Pdf | None:
    """The PDF's objects as qpdf reads them, or None where it cannot (pdfium may still)."""
    try:
        return pikepdf.open(io.BytesIO(data))
    except Exception:  # any reason qpdf has: pdfium decides whether the file is read
        return None


class TiffPages(Pages):
    """A multi-page TIFF's frames, decoded by Pillow one at a time (seeking reads only the
    frame's directory; the last decoded frame's raw pixels stay with Pillow until close)."""

    kind = "tiff"

    def __init__(self, data: bytes, limits: ImageLimits, documents: Documents) -> None:
        self._limits = limits
        # per frame, read before it is decoded: stored (width, height) and orientation
        self._frames: dict[int, tuple[tuple[int, int], int]] = {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # Pillow's bomb warning: our limit is checked
                # a TIFF: check_encoded found more than one page
                self._image: TiffImagePlugin.TiffImageFile | None = cast(
                    "TiffImagePlugin.TiffImageFile", Image.open(io.BytesIO(data))
                )
                self.count = tiff_pages(self._image, documents.max_pages + 1)
        except Exception as exc:  # read_header read it; this is a defect of the file
            raise ImageDecodeError(f"cannot read TIFF: {exc}") from exc
        if self.count > documents.max_pages:
            self.close()
            raise ImageDecodeError(
                f"TIFF has more than {documents.max_pages} pages; at most "
                f"{documents.max_pages} per request"
            )

    def _frame(self, index: int) -> tuple[TiffImagePlugin.TiffImageFile, tuple[int, int], int]:
        self._check_index(index)
        if self._image is None:
            raise ValueError("the TIFF's pages are closed")
        try:
            self._image.seek(index)
        except Exception as exc:
            raise ImageDecodeError(f"page {index + 1}: cannot read TIFF page: {exc}") from exc
        if index not in self._frames:  # Pillow may drop the orientation tag once decoded
            self._frames[index] = (stored_size(self._image), orientation_of(self._image))
        return self._image, *self._frames[index]

    def size(self, index: int) -> tuple[int, int]:
        _, (width, height), orientation = self._frame(index)
        return (height, width) if orientation in SWAPPED else (width, height)

    def page(self, index: int, stop: Stop | None = None) -> NDArray[np.uint8]:
        frame, size, orientation = self._frame(index)
        check_size(size, decoded_bytes_per_pixel(frame), self._limits, f"page {index + 1}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                frame.load()
                if EXIF_ORIENTATION_TAG not in frame.tag_v2:  # newer Pillow turned it on load
                    orientation = 1
                image = pil_to_bgr(frame)
        except ImageDecodeError as exc:
            raise ImageDecodeError(f"page {index + 1}: {exc}") from exc
        except Exception as exc:  # Pillow: truncated data, unsupported compression, ...
            raise ImageDecodeError(f"page {index + 1}: cannot decode TIFF page: {exc}") from exc
        return apply_exif_orientation(image, orientation)

    def close(self) -> None:
        if self._image is not None:
            self._image.close()
            self._image = None


def int_to_uint8(array: NDArray[np.int32]) -> NDArray[np.uint8]:
    """32-bit integer samples (Pillow's mode I) to 8 bits: kept if they fit 8 bits, scaled as
    16 bits if they fit those, else stretched from their minimum to their maximum."""
    if array.size == 0:
        return array.astype(np.uint8)
    low, high = int(array.min()), int(array.max())
    out = np.empty(array.shape, np.uint8)
    rows = max(1, STRIP_PIXELS // max(1, array[0].size))
    for start in range(0, len(array), rows):  # a strip at a time: no wide temporaries
        strip = array[start : start + rows]
        if low >= 0 and high <= 0xFF:
            out[start : start + rows] = strip
        elif low >= 0 and high <= 0xFFFF:
            out[start : start + rows] = strip // 257  # as to_uint8 scales 16 bits
        else:
            scaled = (strip.astype(np.float64) - low) * (255.0 / max(high - low, 1)) + 0.5
            out[start : start + rows] = scaled
    return out


def pil_to_bgr(image: Image.Image) -> NDArray[np.uint8]:
    """A Pillow image (any mode a TIFF opens as) -> HxWx3 uint8 BGR, as decode.to_bgr makes
    OpenCV's arrays: alpha over white, 16-bit and float scaled to 8 bits (not clipped)."""
    mode = image.mode
    if mode.startswith("I;16"):  # 16-bit gray, either byte order: native uint16 / int16
        array = np.asarray(image)
        return to_bgr(array.astype(array.dtype.newbyteorder("="), copy=False))
    if mode == "I":
        return to_bgr(int_to_uint8(np.asarray(image)))
    if mode in ("L", "LA", "F"):
        return to_bgr(np.asarray(image))
    if mode == "RGB":
        return cast("NDArray[np.uint8]", cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR))
    if mode == "RGBA":
        return to_bgr(cv2.cvtColor(np.asarray(image), cv2.COLOR_RGBA2BGRA))
    if mode == "1":
        return to_bgr(np.asarray(image.convert("L")))
    alpha = mode in ("PA", "La", "RGBa") or "A" in mode or "transparency" in image.info
    try:
        converted = image.convert("RGBA" if alpha else "RGB")  # P, CMYK, YCbCr, LAB, ...
    except ValueError as exc:
        raise ImageDecodeError(f"unsupported TIFF image mode {mode}") from exc
    return pil_to_bgr(converted)
