"""The pipeline's settings, one plain object per concept.

The stage functions (triton_ocr.pipeline) and the pure pre/postprocessing modules take these
objects and nothing else: they never read a config. triton_ocr.config fills them from the
model repository's config.pbtxt files, which are the only place that holds the values; the
classes have no defaults, so a missing value is an error at load time instead of a silent
fallback. Each field is named as its key in config.pbtxt, after the class's `PREFIX` (if any).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

SINGLE_LINE_MODES = ("auto", "always", "never")
PAGE_ORIENTATION_MODES = ("auto", "off")
# a PDF page read from its text layer or by OCR (preprocessing/text_layer.py)
PDF_TEXT_MODES = ("auto", "layer", "ocr")


def _check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"parameter {name!r} must be one of {list(allowed)}, not {value!r}")


def _check_length(
    names: tuple[str, ...], values: tuple[tuple[float, ...], ...], length: int
) -> None:
    for name, value in zip(names, values, strict=True):
        if len(value) != length:
            raise ValueError(f"parameter {name!r} needs {length} values, got {len(value)}")


@dataclasses.dataclass(frozen=True)
class ImageLimits:
    """What an encoded image may cost before it is decoded."""

    max_image_bytes: int  # encoded size refused above this (Triton 2.51 has no body limit)
    max_image_pixels: int  # refused before decoding above this (decompression bombs)

    # The decoder's array of one image may take as much as an 8-bit RGBA image at the pixel
    # limit: deeper samples (16-bit, float) or more channels allow fewer pixels.
    DECODED_BYTES_PER_PIXEL: ClassVar[int] = 4

    @property
    def max_decoded_bytes(self) -> int:
        return self.max_image_pixels * self.DECODED_BYTES_PER_PIXEL


@dataclasses.dataclass(frozen=True)
class DetectorInput:
    """Decoded image -> the detector's input: the page resized (the detector's graph does the
    rest, config/packs.py `Normalisation`)."""

    min_side_len: int  # short side scaled up to at least this
    max_side_len: int  # long side capped at this


@dataclasses.dataclass(frozen=True)
class PageOrientation:
    """Pages turned by 90, 180 or 270 degrees, set upright before detection.

    The page classifier looks at the page's centre as it came; when it finds it upright with at
    least `page_upright_score`, that is the answer (most pages: one look, not four). Otherwise
    it also looks at the centre turned by each further quarter; a turn is proposed when the
    mean of the four looks gives it at least `page_turn_score` (one look errs on photos, four
    consistent ones rarely do). It is taken only when, once the page is
    turned, at least `page_lines_share` of the detected line boxes that are clearly longer one
    way than the other lie level: the text itself must agree.

    Where the lines are read before the page is classified (`ocr`), a page whose lines lie
    level and all read upright, at a median confidence of at least `page_read_score`, is
    upright without the classifier: it looks only at pages its lines leave in doubt.
    """

    page_orientation: str  # "auto" or "off"
    page_turn_score: float
    page_lines_share: float
    page_upright_score: float
    page_read_score: float
    # the classifier's reference preprocessing: the short side resized to this, the centre
    # cropped to the network's input size, then (pixel / 255 - mean) / std on BGR
    page_short_side: int
    page_mean: tuple[float, ...]
    page_std: tuple[float, ...]

    def __post_init__(self) -> None:
        _check_choice("page_orientation", self.page_orientation, PAGE_ORIENTATION_MODES)
        _check_length(("page_mean", "page_std"), (self.page_mean, self.page_std), 3)
        scores = ("page_turn_score", "page_lines_share", "page_upright_score", "page_read_score")
        for name in scores:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {getattr(self, name)}")


@dataclasses.dataclass(frozen=True)
class DBBoxes:
    """DB probability map -> boxes."""

    thresh: float  # pixel probability threshold
    box_thresh: float  # minimum mean probability inside a box
    unclip_ratio: float  # growth of the shrunk text kernel
    max_candidates: int
    # a bent line (a page photographed bowing) cut along its centre (postprocessing.bends): for
    # detectors whose maps are smooth bands; one whose level lines waist between words would
    # have some taken for bent
    bent_lines: bool


@dataclasses.dataclass(frozen=True)
class EASTBoxes:
    """EAST score and geometry maps -> boxes."""

    score_thresh: float  # cell score threshold
    merge_iou: float  # locality-aware merge of neighbouring cells' boxes
    nms_iou: float  # rotated NMS between merged boxes
    max_candidates: int  # cells kept (strongest first) before merging


Boxes = DBBoxes | EASTBoxes
DETECTORS: dict[str, type[DBBoxes] | type[EASTBoxes]] = {"db": DBBoxes, "east": EASTBoxes}


@dataclasses.dataclass(frozen=True)
class TextLines:
    """Which boxes become text lines, and how each is cut out of the original image."""

    detector: str  # "db" or "east": which box settings apply
    min_box_size: float  # boxes thinner than this (original pixels) are dropped
    # Each box grows by this fraction of its height above and below before it is cropped (the
    # returned polygon stays the detector's): the recognizer keeps the spaces between words only
    # with room around the text, and detector boxes hug it. Where the next line's box is nearer,
    # the rest of the margin repeats the crop's edge row (geometry.room_on_page): that line's
    # strokes in the crop cost characters.
    crop_margin: float
    # The whole image as one text line: "always" (the caller sends crops), "never", or "auto":
    # also read whole, against the boxes found, when the image could be a crop of one line:
    # line-shaped (at most line_max_height px tall, at least line_min_aspect times wider than
    # tall, boxes on a single row only), small (no side over line_max_side) with nothing found,
    # or one box spanning line_box_cover of its height and width.
    single_line: str
    line_max_height: int
    line_min_aspect: float
    line_max_side: int
    line_box_cover: float

    def __post_init__(self) -> None:
        _check_choice("detector", self.detector, tuple(DETECTORS))
        if not 0 <= self.crop_margin <= 1:
            raise ValueError(
                f"parameter 'crop_margin' must be between 0 and 1, not {self.crop_margin}"
            )
        _check_choice("single_line", self.single_line, SINGLE_LINE_MODES)
        if not 0 < self.line_box_cover <= 1:
            raise ValueError(
                f"parameter 'line_box_cover' must be in (0, 1], not {self.line_box_cover}"
            )


@dataclasses.dataclass(frozen=True)
class Blocks:
    """Lines grouped into blocks and put in reading order by a recursive XY cut of the page.

    Gaps are measured in the page's median line height. A vertical cut (between columns) needs
    a gap of `column_gap` and, on each side, lines whose median length is at least
    `column_min_width` line heights: a receipt's prices or a grid's cells are too short to be a
    column of text, so their rows read across. A horizontal cut (between paragraphs, under a
    headline) needs a gap of `paragraph_gap`.
    """

    PREFIX: ClassVar[str] = "block_"
    column_gap: float
    column_min_width: float
    paragraph_gap: float

    def __post_init__(self) -> None:
        for name in ("column_gap", "column_min_width", "paragraph_gap"):
            if not getattr(self, name) > 0:
                raise ValueError(f"block_{name} must be > 0, not {getattr(self, name)}")


@dataclasses.dataclass(frozen=True)
class RecognizerInput:
    """Text line crops -> the recognizer's input rows (config keys: rec_height, ...)."""

    PREFIX: ClassVar[str] = "rec_"
    height: int
    min_width: int
    max_width: int
    # padded widths are rounded up to a multiple of this, so crops of different images share
    # batch shapes and text_recognition's dynamic batcher can merge their groups (1: exact)
    width_bucket: int
    keep_aspect: bool  # False: every crop is stretched to max_width
    channels: int  # 3 (BGR) or 1 (grayscale)
    mean: tuple[float, ...]
    std: tuple[float, ...]

    def __post_init__(self) -> None:
        _check_choice("rec_channels", self.channels, (1, 3))
        if self.width_bucket < 1:
            raise ValueError(f"parameter 'rec_width_bucket' must be >= 1, not {self.width_bucket}")
        _check_length(("rec_mean", "rec_std"), (self.mean, self.std), self.channels)


