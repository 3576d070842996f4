"""Block types (postprocessing/block_types.py): what each block of a document is, from its
lines' geometry and text, and from a layout network's regions when given; through
`pipeline.with_block_types` on a page that came turned."""

from __future__ import annotations

import numpy as np

from triton_ocr.pipeline import with_block_types
from triton_ocr.postprocessing.block_types import PageText, block_types
from triton_ocr.postprocessing.geometry import turned_back
from triton_ocr.postprocessing.recognition import Texts

BODY = 20.0


def quad(x: float, y: float, width: float, height: float = BODY) -> list[list[float]]:
    return [[x, y], [x + width, y], [x + width, y + height], [x, y + height]]


def page_of(blocks: list[list[tuple[str, list[list[float]]]]], height: float = 1000, **kw):
    texts = [text for block in blocks for text, _ in block]
    quads = np.array([q for block in blocks for _, q in block], np.float32).reshape(-1, 4, 2)
    line_block = np.repeat(np.arange(len(blocks), dtype=np.int32), [len(b) for b in blocks])
    return PageText(texts, quads, line_block, height, **kw)


def types(pages: list[PageText]) -> list[list[str]]:
    return [found.types for found in block_types(pages)]


def body(y: float, rows: int = 4, x: float = 50) -> list[tuple[str, list[list[float]]]]:
    return [(f"Body text line {k} that runs on", quad(x, y + 30 * k, 480)) for k in range(rows)]


def test_headings_lists_captions_and_paragraphs():
    page = page_of(
        [
            [("Annual report", quad(50, 20, 300, 48))],
            body(100),
            [("• first item", quad(50, 260, 200)), ("• second item", quad(50, 290, 200))],
            [("Figure 3: The year in numbers", quad(50, 340, 300))],
            [("Table 2. Figures by quarter", quad(50, 380, 300))],
            body(420),
            # larger but long: a paragraph set large, not a heading
            [(" ".join(["word"] * 20), quad(50, 560, 480, 40))],
        ]
    )
    assert types([page]) == [
        ["heading", "paragraph", "list", "caption", "caption", "paragraph", "paragraph"]
    ]


def test_a_heading_line_and_a_list_set_on_a_blocks_text_are_cut_from_it():
    """No gap parts them from the text, so the block cut left them in one block: a section's
    title at the body's size over its paragraph, and a list after the sentence leading to it;
    a paragraph's short last line, a line ending a clause and a wrapped "3." are no cut."""
    section = [
        ("Recording a Sequence", quad(50, 100, 200)),
        ("To record a sequence, simply press RECORD and", quad(70, 130, 460)),
        ("then play your keyboard in time with the track.", quad(50, 160, 480)),
        ("Editing", quad(50, 190, 80)),
        ("To erase a wrong note, hold ERASE and press the", quad(70, 220, 460)),
        ("note to be erased. The features include:", quad(50, 250, 400)),
        ("• Thirty-two tracks", quad(50, 280, 200)),
        ("• A disk drive", quad(50, 310, 150)),
    ]
    plain = [
        ("Dear reader,", quad(50, 400, 120)),
        ("We thank you for your letter.", quad(50, 430, 280)),
        ("Your pages came back the day", quad(70, 460, 240)),  # its sentence goes on
        ("after we read them, with all their tables, and the", quad(50, 490, 480)),
        ("service reads text from your pages. And it", quad(50, 520, 480)),
        ("does so as described in section", quad(50, 550, 480)),
        ("3. It says what it found.", quad(50, 580, 250)),
    ]
    (found,) = block_types([page_of([section, plain])])
    assert found.line_block.tolist() == [0, 1, 1, 2, 3, 3, 4, 4] + [5] * 7
    assert found.types == ["heading", "paragraph", "heading", "paragraph", "list", "paragraph"]


