"""The OCRmyPDF plugin's own logic, without a server: the service's page as OCRmyPDF's tree,
the orientation convention, the options and what it refuses (tests/e2e/test_ocrmypdf.py runs
it with the real ocrmypdf and server)."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import pytest
from PIL import Image

pytest.importorskip("ocrmypdf", reason="OCRmyPDF 17 needs Python 3.11+")
from ocrmypdf.api import get_plugin_manager  # noqa: E402
from ocrmypdf.exceptions import BadArgsError  # noqa: E402
from ocrmypdf.hocrtransform import OcrClass  # noqa: E402

from triton_ocr import ocrmypdf as plugin  # noqa: E402
from triton_ocr.client import Page, TextLine, Word  # noqa: E402
from triton_ocr.client.results import Block  # noqa: E402

SIZE = (400, 300)


def quad(left: float, top: float, right: float, bottom: float, angle: int = 0):
    """A box's polygon with its first vertex where its text starts, for text at `angle`
    (hOCR's counter-clockwise textangle: 0 level, 90 reading up, 270 reading down)."""
    tl, tr, br, bl = (left, top), (right, top), (right, bottom), (left, bottom)
    starts = {
        0: (tl, tr, br, bl),
        90: (bl, tl, tr, br),
        180: (br, bl, tl, tr),
        270: (tr, br, bl, tl),
    }
    return starts[angle]


def line(text: str, polygon, words=()) -> TextLine:
    return TextLine(text, polygon, 0.9, tuple(words))


@pytest.mark.parametrize("angle", [0, 90, 180, 270])
def test_text_angle_is_the_quarter_turn_the_line_reads_at(angle):
    assert plugin.text_angle(quad(10, 10, 200, 40, angle)) == angle


def test_a_slightly_skewed_line_counts_as_level():
    assert plugin.text_angle(((10, 12), (300, 4), (301, 40), (11, 48))) == 0


def test_the_page_tree_nests_blocks_lines_and_words():
    words = (
        Word("Hello", quad(10, 10, 60, 30), 0.8),
        Word("world", quad(70, 10, 130, 30), 1.2),  # a score over 1 is clamped
    )
    first = line("Hello world", quad(10, 10, 130, 30), words)
    second = line("Total", quad(10, 50, 60, 70))  # read without word boxes
    page = Page(
        0, *SIZE, lines=(first, second), blocks=(Block(quad(5, 5, 135, 75), (first, second)),)
    )
    tree = plugin.page_element(page, SIZE, 150.0, 4)
    assert (tree.ocr_class, tree.dpi, tree.page_number) == (OcrClass.PAGE, 150.0, 4)
    assert (tree.bbox.right, tree.bbox.bottom) == SIZE
    (area,) = tree.children
    (paragraph,) = area.children
    assert (area.ocr_class, paragraph.ocr_class) == (OcrClass.CAREA, OcrClass.PARAGRAPH)
    assert (paragraph.bbox.left, paragraph.bbox.top) == (5, 5)
    assert [child.ocr_class for child in paragraph.children] == [OcrClass.LINE] * 2
    assert [word.text for word in tree.words] == ["Hello", "world", "Total"]
    assert [word.confidence for word in tree.words] == [0.8, 1.0, 0.9]
    assert tree.words[1].bbox.left == 70
    assert all(row.textangle == 0 for row in tree.lines)
    # a heading's and a caption's lines are of the classes Tesseract writes, still lines
    typed = Page(
        0,
        *SIZE,
        lines=(first, second),
        blocks=(
            Block(quad(5, 5, 135, 35), (first,), "heading"),
            Block(quad(5, 45, 135, 75), (second,), "caption"),
        ),
    )
    tree = plugin.page_element(typed, SIZE, 150.0, 4)
    assert [row.ocr_class for row in tree.lines] == [OcrClass.HEADER, OcrClass.CAPTION]


def test_a_line_running_down_the_page_keeps_its_box_and_angle():
    down = line(
        "Down", quad(100, 20, 130, 200, 270), [Word("Down", quad(100, 20, 130, 200, 270), 1)]
    )
    tree = plugin.page_element(Page(0, *SIZE, lines=(down,)), SIZE, 72.0, 0)
    (row,) = tree.lines
    assert row.textangle == 270
    assert (row.bbox.left, row.bbox.top, row.bbox.right, row.bbox.bottom) == (100, 20, 130, 200)


def test_a_page_without_blocks_is_one_block_of_its_lines():
    rows = (line("a", quad(10, 10, 50, 30)), line("b", quad(60, 100, 90, 120)))
    (block,) = plugin.page_blocks(Page(0, *SIZE, lines=rows))
    assert block.lines == rows
    tree = plugin.page_element(Page(0, *SIZE, lines=rows), SIZE, 72.0, 0)
    (area,) = tree.children
    assert (area.bbox.left, area.bbox.top, area.bbox.right, area.bbox.bottom) == (10, 10, 90, 120)
    assert plugin.page_blocks(Page(0, *SIZE)) == ()


def test_a_page_read_at_another_size_is_refused():
    with pytest.raises(plugin.ServiceError, match="read a 200x100 image where OCRmyPDF sent"):
        plugin.page_element(Page(0, 200, 100), SIZE, 72.0, 0)


def test_the_sidecar_text_is_the_pages_text():
    rows = (line("a", quad(10, 10, 50, 30)), line("b", quad(60, 100, 90, 120)))
    assert plugin.page_text(Page(0, *SIZE, lines=rows)) == "a\nb\n"
    assert plugin.page_text(Page(0, *SIZE)) == ""


@pytest.mark.parametrize(
    ("rotation", "expected"),
    [(0, (0, plugin.NO_TURN_CONFIDENCE)), (90, (90, 15.0)), (270, (270, 15.0))],
)
def test_the_services_turn_is_ocrmypdfs_orientation(rotation, expected):
    """Both count the clockwise turn the content came with; a taken turn clears OCRmyPDF's
    default --rotate-pages-threshold (14)."""
    assert tuple(plugin.orientation(Page(0, *SIZE, rotation=rotation))) == expected


def test_a_page_the_service_could_not_read_is_an_error():
    document = plugin.Document((Page(0, 0, 0, error="cannot decode image"),))
    with pytest.raises(plugin.ServiceError, match="could not read page 3: cannot decode image"):
        plugin.only_page(document, "page 3")


def test_an_image_without_a_resolution_is_refused(tmp_path):
    path = tmp_path / "page.png"
    Image.new("L", SIZE, 255).save(path)
    with pytest.raises(plugin.ServiceError, match="states no resolution"):
        plugin.image_geometry(path)
    Image.new("L", SIZE, 255).save(path, dpi=(300, 300))
    assert plugin.image_geometry(path) == (
        SIZE,
        pytest.approx(300.0, abs=0.01),
    )  # PNG: dots per metre


def test_request_parameters_are_key_value_pairs():
    assert plugin.request_parameters(["text_score=0.3", "single_line=never"]) == {
        "text_score": "0.3",
        "single_line": "never",
    }
    with pytest.raises(BadArgsError, match="is not KEY=VALUE"):
        plugin.request_parameters(["text_score"])


@pytest.mark.parametrize("address", ["localhost", "http://localhost:8000", "host:port", ":8000"])
def test_an_address_must_be_host_and_port(address):
    with pytest.raises(BadArgsError, match="is not HOST:PORT"):
        plugin.check_address(address)


def test_the_default_address_follows_the_protocol():
    assert plugin.TritonOptions().address == "127.0.0.1:8000"
    assert plugin.TritonOptions(protocol="grpc").address == "127.0.0.1:8001"
    assert plugin.TritonOptions(url="ocr.internal:9001").address == "ocr.internal:9001"


@pytest.mark.parametrize("text", ["0", "-3", "soon", "inf"])
def test_a_timeout_must_be_positive_seconds(text):
    with pytest.raises(argparse.ArgumentTypeError):
        plugin.positive_seconds(text)


def test_languages_the_pack_does_not_read_are_refused():
    plugin.check_languages(["eng", "deu"], "ppocr-v6")
    with pytest.raises(BadArgsError, match="ppocr pack, which does not read deu"):
        plugin.check_languages(["eng", "deu"], "ppocr")


def test_the_pack_comes_from_the_ocr_models_config():
    parameters = {"parameters": {"pack": {"string_value": "ppocr"}}}
    assert plugin.config_parameter(parameters, "pack") == "ppocr"  # HTTP's shape
    assert plugin.config_parameter({"config": parameters}, "pack") == "ppocr"  # gRPC's
    with pytest.raises(plugin.ServiceError, match="has no 'pack' parameter"):
        plugin.config_parameter({"parameters": {}}, "pack")


def test_loading_the_plugin_blocks_tesseract():
    manager = get_plugin_manager(["triton_ocr.ocrmypdf"])
    manager.initialize(plugin_manager=manager.pluggy_manager)
    assert manager.pluggy_manager.is_blocked(plugin.TESSERACT_PLUGIN)
    assert isinstance(manager.get_ocr_engine(), plugin.TritonOcrEngine)


@pytest.mark.parametrize(
    ("engine", "mode", "reads"),
    [
        ("auto", "default", True),
        ("auto", "skip", True),
        ("none", "default", False),
        ("auto", "strip", False),
    ],
)
def test_only_runs_that_read_pages_need_the_service(engine, mode, reads):
    assert plugin.reads_pages(SimpleNamespace(ocr_engine=engine, mode=mode)) is reads