@dataclasses.dataclass(frozen=True)
class Grouping:
    """Crops are recognized in groups of similar width."""

    recognition_group_size: int  # crops per recognizer call, after sorting by width
    # row pixels per recognizer call at most (its crops x their padded width): the recognizer's
    # working memory grows with it (docs/benchmarks.md, "Where the memory goes")
    recognition_group_width: int

    def __post_init__(self) -> None:
        if self.recognition_group_width < 1:
            width = self.recognition_group_width
            raise ValueError(f"parameter 'recognition_group_width' must be >= 1, not {width}")


@dataclasses.dataclass(frozen=True)
class Orientation:
    """Upside-down lines: each group goes through the 0/180-degree classifier first, and crops
    it finds turned over with at least `orientation_threshold` are turned back."""

    classify_orientation: bool
    orientation_threshold: float

    def __post_init__(self) -> None:
        if not 0.5 <= self.orientation_threshold <= 1.0:
            value = self.orientation_threshold
            raise ValueError(f"orientation_threshold must be in [0.5, 1], not {value}")


@dataclasses.dataclass(frozen=True)
class ClassifierInput:
    """The orientation classifier's fixed input size [n, channels, height, width]."""

    channels: int
    height: int
    width: int


@dataclasses.dataclass(frozen=True)
class TextFilter:
    text_score: float  # texts below this mean CTC confidence are dropped
    # The whole image read as one line (TextBoxes.rival) replaces the boxes' texts unless their
    # confidence (weighted by length) is higher than the whole line's by more than this.
    rival_margin: float