def test_running_heads_and_feet_recur_hold_a_page_number_or_are_set_smaller():
    pages = [
        page_of(
            [
                [("Journal of Models", quad(50, 10, 200))],
                body(200),
                body(400),
                [(f"{k + 1}", quad(290, 970, 20))],
            ]
        )
        for k in range(2)
    ]
    assert types(pages) == [["header", "paragraph", "paragraph", "footer"]] * 2
    # alone, a shop's name at the top is the page's first words; set smaller, a running foot
    shop = page_of([[("CORNER CAFE BERLIN", quad(50, 10, 300))], body(200), body(400)])
    assert types([shop])[0] == ["paragraph", "paragraph", "paragraph"]
    small = page_of([body(200), body(400), [("Printed in Berlin", quad(50, 970, 150, 16))]])
    assert types([small])[0] == ["paragraph", "paragraph", "footer"]
    # with too little else on the page there is no running head
    short = page_of([[("Journal of Models", quad(50, 10, 200))], body(200, rows=2)])
    assert types([short, short])[0][0] != "header"


def test_a_running_head_with_the_page_number_on_its_row_is_a_header_wherever_the_cut_put_it():
    """A book page's top row, its number beside its title: a header, cut from the heading the
    block cut joined it to, or gathered from the title's block and the text's (the number
    first in it) on a photographed page whose rows tilt. The page's first row with no number
    is no header."""
    title = ("BOSTON COOKING-SCHOOL COOK BOOK", quad(150, 20, 380))
    heading = ("Gravy", quad(250, 48, 120, 32))  # in large type
    found = block_types([page_of([[("248", quad(50, 20, 40)), title, heading], body(90, 8)])])[0]
    assert found.types == ["header", "heading", "paragraph"]
    assert found.line_block[:3].tolist() == [0, 0, 1]
    tilted = [[x, y + 0.08 * (x - 50)] for x, y in quad(50, 20, 380)]  # 30 px lower at its end
    number = ("249", quad(480, 50, 40))  # on the title's row as it tilts, below its middle
    found = block_types([page_of([[("POULTRY AND GAME", tilted)], [number, *body(90, 8)]])])[0]
    assert found.types == ["header", "paragraph"]
    assert found.line_block[:3].tolist() == [0, 0, 1]
    found = block_types([page_of([[title, heading], body(90, 8)])])[0]
    assert found.types[0] != "header"
    # an old book's folio boxed taller than its title (its figures, the scan's specks): still
    # the page's number beside its title
    tall = ("16", quad(50, 12, 30, 30))
    running = ("SETTLEMENT OF NEW-YORK", quad(150, 20, 300))
    found = block_types([page_of([[tall], [running], body(90, 8)])])[0]
    assert found.types == ["header", "paragraph"]
    assert found.line_block[:3].tolist() == [0, 0, 1]


def test_a_block_in_a_table_is_the_tables():
    cells = [("Item", quad(60, 210, 80)), ("Price", quad(300, 210, 80))]
    page = page_of([body(100, rows=2), cells, body(400)], tables=[(40, 190, 500, 300)])
    assert types([page]) == [["paragraph", "table", "paragraph"]]


def test_a_turned_page_is_judged_upright():
    """A page sent turned 90° clockwise: its running head lies along the sent image's right
    edge; with_block_types turns it upright before judging."""
    upright = page_of(
        [[("Journal of Models", quad(50, 10, 200))], body(200), body(400)], height=1000
    )
    upright_hw = (1000, 600)
    sent = Texts(
        list(upright.texts),
        turned_back(upright.quads, 90, upright_hw),
        np.ones(len(upright.texts), np.float32),
        line_block=upright.line_block,
        rotation=90,
    )
    typed = with_block_types([sent, sent], [(1000, 600), (1000, 600)])
    assert typed[0].block_types == ("header", "paragraph", "paragraph")
    # read as sent, the head sits at no edge of the page's top or bottom
    unturned = Texts(sent.texts, sent.quads, sent.scores, line_block=sent.line_block)
    assert with_block_types([unturned] * 2, [(1000, 600)] * 2)[0].block_types[0] != "header"


