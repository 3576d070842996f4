"""A document's blocks -> what each is: heading, paragraph, list, table, header, footer, caption
or figure (contract.BLOCK_TYPES).

From geometry and text, over all the pages of one document (a running head recurs, body text
is the size most of the document is set in), on upright pages. A block of text is first cut
where it holds two things the block cut could not part (no gap between them): a headline in
large type over a line at the body's size (a byline, the text), under at most a few (a kicker,
a section's name; a line in capitals, boxed without descenders, measured as the mixed-case
text it would box as), a heading line
set on its text (a section's title in bold at the body's size, starting the block or after a
sentence's end, or lines in a bold or italic face over the body's: a PDF's fonts, or bold,
leaning, letter-spaced or capitals type on a page read by OCR; a byline under it is never its;
a line centred over its text may end with a full stop), a block's
last line centred over its text after a sentence's end (a subhead at a column's foot, its text
in the next column), and a list after the sentence that leads to it. Then, in this order:

1. **table**: most of its lines' centres lie in a table found on the page (tables=true);
   **figure**: a block of a few lines all in a figure found on the page (postprocessing.figures:
   a picture's own text, a label in a drawing); the figures themselves are blocks of their own,
   with no text;
2. **header / footer**: a short row alone at the page's top or bottom edge, no taller than the
   body text, with the rest of the page beyond it, that holds a page number, is set smaller
   than the body, or whose words (numbers aside) recur at an edge of another page; and the
   page's top or bottom row holding its number beside a line or two of words (a book's title
   and its folio), wherever the block cut put its lines;
3. **caption**: its first line starts with a figure's or table's label and number ("Figure 3",
   "Table 2:", "Fig. 1.", "图 1", "表 2");
4. **heading**: a few short lines naming something (letters, no more figures than letters: an
   amount names nothing) set clearly larger than the body text (taller, and their
   characters wider apart: a drop cap makes a line's box tall, not its characters wide), or,
   where a PDF's text layer names the fonts, set at the body's size or larger in a bold or
   italic face the body is not set in; where OCR read them, in bold, italic or letter-spaced
   type (strokes clearly wider than the body's, leaning clearly further, or letters standing
   clearly further apart: postprocessing.strokes), or one line in capitals in a document
   seldom set in them, no line in capitals under it (a caption's next line); never a byline
   nor a jump line ("Continued from page 9") nor a dateline ("Washington, March 3, 1998"),
   whatever its face or size; and a line of a few words alone in its block, centred over or
   under the running text beside it after a sentence's end (a subhead at the body's size
   between a column's paragraphs);
5. **list**: its first line starts with a bullet or an item's number or letter;
6. **paragraph**: the rest.

"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from triton_ocr.contract import BLOCK_CAPTION as CAPTION
from triton_ocr.contract import BLOCK_FIGURE as FIGURE
from triton_ocr.contract import BLOCK_FOOTER as FOOTER
from triton_ocr.contract import BLOCK_HEADER as HEADER
from triton_ocr.contract import BLOCK_HEADING as HEADING
from triton_ocr.contract import BLOCK_LIST as LIST
from triton_ocr.contract import BLOCK_PARAGRAPH as PARAGRAPH
from triton_ocr.contract import BLOCK_TABLE as TABLE
from triton_ocr.contract import LIST_MARKERS

from .geometry import Box

# a heading's lines are at least this much taller than the body's, and it is short
HEADING_RATIO = 1.3
HEADING_MOST_LINES, HEADING_MOST_WORDS = 3, 15
# running headers and footers: one short row, no taller than the body's, within this share of
# the page's height from its top or bottom edge, on a page with this many other lines
EDGE_SHARE = 0.1
EDGE_MOST_WORDS, EDGE_LEAST_OTHERS = 12, 5
EDGE_TALLEST = 1.1  # a running head is at most this many body heights tall
# a running head holding the page's number has at most this many lines on its row (the
# number, a title, a chapter's name), and the text under the number is at least this many
# times as wide as it
FOLIO_MOST_LINES, FOLIO_TEXT = 3, 4.0
SMALLER = 0.9  # ... and set this much smaller than the body, or else holds a page number
BYLINE_SMALLER = 0.8  # a byline under a headline is set at most this share of its size
# a heading in a face of its own names something: this many letters, and no more digits than
# letters (a bold price or an initial is none)
LEAST_LETTERS = 2
# a heading set on its block's text: at most this many words, at most this share of the
# block's width, over a line of at least this share, and at least this share of its height
LEAD_MOST_WORDS, LEAD_NARROWER, LEAD_RUNNING, LEAD_HEIGHT = 8, 0.8, 0.75, 0.95
CLAUSE_ENDS = ".,;"  # a line ending so goes on, or ends a sentence: no heading
# ... except that a heading set in bold or italic may end with a full stop (a statute's
# "§ 1.3 Definitions."): its face sets it apart from a sentence
STYLED_CLAUSE_ENDS = ",;"
# OCR's boxes follow the ink (a line with no descender is lower; a photo's long curved lines
# are boxed taller), a text layer's the font's size; small bold type's strokes are no wider
# than the body's, so a line read by OCR with bold strokes need only be this share of the
# body's line height; a letter-spaced one this share (letter-spaced small capitals are a
# caption's or a byline's: 0.77 of the body's height on a dev magazine page)
INK_HEIGHT, SPACED_HEIGHT = 0.6, 0.8
# a heading line centred over its text need only be boxed INK_HEIGHT of the text's height (OCR's
# box follows the ink, and a short line centred over text is a title, not a sentence's end): it
# stands in from both edges by this many body line heights or more, its margins alike within
# this share of the text's width
CENTRED_MARGIN, CENTRED_SLACK = 1.0, 0.05
# a line in capitals, as wide as a long line of text, is centred over it in from both edges by
# this many line heights or more (a narrow column's subhead; a label starts at its edge)
CAPITALS_MARGIN = 0.5
NEAR = 2.0  # a heading in a block of its own stands at most this many line heights off its text
LEADS_ON = ".:!?"  # a list starts after a line ending so
SENTENCE_ENDS = ".!?"  # a heading within a block follows a line ending so
BOLDER = 1.3  # bold type's strokes are at least this much wider than the body's ...
# ... and at most this much: wider ones are a logo's, or the paper of white type on a dark band
HEAVIEST = 2.5
HEAVY = "(heavy strokes)"  # the face of a line without a font whose strokes are bold
# a line without a font whose letters stand at least this share of its height apart (the
# body's: 0.03-0.07) and this many times the body's is set letter-spaced (a scene photo's signs
# stand apart alike: no type there is) ...
SPACED_GAP, SPACED_TIMES = 0.2, 3.0
SPACED = "(letter-spaced)"  # its face
# a line without a font whose upright strokes lean this much further right than the body's
# (across over up; roman type about 0) is set in italic
ITALIC_LEAN = 0.2
SLANTED = "(slanted)"  # its face
# a line without a font set in capitals, in a document whose lines are at most this share of
# its characters in capitals (a receipt or a form set all in capitals has no face of its own
# there), is set in a face of its own ...
RARE_CAPITALS = 0.1
CAPS = "(capitals)"  # ... this one, unless it opens with a form's field name ("TO:", "RE:")
FIELD = re.compile(r"^\w{1,12}\s*:")
GOES_ON = 1.0  # a line in capitals this many of its heights or less over another goes on there
# a line's face is told from its letters only when it has this many letters or more, and they
# are this share of its characters or more
MEASURED_LETTERS, LETTER_SHARE = 4, 0.6
WIDER = 1.2  # large type's characters stand at least this much wider apart than the body's
# a line in capitals has no descenders: OCR boxes it at about this share of the height of
# mixed-case text set at the same size (capitals at the body's size: 0.77-0.96 of its lines)
CAPITALS_BOX = 0.85
ON_ROW = 0.5  # two lines whose middles are this many line heights apart share a row
CELL_REACH = 3.0  # a table's cells on one row stand at most this many line heights apart
IN_TABLE = 0.5  # a block with this share of its lines in a table is the table's
# a block of at most this many lines, all in a figure, is the figure's (a label, a sign in a
# photo); a column of text beside a picture whose box reaches into it is not
LABEL_MOST_LINES = 3
PAGE_NUMBER = re.compile(r"^(page\s*)?[-–—(]?\s*\d{1,4}\s*[-–—)]?(\s*(/|of)\s*\d{1,4})?$", re.I)
MARKERS = [re.compile(marker) for marker in LIST_MARKERS]
# lines that say what they are, whatever their face or size: a byline ("By Jane Doe") under a
# headline, and a jump line ("Continued from page 9", "Continued on Page A12") where a story
# runs on from or to another page
NAMED_LINES = re.compile(
    r"^(by\b|\(?\s*(continued|cont'?d\.?)\s+(from|on)\s+(page|p\.)\s*[a-z]?\d)", re.I
)
# a dateline: a place and a date, or a date alone ("Washington, March 3, 1998"), set over a
# letter or a newspaper's story or page, whatever its face or size
DATELINE = re.compile(
    r"\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sept?(ember)?"
    r"|oct(ober)?|nov(ember)?|dec(ember)?)\.?\s+\d{1,2}(st|nd|rd|th)?,?\s+\d{4}\b",
    re.I,
)
# a run-in head: its words, a full stop and a dash, then its paragraph on the same line
# ("LATE MR SMITH.—Mr John Smith, ..."), or a sentence's end after a word (not an
# abbreviation's: "Geo. W. Smith") and more words ("Capital gain tax rate reduced. The")
RUN_IN = re.compile(r"\w[.:]\s*[-–—]+\s*\w|[a-z]{3}[.!?]['’\")]*\s+\w")
CAPTION_LABEL = re.compile(
    r"^(fig(ure)?s?|table|tab|chart|plate|exhibit|illustration|abb(ildung)?|tabelle|tableau)"
    r"\.?\s*[0-9IVX]+[a-z]?([.:\-–—|]|\s|$)|^[图表]\s*[0-9一二三四五六七八九十]+",
    re.I,
)
# a font's PostScript name that says it is heavier than a regular face or slanted (TeX's:
# CMBX10, SFTI1000)
STYLED = re.compile(
    r"bold|black|heavy|semibold|demi|medium|italic|oblique|^(cm|sf|ec|lm)(bx|bi|ti|sl)\d", re.I
)


@dataclass(frozen=True)
class PageText:
    """One upright page's lines as read, block by block, and its tables."""

    texts: Sequence[str]
    quads: NDArray[np.float32]  # [N, 4, 2] tl, tr, br, bl, upright page pixels
    line_block: NDArray[np.int32]  # [N] each line's block, blocks numbered in reading order
    height: float  # the upright page's height in pixels
    tables: Sequence[Box] = ()
    fonts: Sequence[str] = ()  # [N] each line's font where known (Texts.fonts), or ()
    figures: Sequence[Box] = ()  # postprocessing.figures
    # [N] each line's stroke width (Texts.strokes), or empty where not measured
    strokes: NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, np.float32))
    # [N] how far apart each line's letters stand over its height (Texts.gaps), or empty
    gaps: NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, np.float32))
    # [N] how far each line's upright strokes lean right (Texts.slants), or empty
    slants: NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, np.float32))

    @property
    def blocks(self) -> int:
        return int(self.line_block.max(initial=-1)) + 1


