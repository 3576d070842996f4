"""Markdown out (client/markdown.py): headings, paragraphs, lists, rows, running headers and
footers, pages, checked by a CommonMark parser (markdown-it-py): the structure it reads, and
that every word it shows is a word the service read. The blocks' types are the server's
(postprocessing/block_types.py), judged on the test's pages as the server would."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import numpy as np
import pytest
from markdown_it import MarkdownIt

from triton_ocr.client.results import Block, Document, Page, TextLine
from triton_ocr.postprocessing.block_types import PageText, block_types

PARSER = MarkdownIt("commonmark")
BODY = 20  # body text height (pixels)


def typed(document: Document) -> Document:
    """The document's blocks as the server gives them, typed (and cut where they hold a
    heading line or a list over their text), its pages upright."""
    upright = []
    for p in document.pages:
        quads = np.array([line.polygon for b in p.blocks for line in b.lines], np.float32)
        line_block = np.repeat(np.arange(len(p.blocks)), [len(b.lines) for b in p.blocks])
        texts = [line.text for b in p.blocks for line in b.lines]
        upright.append(PageText(texts, quads.reshape(-1, 4, 2), line_block, p.height))
    pages = []
    for p, found in zip(document.pages, block_types(upright), strict=True):
        lines = [line for b in p.blocks for line in b.lines]
        blocks = [
            block(*(line for line, k in zip(lines, found.line_block, strict=True) if k == n))
            for n in range(len(found.types))
        ]
        pages.append(
            replace(
                p,
                blocks=tuple(replace(b, type=t) for b, t in zip(blocks, found.types, strict=True)),
            )
        )
    return replace(document, pages=tuple(pages))


def to_markdown(document: Document, headers_footers: bool = False) -> str:
    return typed(document).to_markdown(headers_footers)


def line(text: str, x: float, y: float, width: float, height: float = BODY) -> TextLine:
    polygon = ((x, y), (x + width, y), (x + width, y + height), (x, y + height))
    return TextLine(text, polygon, 0.99)


def block(*lines: TextLine) -> Block:
    xs = [x for one in lines for x, _ in one.polygon]
    ys = [y for one in lines for _, y in one.polygon]
    box = ((min(xs), min(ys)), (max(xs), min(ys)), (max(xs), max(ys)), (min(xs), max(ys)))
    return Block(box, lines)


def text_block(texts: list[str], y: float, x: float = 50, width: float = 500) -> Block:
    """Running text: every row but the last as wide as the block."""
    return block(
        *(
            line(t, x, y + 30 * k, width if k < len(texts) - 1 else width / 2)
            for k, t in enumerate(texts)
        )
    )


def page(*blocks: Block, number: int = 0, height: int = 1000) -> Page:
    lines = tuple(one for b in blocks for one in b.lines)
    return Page(number, 600, height, lines, blocks=blocks)


def tokens(markdown: str) -> list[str]:
    return [t.type for t in PARSER.parse(markdown) if t.nesting >= 0 and t.type != "inline"]


def shown_words(markdown: str) -> list[str]:
    """The words a reader sees once the Markdown is rendered."""
    rendered = html.unescape(re.sub(r"<[^>]+>", " ", PARSER.render(markdown)))
    return rendered.split()


def test_a_larger_short_block_is_a_heading_and_sizes_give_levels():
    document = Document(
        (
            page(
                block(line("Annual report", 50, 20, 300, 48)),
                block(line("Results", 50, 100, 150, 32)),
                text_block(["The year went well and the", "figures show it."], 160, width=300),
                block(line("Outlook", 50, 260, 150, 31)),
                text_block(["Next year looks as good as", "this one did."], 320, width=300),
            ),
        )
    )
    markdown = to_markdown(document)
    assert markdown.splitlines()[0] == "# Annual report"
    assert "## Results" in markdown and "## Outlook" in markdown
    assert tokens(markdown).count("heading_open") == 3
    assert "The year went well and the figures show it." in markdown


def test_lines_are_joined_and_a_word_split_at_a_line_end_is_whole_again():
    document = Document(
        (page(text_block(["The service reads infor-", "mation from pages of", "any kind."], 50)),)
    )
    assert to_markdown(document) == "The service reads information from pages of any kind.\n"
    # a compound's own hyphen before an upper-case word stays
    kept = Document((page(text_block(["It runs on Intel-", "Xeon machines too."], 50)),))
    assert to_markdown(kept) == "It runs on Intel- Xeon machines too.\n"


def test_cjk_lines_join_without_a_space():
    document = Document((page(text_block(["光学字符", "识别服务"], 50)),))
    assert to_markdown(document) == "光学字符识别服务\n"


def test_bullets_and_numbers_are_lists_and_their_numbers_are_kept():
    bullets = block(
        line("• first item", 50, 50, 200),
        line("• second item that goes", 50, 80, 300),
        line("on to a second line", 70, 110, 250),
    )
    numbered = block(line("3. third", 50, 200, 150), line("4. fourth", 50, 230, 150))
    out_of_turn = block(line("1. one", 50, 300, 150), line("5. five", 50, 330, 150))
    lettered = block(line("a) alpha", 50, 400, 150), line("b) beta", 50, 430, 150))
    markdown = to_markdown(Document((page(bullets, numbered, out_of_turn, lettered),)))
    parsed = PARSER.parse(markdown)
    ordered = [t for t in parsed if t.type == "ordered_list_open"]
    assert len(ordered) == 1 and ordered[0].attrGet("start") == 3
    assert "- second item that goes on to a second line" in markdown
    assert "- 5\\. five" in markdown  # numbers out of turn stay as they were read
    assert "- a) alpha" in markdown
    assert tokens(markdown).count("list_item_open") == 8


def test_markup_in_the_text_is_text():
    read = [
        "# not a heading",
        "+1 and -2",
        "> not a quote",
        "=== not a rule",
        "*stars* and _under_ <b>tags</b> [a](b) `code` a|b &amp;",
    ]
    document = Document(
        tuple(page(text_block([text], 50), number=k) for k, text in enumerate(read))
    )
    markdown = to_markdown(document)
    found = set(tokens(markdown))
    assert not {"heading_open", "bullet_list_open", "blockquote_open", "hr"} & found
    assert not {"em_open", "html_inline", "link_open", "code_inline"} & {
        child.type for t in PARSER.parse(markdown) if t.children for child in t.children
    }
    assert shown_words(markdown) == [word for text in read for word in text.split()]


def test_rows_set_apart_keep_their_line_breaks():
    receipt = block(
        line("Espresso", 50, 50, 120),
        line("7.80", 400, 50, 50),
        line("Cinnamon roll", 50, 80, 180),
        line("3.20", 400, 80, 50),
    )
    markdown = to_markdown(Document((page(receipt, text_block(["x"] * 5, 300)),)))
    assert markdown.startswith("Espresso 7.80\\\nCinnamon roll 3.20\n")
    inline = [c.type for t in PARSER.parse(markdown) if t.children for c in t.children]
    assert inline.count("hardbreak") == 1


def test_paragraphs_one_under_another_without_a_gap_are_paragraphs():
    """A block holding paragraphs with no gap between them (a short row ending a sentence,
    the next starting another) comes as its paragraphs; a poem's short lines, one sentence
    after another, keep their line breaks."""
    rows = [
        ("The first paragraph runs over", 500),
        ("two rows and then ends here.", 200),
        ("The second one starts on the", 500),
        ("next row and goes on to its end.", 500),
        ("And the last is short.", 200),
    ]
    essay = block(*(line(t, 50, 50 + 30 * k, w) for k, (t, w) in enumerate(rows)))
    assert to_markdown(Document((page(essay),))) == (
        "The first paragraph runs over two rows and then ends here.\n\n"
        "The second one starts on the next row and goes on to its end. And the last is short.\n"
    )
    verses = [("Come, my love, to me.", 200), ("I am unkind.", 110), ("Go to war.", 120)]
    verses += [("I fly.", 100)]
    poem = block(*(line(t, 50, 50 + 30 * k, w) for k, (t, w) in enumerate(verses)))
    markdown = to_markdown(Document((page(poem),)))
    assert markdown.count("\\\n") == 3 and tokens(markdown).count("paragraph_open") == 1


def test_text_set_narrower_beside_a_picture_is_still_a_paragraph():
    """Justified rows set to a narrower measure beside a picture (a run of rows sharing their
    edges) fill that measure: the block is running text, written as one paragraph."""
    wide = ["Text above the picture runs", "the whole width of the column"]
    narrow = [
        "and then it runs beside it",
        "in rows that share their",
        "edges all the way down",
        "to the picture's foot and",
    ]
    rows = [(t, 500) for t in wide] + [(t, 260) for t in narrow] + [("back to the width.", 300)]
    wrapped = block(*(line(t, 50, 50 + 30 * k, w) for k, (t, w) in enumerate(rows)))
    markdown = to_markdown(Document((page(wrapped),)))
    assert markdown == " ".join(t for t, _ in rows) + "\n"
    # two rows alike are no measure of their own: the same block with two narrow rows keeps
    # its line breaks
    rows = [(t, 500) for t in wide] + [(t, 260) for t in narrow[:2]] + [("back to the width.", 300)]
    short = block(*(line(t, 50, 50 + 30 * k, w) for k, (t, w) in enumerate(rows)))
    assert to_markdown(Document((page(short),))).count("\\\n") == 4


def test_running_text_goes_on_in_the_next_column():
    left = text_block(["The first column ends in", "the middle of a"], 50, x=50, width=240)
    right = text_block(["sentence that the second", "column ends."], 50, x=320, width=240)
    assert to_markdown(Document((page(left, right),))) == (
        "The first column ends in the middle of a sentence that the second column ends.\n"
    )


def test_running_text_goes_on_over_three_columns():
    first = text_block(["A sentence that starts in", "the first column and"], 50, x=20, width=170)
    second = text_block(["goes on through the second", "column and then"], 50, x=210, width=170)
    third = text_block(["ends in the third", "one."], 50, x=400, width=170)
    assert to_markdown(Document((page(first, second, third),))) == (
        "A sentence that starts in the first column and goes on through the second column and "
        "then ends in the third one.\n"
    )


def pages_with_running_heads() -> Document:
    body = ["Body text that fills the", "page line after line", "and more of it", "to the end."]
    return Document(
        tuple(
            page(
                block(line("Journal of Models", 50, 10, 200)),
                text_block(body, 200),
                text_block(body, 400),
                block(line(f"{k + 1}", 290, 970, 20)),
                number=k,
            )
            for k in range(2)
        )
    )


def test_running_headers_and_footers_are_left_out_unless_asked_for():
    document = pages_with_running_heads()
    markdown = to_markdown(document)
    assert "Journal" not in markdown and "\n1\n" not in markdown
    assert "<!-- page 2 -->" in markdown
    kept = to_markdown(document, headers_footers=True)
    assert kept.count("Journal of Models") == 2 and "\n\n2\n" in kept


def test_a_line_alone_at_the_top_of_one_page_is_content_unless_set_smaller():
    body = text_block(["Body text that fills the", "page line after line", "and on", "x"], 200)
    shop = block(line("CORNER CAFE BERLIN", 50, 10, 300))
    assert "CORNER CAFE BERLIN" in to_markdown(Document((page(shop, body, body),)))
    small = block(line("Printed in Berlin", 50, 970, 150, BODY * 0.8))
    assert "Printed" not in to_markdown(Document((page(body, body, small),)))


def test_pages_are_marked_and_an_unread_page_says_why():
    document = Document(
        (
            page(text_block(["one"], 50)),
            Page(1, 0, 0, error="the page took longer than 10 s -- page_timeout_s"),
            page(text_block(["three"], 50), number=2),
        )
    )
    markdown = to_markdown(document)
    assert markdown == (
        "one\n\n<!-- page 2 -->\n\n<!-- page 2 not read: the page took longer than 10 s - - "
        "page_timeout_s -->\n\n<!-- page 3 -->\n\nthree\n"
    )
    assert shown_words(markdown) == ["one", "three"]


def test_pages_without_blocks_read_line_by_line():
    lines = (line("First line", 50, 50, 200), line("Second line", 50, 80, 200))
    markdown = to_markdown(Document((Page(0, 600, 1000, lines),)))
    assert markdown == "First line\n\nSecond line\n"


@pytest.mark.parametrize("headers_footers", [False, True])
def test_nothing_is_invented(headers_footers):
    document = pages_with_running_heads()
    read = [w for p in document.pages for b in p.blocks for w in b.text.split()]
    shown = shown_words(to_markdown(document, headers_footers))
    assert set(shown) <= set(read)
    assert len(shown) == (len(read) if headers_footers else len(read) - 2 * 4)