def test_a_drop_caps_tall_line_makes_no_heading():
    """A drop cap makes its paragraph's first line tall, not its characters wide: a short
    paragraph so begun is no heading, a headline's large characters are."""
    drop_cap = [
        ("Our basic ideas about physics went", quad(50, 420, 480, 40)),
        ("through several upheavals early this", quad(50, 470, 480)),
        ("century, and it showed.", quad(50, 500, 300)),
    ]
    headline = [("Deals on wheels", quad(50, 300, 420, 40))]
    assert types([page_of([headline, drop_cap, body(600, rows=6)])]) == [
        ["heading", "paragraph", "paragraph"]
    ]


def test_a_pdfs_lines_in_a_bold_or_italic_face_at_the_body_size_are_headings():
    """Where a PDF's text layer names each line's font: a few lines in a bold or italic face
    the body is not set in, no smaller than it, are a heading, alone or over their text in the
    body's face (cut from it); a bare number, a smaller note, a line ending a clause and text in
    the body's own face are not. Pages read by OCR name no font and are judged as before."""
    roman, bold, italic = "Times-Roman", "Times-Bold", "Times-Italic"
    blocks = [
        [("The Evolution of Print", quad(50, 20, 300))],  # bold, alone: heading
        [("Early Days", quad(50, 60, 120)), *body(90, rows=3)],  # bold over its text: cut
        body(200, rows=4),
        [("Set in italic, a clause goes on,", quad(50, 340, 300))],  # ends a clause
        [("12", quad(50, 380, 30))],  # a bare number
        [("A note set small", quad(50, 420, 200, 14))],  # smaller than the body
        [("A Closing Word", quad(50, 460, 200))],  # italic at the body's size
        body(500, rows=4),
    ]
    faces = [bold, bold, roman, roman, roman] + [roman] * 4 + [italic, bold, bold, italic]
    faces += [roman] * 4
    page = page_of(blocks, fonts=faces)
    (found,) = block_types([page])
    assert found.types == [
        "heading",
        "heading",
        "paragraph",
        "paragraph",
        "paragraph",
        "paragraph",
        "paragraph",
        "heading",
        "paragraph",
    ]
    assert found.line_block.tolist()[:5] == [0, 1, 2, 2, 2]
    # the same lines read by OCR: no face is known, and lines alone at the body's size are
    # paragraphs (a short line over its text is still cut by its geometry)
    ocr = types([page_of(blocks)])[0]
    assert (ocr[0], ocr[1], ocr[-2]) == ("paragraph", "heading", "paragraph")
    # a document set all in a bold face has no line in another: judged as if read by OCR
    assert types([page_of(blocks, fonts=[bold] * len(faces))])[0] == ocr


def test_a_headline_keeps_the_body_sized_line_under_it_out():
    """A headline in large type and a line at the body's size under it with no gap between
    (a "Continued from page 9", a byline, the first line of text): the headline alone is the
    heading. A drop cap's line is tall, not wide: its paragraph stays whole."""
    headline = [
        ("COMMANDER", quad(50, 20, 380, 80)),
        ("Continued from page 9", quad(80, 100, 300)),
    ]
    drop_cap = [
        ("Our basic ideas about physics went", quad(50, 420, 480, 40)),
        ("through several upheavals early this", quad(50, 470, 480)),
    ]
    found = block_types([page_of([headline, body(200, rows=6), drop_cap])])[0]
    assert found.types == ["heading", "paragraph", "paragraph", "paragraph"]
    assert found.line_block[:2].tolist() == [0, 1]