def line_heights(quads: NDArray[np.float32]) -> NDArray[np.float64]:
    """Each quad's height: the mean of its left and right edges (any turn of the page)."""
    left = np.linalg.norm(quads[:, 3] - quads[:, 0], axis=-1)
    right = np.linalg.norm(quads[:, 2] - quads[:, 1], axis=-1)
    return np.asarray((left + right) / 2, np.float64)


@dataclass(frozen=True)
class Body:
    """The size most of a document's text is set in: its line height, and how far apart its
    characters stand along a line (pixels)."""

    height: float
    advance: float
    # the face most characters of its lines set in one face use, where the pages name fonts
    font: str = ""
    stroke: float = 0.0  # its strokes' width, where the pages' lines were measured
    gap: float = 0.0  # how far apart its letters stand over its height, where measured
    slant: float = 0.0  # how far its upright strokes lean, where measured
    capitals: float = 0.0  # the share of its characters in lines set in capitals


def advances(page: PageText, lines: NDArray[np.int64]) -> NDArray[np.float64]:
    """Each line's width along its text over its characters (spaces too)."""
    quads = page.quads[lines]
    top = np.linalg.norm(quads[:, 1] - quads[:, 0], axis=-1)
    bottom = np.linalg.norm(quads[:, 2] - quads[:, 3], axis=-1)
    counts = np.array([max(len(page.texts[i]), 1) for i in lines], np.float64)
    return np.asarray((top + bottom) / 2 / counts, np.float64)