@dataclasses.dataclass(frozen=True)
class Bls:
    """Calls from a Python model to another model of the same server."""

    bls_timeout_s: float  # the longest wait for one call (then UNAVAILABLE)


@dataclasses.dataclass(frozen=True)
class ManyImages:
    """The `ocr` entry point's several images per request."""

    # images of one request read concurrently (1: one after the other); bounds the memory
    # of decoded images a request holds at once
    images_in_flight: int
    max_images_per_request: int  # more is an INVALID_ARG: bounds one request's work and memory
    # the longest one page may take to decode or render (then that page fails); and the longest
    # a whole request may take inside the model (then it fails and all its work is cancelled)
    page_timeout_s: float
    request_timeout_s: float

    def __post_init__(self) -> None:
        for name in ("page_timeout_s", "request_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, not {getattr(self, name)}")
        if self.images_in_flight < 1:
            raise ValueError(f"images_in_flight must be >= 1, not {self.images_in_flight}")
        if self.max_images_per_request < 1:
            raise ValueError(
                f"max_images_per_request must be >= 1, not {self.max_images_per_request}"
            )


@dataclasses.dataclass(frozen=True)
class Documents:
    """Items of the `ocr` entry point that hold pages: PDFs (rendered) and multi-page TIFFs.
    Every page is then held to ImageLimits' pixel limit, as an image would be."""

    pdf_dpi: int  # resolution PDF pages are rendered at (a request may ask for another)
    max_pdf_dpi: int  # the highest pdf_dpi a request may ask for
    max_pages: int  # pages per request, all items together; more is an INVALID_ARG
    # a PDF page's text: auto (its drawn text layer where it has one), layer, or ocr; the
    # server's comes from the ocr config (who only renders pages leaves it)
    pdf_text: str = "auto"

    def __post_init__(self) -> None:
        _check_choice("pdf_text", self.pdf_text, PDF_TEXT_MODES)
        if not 1 <= self.pdf_dpi <= self.max_pdf_dpi:
            raise ValueError(
                f"pdf_dpi must be between 1 and max_pdf_dpi ({self.max_pdf_dpi}), not "
                f"{self.pdf_dpi}"
            )
        if self.max_pages < 1:
            raise ValueError(f"max_pages must be >= 1, not {self.max_pages}")


@dataclasses.dataclass(frozen=True)
class WordBoxes:
    """Word boxes beside the lines: each word's text, polygon and score (CTC columns mapped
    back through the crop's warp)."""

    word_boxes: bool


@dataclasses.dataclass(frozen=True)
class Tables:
    """Tables found on each page (postprocessing.tables): their cells with spans, boxes and
    text; only when asked, as it takes the page's pixels and every line's words."""

    tables: bool


@dataclasses.dataclass(frozen=True)
class PipelineSettings:
    """Everything the stage functions need, for one pack (a request may override some)."""

    limits: ImageLimits
    detector_input: DetectorInput
    page_orientation: PageOrientation
    page_classifier_input: ClassifierInput
    boxes: Boxes
    blocks: Blocks
    lines: TextLines
    recognizer_input: RecognizerInput
    grouping: Grouping
    orientation: Orientation
    classifier_input: ClassifierInput
    text_filter: TextFilter
    alphabet: Sequence[str]  # CTC classes, blank first
    documents: Documents
    words: WordBoxes
    tables: Tables

    def __post_init__(self) -> None:
        channels = self.recognizer_input.channels
        if self.orientation.classify_orientation and channels != self.classifier_input.channels:
            raise ValueError(
                f"classify_orientation needs {self.classifier_input.channels}-channel recognizer "
                f"crops; this pack's recognizer takes {channels} (turn it off)"
            )