def test_a_headline_under_a_kicker_in_its_block_is_cut_out_its_capitals_measured_as_type():
    """A kicker at the body's size, a headline in large type and the text, with no gap between
    them: the headline is a block of its own, a heading. Its second line is in capitals, which
    OCR boxes lower than mixed-case type of their size (no descenders): it is part of the
    headline. Under more lines than a kicker has, a line in large type is left in its text."""
    kicker = [("Autumn", quad(50, 20, 100)), ("Tarts", quad(50, 45, 80))]
    headline = [
        ("MUSHROOM PIE", quad(50, 70, 420, 30)),
        ("WITH SPINACH", quad(50, 105, 400, 23)),  # 1.15 body heights: 1.35 as type
    ]
    found = block_types([page_of([kicker + headline + body(135), body(400, rows=8)])])[0]
    assert found.types == ["paragraph", "heading", "paragraph", "paragraph"]
    assert found.line_block[:5].tolist() == [0, 0, 1, 1, 2]
    found = block_types([page_of([body(20) + headline + body(135), body(400, rows=8)])])[0]
    assert found.types == ["paragraph", "paragraph"]


def test_lines_read_by_ocr_with_bold_strokes_at_the_body_size_are_headings():
    """Where no font is named, a line whose strokes are clearly wider than the body's is set
    in bold: a few such lines are a heading, alone or over their text (cut from it), one ending
    with a full stop too, and one with no descender (its box a little lower than the body's);
    a run-in head ("LATE MR SMITH.—Mr") starts its paragraph, and the text under a heading does
    not open with another heading told by geometry alone."""
    blocks = [
        [("§ 1.3 Definitions.", quad(50, 20, 200))],  # bold, alone, a full stop: heading
        [("Scope of the rules", quad(50, 60, 200, 18)), *body(90, rows=3)],  # over its text
        [
            ("(d) Subject", quad(50, 200, 120)),  # bold over its text: cut
            ("Air Transport Association (ATA) of", quad(50, 230, 330)),  # goes on: no heading
            ("America Code 22, Auto flight; and 31, Indicating systems.", quad(50, 260, 480)),
        ],
        [("LATE MR SMITH.—Mr John Smith, who", quad(50, 320, 480)), *body(350, rows=2)],
        body(430, rows=4),
    ]
    bold = [3.0, 3.0, 2.0, 2.0, 2.0] + [3.0, 2.0, 2.0] + [3.0, 2.0, 2.0] + [2.0] * 4
    page = page_of(blocks, strokes=np.array(bold, np.float32))
    (found,) = block_types([page])
    assert found.types == [
        "heading",
        "heading",
        "paragraph",
        "heading",
        "paragraph",
        "paragraph",
        "paragraph",
    ]
    assert found.line_block.tolist()[:9] == [0, 1, 2, 2, 2, 3, 4, 4, 5]
    # the same strokes all alike: nothing is bold, and the lines alone at the body's size are
    # paragraphs (a short line over its text is still cut by its geometry)
    plain = types([page_of(blocks, strokes=np.full(len(bold), 2.0, np.float32))])[0]
    assert plain[0] == "paragraph" and plain.count("heading") < 3


def test_letter_spaced_lines_read_by_ocr_are_headings_away_from_the_pages_edges():
    """A line whose letters stand several times further apart than the body's (a book's
    "Chapitre II.", a newspaper's subhead) is a heading, its box a little lower than the
    body's; the same at the page's top edge is a running head (a magazine's section name), a
    line of dot leaders is none, nor one in small capitals (a caption's), nor a justified
    line of a worn scan whose glyphs broke apart (wide gaps, its characters no further apart
    than the body's), and on a page whose text all stands apart alike (a scene's signs)
    nothing is."""
    worn = ("Body text set wide that runs to the edge", quad(50, 530, 480))
    blocks = [
        [("dateline", quad(300, 20, 160))],  # letter-spaced, at the top edge
        body(150, rows=3),
        [("Chapitre II.", quad(200, 300, 260, 0.85 * BODY))],  # letter-spaced, mid-page
        body(340, rows=3),
        [("Aged 21 to 64 . . . . . .", quad(50, 460, 300))],  # dot leaders
        [*body(500, rows=1), worn, *body(560, rows=1)],
        [("ARE MOSTLY", quad(50, 620, 160, 0.75 * BODY))],  # small capitals
        body(660, rows=3),
    ]
    spaced = {"dateline", "Chapitre II.", "Aged 21 to 64 . . . . . .", "ARE MOSTLY", worn[0]}
    texts = [t for b in blocks for t, _ in b]
    gaps = np.array([0.4 if t in spaced else 0.05 for t in texts], np.float32)
    strokes = np.full(len(texts), 2.0, np.float32)
    (found,) = block_types([page_of(blocks, strokes=strokes, gaps=gaps)])
    assert found.types == ["paragraph"] * 2 + ["heading"] + ["paragraph"] * 5, found.types
    scene = types([page_of(blocks, strokes=strokes, gaps=np.full(len(texts), 0.2, np.float32))])
    assert "heading" not in scene[0]