def weighted_median(values: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    order = np.argsort(values, kind="stable")
    seen = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(seen, seen[-1] / 2)])


def body_of(pages: Sequence[PageText]) -> Body:
    """The document's body text: the median line height and character advance, each line
    counted once per character, so that a few big lines do not move them, and the face most
    characters of the lines set in one face use (where the pages name fonts)."""
    weights = np.array([len(t) for p in pages for t in p.texts], np.float64)
    if not len(weights) or weights.sum() <= 0:
        return Body(0.0, 0.0)
    heights = np.concatenate([line_heights(p.quads) for p in pages])
    spacing = np.concatenate([advances(p, np.arange(len(p.texts))) for p in pages])
    measured = [p for p in pages if len(p.strokes)]
    stroke = gap = slant = 0.0
    counts = np.array([len(t) for p in measured for t in p.texts], np.float64)
    if measured and counts.sum() > 0:
        strokes = np.concatenate([p.strokes for p in measured]).astype(np.float64)
        stroke = weighted_median(strokes, counts)
        if all(len(p.gaps) for p in measured):
            gaps = np.concatenate([p.gaps for p in measured]).astype(np.float64)
            gap = weighted_median(gaps, counts)
        if all(len(p.slants) for p in measured):
            slants = np.concatenate([p.slants for p in measured]).astype(np.float64)
            slant = weighted_median(slants, counts)
    faces: Counter[str] = Counter()
    for p in (p for p in pages if p.fonts):
        for text, font in zip(p.texts, p.fonts, strict=True):
            if font:
                faces[font] += len(text)
    font = max(faces, key=faces.__getitem__, default="")
    caps = np.array([capitals(t) for p in pages for t in p.texts], np.bool_)
    return Body(
        weighted_median(heights, weights),
        weighted_median(spacing, weights),
        font,
        stroke,
        gap,
        slant,
        float(weights[caps].sum() / weights.sum()),
    )


def styled(page: PageText, line: int, body: Body) -> str:
    """The line's font when it is a bold or italic face the body's text is not set in; where no
    font is named, HEAVY when its strokes are clearly wider than the body's (bold type read
    by OCR), else SLANTED when it leans clearly further than the body's (italic type), else
    SPACED when it is set letter-spaced away from the page's top and bottom edges (where such a
    line is a running head: a magazine's section name), else CAPS when it is set in capitals in
    a document that seldom is (RARE_CAPITALS) and is no form's field; else ""."""
    font = page.fonts[line] if page.fonts else ""
    if font:
        return font if font != body.font and STYLED.search(font) else ""
    if not len(page.strokes) or body.stroke <= 0:
        return ""
    if body.stroke * BOLDER <= page.strokes[line] <= body.stroke * HEAVIEST:
        return HEAVY
    if italic(page, line, body):
        return SLANTED
    if letter_spaced(page, line, body):
        return SPACED
    text = page.texts[line].strip()
    rare = body.capitals <= RARE_CAPITALS
    return CAPS if rare and capitals(text) and not FIELD.match(text) else ""


def mostly_letters(text: str) -> bool:
    """Whether a line has enough letters to measure its face by (MEASURED_LETTERS), and they
    are most of its characters (dot leaders and figures are not: a 7 leans as italic does)."""
    text = text.replace(" ", "")
    letters = sum(c.isalpha() for c in text)
    return letters >= max(MEASURED_LETTERS, LETTER_SHARE * len(text))


def italic(page: PageText, line: int, body: Body) -> bool:
    """Whether a line read by OCR is set in italic: its strokes lean ITALIC_LEAN further than
    the body's, and it is mostly letters."""
    return (
        len(page.slants) > line
        and page.slants[line] >= body.slant + ITALIC_LEAN
        and mostly_letters(page.texts[line])
    )


def letter_spaced(page: PageText, line: int, body: Body) -> bool:
    """Whether a line read by OCR is set letter-spaced: its letters stand SPACED_GAP of its
    height and SPACED_TIMES the body's apart, and so its characters WIDER apart than the
    body's (a justified line of a worn scan whose glyphs break apart has wide gaps between
    their pieces, not fewer characters to its width), it is mostly letters, and it is away
    from the page's top and bottom edges."""
    if len(page.gaps) <= line or page.gaps[line] < max(SPACED_GAP, SPACED_TIMES * body.gap):
        return False
    if float(advances(page, np.array([line]))[0]) < body.advance * WIDER:
        return False
    ys, edge = page.quads[line, :, 1], EDGE_SHARE * page.height
    return mostly_letters(page.texts[line]) and ys.min() > edge and ys.max() < page.height - edge


