"""Sizes before pixels: every bomb is refused from its header, no decoder called, and no
decoder of an accepted format writes a temporary file."""

import os
import subprocess
import sys
import time

import cv2
import pytest
from PIL import ImageFile, TiffImagePlugin

from triton_ocr.preprocessing import decode
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.preprocessing.documents import open_pages
from triton_ocr.preprocessing.header import TIFF_PAGES_COUNTED, ImageDecodeError, check_encoded
from triton_ocr.settings import Documents, ImageLimits
from triton_ocr.tools.reliability.bombs import document_bombs, hdr_bomb, image_bombs

LIMITS = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=50_000_000)
DOCS = Documents(pdf_dpi=200, max_pdf_dpi=600, max_pages=100)


@pytest.fixture
def no_decoder(monkeypatch):
    """cv2.imdecode fails the test if it is called, and so does Pillow decoding pixels (which a
    header read must not do: any exception it raised there would be caught and read as a
    header without EXIF, so its calls are counted)."""

    def refuse(*_):
        raise AssertionError("the decoder was called")

    monkeypatch.setattr(decode.cv2, "imdecode", refuse)
    loads = []
    load = ImageFile.ImageFile.load

    def counted(image):
        loads.append(image.format)
        return load(image)

    monkeypatch.setattr(ImageFile.ImageFile, "load", counted)
    yield
    assert not loads, f"Pillow decoded the pixels of {loads}"


@pytest.mark.parametrize("bomb", image_bombs(), ids=lambda b: b.name)
def test_image_bombs_are_refused_from_their_header(bomb, no_decoder):
    start = time.monotonic()
    with pytest.raises(ImageDecodeError, match=bomb.error):
        decode_image(bomb.data, LIMITS)
    with pytest.raises(ImageDecodeError, match=bomb.error):  # the client's pre-check alike
        check_encoded(bomb.data, LIMITS)
    assert time.monotonic() - start < 1.0, "a header check must not take a second"


def test_the_25_mb_hdr_of_20000x20000_is_refused_without_decoding(no_decoder):
    data = hdr_bomb(20000, 20000)
    assert len(data) > 25_000_000
    with pytest.raises(ImageDecodeError, match="unsupported image format Radiance HDR"):
        decode_image(data, LIMITS)


def test_deep_images_are_held_to_the_decoded_bytes_limit(no_decoder):
    bomb = next(b for b in image_bombs() if b.name == "PNG 6000x6000 16-bit RGBA")
    # 36 M pixels pass the pixel limit; 8 bytes each do not pass the bytes limit
    with pytest.raises(ImageDecodeError, match="8 bytes per pixel decodes to 288000000 bytes"):
        decode_image(bomb.data, LIMITS)


def test_a_tiff_page_over_the_limit_is_refused_alone():
    bomb = next(b for b in document_bombs() if b.name.startswith("TIFF, second frame"))
    with open_pages(bomb.data, LIMITS, DOCS, dpi=200) as pages:
        assert pages.page(0).shape == (64, 64, 3)
        with pytest.raises(ImageDecodeError, match=bomb.error):
            pages.page(1)


def test_a_tiff_of_many_pages_is_refused_before_its_pages_are_all_walked():
    bomb = next(b for b in document_bombs() if b.name.startswith("TIFF of 50000"))
    walked = []
    seek = TiffImagePlugin.TiffImageFile._seek  # what seek and Pillow's n_frames both call

    def counted(image, frame):
        walked.append(frame)
        return seek(image, frame)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TiffImagePlugin.TiffImageFile, "_seek", counted)
        with pytest.raises(ImageDecodeError, match=bomb.error):
            open_pages(bomb.data, LIMITS, DOCS, dpi=200)
    assert 0 < max(walked) <= max(DOCS.max_pages, TIFF_PAGES_COUNTED)


def test_a_pdf_that_lies_about_its_page_count_is_refused_whole():
    bomb = next(b for b in document_bombs() if b.name.startswith("PDF /Count 1"))
    with pytest.raises(ImageDecodeError, match=bomb.error):
        open_pages(bomb.data, LIMITS, DOCS, dpi=200)


TEMP_TRAP = """
import sys, cv2, numpy as np
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.settings import ImageLimits
from triton_ocr.tools.reliability.payloads import image_cases
limits = ImageLimits(32 << 20, 50_000_000)
hdr = np.frombuffer(open(sys.argv[1], "rb").read(), np.uint8)
assert cv2.imdecode(hdr, cv2.IMREAD_UNCHANGED) is None, "the trap does not catch temp files"
decoded = 0
for case in image_cases():
    if case.reads and case.ensemble_error is None:
        decode_image(case.data, limits)
        decoded += 1
print(decoded)
"""


def test_no_accepted_format_is_decoded_through_a_temporary_file(tmp_path):
    """OpenCV writes a temporary file for decoders that cannot read memory (HDR, EXR): with its
    temporary folder missing, those fail. Every accepted format still decodes."""
    ok, hdr = cv2.imencode(".hdr", cv2.UMat(8, 8, cv2.CV_32FC3).get())
    assert ok
    (tmp_path / "small.hdr").write_bytes(hdr.tobytes())
    env = dict(os.environ, OPENCV_TEMP_PATH=str(tmp_path / "missing"))
    done = subprocess.run(
        [sys.executable, "-c", TEMP_TRAP, str(tmp_path / "small.hdr")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 15  # every decodable single image of the bad-input table