def test_bold_cells_of_a_row_are_no_headings_a_heading_beside_another_column_is():
    """A table's header row in bold (its cells side by side, a few line heights apart) and a
    bold row label beside its row's text in one block are cells, not headings; two columns'
    bold headings that happen to share a row, far apart, are headings each; and a heading whose
    number the detector boxed apart (a bare number on its row is no cell)."""
    blocks = [
        [("Country", quad(50, 20, 90)), ("Sample size", quad(180, 20, 120))],  # header cells
        body(60, rows=3),
        [("Room and board", quad(50, 180, 150)), ("The cost of food", quad(240, 180, 160))],
        body(220, rows=3),
        [("Scope of the rules", quad(50, 340, 200))],  # column 1's heading ...
        [("Results", quad(600, 340, 90))],  # ... and column 2's, on the same row
        body(380, rows=3),
        [("1.", quad(50, 480, 20)), ("Methods", quad(80, 480, 90))],  # number boxed apart
        body(520, rows=3),
    ]
    heavy = {"Country", "Sample size", "Room and board", "Scope of the rules", "Results"}
    heavy.add("Methods")
    strokes = [3.0 if t in heavy else 2.0 for b in blocks for t, _ in b]
    (found,) = block_types([page_of(blocks, strokes=np.array(strokes, np.float32))])
    texts = [t for b in blocks for t, _ in b]
    headings = [
        " ".join(texts[i] for i in np.flatnonzero(found.line_block == k))
        for k, kind in enumerate(found.types)
        if kind == "heading"
    ]
    assert headings == ["Scope of the rules", "Results", "Methods"], headings


def test_italic_lines_read_by_ocr_are_headings_where_they_open_their_text():
    """A line whose strokes lean clearly further than the body's is set in italic: alone, or
    opening its block over text, it is a heading (a book's italic chapter title); an italic
    title inside a sentence (the line before goes on) is not, nor a line of figures (a 7
    leans as italic does), nor a jump line, and on a page set all in italic nothing is."""
    blocks = [
        body(20, rows=3),
        [("De la beauté des Parties", quad(150, 140, 260))],  # italic, alone
        body(180, rows=3),
        [
            ("Il faut suivre le conseil de M. de", quad(50, 300, 480)),
            ("Parfait Maréchal, who says that", quad(50, 330, 480)),  # italic, mid-sentence
            ("Que le cheval se juge par ses parties.", quad(50, 360, 480)),
        ],
        [("De la Tête", quad(200, 420, 120)), *body(450, rows=3)],  # italic, over its text
        [("1977", quad(50, 560, 60))],  # figures
        body(600, rows=3),
    ]
    leaning = {"De la beauté des Parties", "Parfait Maréchal, who says that", "De la Tête", "1977"}
    texts = [t for b in blocks for t, _ in b]
    slants = np.array([0.3 if t in leaning else 0.0 for t in texts], np.float32)
    strokes = np.full(len(texts), 2.0, np.float32)

    def headings(slants: np.ndarray) -> list[str]:
        (found,) = block_types([page_of(blocks, strokes=strokes, slants=slants)])
        return [
            " ".join(texts[i] for i in np.flatnonzero(found.line_block == k))
            for k, kind in enumerate(found.types)
            if kind == "heading"
        ]

    assert headings(slants) == ["De la beauté des Parties", "De la Tête"]
    # a jump line in italic, where a story runs on from another page, names itself: no heading
    jumped = [blocks[0], [("Continued from page 9", quad(150, 140, 260))], *blocks[2:]]
    (found,) = block_types([page_of(jumped, strokes=strokes, slants=slants)])
    assert found.types[1] == "paragraph"
    # all in italic: only the short line over its text, told by its geometry alone
    assert headings(np.full(len(texts), 0.3, np.float32)) == ["De la Tête"]