def styled_heading(page: PageText, lines: NDArray[np.int64], body: Body) -> bool:
    """Lines set in one bold, italic, letter-spaced or capitals face the body is not, naming
    something (mostly letters: no price, no initial), a heading's length, no smaller than the
    body's text (as OCR boxes it: INK_HEIGHT, SPACED_HEIGHT, CAPITALS_BOX), not ending a clause
    nor opening a caption, a byline, a jump line, a dateline or a run-in head (one running on
    past a sentence's end too), none of them a cell of a row, in capitals only one line, no line
    in capitals standing under it (lines in capitals at the body's size line after line are an
    address, a caption or a label)."""
    fonts = {styled(page, i, body) for i in lines}
    text = " ".join(page.texts[i] for i in lines).strip()
    least = {HEAVY: INK_HEIGHT, SPACED: SPACED_HEIGHT, CAPS: CAPITALS_BOX}.get(
        next(iter(fonts), ""), LEAD_HEIGHT
    )
    return (
        len(fonts) == 1
        and "" not in fonts
        and names_something(text)
        and len(lines) <= HEADING_MOST_LINES
        and len(text.split()) <= HEADING_MOST_WORDS
        and text[-1:] not in STYLED_CLAUSE_ENDS
        and not CAPTION_LABEL.match(text)
        and not named(text)
        and not RUN_IN.search(text)
        and float(line_heights(page.quads[lines]).min()) >= body.height * least
        and not any(beside(page, i, body) for i in lines)
        and (CAPS not in fonts or (len(lines) == 1 and not capitals_under(page, lines[-1])))
    )


def named(text: str) -> bool:
    """Whether a line says what it is: a byline, a jump line or a dateline."""
    return bool(NAMED_LINES.match(text) or DATELINE.search(text))


def names_something(text: str) -> bool:
    """Whether a heading's words name something: LEAST_LETTERS letters or more, and no more
    figures than letters (a price, an amount or an initial names nothing)."""
    letters = sum(c.isalpha() for c in text)
    return letters >= max(LEAST_LETTERS, sum(c.isdigit() for c in text))


def beside(page: PageText, line: int, body: Body) -> bool:
    """Whether a line is one cell of a row: on its row stands a line of its own block, or a line
    in a face of its own within CELL_REACH line heights (a table's header; another column's
    heading stands further off), or, anywhere to its right, a line of figures (a row label's
    values); a bare number (a section's number beside its title) is no cell, nor stands beside
    one."""
    if not any(c.isalpha() for c in page.texts[line]):
        return False
    height = line_heights(page.quads[line : line + 1])[0]
    middles = page.quads[:, :, 1].mean(axis=1)
    x0, x1 = page.quads[line, :, 0].min(), page.quads[line, :, 0].max()
    starts, ends = page.quads[:, :, 0].min(axis=1), page.quads[:, :, 0].max(axis=1)
    gaps = np.maximum(starts - x1, x0 - ends)
    row = np.flatnonzero(np.abs(middles - middles[line]) <= ON_ROW * height)
    return any(
        (
            gaps[j] <= CELL_REACH * height
            and (page.line_block[j] == page.line_block[line] or styled(page, j, body))
            and any(c.isalpha() for c in page.texts[j])
        )
        or (starts[j] > x1 and figures(page.texts[j]))
        for j in row
        if j != line
    )


def figures(text: str) -> bool:
    """Whether a line is figures only: digits, and no letters (a table's value)."""
    return any(c.isdigit() for c in text) and not any(c.isalpha() for c in text)


