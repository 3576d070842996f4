"""The evaluation's label loaders and metrics, on hand-made labels."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT
from triton_ocr.tools.evaluation import labels
from triton_ocr.tools.evaluation.labels import (
    Label,
    Sample,
    load_manifest,
    load_samples,
    parse_icdar_line,
    rotate_samples,
)
from triton_ocr.tools.evaluation.metrics import (
    char_error_rate,
    match_boxes,
    normalize,
    reading_order_pairs,
    score_image,
    score_word,
    summary,
    tokens,
)
from triton_ocr.tools.evaluation.runner import ImageResult, report


def box(x, y, w, h):
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def test_normalisation_ignores_case_width_punctuation_and_spaces():
    assert normalize("Ｂoston  Market!") == "bostonmarket"
    assert tokens("Total: 12.00 EUR") == ["total", "1200", "eur"]
    assert tokens("- ###") == []


def test_char_error_rate():
    assert char_error_rate("HOTEL", "hotel") == 0
    assert char_error_rate("HOTE", "HOTEL") == pytest.approx(0.2)
    assert char_error_rate("", "ab") == 1


def test_box_matching_is_one_to_one_at_iou_half():
    truth = [box(0, 0, 100, 20), box(0, 40, 100, 20)]
    assert match_boxes([box(2, 1, 100, 20)], truth) == 1
    assert match_boxes([box(0, 0, 100, 20), box(1, 0, 100, 20)], truth) == 1  # one per label
    assert match_boxes([box(0, 0, 40, 20)], truth) == 0  # IoU 0.4


def test_icdar_line_keeps_commas_in_text():
    label = parse_icdar_line("\ufeff1,2,3,2,3,4,1,4,Hello, world\n")
    assert label.text == "Hello, world" and label.care and label.box.shape == (4, 2)
    assert not parse_icdar_line("1,2,3,2,3,4,1,4,###").care
    with pytest.raises(ValueError):
        parse_icdar_line("1,2,3")


def test_loaders(tmp_path: Path):
    (tmp_path / "img_1.jpg").write_bytes(b"x")
    (tmp_path / "gt_img_1.txt").write_text("0,0,10,0,10,5,0,5,EXIT\n0,9,9,9,9,12,0,12,###\n")
    (sample,) = load_samples(tmp_path)
    assert [label.text for label in sample.cared] == ["EXIT"] and sample.has_boxes
    manifest = tmp_path / "m"
    manifest.mkdir()
    entries = [{"file": "a.png", "kind": "word", "text": ["HOTEL"]}]
    (manifest / "manifest.json").write_text(json.dumps(entries))
    (word,) = load_samples(manifest)
    assert word.kind == "word" and word.complete and not word.has_boxes
    with pytest.raises(ValueError):
        load_samples(tmp_path / "m" / "nothing-here")


SCENE = Sample(
    Path("scene.jpg"),
    "scene",
    (
        Label("Boston Market", box(0, 0, 100, 20), True),
        Label("STOP", box(0, 40, 50, 20), True),
        Label("###", box(200, 0, 50, 50), False),
    ),
    True,
)


def test_scene_scores():
    texts = ["BostonMarket", "STDP", "noise"]
    quads = np.stack([box(0, 0, 100, 20), box(0, 40, 50, 20), box(205, 5, 40, 40)])
    counts = score_image(SCENE, texts, quads)
    # "noise" lies in the do-not-care region: ignored for precision and detection
    assert (counts.strings_found, counts.strings) == (1, 2)
    assert (counts.tokens_found, counts.tokens) == (2, 3)
    assert (counts.lines_correct, counts.lines) == (1, 2)
    assert (counts.boxes_matched, counts.boxes, counts.predicted_boxes) == (2, 2, 2)
    scores = summary(counts)
    assert scores["string_f1"] == pytest.approx(0.5) and scores["det_hmean"] == 1


def test_incomplete_labels_give_no_precision():
    incomplete = Sample(SCENE.path, "scene", SCENE.labels, False)
    counts = score_image(incomplete, ["whatever"], box(0, 0, 10, 10)[None])
    assert counts.lines == 0 and summary(counts)["string_precision"] is None


def test_word_crops_and_report():
    word = Sample(Path("w.jpg"), "word", (Label("03/09/2009", None, True),), True)
    assert score_word(word, ["03 09 2009"]).exact
    assert not score_word(word, []).exact
    results = [
        ImageResult(word, ["03/09/2O09"], np.zeros((1, 4, 2), np.float32)),
        ImageResult(SCENE, ["Boston Market"], box(0, 0, 100, 20)[None]),
    ]
    result = report(results)
    assert result["words"]["exact"] == 0 and result["words"]["cer"] == pytest.approx(0.125)
    assert result["scenes_and_documents"]["string_recall"] == 0.5
    assert [row["missed"] for row in result["images"]] == [["03/09/2009"], ["STOP"]]


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_a_turned_set_turns_images_and_boxes_alike(tmp_path: Path, degrees):
    import cv2

    image = np.full((40, 100, 3), 255, np.uint8)
    image[5:15, 60:90] = 0  # a dark block, labelled by its box
    path = tmp_path / "block.png"
    cv2.imwrite(str(path), image)
    box = np.float32([[60, 5], [90, 5], [90, 15], [60, 15]])
    (sample,) = rotate_samples([Sample(path, "scene", (Label("x", box, True),), True)], degrees)
    turned = cv2.imdecode(np.frombuffer(sample.read(), np.uint8), cv2.IMREAD_GRAYSCALE)
    assert turned.shape == ((100, 40) if degrees != 180 else (40, 100))
    (x0, y0), (x1, y1) = sample.labels[0].box.min(0), sample.labels[0].box.max(0)
    inside = turned[int(y0) : int(y1), int(x0) : int(x1)]
    assert inside.size == 300 and inside.max() == 0  # the box still holds exactly the block
    assert (turned == 0).sum() == 300
    assert rotate_samples([sample], 0) == [sample]
    with pytest.raises(ValueError, match="rotation"):
        rotate_samples([sample], 45)


def test_space_sensitive_scores_count_glued_words_as_wrong():
    """Space-blind, a glued line reads as well as a spaced one; space-sensitive it does not."""
    page = Sample(
        Path("invoice.png"),
        "document",
        (Label("Invoice 2024-0917 total 318.40 EUR", None, True), Label("Thank you", None, True)),
        True,
    )
    spaced = score_image(
        page,
        ["INVOICE  2024-0917 total 318.40 EUR", "Thank you"],
        box(0, 0, 9, 9)[None].repeat(2, 0),
    )
    glued = score_image(
        page, ["Invoice2024-0917total318.40EUR", "Thank you"], box(0, 0, 9, 9)[None].repeat(2, 0)
    )
    assert spaced.strings_found == glued.strings_found == 2  # the space-blind score: no difference
    assert (spaced.strings_exact, glued.strings_exact) == (2, 1)
    assert (spaced.words_found, spaced.words, spaced.predicted_words) == (7, 7, 7)
    # one glued word for five: none of them matches, and it is one wrong prediction
    assert (glued.words_found, glued.predicted_words_correct, glued.predicted_words) == (2, 2, 3)
    scores = summary(glued)
    assert scores["string_exact"] == 0.5
    assert scores["word_recall"] == pytest.approx(2 / 7)
    assert scores["word_precision"] == pytest.approx(2 / 3)


def test_words_match_one_to_one():
    page = Sample(Path("p.png"), "document", (Label("the cat and the dog", None, True),), True)
    counts = score_image(page, ["the the the the"], box(0, 0, 9, 9)[None])
    assert (counts.words_found, counts.predicted_words_correct) == (2, 2)


def test_reading_order_counts_the_label_pairs_kept_in_order():
    truth = ["left one", "left two", "left three", "right one", "right two", "right three"]
    assert reading_order_pairs(truth, truth) == (15, 15)
    interleaved = [truth[i] for i in (0, 3, 1, 4, 2, 5)]
    assert reading_order_pairs(truth, interleaved) == (12, 15)  # 3 cross pairs turned round
    # lines read with small errors still match; missed ones do not count; repeats pair in turn
    assert reading_order_pairs(truth, ["left 0ne", "left two", "right one"]) == (3, 3)
    assert reading_order_pairs(["2.10", "x", "2.10"], ["2.10", "x", "2.10"]) == (3, 3)
    assert reading_order_pairs(truth, []) == (0, 0)


def test_the_report_scores_reading_order_on_pages_labelled_in_it():
    labels = tuple(Label(t, None, True) for t in ("one a", "two b", "three c"))
    page = Sample(Path("page.png"), "document", labels, True, reading_order=True)
    other = Sample(Path("other.png"), "document", labels, True)
    quads = np.zeros((3, 4, 2), np.float32)
    result = report(
        [
            ImageResult(page, ["three c", "one a", "two b"], quads),
            ImageResult(other, ["three c", "two b", "one a"], quads),  # not labelled in order
        ]
    )
    assert result["reading_order"] == {"images": 1, "kept": 1, "pairs": 3, "score": 1 / 3}
    assert result["images"][0]["order"] == [1, 3] and "order" not in result["images"][1]


def test_eval_passes_the_reference_engine_on(monkeypatch, tmp_path: Path):
    from typer.testing import CliRunner

    from triton_ocr.cli import app
    from triton_ocr.tools.evaluation import command

    seen = []
    monkeypatch.setattr(command, "run_evaluation", lambda options: seen.append(options) or 0)
    args = ["eval", str(tmp_path), "--url", "127.0.0.1:1", "--reference"]
    result = CliRunner().invoke(app, [*args, "--reference-engine", "openvino"])
    assert result.exit_code == 0, result.output
    assert seen[-1].reference and seen[-1].reference_engine == "openvino"
    assert CliRunner().invoke(app, args).exit_code == 0
    assert seen[-1].reference_engine == "onnxruntime"  # RapidOCR's own default


def test_eval_reads_the_dev_and_the_report_split_unless_told(monkeypatch, tmp_path: Path):
    from typer.testing import CliRunner

    from triton_ocr.cli import app
    from triton_ocr.tools.evaluation import born_digital, command, tables

    seen = []
    monkeypatch.setattr(command, "run_evaluation", lambda options: seen.append(options) or 0)
    assert CliRunner().invoke(app, ["eval", "--url", "127.0.0.1:1"]).exit_code == 0
    assert seen[-1].labelled == (
        labels.DEV_SPLIT,
        labels.REPORT_SPLIT,
        labels.REPORT_HEADINGS,
        tables.TABLE_SET,
        born_digital.BORN_DIGITAL_SET,
    )
    args = ["eval", str(tmp_path), str(tmp_path / "b"), "--url", "127.0.0.1:1"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert seen[-1].labelled == (tmp_path, tmp_path / "b")


def test_images_looked_at_while_tuning_stay_out_of_a_report(tmp_path: Path):
    from triton_ocr.tools.evaluation.command import held_out

    entries = [
        {"file": "a.png", "kind": "document", "text": ["one"]},
        {"file": "b.png", "kind": "document", "text": ["two"], "held_out": False},
    ]
    (tmp_path / "manifest.json").write_text(json.dumps(entries))
    kept, left_out = held_out(load_manifest(tmp_path))
    assert [s.name for s in kept] == ["a.png"] and left_out == 1


def test_the_table_set_is_told_apart_and_scored_with_teds(tmp_path: Path):
    """A manifest whose entries hold html is a table set; a table looked at while tuning is left
    out; TEDS is 1 for the same table (thead or not), lower for a wrong cell or a missing
    row, and the table found that overlaps the labelled box is the one scored."""
    from triton_ocr.client.results import Cell, Table
    from triton_ocr.tools.evaluation import tables

    truth = (
        "<table><thead><tr><td>a</td><td>b</td></tr></thead><tr><td>1</td><td>2</td></tr></table>"
    )
    entries = [
        {"file": "t.png", "split": "dev", "ruled": True, "html": truth, "table_box": None},
        {"file": "u.png", "split": "report", "ruled": False, "html": truth, "held_out": False},
    ]
    (tmp_path / "manifest.json").write_text(json.dumps(entries))
    assert tables.is_table_set(tmp_path) and not tables.is_table_set(ROOT / "tests/data/report")
    first, second = tables.load_tables(tmp_path)
    assert first.held_out and not second.held_out and first.box is None
    same = "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"
    assert tables.teds(same, truth, False) == 1.0
    wrong = "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>3</td></tr></table>"
    assert 0.8 < tables.teds(wrong, truth, False) < 1.0 == tables.teds(wrong, truth, True)
    assert tables.teds("<table><tr><td>a</td><td>b</td></tr></table>", truth, True) < 0.7

    def table(x0: float) -> Table:
        box = ((x0, 0.0), (x0 + 10, 0.0), (x0 + 10, 10.0), (x0, 10.0))
        return Table(box, 1, 1, (Cell(0, 0, 1, 1, box, str(x0)),))

    found = [table(0), table(100)]
    assert tables.chosen(found, (95.0, 0.0, 120.0, 10.0)) is found[1]
    assert tables.chosen(found, (500.0, 0.0, 520.0, 10.0)) is None
    rows = [
        {"split": "dev", "ruled": True, "found": True, "teds": 1.0, "teds_s": 1.0},
        {"split": "dev", "ruled": False, "found": False, "teds": 0.0, "teds_s": 0.0},
    ]
    assert tables.summary(rows)["dev"]["all"] == {
        "tables": 2,
        "found": 1,
        "teds": 0.5,
        "teds_s": 0.5,
    }


def test_markdown_is_scored_for_its_text_order_and_headings():
    from triton_ocr.tools.evaluation.markdown import headings_found, order_pairs, shown_text

    markdown = "# Deals\n\n## on wheels\n\nBuying a car \\*used\\*\n\n<!-- page 2 -->\n\nEnd."
    assert shown_text(markdown).split() == [
        "Deals",
        "on",
        "wheels",
        "Buying",
        "a",
        "car",
        "*used*",
        "End.",
    ]
    # a heading split in two, two headings written as one, one missed, one not labelled
    labelled = ["Deals on wheels", "DISTRICT NEWS", "Edinburgh", "RISING COSTS"]
    found = ["Deals", "on wheels", "District News Edinburgh", "By Denis Witney"]
    assert headings_found(labelled, found) == (3, 3)
    text = "thefirstlinethesecondlinethethird"
    assert order_pairs(["The first line", "the third", "the second line"], text) == (2, 3)
    assert order_pairs(["nothing like it"], text) == (0, 0)


def test_the_born_digital_set_is_told_apart_and_pdfium_gives_its_truth():
    """The born-digital set is a set of PDFs; pdfium's own text of a PDF with a text layer is
    the truth, its line-end hyphen the hyphen drawn and its whitespace left out."""
    from tests.documents import BORN_DIGITAL_HEADING, born_digital_pdf
    from triton_ocr.tools.evaluation import born_digital

    folder = ROOT / born_digital.BORN_DIGITAL_SET
    assert born_digital.is_pdf_set(folder) and not born_digital.is_pdf_set(
        ROOT / "tests/data/tables"
    )
    samples = born_digital.load_pdfs(folder)
    assert {s.split for s in samples} == {"dev", "report"} and all(
        s.path.is_file() for s in samples
    )
    (page,) = born_digital.pdfium_pages(born_digital_pdf())
    assert born_digital.plain(page).startswith(born_digital.plain(BORN_DIGITAL_HEADING))
    assert born_digital.plain("infor\ufffe\r\nmation  here") == "infor-mationhere"
    # files labelled with their headings in both splits; the headings are scored per split
    assert {s.split for s in samples if s.headings} == {"dev", "report"}
    row = {"pages": 1, "from_layer": 1, "exact": 1, "same_characters": 1}
    row |= {"ocr_similarity": [0.9], "layer_s": 0.1, "ocr_s": 2.0}
    rows = [
        {**row, "split": "dev", "headings": [3, 4], "markdown_headings": [3, 3]},
        {**row, "split": "dev", "headings": [1, 1], "markdown_headings": [1, 2]},
        {**row, "split": "report"},
    ]
    found = born_digital.summary(rows)
    assert (found["dev"]["headings_recall"], found["dev"]["headings_precision"]) == (0.8, 0.8)
    assert found["report"]["headings_recall"] is None and found["dev"]["times"] == 20.0