def test_a_line_centred_over_its_text_is_a_heading_though_ocr_boxed_it_lower():
    """A short line centred over the paragraph under it, after a sentence's end, is a heading
    even where OCR's box (following the ink: no descender) is lower than the text's; the same
    line at the text's left edge is a paragraph's short last line and stays in it."""
    lines = [
        ("in pan, first straining and removing the fat.", quad(50, 100, 300)),
        ("Chicken Fricassee", quad(210, 130, 160, 0.7 * BODY)),  # centred over 50-530
        ("Dress, clean, and cut up a fowl. Put in a kettle,", quad(50, 160, 480)),
        ("with boiling water, and cook slowly until tender.", quad(50, 190, 480)),
    ]
    (found,) = block_types([page_of([body(20, rows=2), lines])])
    assert found.types == ["paragraph", "paragraph", "heading", "paragraph"], found.types
    left = [*lines[:1], ("Chicken Fricassee", quad(50, 130, 160, 0.7 * BODY)), *lines[2:]]
    assert types([page_of([body(20, rows=2), left])]) == [["paragraph", "paragraph"]]


def test_a_byline_under_a_headline_is_never_the_headlines():
    """A deck in large bold type with its byline (smaller, also bold) and the text under it,
    with no gap between: the deck alone is the heading, found by its face or by its size. A
    heading's second line that starts "by the" at the heading's size is still the heading's."""
    deck = [
        ("buying a used car doesn't", quad(50, 20, 560, 46)),
        ("have to be a drag", quad(50, 70, 400, 48)),
        ("by m.f. thompson", quad(50, 122, 340, 30)),  # large type too, smaller than the deck
    ]
    blocks = [deck + body(160), body(300, rows=8)]
    strokes = np.array([4.3, 4.4, 2.9] + [2.0] * 12, np.float32)
    for page in (page_of(blocks, strokes=strokes), page_of(blocks)):
        (found,) = block_types([page])
        assert found.types[:2] == ["heading", "paragraph"], found.types
        assert found.line_block[:3].tolist() == [0, 0, 1]
    section = [
        ("§ 1.1 Positions and employees affected", quad(50, 20, 420)),
        ("by the rules in this subchapter.", quad(80, 50, 330)),
    ]
    bold = np.array([3.0, 3.0] + [2.0] * 12, np.float32)
    (found,) = block_types([page_of([section + body(80), body(220, rows=8)], strokes=bold)])
    assert found.types[0] == "heading" and found.line_block[:3].tolist() == [0, 0, 1]


def test_a_line_centred_over_its_text_in_its_block_may_end_with_a_full_stop():
    """A subhead at the body's size centred over the paragraph it sits on, no gap between, is
    cut from it as a heading though a full stop ends it (an old newspaper's "THE FINAL
    CAMPAIGN."); the same words at the text's left edge end a sentence of the paragraph."""
    before = [*body(20, rows=3), ("the sale ended.", quad(50, 110, 150))]

    def block(head: tuple[str, list[list[float]]]) -> list[tuple[str, list[list[float]]]]:
        return [head, *body(180, rows=4)]

    centred = ("The Final Campaign.", quad(190, 150, 200))
    (found,) = block_types([page_of([before, block(centred)])])
    assert found.types == ["paragraph", "heading", "paragraph"], found.types
    left = ("The Final Campaign.", quad(50, 150, 200))
    assert types([page_of([before, block(left)])]) == [["paragraph"] * 2]


