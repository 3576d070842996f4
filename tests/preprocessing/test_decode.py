import io
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image

from triton_ocr.preprocessing.decode import (
    ImageDecodeError,
    apply_exif_orientation,
    decode_image,
)
from triton_ocr.settings import ImageLimits

LIMIT = ImageLimits(max_image_bytes=32 << 20, max_image_pixels=50_000_000)


def encode(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def marked_rgb(width: int = 60, height: int = 40) -> Image.Image:
    """White image with a red block in the top-left corner (to see orientation)."""
    array = np.full((height, width, 3), 255, np.uint8)
    array[:10, :20] = (255, 0, 0)
    return Image.fromarray(array)


def test_png_rgb_decodes_to_bgr():
    out = decode_image(encode(marked_rgb(), "PNG"), LIMIT)
    assert out.shape == (40, 60, 3) and out.dtype == np.uint8
    assert tuple(out[0, 0]) == (0, 0, 255)  # red in BGR


def test_grayscale_becomes_three_channels():
    gray = Image.fromarray(np.full((30, 50), 77, np.uint8), mode="L")
    out = decode_image(encode(gray, "PNG"), LIMIT)
    assert out.shape == (30, 50, 3)
    assert (out == 77).all()


def test_transparent_background_is_composited_over_white():
    rgba = np.zeros((20, 30, 4), np.uint8)  # black, fully transparent
    rgba[5:10, 5:10] = (0, 0, 0, 255)  # opaque black "ink"
    out = decode_image(encode(Image.fromarray(rgba, mode="RGBA"), "PNG"), LIMIT)
    assert (out[0, 0] == 255).all()
    assert (out[7, 7] == 0).all()


def test_sixteen_bit_png_is_scaled_to_eight_bits():
    deep = np.full((10, 12), 65535, np.uint16)
    deep[0, 0] = 0
    ok, png = cv2.imencode(".png", deep)
    assert ok
    out = decode_image(png.tobytes(), LIMIT)
    assert out.dtype == np.uint8
    assert out[5, 5, 0] == 255 and out[0, 0, 0] == 0


def test_exif_orientation_is_applied():
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: rotate 90 degrees clockwise to view
    data = encode(marked_rgb(), "JPEG", exif=exif, quality=95)
    out = decode_image(data, LIMIT)
    assert out.shape[:2] == (60, 40)
    # the red block (top-left in storage) is top-right once upright
    assert out[2, 35, 2] > 200 and out[2, 35, 0] < 80


def exif_after_pixels(png: bytes, orientation: int) -> bytes:
    """The PNG with an eXIf chunk (orientation only) between its last IDAT and IEND, where
    PNG allows it."""
    exif = Image.Exif()
    exif[0x0112] = orientation
    body = exif.tobytes()[len(b"Exif\x00\x00") :]  # the chunk holds the TIFF header onwards
    chunk = len(body).to_bytes(4, "big") + b"eXIf" + body
    chunk += zlib.crc32(chunk[4:]).to_bytes(4, "big")
    end = png.rindex(b"IEND") - 4
    return png[:end] + chunk + png[end:]


@pytest.mark.parametrize("where", ["before the pixels", "after the pixels"])
def test_a_png_s_exif_orientation_is_applied_wherever_its_chunk_is(where):
    exif = Image.Exif()
    exif[0x0112] = 6
    if where == "before the pixels":
        data = encode(marked_rgb(), "PNG", exif=exif)
        assert data.index(b"eXIf") < data.index(b"IDAT")
    else:
        data = exif_after_pixels(encode(marked_rgb(), "PNG"), 6)
    with Image.open(io.BytesIO(data)) as image:  # Pillow, which decodes the pixels to find it
        assert image.getexif()[0x0112] == 6
    out = decode_image(data, LIMIT)
    assert out.shape[:2] == (60, 40)
    assert tuple(out[2, 35]) == (0, 0, 255)  # the red block, top-right once upright


def test_a_jpeg_holding_more_pictures_is_read_as_its_first():
    """Pillow names a JPEG with an MPF index of several pictures MPO (a camera's photo with its
    large preview, a stereo pair); it is a JPEG, and its first picture is the photo."""
    data = encode(marked_rgb(), "MPO", save_all=True, append_images=[Image.new("RGB", (8, 8))])
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "MPO" and image.n_frames == 2
    out = decode_image(data, LIMIT)
    assert out.shape == (40, 60, 3)
    assert out[2, 2, 2] > 200 and out[2, 2, 0] < 80  # the red block, top-left


@pytest.mark.parametrize("orientation", range(1, 9))
def test_orientations_preserve_pixels(orientation):
    image = np.arange(6 * 4 * 3, dtype=np.uint8).reshape(6, 4, 3)
    out = apply_exif_orientation(image, orientation)
    assert sorted(out.ravel()) == sorted(image.ravel())
    assert out.shape in {(6, 4, 3), (4, 6, 3)}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"\x00", "cannot decode"),
        (b"hello, this is plain text", "cannot decode"),
        (encode(marked_rgb(), "PNG")[:60], "cannot decode"),
    ],
)
def test_bad_bytes_raise_named_errors(data, message):
    with pytest.raises(ImageDecodeError, match=message):
        decode_image(data, LIMIT)


def test_pixel_limit_is_checked_before_decoding():
    data = encode(Image.new("L", (4000, 3000), 255), "PNG")
    with pytest.raises(ImageDecodeError, match="12000000 pixels exceeds the limit"):
        decode_image(data, ImageLimits(32 << 20, 1_000_000))


def test_decompression_bomb_is_refused_without_decoding():
    bomb = encode(Image.new("1", (15000, 15000), 1), "PNG")  # 225 M pixels in a few kB
    assert len(bomb) < 100_000
    with pytest.raises(ImageDecodeError, match="too large"):
        decode_image(bomb, LIMIT)
