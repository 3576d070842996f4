import io
import time

import cv2
import numpy as np
import pikepdf
import pytest
from PIL import Image

from tests.documents import (
    encrypted_pdf,
    make_pdf,
    make_tiff,
    many_pages_pdf,
    pikepdf_pdf,
    text_page,
)
from triton_ocr.preprocessing.decode import apply_exif_orientation, decode_image
from triton_ocr.preprocessing.documents import Pages, open_pages
from triton_ocr.preprocessing.header import DocumentGiven, ImageDecodeError, check_encoded
from triton_ocr.settings import Documents, ImageLimits

LIMITS = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=50_000_000)
DOCS = Documents(pdf_dpi=200, max_pdf_dpi=600, max_pages=100)


def bgr(image: Image.Image) -> np.ndarray:
    return cv2.cvtColor(np.asarray(image.convert("RGB")), cv2.COLOR_RGB2BGR)


def every_page(pages: Pages) -> list[np.ndarray]:
    return [pages.page(i) for i in range(pages.count)]


@pytest.fixture(scope="module")
def sources() -> list[Image.Image]:
    return [text_page(f"Page {i}\nhello world {i}") for i in range(3)]  # 400x300


@pytest.fixture(scope="module")
def three_pages(sources) -> bytes:
    return make_pdf(sources, resolution=200)


def test_pdf_pages_come_back_as_rendered_at_the_source_resolution(sources, three_pages):
    with open_pages(three_pages, LIMITS, DOCS, dpi=200) as pages:
        assert (pages.kind, pages.count) == ("pdf", 3)
        assert [pages.size(i) for i in range(3)] == [(400, 300)] * 3
        for source, page in zip(sources, every_page(pages), strict=True):
            assert page.shape == (300, 400, 3) and page.dtype == np.uint8
            assert np.abs(page.astype(int) - bgr(source)).mean() < 2  # JPEG in the PDF
        assert not np.array_equal(pages.page(0), pages.page(1))  # each page its own


@pytest.mark.parametrize("dpi", [72, 97, 100, 300])
def test_pdf_page_size_is_known_before_rendering_at_any_dpi(three_pages, dpi):
    with open_pages(three_pages, LIMITS, DOCS, dpi) as pages:
        width, height = pages.size(2)
        assert pages.page(2).shape == (height, width, 3)
        assert abs(width - 400 * dpi / 200) < 1 and abs(height - 300 * dpi / 200) < 1


def test_pdf_of_an_odd_sized_scan_keeps_its_pixel_size():
    """pdfium holds page sizes as float32: rounding up as pypdfium2 does would add a pixel."""
    pdf = make_pdf([text_page("odd", (401, 299))], resolution=200)
    with open_pages(pdf, LIMITS, DOCS, dpi=200) as pages:
        assert pages.size(0) == (401, 299) and pages.page(0).shape == (299, 401, 3)


def test_pdf_page_rotation_is_applied(sources):
    with pikepdf.open(io.BytesIO(make_pdf(sources[:1], resolution=200))) as pdf:
        pdf.pages[0].Rotate = 90
        buffer = io.BytesIO()
        pdf.save(buffer)
    with open_pages(buffer.getvalue(), LIMITS, DOCS, dpi=200) as pages:
        assert pages.size(0) == (300, 400)
        page = pages.page(0)
    expected = cv2.rotate(bgr(sources[0]), cv2.ROTATE_90_CLOCKWISE)
    assert page.shape == expected.shape
    assert np.abs(page.astype(int) - expected).mean() < 2