def test_a_line_in_capitals_at_the_bodys_size_is_a_heading_where_capitals_are_rare():
    """In a document whose lines are seldom set in capitals, a line in capitals at the body's
    size is a heading: in a block of its own (a letter's "WARNING LETTER"), or centred over its
    block's text after a sentence's end (an old newspaper's subhead, in from the column's edges
    by less than a line height). A form's field ("TO: ...") is not, nor a label at its block's
    edge (a recipe's ingredient group over its list), nor a caption's line with the caption's
    next line in capitals right under it, nor lines in capitals line after line (an address),
    nor anything where capitals are common (a receipt)."""
    statue = [
        *body(240, rows=2),
        ("the statue stood.", quad(50, 300, 200)),
        ("STATUE OF WASHINGTON.", quad(65, 330, 450)),  # centred, 0.75 line heights in
        ("Some distance in front of the main en-", quad(50, 360, 480)),
        ("trance stands the statue of the man.", quad(50, 390, 480)),
    ]
    label = [("KRUCHE CIASTO", quad(50, 440, 140))]
    label += [(t, quad(50, 470 + 30 * k, 120)) for k, t in enumerate(["7 mushrooms", "4 onions"])]
    letter = [
        [("WARNING LETTER", quad(50, 20, 160))],
        body(60),
        [("TO: JANE DOE, DIRECTOR", quad(50, 200, 220))],
        statue,
        label,
        [("THE ROOFS OF", quad(50, 580, 140, 0.9 * BODY))],  # a caption's first line ...
        [("DUBROVNIK,", quad(50, 606, 110, 0.9 * BODY))],  # ... and its next, right under it
        body(650, rows=10),
    ]
    address = [
        (line, quad(50, 20 + 30 * k, 300))
        for k, line in enumerate(["MR. TERRY MCGILL", "ENBRIDGE ENERGY PARTNERS", "HOUSTON TEXAS"])
    ]
    text = [address, body(140, rows=28)]  # a second page: an address in capitals, then text

    def typed(blocks, height: float = 1000):
        strokes = np.full(sum(map(len, blocks)), 2.0, np.float32)  # all in one face
        pages = [page_of(blocks, height, strokes=strokes), page_of(text, strokes=np.full(31, 2.0))]
        return block_types(pages)

    found, other = typed(letter)
    heads = ["heading", "paragraph", "paragraph", "paragraph", "heading"]
    assert found.types == heads + ["paragraph"] * 5, found.types
    assert other.types == ["paragraph"] * 2, other.types
    total = [[("TOTAL DUE", quad(50, 1010, 100))], [("12.50", quad(50, 1040, 50))]]
    receipt = [[(t.upper(), q) for t, q in block] for block in letter] + total
    assert "heading" not in typed(receipt, 1200)[0].types