def bylines(page: PageText, lines: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which of a block's lines are a byline under a headline: named so ("By Jane Doe") and
    set smaller than the line above it (a heading's second line starting "by the" is not)."""
    heights = line_heights(page.quads[lines])
    return np.array(
        [
            k > 0
            and heights[k] <= heights[k - 1] * BYLINE_SMALLER
            and bool(NAMED_LINES.match(page.texts[i].strip()))
            for k, i in enumerate(lines)
        ],
        np.bool_,
    )


def styled_runs(page: PageText, lines: NDArray[np.int64], body: Body) -> list[tuple[int, int]]:
    """The (start, end) of each run of a block's lines that is a heading in a bold or italic face
    set on text in other faces, the line after it not going on in lowercase (a byline may), and,
    in italic told by its lean or in capitals (each also sets a title, a name or a stress within
    a sentence), opening the block or following a sentence's end (none when the whole block is
    one: rule 4 types it), and in capitals centred over the block's text (at its edge such a
    line is a label: a recipe's ingredient group over its list). A byline under a headline is
    in no run, whatever its face."""
    under = bylines(page, lines)
    faces = ["" if by else styled(page, i, body) for i, by in zip(lines, under, strict=True)]
    runs, start = [], 0
    for end in range(1, len(lines) + 1):
        if end < len(lines) and faces[end] == faces[start]:
            continue
        after = page.texts[lines[end]].strip() if end < len(lines) else ""
        before = page.texts[lines[start - 1]].rstrip()[-1:] if start else ""
        if (
            faces[start]
            and (start, end) != (0, len(lines))
            and (not after[:1].islower() or (end < len(lines) and under[end]))
            and (faces[start] not in (SLANTED, CAPS) or not start or before in SENTENCE_ENDS)
            and (faces[start] != CAPS or centred_run(page, lines, start, end, body))
            and styled_heading(page, lines[start:end], body)
        ):
            runs.append((start, end))
        start = end
    return runs


def in_column(page: PageText, line: int) -> NDArray[np.bool_]:
    """Which of a page's lines overlap a line across: the lines of its column."""
    xs = page.quads[:, :, 0]
    overlap: NDArray[np.bool_] = (xs.min(axis=1) < xs[line].max()) & (
        xs.max(axis=1) > xs[line].min()
    )
    return overlap


def capitals_under(page: PageText, line: int) -> bool:
    """Whether the nearest line under a line, in its column, is set in capitals within GOES_ON
    of its height (a caption or a label set in capitals goes on there; a heading's text does not,
    and a letter's mailing notation in capitals stands further off its title)."""
    ys = page.quads[:, :, 1]
    middles = ys.mean(axis=1)
    under = np.flatnonzero((middles > middles[line]) & in_column(page, line))
    if not len(under):
        return False
    nearest = under[np.argmin(middles[under])]
    height = float(line_heights(page.quads[line : line + 1])[0])
    gap = float(ys[nearest].min() - ys[line].max())
    return gap <= GOES_ON * height and capitals(page.texts[nearest])


def edge_text(text: str) -> str:
    """A header's or footer's text with its numbers left out (a running head keeps its words,
    its page number changes)."""
    return re.sub(r"\d+", "#", " ".join(text.split())).casefold()


def list_marker(text: str) -> bool:
    return any(marker.match(text) for marker in MARKERS)


def across(quads: NDArray[np.float32], first: int = 0) -> NDArray[np.float64]:
    """How far each line's middle lies from the `first` line's, across that line's direction
    (a photographed page's rows tilt)."""
    along = (quads[first, 1] - quads[first, 0]).astype(np.float64)
    along /= max(float(np.linalg.norm(along)), 1e-6)
    offset = (quads.mean(axis=1) - quads[first].mean(axis=0)).astype(np.float64)
    return np.asarray(np.abs(offset[:, 0] * along[1] - offset[:, 1] * along[0]), np.float64)


def one_row(quads: NDArray[np.float32]) -> bool:
    """Whether lines lie on one row: each one's middle near the first's."""
    middles = quads[:, :, 1].mean(axis=1)
    return bool(np.all(np.abs(middles - middles[0]) <= ON_ROW * line_heights(quads[:1])[0]))


def in_box(points: NDArray[np.float64], box: Box) -> NDArray[np.bool_]:
    x0, y0, x1, y1 = box
    return (points[:, 0] >= x0) & (points[:, 0] <= x1) & (points[:, 1] >= y0) & (points[:, 1] <= y1)


@dataclass(frozen=True)
class Edges:
    """A page's blocks alone at its top and bottom edges (running head or foot candidates)."""

    top: set[int]
    bottom: set[int]


def edge_blocks(page: PageText, members: list[NDArray[np.int64]], body: Body) -> Edges:
    """The blocks of `page` that sit alone at its top or bottom edge: one short row, no taller
    than the body's, in the edge band, with nothing of the rest beyond it."""
    if page.height <= 0 or not members:
        return Edges(set(), set())
    top = [float(page.quads[m, :, 1].min(initial=np.inf)) for m in members]
    bottom = [float(page.quads[m, :, 1].max(initial=-np.inf)) for m in members]

    def candidate(b: int) -> bool:
        lines = members[b]
        if not len(lines):
            return False
        near = top[b] <= page.height * EDGE_SHARE or bottom[b] >= page.height * (1 - EDGE_SHARE)
        words = sum(len(page.texts[i].split()) for i in lines)
        return (
            near
            and one_row(page.quads[lines])
            and words <= EDGE_MOST_WORDS
            and line_heights(page.quads[lines]).max() <= body.height * EDGE_TALLEST
        )

    found = {b for b in range(len(members)) if candidate(b)}
    rest = [b for b in range(len(members)) if b not in found]
    if sum(len(members[b]) for b in rest) < EDGE_LEAST_OTHERS:
        return Edges(set(), set())
    content_top = min(top[b] for b in rest)
    content_bottom = max(bottom[b] for b in rest)
    return Edges(
        {b for b in found if bottom[b] <= content_top},
        {b for b in found if top[b] >= content_bottom},
    )


def folio_row(page: PageText, body: Body, top: bool) -> NDArray[np.int64]:
    """The page's top (or bottom) row when it is a running head (or foot): the page's number
    beside a line or two of words (a book's title and its folio), wherever the block cut put
    them (with the heading under them, or the number with the text). In the edge band, a few
    words, none in large type (the number may be: an old book's figures, or a scan's specks
    boxed with it), and the number over (or under) the text, not over another cell of a column
    of figures (a table's last row: "Bald eagle 100") (empty: no such row)."""
    none = np.zeros(0, np.int64)
    if page.height <= 0 or len(page.texts) < EDGE_LEAST_OTHERS + 2:
        return none
    heights = line_heights(page.quads)
    ys = page.quads[:, :, 1]
    first = int(ys.min(axis=1).argmin()) if top else int(ys.max(axis=1).argmax())
    row = np.flatnonzero(across(page.quads, first) <= ON_ROW * heights[first])
    numbers = [i for i in row if PAGE_NUMBER.match(page.texts[i].strip())]
    near = (
        ys[row].min() <= page.height * EDGE_SHARE
        if top
        else ys[row].max() >= page.height * (1 - EDGE_SHARE)
    )
    # read first (last): the texts are in reading order, each block's lines together
    edge = np.arange(len(row)) if top else np.arange(len(page.texts) - len(row), len(page.texts))
    found = (
        1 < len(row) <= FOLIO_MOST_LINES
        and np.array_equal(row, edge)
        and len(numbers) == 1
        and near
        and all(mostly_letters(page.texts[i]) for i in row if i != numbers[0])
        and sum(len(page.texts[i].split()) for i in row) <= EDGE_MOST_WORDS
        and heights[row[row != numbers[0]]].max() < body.height * HEADING_RATIO
        and over_text(page, numbers[0], row)
    )
    return row if found else none


def over_text(page: PageText, line: int, row: NDArray[np.int64]) -> bool:
    """Whether the nearest line in `line`'s column off its row is text, at least FOLIO_TEXT
    times as wide as it (or there is none)."""
    xs = page.quads[:, :, 0]
    column = np.flatnonzero(in_column(page, line) & ~np.isin(np.arange(len(xs)), row))
    if not len(column):
        return True
    middles = page.quads[:, :, 1].mean(axis=1)
    nearest = min(column, key=lambda i: abs(middles[i] - middles[line]))
    return bool(np.ptp(xs[nearest]) >= FOLIO_TEXT * np.ptp(xs[line]))


def with_folio_rows(
    page: PageText, blocks: list[NDArray[np.int64]], body: Body
) -> tuple[list[NDArray[np.int64]], dict[int, str]]:
    """A page's blocks with its running head and foot rows that hold its number (folio_row)
    each a block of its own, first and last, and those blocks' types."""
    # disjoint: each is read first or last, of at most FOLIO_MOST_LINES of a longer page's lines
    head, foot = folio_row(page, body, top=True), folio_row(page, body, top=False)
    if not len(head) and not len(foot):
        return blocks, {}
    rest = [np.setdiff1d(b, np.concatenate([head, foot])) for b in blocks]
    ordered = [r for r in (head, *rest, foot) if len(r)]
    said = {0: HEADER} if len(head) else {}
    return ordered, said | ({len(ordered) - 1: FOOTER} if len(foot) else {})


def running(page: PageText, lines: NDArray[np.int64], body: Body, recurs: bool) -> bool:
    """Whether an edge block is a running head or foot rather than a page's first or last
    words: it recurs, holds a page number, or is set smaller than the body."""
    return (
        recurs
        or any(PAGE_NUMBER.match(page.texts[i].strip()) for i in lines)
        or float(line_heights(page.quads[lines]).max()) <= body.height * SMALLER
    )


def text_type(page: PageText, lines: NDArray[np.int64], body: Body) -> str:
    """Rules 3-6: a block's type from its text and its lines' size."""
    first = page.texts[lines[0]].strip()
    words = sum(len(page.texts[i].split()) for i in lines)
    if CAPTION_LABEL.match(first):
        return CAPTION
    height = float(line_heights(page.quads[lines]).mean())
    text = " ".join(page.texts[i] for i in lines).strip()
    if (
        body.height > 0
        and names_something(text)
        and height >= body.height * HEADING_RATIO
        and float(advances(page, lines).mean()) >= body.advance * WIDER
        and len(lines) <= HEADING_MOST_LINES
        and words <= HEADING_MOST_WORDS
        and not named(text)
    ) or styled_heading(page, lines, body):
        return HEADING
    if list_marker(first):
        return LIST
    return PARAGRAPH


def widths(page: PageText, lines: NDArray[np.int64]) -> NDArray[np.float64]:
    """Each line's width as a share of the block's."""
    xs = page.quads[lines, :, 0].astype(np.float64)
    span = max(float(xs.max() - xs.min()), 1.0)
    return np.asarray((xs.max(axis=1) - xs.min(axis=1)) / span, np.float64)


def heading_line(
    page: PageText, lines: NDArray[np.int64], share: NDArray[np.float64], k: int, body: Body
) -> bool:
    """Whether a block's `k`th line is a heading set on its text (a section's title in bold at
    the body's size): it starts the block or follows a sentence's end; a few words alone on
    their row, no sentence or clause ending them (a full stop may, where they stand centred
    over the text) nor going on in the next line, narrower than the block, over a line of
    running text at the body's size, no lower than it (centred over the text: INK_HEIGHT of
    it), no taller than the body's large type. `share`:
    each line's width as a share of the block's."""
    if k + 1 >= len(lines):
        return closing_head(page, lines, share, k, body)
    text, following = page.texts[lines[k]].strip(), page.texts[lines[k + 1]].strip()
    if k and page.texts[lines[k - 1]].rstrip()[-1:] not in SENTENCE_ENDS:
        return False
    if following[:1].islower():  # the line's sentence goes on
        return False
    line, after = line_heights(page.quads[lines[k : k + 2]])
    over = centred(page, lines, k, body)
    return (
        head_words(text, STYLED_CLAUSE_ENDS if over else CLAUSE_ENDS)
        and not one_row(page.quads[lines[k : k + 2]])
        and share[k] <= LEAD_NARROWER
        and share[k + 1] >= LEAD_RUNNING
        and after < body.height * HEADING_RATIO
        and (line >= after * LEAD_HEIGHT or (line >= after * INK_HEIGHT and over))
    )


def head_words(text: str, ends: str) -> bool:
    """Whether a line's words may be a heading set on text: a few, naming something, opening
    with a capital or a figure, ending no clause (`ends`), and no list item, caption, byline,
    jump line or dateline."""
    return (
        bool(text)
        and (text[0].isupper() or text[0].isdigit())
        and names_something(text)
        and len(text.split()) <= LEAD_MOST_WORDS
        and text[-1] not in ends
        and not list_marker(text)
        and not CAPTION_LABEL.match(text)
        and not named(text)
    )


def closing_head(
    page: PageText, lines: NDArray[np.int64], share: NDArray[np.float64], k: int, body: Body
) -> bool:
    """Whether a block's last line is a heading whose text goes on in the next column or on the
    next page (a subhead at a column's foot): after a sentence's end, a few words alone on
    their row, narrower than the block, centred over its lines of running text (a full stop may
    end it: centred, it is no sentence's end), no lower than INK_HEIGHT of the body's text."""
    text, others = page.texts[lines[k]].strip(), lines[:k]
    return (
        k > 0
        and page.texts[lines[k - 1]].rstrip()[-1:] in SENTENCE_ENDS
        and head_words(text, STYLED_CLAUSE_ENDS)
        and not one_row(page.quads[lines[k - 1 : k + 1]])
        and share[k] <= LEAD_NARROWER
        and float(line_heights(page.quads[lines[k : k + 1]])[0]) >= body.height * INK_HEIGHT
        and running_text(page, others, body)
        and centred(page, lines, k, body)
    )


def running_text(page: PageText, lines: NDArray[np.int64], body: Body) -> bool:
    """Whether lines are running text: two or more, most of them at the body's size."""
    return len(lines) >= 2 and float(np.median(line_heights(page.quads[lines]))) < (
        body.height * HEADING_RATIO
    )


def lone_head(
    page: PageText, parts: Sequence[tuple[NDArray[np.int64], str]], k: int, body: Body
) -> bool:
    """Whether the `k`th of a page's parts (in reading order), a paragraph of one line, is a
    heading set apart from its text: after a sentence's end (or a heading, a running head, or
    nothing), a few words no lower than INK_HEIGHT of the body's text, centred over the running
    text of the part before or after it (a full stop may end it), within NEAR line heights of
    it, with nothing of that text's column on its row."""
    lines, _ = parts[k]
    if len(lines) != 1 or body.height <= 0:
        return False
    line = int(lines[0])
    if k:
        before, kind = parts[k - 1]
        if (
            kind not in (HEADING, HEADER)
            and page.texts[before[-1]].rstrip()[-1:] not in SENTENCE_ENDS
        ):
            return False
    return (
        head_words(page.texts[line].strip(), STYLED_CLAUSE_ENDS)
        and float(line_heights(page.quads[lines])[0]) >= body.height * INK_HEIGHT
        and any(
            set_over(page, line, parts[j][0], body) for j in (k - 1, k + 1) if 0 <= j < len(parts)
        )
    )


def set_over(page: PageText, line: int, text: NDArray[np.int64], body: Body) -> bool:
    """Whether a line stands centred over or under running text, within NEAR body line heights
    of it, with no other line of that text's column on its row."""
    if not running_text(page, text, body):
        return False
    start, end = text_edges(page, text)
    ys, own = page.quads[text, :, 1], page.quads[line, :, 1]
    gap = max(float(ys.min() - own.max()), float(own.min() - ys.max()), 0.0)
    middles = page.quads[:, :, 1].mean(axis=1)
    xs = page.quads[:, :, 0]
    height = float(line_heights(page.quads[line : line + 1])[0])
    row = (
        (np.abs(middles - middles[line]) <= ON_ROW * height)
        & (xs.max(axis=1) > start)
        & (xs.min(axis=1) < end)
    )
    row[line] = False
    return gap <= NEAR * body.height and not row.any() and centred_over(page, line, text, body)


def centred_run(page: PageText, lines: NDArray[np.int64], start: int, end: int, body: Body) -> bool:
    """Whether each of a block's lines `start` to `end` (in capitals) stands centred over its
    other lines, in from their edges by CAPITALS_MARGIN line heights or more."""
    rest = np.delete(lines, np.arange(start, end))
    return bool(len(rest)) and all(
        centred_over(page, i, rest, body, CAPITALS_MARGIN) for i in lines[start:end]
    )


def centred(page: PageText, lines: NDArray[np.int64], k: int, body: Body) -> bool:
    """Whether a block's `k`th line stands centred over its other lines (centred_over)."""
    return centred_over(page, lines[k], np.delete(lines, k), body)


def text_edges(page: PageText, text: NDArray[np.int64]) -> tuple[float, float]:
    """Where lines of text start and end across: their lines' median left and right edges (an
    indent, a short last line or a line the detector ran across a gutter moves neither)."""
    xs = page.quads[text, :, 0]
    return float(np.median(xs.min(axis=1))), float(np.median(xs.max(axis=1)))


def centred_over(
    page: PageText,
    line: int,
    text: NDArray[np.int64],
    body: Body,
    margin: float = CENTRED_MARGIN,
) -> bool:
    """Whether a line stands centred over lines of text: as far in from their left edge as
    from their right (within CENTRED_SLACK of their width), by `margin` line heights or more (a
    paragraph's short last line starts at their left edge)."""
    start, end = text_edges(page, text)
    own = page.quads[line, :, 0]
    left, right = float(own.min()) - start, end - float(own.max())
    return (
        min(left, right) >= body.height * margin
        and abs(left - right) <= (end - start) * CENTRED_SLACK
    )


def list_start(page: PageText, lines: NDArray[np.int64]) -> int | None:
    """Where a list starts after the sentence leading to it: the first line with a list marker
    after lines without one, the line before ending a sentence or a lead-in (None: nowhere)."""
    marked = [list_marker(page.texts[i].strip()) for i in lines]
    return next(
        (
            k
            for k in range(1, len(lines))
            if marked[k]
            and not any(marked[:k])
            and page.texts[lines[k - 1]].rstrip()[-1:] in LEADS_ON
        ),
        None,
    )


def parts_of(
    page: PageText, lines: NDArray[np.int64], body: Body
) -> list[tuple[NDArray[np.int64], str]]:
    """A block of text cut where it holds more than one thing, each part with its type if the
    cut says it ("" if not): headings in a bold or italic face set on text in other faces,
    heading lines set on the text, and a list after the sentence that leads to it."""
    runs = styled_runs(page, lines, body)
    if not runs:
        return plain_parts(page, lines, body)
    cuts = sorted({0, len(lines), *(k for run in runs for k in run)})
    parts: list[tuple[NDArray[np.int64], str]] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        if (start, end) in runs:
            parts.append((lines[start:end], HEADING))
        else:
            parts += plain_parts(page, lines[start:end], body, after_heading=start > 0)
    return parts


def capitals(text: str) -> bool:
    """Whether a line is set in capitals: enough letters to tell, every one of them a capital,
    and mostly letters."""
    letters = [c for c in text if c.isalpha()]
    return all(c.isupper() for c in letters) and mostly_letters(text)


def type_heights(page: PageText, lines: NDArray[np.int64]) -> NDArray[np.float64]:
    """Each line's height as the size of its type: its box's, a line in capitals' as the
    mixed-case text it would box as (CAPITALS_BOX)."""
    heights = line_heights(page.quads[lines])
    caps = np.array([capitals(page.texts[i]) for i in lines], np.bool_)
    return np.where(caps, heights / CAPITALS_BOX, heights)


def large_type(page: PageText, lines: NDArray[np.int64], body: Body) -> NDArray[np.bool_]:
    """Which lines are set clearly larger than the body text: taller, and their characters
    wider apart (a drop cap makes a line's box tall, not its characters wide)."""
    return np.asarray(
        (type_heights(page, lines) >= body.height * HEADING_RATIO)
        & (advances(page, lines) >= body.advance * WIDER),
        np.bool_,
    )


def headline_lines(page: PageText, lines: NDArray[np.int64], body: Body) -> tuple[int, int]:
    """Where a headline lies in a block set over text at the body's size with no gap between
    (a byline, the text itself), under at most a few lines at the body's size (a kicker, a
    section's name): a few lines in large type, then none ((0, 0): no such headline). A byline
    under it is never the headline's, whatever its size."""
    large = large_type(page, lines, body) & ~bylines(page, lines)
    if body.height <= 0 or large.all() or not large.any():
        return 0, 0
    start = int(np.argmax(large))  # the first line in large type
    end = start + int(np.argmin(large[start:]))  # the first line at the body's size after it
    if start > HEADING_MOST_LINES or end - start > HEADING_MOST_LINES or large[end:].any():
        return 0, 0
    return start, end


def plain_parts(
    page: PageText, lines: NDArray[np.int64], body: Body, after_heading: bool = False
) -> list[tuple[NDArray[np.int64], str]]:
    """parts_of where no face tells a heading: a headline over the text, heading lines told by
    their geometry, and a list. The text under a heading (`after_heading`) does not open with
    another one told by geometry alone."""
    start, end = headline_lines(page, lines, body)
    if end:  # each part typed by text_type, the headline as a block of its own
        kicker = [(lines[:start], "")] if start else []
        return [*kicker, (lines[start:end], ""), *plain_parts(page, lines[end:], body)]
    share = widths(page, lines)
    first = 1 if after_heading else 0
    heads = [k for k in range(first, len(lines)) if heading_line(page, lines, share, k, body)]
    cuts = sorted({0, len(lines), *heads, *(k + 1 for k in heads)})
    parts: list[tuple[NDArray[np.int64], str]] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        part = lines[start:end]
        if start in heads:
            parts.append((part, HEADING))
        elif (k := list_start(page, part)) is not None:
            parts += [(part[:k], ""), (part[k:], LIST)]
        else:
            parts.append((part, ""))
    return parts


@dataclass(frozen=True)
class Typed:
    """A page's blocks as typed: each line's block (a block cut in parts is numbered again)
    and each block's type."""

    line_block: NDArray[np.int32]
    types: list[str]


def block_types(pages: Sequence[PageText]) -> list[Typed]:
    """Each page's blocks (some cut in parts) and their types (contract.BLOCK_TYPES), in
    reading order, for the pages of one document."""
    body = body_of(pages)
    cut = [
        with_folio_rows(p, [np.flatnonzero(p.line_block == b) for b in range(p.blocks)], body)
        for p in pages
    ]
    members = [blocks for blocks, _ in cut]
    edges = [edge_blocks(p, m, body) for p, m in zip(pages, members, strict=True)]

    def words_of(p: int, b: int) -> str:
        return edge_text(" ".join(pages[p].texts[i] for i in members[p][b]))

    recurring = Counter(
        words_of(p, b) for p, e in enumerate(edges) for b in sorted(e.top | e.bottom)
    )
    found = []
    for p, page in enumerate(pages):
        centres = page.quads.mean(axis=1).astype(np.float64)
        parts: list[tuple[NDArray[np.int64], str]] = []
        for b, lines in enumerate(members[p]):
            if not len(lines):
                continue
            held = max((in_box(centres[lines], t).mean() for t in page.tables), default=0.0)
            pictured = len(lines) <= LABEL_MOST_LINES and any(
                in_box(centres[lines], f).all() for f in page.figures
            )
            edge = b in edges[p].top or b in edges[p].bottom
            if b in cut[p][1]:  # a running head or foot with the page's number
                parts.append((lines, cut[p][1][b]))
            elif held >= IN_TABLE:
                parts.append((lines, TABLE))
            elif pictured:
                parts.append((lines, FIGURE))
            elif edge and running(page, lines, body, recurring[words_of(p, b)] > 1):
                parts.append((lines, HEADER if b in edges[p].top else FOOTER))
            else:
                parts += [
                    (part, said or text_type(page, part, body))
                    for part, said in parts_of(page, lines, body)
                ]
        parts = [
            (lines, HEADING if kind == PARAGRAPH and lone_head(page, parts, k, body) else kind)
            for k, (lines, kind) in enumerate(parts)
        ]
        line_block = np.zeros(len(page.texts), np.int32)
        for k, (lines, _) in enumerate(parts):
            line_block[lines] = k
        found.append(Typed(line_block, [kind for _, kind in parts]))
    return found
