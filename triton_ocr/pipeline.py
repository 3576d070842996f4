"""The OCR pipeline as stage functions, one per step of `ensemble_model`:

    prepare          detection_preprocessing     bytes -> image, detector input
      turn_page                                  a turned page set upright (page classifier;
                                                 in `ocr` only when the lines leave it in doubt)
    (text_detection)                             detector input -> maps
    locate           detection_postprocessing    maps, image -> boxes in reading order (blocks),
                                                 recognizer rows
    recognize_rows   grouped_recognition         rows -> best path per crop (groups of similar
                                                 width, upside-down rows turned back first)
      read_lines                                 best path, boxes -> texts
    with_tables      (`ocr` only, when asked)    upright page, texts -> their tables
    find_figures     (`ocr` only)                upright page, texts -> its pictures
    line_type        (`ocr` only)                upright page, texts -> each one's weight, gap, lean
    with_block_types (`ocr` only)                a document's pages' texts -> each block's type

The ensemble's adapters each call their stage; `read_page_async` chains all of them for the
`ocr` model (networks called through BLS, a document's pages from `open_pages` one by one) and
`read_image` for the in-process floor (networks as onnxruntime sessions): the same code, so
every entry point reads an image alike. The networks are passed in as callables; no Triton
import here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from triton_ocr.postprocessing.block_types import PageText, block_types
from triton_ocr.postprocessing.blocks import page_layout
from triton_ocr.postprocessing.ctc import ctc_greedy_decode
from triton_ocr.postprocessing.detection import line_shaped, text_boxes, whole_image
from triton_ocr.postprocessing.figures import figure_places, find_figures
from triton_ocr.postprocessing.geometry import (
    Box,
    box_of,
    crop_frame,
    quad_of,
    room_on_page,
    turned_upright,
)
from triton_ocr.postprocessing.gutters import cut_at_gutters
from triton_ocr.postprocessing.orientation import path_confidence, upside_down
from triton_ocr.postprocessing.page_orientation import (
    lines_level,
    proposed_turn,
    read_upright,
    upright_at_first_look,
)
from triton_ocr.postprocessing.recognition import Texts, rival_reading, strong_texts
from triton_ocr.postprocessing.strokes import line_type
from triton_ocr.postprocessing.tables import find_tables
from triton_ocr.postprocessing.words import Words, text_words
from triton_ocr.preprocessing.crops import cut_crops
from triton_ocr.preprocessing.decode import decode_image
from triton_ocr.preprocessing.detection import detection_input
from triton_ocr.preprocessing.documents import Pages
from triton_ocr.preprocessing.documents import open_pages as open_document
from triton_ocr.preprocessing.orientation import classifier_input, turn_over
from triton_ocr.preprocessing.page_orientation import page_classifier_input, turn_upright
from triton_ocr.preprocessing.recognition import recognition_groups, recognizer_rows
from triton_ocr.preprocessing.text_layer import TextLayer
from triton_ocr.settings import (
    Blocks,
    Boxes,
    ClassifierInput,
    DetectorInput,
    Grouping,
    ImageLimits,
    Orientation,
    PageOrientation,
    PipelineSettings,
    RecognizerInput,
    TextFilter,
    TextLines,
)

Image = NDArray[np.uint8]  # BGR, [H, W, 3]
Floats = NDArray[np.float32]  # network inputs and outputs, polygons
Classes = NDArray[np.int64]  # the recognizer's best class per step
# detector input (the resized page, [1, H, W, 3]) -> its output maps, in the order the
# detector config declares them
Detect = Callable[[Image], list[Floats]]
# recognizer batches [n, C, H, W] -> (best class [n, T], best score [n, T]) for each batch;
# all the batches of an image come at once so a caller may run them concurrently
Recognize = Callable[[list[Floats]], list[tuple[Classes, Floats]]]
# orientation classifier inputs [n, C, H, W] -> [n, 2] class probabilities for each
Classify = Callable[[list[Floats]], list[Floats]]
AsyncDetect = Callable[[Image], Awaitable[list[Floats]]]
AsyncRecognize = Callable[[list[Floats]], Awaitable[list[tuple[Classes, Floats]]]]
AsyncClassify = Callable[[list[Floats]], Awaitable[list[Floats]]]
# the page classifier's looks [n, C, H, W] -> [n, 4] probabilities of 0, 90, 180, 270 degrees
ClassifyPage = Callable[[Floats], Floats]
AsyncClassifyPage = Callable[[Floats], Awaitable[Floats]]
Groups = list[tuple[list[int], Floats]]  # (crop indices, recognizer batch) per group
Step = TypeVar("Step", bound=np.generic)
In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)
class Prepared:
    image: Image  # the decoded original (crops are cut from it)
    detector_input: Image | None  # [1, H, W, 3]; None when no detection is needed


@dataclass(frozen=True)
class Networks:
    """The networks a page is read with, as awaitables (BLS calls, or sessions in-process)."""

    detect: AsyncDetect
    recognize: AsyncRecognize
    classify: AsyncClassify  # the 0/180-degree line classifier
    classify_page: AsyncClassifyPage  # the 0/90/180/270-degree page classifier


@dataclass(frozen=True)
class Upright:
    image: Image  # the page as it reads, turned back when it came turned
    rotation: int  # degrees the content was turned clockwise (0, 90, 180, 270)
    maps: list[Floats] | None  # the detector's maps of `image`, when turn_page has them


@dataclass(frozen=True)
class Located:
    quads: Floats  # [N, 4, 2], the (upright) image's pixels, reading order
    block: NDArray[np.int32]  # [N]: each box's block, blocks in reading order
    rows: list[Floats]  # per crop: its recognizer row [C, H, widths[i]]
    widths: list[int]  # per crop: its own width in its row
    padded: list[int]  # per crop: the batch width it needs on its own
    margin: float  # what each crop took above and below its box (crop_frame's margin)
    # the last box and row are the whole image, read as one line against the others (margin 0)
    rival: bool = False


@dataclass(frozen=True)
class BestPath:
    best_class: Classes  # [N, T], blank (0) after a crop's own steps
    best_score: Floats  # [N, T], 0 after a crop's own steps
    # Where each crop's steps lie in its row (word boxes need them; the ensemble, which has
    # none, hands on the two arrays above only): row pixels per step, and whether the row was
    # turned 180 degrees before recognition.
    step_widths: Floats | None = None  # [N]
    turned: NDArray[np.bool_] | None = None  # [N]


def height_width(image: Image) -> tuple[int, int]:
    height, width = image.shape[:2]
    return height, width


# --- the stages ------------------------------------------------------------------------------


def open_pages(data: bytes, settings: PipelineSettings) -> Pages:
    """Stage 0 of the `ocr` model: an item of its request -> its pages (an image is one page,
    a PDF's pages are rendered at the request's pdf_dpi, a TIFF's frames decoded), each read
    on demand so that a long document is never held in memory at once."""
    return open_document(data, settings.limits, settings.documents, settings.documents.pdf_dpi)


def prepare(
    data: bytes, limits: ImageLimits, detector: DetectorInput, detect: bool = True
) -> Prepared:
    """Stage 1: encoded bytes -> the original image and (with `detect`) the detector input."""
    return prepare_image(decode_image(data, limits), detector, detect)


def prepare_image(image: Image, detector: DetectorInput, detect: bool = True) -> Prepared:
    """Stage 1 for a page already decoded (or rendered): the detector input beside it."""
    return Prepared(image, detection_input(image, detector) if detect else None)


async def turn_page(
    image: Image,
    page: PageOrientation,
    size: ClassifierInput,
    detector: DetectorInput,
    lines: TextLines,
    boxes: Boxes,
    classify_page: AsyncClassifyPage,
    detect: AsyncDetect,
    maps: list[Floats] | None = None,
) -> Upright:
    """Stage 1b: a page whose content came turned by 90, 180 or 270 degrees, set upright.

    The page classifier (input `size`) looks at the page as it came; unless that look finds it
    upright surely, three more looks propose a turn (postprocessing.page_orientation); the
    turn is taken when the lines detected on the turned page lie level, and then those maps are
    kept. A clearly upright page costs one look of the classifier. Pre-cropped lines
    (single_line "always") and images of a line's shape (`line_shaped`: a line turned a
    quarter is tall, and one upside down is the line classifier's to turn) are never turned.
    `maps`, the detector's maps of the page as it came when the caller has them (`ocr`), come
    back with a page left as it came."""
    kept = Upright(image, 0, maps)
    if (
        page.page_orientation == "off"
        or lines.single_line == "always"
        or line_shaped(height_width(image), lines)
    ):
        return kept
    looks = page_classifier_input(image, page, size)
    first = await classify_page(looks[:1])
    if upright_at_first_look(first, page):
        return kept
    turn = proposed_turn(np.concatenate([first, await classify_page(looks[1:])]), page)
    if turn == 0:
        return kept
    turned = turn_upright(image, turn)
    turned_maps = await detect(detection_input(turned, detector))
    found = text_boxes(turned_maps, height_width(turned), lines, boxes)
    if lines_level(found.quads, page):
        return Upright(turned, turn, turned_maps)
    return kept


def locate(
    maps: Sequence[Floats],
    image: Image,
    lines: TextLines,
    boxes: Boxes,
    recognizer: RecognizerInput,
    blocks: Blocks,
) -> Located:
    """Stage 3: detector maps + the (upright) image -> text boxes (those run across a column
    gutter cut apart at it) in reading order, block by block, and one recognizer row per box,
    cut from the image at full resolution; then, when the image could be a crop of one line,
    the whole image as the boxes' rival (a block of its own)."""
    cut = cut_at_gutters(
        text_boxes(maps, height_width(image), lines, boxes), image, blocks.column_min_width
    )
    found = cut.found
    layout = page_layout(cut.extents, blocks)
    quads, block = found.quads[layout.order], layout.block
    bends = [found.bends[i] for i in layout.order] if found.bends else []
    crops = cut_crops(image, quads, found.margin, room_on_page(quads, found.margin), bends)
    if found.rival:
        whole = whole_image(height_width(image))
        quads = np.concatenate([quads, whole.quads])
        block = np.concatenate([block, np.array([block.max(initial=-1) + 1], np.int32)])
        crops += cut_crops(image, whole.quads, whole.margin)
    rows, widths, padded = recognizer_rows(crops, recognizer)
    return Located(quads, block, rows, widths, padded, found.margin, found.rival)


async def orient_groups(
    groups: Groups,
    widths: Sequence[int],
    classify: AsyncClassify,
    size: ClassifierInput,
    threshold: float,
) -> tuple[Groups, list[NDArray[np.bool_]]]:
    """Each group's crops that the classifier finds upside down, turned back (one classifier
    call per group, all in flight together), and which were, per group. `widths` are the
    crops' own widths, by index."""
    own = [[widths[i] for i in indices] for indices, _ in groups]
    inputs = [classifier_input(batch, w, size) for (_, batch), w in zip(groups, own, strict=True)]
    probabilities = await classify(inputs)
    flags = [upside_down(p, threshold) for p in probabilities]
    turned = [
        (indices, turn_over(batch, w, flag))
        for (indices, batch), w, flag in zip(groups, own, flags, strict=True)
    ]
    return turned, flags


def pad_steps(
    arrays: Sequence[NDArray[Step]], length: int, value: float, dtype: type[Step]
) -> NDArray[Step]:
    """Right-pad [T] arrays to one length into [n, length] (wider groups have more steps)."""
    out = np.full((len(arrays), length), value, dtype=dtype)
    for row, array in enumerate(arrays):
        out[row, : len(array)] = array
    return out


async def recognize_rows(
    rows: Sequence[Floats],
    widths: Sequence[int],
    padded: Sequence[int],
    grouping: Grouping,
    orientation: Orientation,
    classifier: ClassifierInput,
    recognize: AsyncRecognize,
    classify: AsyncClassify,
) -> BestPath:
    """Stage 4: recognizer rows -> each crop's best path, recognized in width-sorted groups
    (all groups in flight together), upside-down rows turned back first when the orientation
    classifier is on.

    The classifier may turn an upright line over: a row it turned is also read as it came
    (the second look, at its group's width, only the turned rows of a group), and keeps
    whichever reading the recognizer is surer of. Upright pages rarely have turned rows, so
    this seldom costs a call."""
    groups = recognition_groups(rows, padded, grouping)
    turned = np.zeros(len(rows), dtype=bool)
    second: list[tuple[int, NDArray[np.intp]]] = []  # (group, its turned rows' places in it)
    as_sent = groups
    if groups and orientation.classify_orientation:
        threshold = orientation.orientation_threshold
        groups, flags = await orient_groups(groups, widths, classify, classifier, threshold)
        for g, ((indices, _), flag) in enumerate(zip(groups, flags, strict=True)):
            turned[indices] = flag
            if flag.any():
                second.append((g, np.flatnonzero(flag)))
    batches = [batch for _, batch in groups] + [as_sent[g][1][places] for g, places in second]
    results = await recognize(batches) if groups else []
    results, again = results[: len(groups)], results[len(groups) :]
    for (g, places), (best_class, best_score) in zip(second, again, strict=True):
        indices, _ = groups[g]
        flipped, kept = results[g]
        surer = path_confidence(best_class, best_score) > path_confidence(
            flipped[places], kept[places]
        )
        if surer.any():
            flipped, kept = flipped.copy(), kept.copy()
            flipped[places[surer]], kept[places[surer]] = best_class[surer], best_score[surer]
            results[g] = (flipped, kept)
            turned[np.asarray(indices)[places[surer]]] = False
    classes: list[Classes] = [np.zeros(0, np.int64)] * len(rows)
    scores: list[Floats] = [np.zeros(0, np.float32)] * len(rows)
    step_widths = np.zeros(len(rows), dtype=np.float32)
    for (indices, batch), (best_class, best_score) in zip(groups, results, strict=True):
        step_widths[indices] = batch.shape[-1] / max(best_class.shape[1], 1)
        for row, index in enumerate(indices):
            classes[index], scores[index] = best_class[row], best_score[row]
    steps = max((len(c) for c in classes), default=0)
    # padding steps: blank class with probability 0, which CTC decoding drops
    return BestPath(
        pad_steps(classes, steps, 0, np.int64),
        pad_steps(scores, steps, 0.0, np.float32),
        step_widths,
        turned,
    )


def read_lines(
    best: BestPath,
    quads: Floats,
    alphabet: Sequence[str],
    text_filter: TextFilter,
    rival: bool = False,
    located: Located | None = None,
    word_boxes: bool = False,
) -> Texts:
    """Stage 5: the best path of the len(quads) crops -> texts, dropping weak or empty ones;
    with `rival` (the last crop is the whole image, Located.rival), either the whole line or
    the others' texts (rival_reading); with `located` (the crops the best path was read from),
    each kept text's block, and with `word_boxes` its word boxes too.

    Rows beyond len(quads) (a padding row of a recognizer batch) are ignored.
    """
    n = len(quads)
    decoded = ctc_greedy_decode(best.best_class[:n], best.best_score[:n], alphabet) if n else []
    f = text_filter
    kept = (
        rival_reading(decoded, f.text_score, f.rival_margin)
        if rival
        else strong_texts(decoded, f.text_score)
    )
    found = Texts.of(decoded, quads, kept)
    if located is None:
        return found
    found = found.with_blocks(located.block[kept])
    if not word_boxes or best.step_widths is None or best.turned is None:
        return found
    frames = [crop_frame(quads[i], 0.0 if rival and i == n - 1 else located.margin) for i in kept]
    boxes = text_words(
        best.best_class,
        best.best_score,
        kept,
        frames,
        [located.widths[i] for i in kept],
        best.step_widths[kept],
        best.turned[kept],
        alphabet,
    )
    return found.with_words(boxes)


# --- the stages chained: one image ---------------------------------------------------------


async def read_page_async(image: Image, settings: PipelineSettings, networks: Networks) -> Texts:
    """A decoded image (BGR) -> texts in reading order, block by block, their polygons
    (original pixels), confidences and, when settings.words asks, word boxes.

    The page's lines are found and read as it came; the page classifier (turn_page) is asked
    only when they leave its way up in doubt (not level, read turned over or unsure:
    postprocessing.page_orientation.read_upright), before reading when they are not level. A
    turned page is then found and read again, upright: most pages need no classifier, a
    turned one pays a second detection.

    The networks are awaited, so a caller reading several pages at once (the `ocr` model,
    with async BLS) overlaps one page's network calls with another's Python work. A caller
    who sends pre-cropped lines (single_line "always") skips the detector.
    """
    s, n = settings, networks

    async def turned(maps: list[Floats]) -> Upright:
        return await turn_page(
            image,
            s.page_orientation,
            s.page_classifier_input,
            s.detector_input,
            s.lines,
            s.boxes,
            n.classify_page,
            n.detect,
            maps,
        )

    def located_on(page: Image, maps: Sequence[Floats]) -> Located:
        return locate(maps, page, s.lines, s.boxes, s.recognizer_input, s.blocks)

    async def read(located: Located) -> BestPath:
        return await recognize_rows(
            located.rows,
            located.widths,
            located.padded,
            s.grouping,
            s.orientation,
            s.classifier_input,
            n.recognize,
            n.classify,
        )

    detect_lines = s.lines.single_line != "always"
    maps = await n.detect(detection_input(image, s.detector_input)) if detect_lines else []
    located = located_on(image, maps)
    own = len(located.quads) - int(located.rival)  # the found lines, not the whole image
    # the lines' reading can tell a page's way up when they lie level and are read with the
    # line classifier (which turns an upside-down line over)
    lines_first = s.orientation.classify_orientation and lines_level(
        located.quads[:own], s.page_orientation
    )
    upright = Upright(image, 0, maps)
    if not lines_first:
        upright = await turned(maps)
        if upright.rotation:
            located = located_on(upright.image, upright.maps or [])
    best = await read(located) if located.rows else None
    if lines_first and best is not None:
        confidence = path_confidence(best.best_class[:own], best.best_score[:own])
        turned_over = np.zeros(own, bool) if best.turned is None else best.turned[:own]
        if not read_upright(located.quads[:own], turned_over, confidence, s.page_orientation):
            upright = await turned(maps)
            if upright.rotation:
                located = located_on(upright.image, upright.maps or [])
                best = await read(located) if located.rows else None
    if best is None:
        return Texts.empty(upright.rotation)  # no recognizer call at all
    page = upright.image
    tables, word_boxes = s.tables.tables, s.words.word_boxes
    texts = read_lines(
        best, located.quads, s.alphabet, s.text_filter, located.rival, located, word_boxes or tables
    )
    if tables:
        texts = with_tables(texts, page, word_boxes)
    texts = texts.with_figures(find_figures(page, texts.quads))
    texts = texts.with_type(*line_type(page, texts.quads))
    return texts.turned_back(upright.rotation, height_width(page))


def with_tables(texts: Texts, page: Image, word_boxes: bool) -> Texts:
    """Stage 6, when asked for: the tables of an upright page, from its pixels and the texts
    read on it with their words (a line may cross cells), the words kept if `word_boxes`."""
    found = texts.with_tables(
        find_tables(page, texts.texts, texts.quads, texts.line_block, texts.words)
    )
    return found if word_boxes else dataclasses.replace(found, words=None)


def with_block_types(pages: Sequence[Texts], sizes: Sequence[tuple[int, int]]) -> list[Texts]:
    """Stage 7: the pages of one document (their sizes (width, height) as sent) -> each block's
    type, judged on the pages turned upright (a running head recurs on other pages, body text
    is the size most of the document is set in); a block holding a heading line or a list
    over its text is cut in parts; each figure becomes a block of its own, with no text, in
    reading order."""

    def upright(texts: Texts, size: tuple[int, int]) -> PageText:
        height = size[0] if texts.rotation in (90, 270) else size[1]
        quads = turned_upright(texts.quads, texts.rotation, (size[1], size[0]))
        tables = upright_boxes([t.box for t in texts.tables], texts.rotation, size)
        figures = upright_boxes(texts.figures, texts.rotation, size)
        return PageText(
            texts.texts,
            quads,
            texts.line_block,
            float(height),
            tables,
            texts.fonts,
            figures,
            texts.strokes,
            texts.gaps,
            texts.slants,
        )

    found = block_types([upright(t, size) for t, size in zip(pages, sizes, strict=True)])
    typed = []
    for t, size, kinds in zip(pages, sizes, found, strict=True):
        blocks = t.with_blocks(kinds.line_block).with_block_types(kinds.types)
        places = figure_places(
            [box_of(q) for q in turned_upright(blocks.block_quads, t.rotation, (size[1], size[0]))],
            upright_boxes(t.figures, t.rotation, size),
        )
        typed.append(blocks.with_figure_blocks(places))
    return typed


def upright_boxes(boxes: Sequence[Box], rotation: int, size: tuple[int, int]) -> list[Box]:
    """Boxes on a page as sent (its size (width, height)) -> on the page turned upright."""
    return [box_of(turned_upright(quad_of(b), rotation, (size[1], size[0]))) for b in boxes]


def with_figures_on(texts: Texts, look: Image, size: tuple[int, int]) -> Texts:
    """A page read from its text layer, rendered `size` (width, height) -> its figures, found
    on `look`, the page rendered small (postprocessing.figures.SCALE_SIDE on its long side)."""
    scale = np.array([look.shape[1] / max(size[0], 1), look.shape[0] / max(size[1], 1)])
    found = find_figures(look, (texts.quads * scale).astype(np.float32))
    return texts.with_figures(
        [(x0 / scale[0], y0 / scale[1], x1 / scale[0], y1 / scale[1]) for x0, y0, x1, y1 in found]
    )


def read_layer(layer: TextLayer, blocks: Blocks, word_boxes: bool) -> Texts:
    """A PDF page's text layer (preprocessing.text_layer) -> texts as OCR gives them: its lines
    in reading order, block by block, with their words when `word_boxes` asks; every
    confidence 1."""
    strings = [line.text for line in layer.lines]
    quads = np.array([line.quad for line in layer.lines], np.float32).reshape(-1, 4, 2)
    words = [(word.text, word.quad, k) for k, line in enumerate(layer.lines) for word in line.words]
    found = Words(
        [text for text, _, _ in words],
        np.array([quad for _, quad, _ in words], np.float32).reshape(-1, 4, 2),
        np.ones(len(words), np.float32),
        np.array([k for _, _, k in words], np.int32),
    )
    texts = Texts(
        strings,
        quads,
        np.ones(len(strings), np.float32),
        fonts=tuple(line.font for line in layer.lines),
    )
    return in_reading_order(texts, found if word_boxes else None, blocks)


def with_layer(ocr: Texts, layer: TextLayer, blocks: Blocks, word_boxes: bool) -> Texts:
    """A page read by OCR that also has drawn text (TextLayer.ocr_too): the layer's lines, and
    OCR's lines where no layer text lies (at least half of a line's box off the layer's boxes),
    in reading order together. A page that came turned keeps OCR's reading alone."""
    if ocr.rotation:
        return ocr
    drawn = read_layer(layer, blocks, word_boxes)
    keep = [i for i, quad in enumerate(ocr.quads) if not on_boxes(quad, drawn.quads)]
    words = ocr.words or Words.empty()
    kept_words = np.isin(words.lines, keep)
    renumber = {old: new for new, old in enumerate(keep)}
    layer_words = drawn.words or Words.empty()
    merged_words = Words(
        [t for t, k in zip(words.texts, kept_words, strict=True) if k] + layer_words.texts,
        np.concatenate([words.quads[kept_words], layer_words.quads]),
        np.concatenate([words.scores[kept_words], layer_words.scores]),
        np.array(
            [renumber[int(line)] for line in words.lines[kept_words]]
            + [len(keep) + int(line) for line in layer_words.lines],
            np.int32,
        ),
    )
    texts = Texts(
        [ocr.texts[i] for i in keep] + drawn.texts,
        np.concatenate([ocr.quads[keep], drawn.quads]),
        np.concatenate([ocr.scores[keep], drawn.scores]),
        fonts=("",) * len(keep) + drawn.fonts,
    )
    ordered = in_reading_order(texts, merged_words if word_boxes else None, blocks)
    return ordered.with_figures(ocr.figures)


def on_boxes(quad: Floats, boxes: Floats, share: float = 0.5) -> bool:
    """Whether at least `share` of `quad`'s box lies on `boxes`' boxes."""
    left, top = quad.min(axis=0)
    right, bottom = quad.max(axis=0)
    area = max(float((right - left) * (bottom - top)), 1e-6)
    if not len(boxes):
        return False
    low, high = boxes.min(axis=1), boxes.max(axis=1)
    widths = np.clip(np.minimum(high[:, 0], right) - np.maximum(low[:, 0], left), 0, None)
    heights = np.clip(np.minimum(high[:, 1], bottom) - np.maximum(low[:, 1], top), 0, None)
    return float((widths * heights).sum()) >= share * area


def in_reading_order(texts: Texts, words: Words | None, blocks: Blocks) -> Texts:
    """Texts of an upright page (and their words) put in reading order, block by block."""
    if not texts.texts:
        return Texts.empty()
    layout = page_layout(texts.quads, blocks)
    order = [int(i) for i in layout.order]
    ordered = Texts(
        [texts.texts[i] for i in order],
        texts.quads[order],
        texts.scores[order],
        fonts=tuple(texts.fonts[i] for i in order) if texts.fonts else (),
    ).with_blocks(layout.block)
    if words is None:
        return ordered
    place = np.empty(len(order), np.int32)
    place[order] = np.arange(len(order), dtype=np.int32)
    by_line = np.argsort(place[words.lines], kind="stable")  # words follow their lines
    return ordered.with_words(
        Words(
            [words.texts[i] for i in by_line],
            words.quads[by_line],
            words.scores[by_line],
            place[words.lines][by_line],
        )
    )


async def read_image_async(data: bytes, settings: PipelineSettings, networks: Networks) -> Texts:
    """`read_page_async` of one encoded image (decoded with the settings' limits), and its
    blocks' types (a document of one page)."""
    image = decode_image(data, settings.limits)
    texts = await read_page_async(image, settings, networks)
    return with_block_types([texts], [(image.shape[1], image.shape[0])])[0]


def read_image(
    data: bytes,
    settings: PipelineSettings,
    detect: Detect,
    recognize: Recognize,
    classify: Classify,
    classify_page: ClassifyPage,
) -> Texts:
    """`read_image_async` with plain (blocking) network callables, for in-process use."""

    def now(network: Callable[[In], Out]) -> Callable[[In], Awaitable[Out]]:
        async def call(value: In) -> Out:
            return network(value)

        return call

    networks = Networks(now(detect), now(recognize), now(classify), now(classify_page))
    return answered(read_image_async(data, settings, networks))


def answered(coroutine: Coroutine[object, None, Out]) -> Out:
    """The value of a coroutine none of whose awaits waits (blocking networks answer at once),
    run to its end without an event loop: asyncio.run would make a loop per image and, in the
    main thread, format the whole result for its SIGINT handler."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        value: Out = finished.value
        return value
    coroutine.close()
    raise RuntimeError("a blocking network call waited on an event loop")