def test_a_line_centred_under_a_sentences_end_is_a_heading_its_text_below_or_beyond():
    """A few words centred over or under running text after a sentence's end, a full stop
    ending them or not, are a heading: in a block of their own between paragraphs, and as
    a block's last line (a subhead at a column's foot, its text in the next column). The same
    words at the text's left edge, or after a sentence that goes on, are a paragraph's."""
    before = [*body(20, rows=3), ("the sale ended.", quad(50, 110, 150))]
    after = [
        ("Dress, clean, and cut up a fowl. Put in a kettle,", quad(50, 190, 480)),
        ("with boiling water, and cook slowly until tender.", quad(50, 220, 480)),
    ]
    centred = ("Dangers of Cholera Morbus.", quad(170, 150, 240))
    assert types([page_of([before, [centred], after])]) == [["paragraph", "heading", "paragraph"]]
    left = ("Dangers of Cholera Morbus.", quad(50, 150, 240))
    assert types([page_of([before, [left], after])]) == [["paragraph"] * 3]
    goes_on = [*before[:3], ("and then the sale", quad(50, 110, 150))]
    assert types([page_of([goes_on, [centred], after])]) == [["paragraph"] * 3]
    # at a block's foot, its text beyond the column: cut from the block
    foot = ("RISING COSTS", quad(230, 140, 120))
    (found,) = block_types([page_of([[*before, foot], body(300, rows=6)])])
    assert found.types == ["paragraph", "heading", "paragraph"]
    assert found.line_block[:5].tolist() == [0, 0, 0, 0, 1]
    foot_left = ("RISING COSTS", quad(50, 140, 120))
    assert types([page_of([[*before, foot_left], body(300, rows=6)])]) == [["paragraph"] * 2]


def test_a_bold_row_label_with_figures_on_its_row_is_a_cell_not_a_heading():
    """A table's row label set apart from its values (further than a cell's reach) is a cell
    when figures stand on its row to its right; a heading with a bare number before it is
    not."""
    blocks = [
        body(20, rows=3),
        [("Overall", quad(50, 140, 80))],
        [("0.95 (3.55)", quad(300, 140, 100))],
        [("12 (30%)", quad(450, 140, 80))],
        body(180, rows=3),
        [("2.", quad(50, 300, 20))],
        [("Methods", quad(120, 300, 90))],
        body(340, rows=3),
    ]
    heavy = {"Overall", "Methods"}
    texts = [t for b in blocks for t, _ in b]
    strokes = np.array([3.0 if t in heavy else 2.0 for t in texts], np.float32)
    (found,) = block_types([page_of(blocks, strokes=strokes)])
    kinds = [found.types[b] for b in found.line_block]
    headings = [t for t, kind in zip(texts, kinds, strict=True) if kind == "heading"]
    assert headings == ["Methods"], headings


def test_an_amount_set_large_names_nothing_and_is_no_heading():
    """A bill's amounts set in the page's large type (a newspaper's list of accounts) are
    taller and wider apart than the body's text, as a heading is, but name nothing: more
    figures than letters. A large title with a year in it is still a heading."""
    page = page_of(
        [
            [("Report 2024", quad(50, 20, 300, 48))],
            body(100),
            [("126.55", quad(400, 240, 120, 30))],
            body(300),
        ]
    )
    assert types([page]) == [["heading", "paragraph", "paragraph", "paragraph"]]


def test_a_bold_line_running_on_past_a_sentences_end_is_a_run_in_head():
    """A bold label whose paragraph starts on its own line ("Capital gain tax rate reduced.
    The") is a run-in head, not a heading; an abbreviation's full stop ("Geo. W. Lambourne")
    ends no sentence."""
    blocks = [
        [("Capital gain tax rate reduced. The", quad(50, 20, 330))],
        body(50, rows=3),
        [("Geo. W. Lambourne Dies", quad(50, 180, 240))],
        body(210, rows=3),
    ]
    strokes = np.array([3.0, 2.0, 2.0, 2.0, 3.0, 2.0, 2.0, 2.0], np.float32)
    assert types([page_of(blocks, strokes=strokes)])[0] == [
        "paragraph",
        "paragraph",
        "heading",
        "paragraph",
    ]


def test_a_dateline_is_no_heading_whatever_its_size():
    """A newspaper's or a letter's dateline, a place and a date, set large or in bold, says
    what it is."""
    page = page_of(
        [
            [("LONDON, MAY 4, 1951.", quad(50, 20, 440, 30))],
            [("Farming in 1950", quad(50, 70, 300, 48))],
            body(140),
        ]
    )
    assert types([page]) == [["paragraph", "heading", "paragraph"]]
