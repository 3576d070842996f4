import numpy as np
import pytest

from triton_ocr.postprocessing.geometry import (
    order_quad,
    pad_quad,
    quad_size,
    reading_order,
    room_on_page,
    scale_quads,
)


def box(x0, y0, x1, y1):
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (2, 0, 3, 1), (3, 2, 1, 0), (1, 3, 0, 2)])
def test_order_quad_is_clockwise_from_top_left(perm):
    quad = box(10, 20, 110, 50)
    assert np.array_equal(order_quad(quad[list(perm)]), quad)


def test_order_quad_tilted_text():
    angle = np.radians(-20)  # rising to the right
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    quad = box(0, 0, 100, 20) @ rot.T + 200
    ordered = order_quad(quad[[2, 3, 0, 1]])
    assert np.allclose(ordered, quad, atol=1e-4)


def test_scale_quads_maps_and_clips():
    quads = box(0, 0, 100, 50)[None]
    out = scale_quads(quads, from_hw=(100, 200), to_hw=(50, 100))
    assert np.allclose(out[0], box(0, 0, 50, 25))
    clipped = scale_quads(box(-5, -5, 300, 300)[None], (100, 100), (100, 100))
    assert clipped.min() == 0 and clipped[..., 0].max() == 99 and clipped[..., 1].max() == 99


def test_quad_size():
    assert quad_size(box(0, 0, 30, 10)) == (30.0, 10.0)


def test_reading_order_lines_then_left_to_right():
    quads = np.stack(
        [
            box(300, 100, 400, 130),  # line 2, right
            box(10, 12, 100, 40),  # line 1, left
            box(10, 98, 120, 132),  # line 2, left (slightly taller)
            box(200, 8, 290, 36),  # line 1, right (slightly higher)
        ]
    )
    assert reading_order(quads).tolist() == [1, 3, 2, 0]


def test_reading_order_empty():
    assert reading_order(np.zeros((0, 4, 2), np.float32)).tolist() == []


def test_pad_quad_grows_along_the_quads_own_height():
    """A line tilted by 30 degrees, 100 wide and 20 high: 25% of its height more above and
    below, along its tilted vertical, and nothing along its width."""
    angle = np.deg2rad(30)
    right = np.array([np.cos(angle), np.sin(angle)]) * 100
    down = np.array([-np.sin(angle), np.cos(angle)]) * 20
    tl = np.array([50.0, 40.0])
    quad = np.array([tl, tl + right, tl + right + down, tl + down], np.float32)
    padded = pad_quad(quad, 0.25)
    np.testing.assert_allclose(padded[0], tl - 0.25 * down, atol=1e-4)
    np.testing.assert_allclose(padded[2], tl + right + 1.25 * down, atol=1e-4)
    width, height = quad_size(padded)
    assert width == pytest.approx(100, abs=1e-3) and height == pytest.approx(30, abs=1e-3)
    assert pad_quad(quad, 0) is quad


def test_lines_with_room_keep_their_margin():
    quads = np.stack([box(0, 0, 200, 20), box(0, 40, 200, 60), box(300, 0, 400, 20)])
    np.testing.assert_allclose(room_on_page(quads, 0.1), [0.1, 0.1, 0.1])
    assert room_on_page(quads[:1], 0.1).tolist() == pytest.approx([0.1])
    assert room_on_page(quads[:0], 0.1).shape == (0,)


def test_no_crop_takes_the_next_line():
    # 20 px lines 1 px apart, touching, overlapping: a margin of 2 px would take the other's strokes
    for gap, want in ((1, 0.05), (0, 0.0), (-5, 0.0)):
        quads = np.stack([box(0, 0, 200, 20), box(50, 20 + gap, 250, 40 + gap)])
        np.testing.assert_allclose(room_on_page(quads, 0.1), [want, want], atol=1e-6)


def test_only_boxes_above_or_below_limit_the_margin():
    line = box(0, 0, 200, 20)
    beside = box(205, 0, 300, 20)  # the same row: no room taken above or below
    far_right_below = box(210, 21, 300, 41)  # below, but not across the line
    wide = box(0, 0, 200, 40)  # a taller box just under a short one limits the short one
    np.testing.assert_allclose(room_on_page(np.stack([line, beside, far_right_below]), 0.1)[0], 0.1)
    np.testing.assert_allclose(
        room_on_page(np.stack([box(0, -10, 100, -1), wide]), 0.1), [0.1, 0.025]
    )


def test_margins_are_measured_in_each_box_frame():
    turn = np.radians(30)
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    quads = np.stack([box(0, 0, 200, 20), box(0, 21, 200, 41)]) @ rot.T + 300
    np.testing.assert_allclose(room_on_page(quads, 0.1), [0.05, 0.05], atol=1e-5)