def test_tiff_pages_are_bgr_with_each_frame_scaled_and_turned():
    color = text_page("color", (120, 80))
    deep = np.tile(np.linspace(0, 65535, 50).astype(np.uint16), (40, 1))  # 50x40 ramp
    tiff = make_tiff([color, Image.fromarray(deep)], orientations=[1, 6])
    with open_pages(tiff, LIMITS, DOCS, dpi=200) as pages:
        assert (pages.kind, pages.count) == ("tiff", 2)
        assert [pages.size(0), pages.size(1)] == [(120, 80), (40, 50)]  # page 1 turned
        first, second = every_page(pages)
    assert np.array_equal(first, bgr(color))
    eight = (deep.astype(np.uint32) * 255 // 65535).astype(np.uint8)  # scaled, not clipped
    turned = apply_exif_orientation(cv2.cvtColor(eight, cv2.COLOR_GRAY2BGR), 6)
    assert second.shape == (50, 40, 3) and second.dtype == np.uint8
    assert np.array_equal(second, turned)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_tiff_pages_are_turned_as_a_single_tiff_image_is(orientation):
    """Pillow (pages) and OpenCV (a one-page TIFF, decode_image) agree on every orientation."""
    deep = np.tile(np.linspace(0, 65535, 50).astype(np.uint16), (40, 1))
    deep[:5, :10] = 0  # a mark top-left: flips show
    tiff = make_tiff([Image.fromarray(deep)] * 2, orientations=[1, orientation])
    with open_pages(tiff, LIMITS, DOCS, dpi=200) as pages:
        page = pages.page(1)
        assert page.shape[1::-1] == pages.size(1)
    single = make_tiff([Image.fromarray(deep)], orientations=[orientation])
    assert np.array_equal(page, decode_image(single, LIMITS))


@pytest.mark.parametrize("compression", ["tiff_lzw", "tiff_deflate"])
@pytest.mark.parametrize("orientation", [3, 8])
def test_compressed_tiff_pages_are_turned_once(compression, orientation):
    color = text_page("turn", (90, 60))
    tiff = make_tiff([color, color], [1, orientation], compression=compression)
    with open_pages(tiff, LIMITS, DOCS, dpi=200) as pages:
        turned = pages.page(1)
        assert turned.shape[1::-1] == pages.size(1)
        assert np.array_equal(pages.page(1), turned)  # read twice: the same
    assert np.array_equal(turned, apply_exif_orientation(bgr(color), orientation))


def frame(mode: str) -> Image.Image:
    base = Image.new("L", (30, 20), 255)
    base.paste(0, (0, 0, 10, 10))
    if mode == "1":
        return base.convert("1")
    if mode == "P":
        return base.convert("RGB").convert("P")
    if mode in ("RGBA", "LA"):
        image = base.convert(mode)
        image.putalpha(Image.new("L", base.size, 255))
        image.putpixel((29, 19), (0, 0, 0, 0) if mode == "RGBA" else (0, 0))  # transparent
        return image
    if mode == "I":
        return Image.fromarray(np.asarray(base).astype(np.int32) * 257)  # 16-bit in 32
    if mode == "F":
        return Image.fromarray(np.asarray(base).astype(np.float32) / 255)
    return base.convert(mode)


@pytest.mark.parametrize("mode", ["1", "L", "P", "RGB", "RGBA", "LA", "CMYK", "I", "F"])
def test_tiff_frames_of_every_mode_become_eight_bit_bgr(mode):
    tiff = make_tiff([frame("L"), frame(mode)])
    with open_pages(tiff, LIMITS, DOCS, dpi=200) as pages:
        page = pages.page(1)
    assert page.shape == (20, 30, 3) and page.dtype == np.uint8
    assert (page[2, 2] == 0).all() and (page[15, 25] == 255).all()
    assert (page[19, 29] == 255).all()  # transparent pixels are white


def test_encrypted_pdf_needs_a_password():
    with pytest.raises(ImageDecodeError, match="encrypted PDF: it needs a password"):
        open_pages(encrypted_pdf(), LIMITS, DOCS, dpi=200)


def test_pdf_with_only_an_owner_password_reads():
    with open_pages(encrypted_pdf(user="", owner="owner"), LIMITS, DOCS, dpi=72) as pages:
        assert pages.count == 1 and pages.size(0) == (200, 100)
        assert (pages.page(0) == 255).all()  # a blank page on white


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\n" + bytes(range(256)) * 8,
        b"%PDF-1.7\n",
        pikepdf_pdf()[:100],
    ],
    ids=["garbage", "header only", "truncated"],
)
def test_broken_pdf_is_refused_with_pdfiums_reason(data):
    with pytest.raises(ImageDecodeError, match="^cannot read PDF: data format error$"):
        open_pages(data, LIMITS, DOCS, dpi=200)


def test_pdf_without_pages_is_refused():
    with pytest.raises(ImageDecodeError, match="^empty PDF: it has no pages$"):
        open_pages(pikepdf_pdf(pages=0), LIMITS, DOCS, dpi=200)


def test_pdf_of_too_many_pages_is_refused_without_reading_them():
    data = many_pages_pdf(10_000)
    start = time.perf_counter()
    with pytest.raises(ImageDecodeError, match="^PDF has 10000 pages; at most 100 per request$"):
        open_pages(data, LIMITS, DOCS, dpi=200)
    assert time.perf_counter() - start < 0.5


