"""Boxes on the original image -> upright crops."""

import cv2
import numpy as np
import pytest

from triton_ocr.postprocessing.bends import Bend
from triton_ocr.postprocessing.geometry import pad_quad, quad_size
from triton_ocr.preprocessing.crops import bent_crop, cut_crops, warp_crop


def gradient_image(h=100, w=200):
    ys, xs = np.mgrid[0:h, 0:w]
    return np.stack([xs % 256, ys % 256, (xs + ys) % 256], axis=-1).astype(np.uint8)


def test_axis_aligned_crop_matches_slice():
    image = gradient_image()
    quad = np.array([[20, 10], [120, 10], [120, 40], [20, 40]], np.float32)
    crop = warp_crop(image, quad)
    assert crop.shape == (30, 100, 3)
    assert np.abs(crop.astype(int) - image[10:40, 20:120].astype(int)).max() <= 2


def test_rotated_quad_is_rectified():
    image = np.full((200, 200, 3), 255, np.uint8)
    # a dark bar rotated by 45 degrees
    quad = np.array([[50, 100], [100, 50], [114, 64], [64, 114]], np.float32)
    cv2.fillPoly(image, [quad.astype(np.int32)], (0, 0, 0))
    crop = warp_crop(image, quad)
    assert abs(crop.shape[1] - 71) <= 1 and abs(crop.shape[0] - 20) <= 1
    assert crop[3:-3, 3:-3].mean() < 40  # the whole crop is the dark bar


def test_vertical_crop_is_turned():
    image = gradient_image()
    quad = np.array([[10, 10], [30, 10], [30, 90], [10, 90]], np.float32)
    assert warp_crop(image, quad).shape[:2] == (20, 80)


def test_the_margin_grows_each_crop_above_and_below():
    image = gradient_image()
    quad = np.array([[20, 40], [120, 40], [120, 60], [20, 60]], np.float32)
    (tight,), (loose,) = cut_crops(image, [quad], 0.0), cut_crops(image, [quad], 0.25)
    assert tight.shape == (20, 100, 3) and loose.shape == (30, 100, 3)
    np.testing.assert_array_equal(tight, warp_crop(image, quad))


def test_the_margin_takes_no_more_of_the_page_than_its_room():
    image = np.full((100, 200, 3), 255, np.uint8)
    image[30:38] = 0  # the strokes of the line above, 2 px over the box
    quad = np.array([[20, 40], [120, 40], [120, 80], [20, 80]], np.float32)  # 40 px high
    (full,) = cut_crops(image, [quad], 0.25, [0.25])  # 10 px above: the strokes come in
    (kept,) = cut_crops(image, [quad], 0.25, [0.025])  # 1 px of the page above, then its row
    assert full.shape == kept.shape == (60, 100, 3)
    assert full[:10].min() == 0 and kept.min() == 255
    np.testing.assert_array_equal(kept[9:], full[9:])  # the box and the room are the page's
    assert (kept[:9] == kept[9]).all()  # above them: the first row within, again


# --- the crop geometry comes from crop_frame, and the pixels stay what they were ------------


def reference_warp_crop(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """warp_crop as it was before crop_frame (kept verbatim as the reference)."""
    width, height = quad_size(quad)
    w = max(1, int(round(width)))
    h = max(1, int(round(height)))
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    crop = cv2.warpPerspective(
        image, matrix, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
    if h >= 1.5 * w:
        crop = cv2.rotate(crop, cv2.ROTATE_90_COUNTERCLOCKWISE)
    return crop


def reference_cut_crops(image, quads, margin):
    return [reference_warp_crop(image, pad_quad(quad, margin)) for quad in quads]


def random_quads(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Axis-aligned, tilted, perspective and vertical quads (tl, tr, br, bl), some reaching
    out of the image."""
    quads = []
    for k in range(count):
        kind = k % 4
        w, h = rng.uniform(5, 220), rng.uniform(4, 60)
        if kind == 3:  # vertical: tall and narrow
            w, h = rng.uniform(4, 40), rng.uniform(70, 250)
        base = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
        angle = 0.0 if kind == 0 else np.radians(rng.uniform(-40, 40))
        rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        quad = base @ rotation.T + rng.uniform(-20, 260, size=2)
        if kind == 2:  # perspective: each corner moved on its own
            quad += rng.uniform(-0.15, 0.15, size=(4, 2)) * min(w, h)
        if kind == 0 and k % 8 == 0:
            quad = np.round(quad)
        quads.append(quad.astype(np.float32))
    return quads


@pytest.mark.parametrize("margin", [0.0, 0.1, 0.25])
def test_crops_are_the_pixels_of_the_reference_implementation(margin):
    rng = np.random.default_rng(int(margin * 100) + 7)
    image = rng.integers(0, 256, size=(300, 400, 3), dtype=np.uint8)
    quads = random_quads(rng, 60)
    odd = [
        np.zeros((4, 2), np.float32),  # every corner on one point
        np.array([[0, 0], [5, 0], [10, 0], [3, 0]], np.float32),  # on one line
        np.array([[10, 10], [11, 10], [11, 200], [10, 200]], np.float32),  # 1 px wide, vertical
    ]
    got = cut_crops(image, quads + odd, margin)
    expected = reference_cut_crops(image, quads + odd, margin)
    vertical = [got[k] for k in range(3, len(quads), 4)]
    assert all(c.shape[0] < c.shape[1] for c in vertical)  # the vertical ones were turned
    for crop, reference in zip(got, expected, strict=True):
        assert crop.shape == reference.shape and crop.dtype == reference.dtype
        assert crop.tobytes() == reference.tobytes()
    for quad in quads[:8]:  # warp_crop alone, with and without the margin
        want = reference_warp_crop(image, pad_quad(quad, margin))
        assert warp_crop(image, quad, margin).tobytes() == want.tobytes()


def test_a_bent_lines_crop_follows_its_centre():
    """A dark band bowing 30 pixels over its length comes out level in its crop: every column
    dark in the same rows, the page above and below it light."""
    image = np.full((200, 420, 3), 255, np.uint8)
    xs = np.arange(20, 400)
    middle = 60 + 30 * ((xs - 20) / 380) ** 2
    for x, y in zip(xs, middle, strict=True):
        image[int(round(y)) - 5 : int(round(y)) + 5, x] = 0
    centre = np.stack([xs, middle], axis=1).astype(np.float32)[::20]
    crop = bent_crop(image, Bend(centre, 10.0), margin=0.2)
    # as high as the line and its margins, as wide as its centre is long
    length = np.linalg.norm(np.diff(centre, axis=0), axis=1).sum()
    assert crop.shape[0] == round(2 * 10 * 1.4) and abs(crop.shape[1] - length) <= 1
    dark = crop[..., 0] < 128
    middle_rows = dark[crop.shape[0] // 2 - 3 : crop.shape[0] // 2 + 3]
    assert middle_rows[:, 2:-2].all()  # the band all along, in the crop's middle rows
    assert not dark[:2].any() and not dark[-2:].any()  # neither edge reaches out of it
    # cut_crops cuts a bent line so, and a straight one as before
    quad = np.array([[20, 55], [400, 55], [400, 95], [20, 95]], np.float32)
    bent, straight = cut_crops(image, [quad, quad], 0.2, bends=[Bend(centre, 10.0), None])
    assert np.array_equal(bent, crop) and np.array_equal(straight, warp_crop(image, quad, 0.2))