def test_tiff_of_too_many_pages_is_refused():
    tiff = make_tiff([frame("L")] * 3)
    few = Documents(pdf_dpi=200, max_pdf_dpi=600, max_pages=2)
    refused = "^TIFF has more than 2 pages; at most 2 per request$"
    with pytest.raises(ImageDecodeError, match=refused):
        open_pages(tiff, LIMITS, few, dpi=200)


def test_pdf_page_over_the_pixel_limit_is_refused_before_rendering():
    pdf = make_pdf([text_page("small", (200, 150)), text_page("large", (400, 300))], 200)
    small = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=100_000)
    with open_pages(pdf, small, DOCS, dpi=200) as pages:
        assert pages.page(0).shape == (150, 200, 3)
        assert pages.size(1) == (400, 300)  # sizes are reported, pages refused
        message = (
            r"^page 2: 400x300 pixels at 200 dpi exceeds the limit of 100000 pixels "
            r"\(ask for a lower pdf_dpi\)$"
        )
        with pytest.raises(ImageDecodeError, match=message):
            pages.page(1)
    with open_pages(pdf, small, DOCS, dpi=100) as pages:
        assert pages.page(1).shape == (150, 200, 3)


def test_tiff_page_over_the_pixel_limit_is_refused():
    tiff = make_tiff([Image.new("L", (100, 100)), Image.new("L", (400, 300))])
    small = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=100_000)
    with open_pages(tiff, small, DOCS, dpi=200) as pages:
        assert pages.page(0).shape == (100, 100, 3)
        with pytest.raises(ImageDecodeError, match="^page 2: 400x300 = 120000 pixels exceeds"):
            pages.page(1)


@pytest.mark.parametrize("dpi", [0, 601])
def test_dpi_outside_the_servers_range_is_refused(three_pages, dpi):
    with pytest.raises(ImageDecodeError, match="pdf_dpi must be between 1 and 600"):
        open_pages(three_pages, LIMITS, DOCS, dpi)


def test_check_encoded_says_a_document_is_pages(three_pages):
    with pytest.raises(DocumentGiven, match="^a PDF document: pages, not one image$") as pdf:
        check_encoded(b"  \n" + three_pages, LIMITS)
    assert pdf.value.what == "a PDF document"
    tiff = make_tiff([frame("L"), frame("RGB")])
    with pytest.raises(DocumentGiven, match="^a TIFF with 2 pages: pages") as pages:
        check_encoded(tiff, LIMITS)
    assert pages.value.what == "a TIFF with 2 pages"
    single = make_tiff([frame("RGB")])
    assert check_encoded(single, LIMITS) == ("TIFF", 1)


def test_plain_image_is_one_page_decoded_as_an_image():
    buffer = io.BytesIO()
    text_page("png", (64, 48)).save(buffer, "PNG")
    png = buffer.getvalue()
    with open_pages(png, LIMITS, DOCS, dpi=200) as pages:
        assert (pages.kind, pages.count, pages.size(0)) == ("image", 1, (64, 48))
        assert np.array_equal(pages.page(0), decode_image(png, LIMITS))
        with pytest.raises(IndexError):
            pages.page(1)


@pytest.mark.parametrize("fmt", ["JPEG", "TIFF"])
def test_plain_image_size_follows_its_orientation(fmt):
    exif = Image.Exif()
    exif[274] = 6
    buffer = io.BytesIO()
    text_page("turned", (64, 48)).save(buffer, fmt, exif=exif)
    with open_pages(buffer.getvalue(), LIMITS, DOCS, dpi=200) as pages:
        assert pages.size(0) == (48, 64) and pages.page(0).shape == (64, 48, 3)


def test_plain_image_pillow_cannot_size_is_refused_unread():
    ok, hdr = cv2.imencode(".hdr", np.full((12, 20, 3), 0.5, np.float32))
    assert ok
    with pytest.raises(ImageDecodeError, match="unsupported image format Radiance HDR"):
        open_pages(hdr.tobytes(), LIMITS, DOCS, dpi=200)


def test_images_refused_as_before():
    with pytest.raises(ImageDecodeError, match="^empty image"):
        open_pages(b"", LIMITS, DOCS, dpi=200)
    with pytest.raises(ImageDecodeError, match="text, not an image"):
        open_pages(b"hello", LIMITS, DOCS, dpi=200).page(0)
