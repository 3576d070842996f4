"""OCRmyPDF plugin: the triton-ocr service as OCRmyPDF's OCR engine.

    ocrmypdf --plugin triton_ocr.ocrmypdf --triton-url HOST:PORT in.pdf out.pdf

OCRmyPDF keeps doing everything but the reading: it rasterises each page, and the plugin sends
that image to the service's `ocr` entry point (one call per page) and hands OCRmyPDF the page's
blocks, lines and words as an OcrElement tree, which OCRmyPDF's own fpdf2 renderer turns into
the invisible text layer. Its choices about pages that already have text (--skip-text,
--redo-ocr, --force-ocr), PDF/A and optimisation apply unchanged.

The plugin replaces Tesseract: it blocks OCRmyPDF's built-in Tesseract plugin, whose option
checks demand a `tesseract` binary whatever engine is used, so no Tesseract is needed. Nothing
else from the system is either for the default output or --output-type pdf (pypdfium2
rasterises, pikepdf writes, OCRmyPDF's internal PDF/A backend); OCRmyPDF asks for Ghostscript
(Debian's `ghostscript`) for --output-type pdfa* unless --pdfa-backend internal, and its
optimiser uses Ghostscript on JPEG images when it is there.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import urllib.error
import urllib.request
from collections.abc import Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ocrmypdf import hookimpl
from ocrmypdf.builtin_plugins.tesseract_ocr import TesseractOptions
from ocrmypdf.exceptions import (
    BadArgsError,
    ExitCode,
    ExitCodeException,
    MissingDependencyError,
)
from ocrmypdf.hocrtransform import BoundingBox, OcrClass, OcrElement
from ocrmypdf.pluginspec import OcrEngine, OrientationConfidence
from PIL import Image
from pydantic import BaseModel, Field
from tritonclient.utils import InferenceServerException

from triton_ocr import __version__, contract
from triton_ocr.client import Document, ImageDecodeError, OcrClient, Page
from triton_ocr.client.address import NothingAnswers, WrongAddress, check_protocol
from triton_ocr.client.hocr import LINE_CLASSES, bbox_of
from triton_ocr.client.results import Block, Polygon, TextLine, Word
from triton_ocr.config.packs import PACK_LIST

log = logging.getLogger(__name__)

NAMESPACE = "triton"  # options.triton: the --triton-* options
TESSERACT_PLUGIN = "ocrmypdf.builtin_plugins.tesseract_ocr"
# `triton-ocr serve` listens on 127.0.0.1 by default, on Triton's default ports
DEFAULT_URLS = {protocol: f"127.0.0.1:{port}" for protocol, port in contract.TRITON_PORTS.items()}
PROTOCOLS = tuple(DEFAULT_URLS)
DEFAULT_TIMEOUT_S = contract.UPLOAD_TIMEOUT_S
# What each served pack reads, as OCRmyPDF's -l codes (Tesseract's names): the pack registry's
# languages. A pack reads its recognizer's alphabet whatever -l says; these are the languages
# whose letters that alphabet holds (tests/e2e/test_ocrmypdf.py checks them against the
# exported models' alphabets).
PACK_LANGUAGES: dict[str, frozenset[str]] = {pack.name: pack.languages for pack in PACK_LIST}
# OCRmyPDF's orientation confidence runs from 0 (none) to 15 (sure). The service reports the
# turn it took, not a score: it takes one only when its page classifier's four looks agree and
# the lines found on the turned page lie level, so a reported turn is as sure as OCRmyPDF's
# scale goes; "no turn" claims nothing (an upright page, or too little evidence to turn it).
TURN_TAKEN_CONFIDENCE = 15.0
NO_TURN_CONFIDENCE = 0.0
SANDWICH_REFUSED = (
    "the triton-ocr engine gives OCRmyPDF a text tree for its fpdf2 renderer and makes no PDF "
    "of its own: drop --pdf-renderer sandwich"
)


class ServiceError(ExitCodeException):
    """The service could not read a page (it refused the image, failed or did not answer)."""

    exit_code = ExitCode.child_process_error


class ServiceUnavailableError(MissingDependencyError):
    """No triton-ocr service answers at the configured address: the OCR engine is missing."""


class TritonOptions(BaseModel):
    """The --triton-* options, as OCRmyPDF hands them to every worker (options.triton)."""

    url: str | None = None  # host:port; None: the protocol's default (DEFAULT_URLS)
    protocol: Literal["http", "grpc"] = "http"
    timeout: float = Field(DEFAULT_TIMEOUT_S, gt=0)  # seconds per page, retries included
    param: list[str] = []  # the `ocr` request parameters, KEY=VALUE

    @property
    def address(self) -> str:
        return self.url or DEFAULT_URLS[self.protocol]

    @property
    def where(self) -> str:
        return f"{self.address} ({self.protocol})"


@dataclass(frozen=True)
class ServiceInfo:
    """What the running service says about itself: the pack it serves, its Triton version."""

    pack: str
    triton_version: str


# --- options -----------------------------------------------------------------------------------


def positive_seconds(text: str) -> float:
    """argparse type of --triton-timeout: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"{text!r}: the timeout must be above 0 seconds")
    return value


def request_parameters(texts: Sequence[str]) -> dict[str, str]:
    """--triton-param KEY=VALUE texts as the `ocr` call's parameters (the server converts and
    checks each value: docs/api.md)."""
    parameters = {}
    for text in texts:
        key, equals, value = text.partition("=")
        if not equals or not key.strip():
            raise BadArgsError(f"--triton-param {text!r} is not KEY=VALUE")
        parameters[key.strip()] = value
    return parameters


def check_address(address: str) -> None:
    """A server address is host:port with a numeric port (no scheme: tritonclient adds it)."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or "://" in address:
        raise BadArgsError(
            f"--triton-url {address!r} is not HOST:PORT (e.g. {DEFAULT_URLS['grpc']})"
        )


def check_languages(languages: Sequence[str], pack: str) -> None:
    """-l must name languages the served pack reads; it does not choose a model (the server's
    pack is what reads), so a language it lacks is refused rather than read badly."""
    known = PACK_LANGUAGES.get(pack)
    if known is None:
        log.warning(
            "triton-ocr: the served pack %r is not one this plugin knows; -l is unchecked", pack
        )
        return
    missing = sorted(set(languages) - known)
    if missing:
        raise BadArgsError(
            f"the triton-ocr service serves the {pack} pack, which does not read "
            f"{', '.join(missing)} (-l {'+'.join(languages)}); it reads "
            f"{', '.join(sorted(known))}. -l does not choose a model: serve another pack "
            "(triton-ocr serve --pack ...)."
        )


def reads_pages(options) -> bool:
    """Whether this run sends pages to the service: not with OCRmyPDF's null engine (--ocr-engine
    none) nor when it only strips an OCR layer (--mode strip), which need no service."""
    return options.ocr_engine != "none" and options.mode != "strip"


# --- the service -------------------------------------------------------------------------------


def config_parameter(config: dict[str, Any], name: str) -> str:
    """A string parameter of a model config as tritonclient returns it (gRPC wraps the config
    in "config", HTTP does not)."""
    parameters = config.get("config", config).get("parameters", {})
    if name not in parameters:
        raise ServiceError(f"the {contract.OCR_MODEL} model's config has no {name!r} parameter")
    return str(parameters[name]["string_value"])


def http_get(settings: TritonOptions, path: str) -> bytes:
    """A GET of Triton's HTTP API with the standard library: a tritonclient.http client made in
    OCRmyPDF's main process leaves gevent's state behind, and workers forked from it
    (--no-use-threads) then hang in their own clients."""
    url = f"http://{settings.address}{path}"
    with urllib.request.urlopen(url, timeout=settings.timeout) as response:
        return response.read()


def http_ready(settings: TritonOptions, model: str) -> bool:
    try:
        http_get(settings, f"/v2/models/{model}/ready")
    except urllib.error.HTTPError:  # 400: unknown or not ready, but the server answered
        return False
    return True


def service_answers(settings: TritonOptions) -> tuple[dict[str, Any], bool, dict[str, Any]]:
    """The server's metadata, whether `ocr` is ready, and `ocr`'s config (when ready)."""
    model = contract.OCR_MODEL
    if settings.protocol == "http":
        ready = http_ready(settings, model)
        config = json.loads(http_get(settings, f"/v2/models/{model}/config")) if ready else {}
        return json.loads(http_get(settings, "/v2")), ready, config
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(settings.address)
    deadline = {"client_timeout": settings.timeout}
    try:
        metadata = client.get_server_metadata(as_json=True, **deadline)
        ready = client.is_model_ready(model, **deadline)
        config = client.get_model_config(model, as_json=True, **deadline) if ready else {}
    finally:
        client.close()
    return metadata, ready, config


@functools.lru_cache(maxsize=8)
def service_info(settings_json: str) -> ServiceInfo:
    """Ask the service (once per process and settings) which pack it serves and which Triton
    runs it; refuse clearly when nothing answers or the `ocr` entry point is not ready."""
    settings = TritonOptions.model_validate_json(settings_json)
    try:
        check_protocol(settings.address, settings.protocol, "--triton-protocol {}")
        metadata, ready, config = service_answers(settings)
    except WrongAddress as exc:
        if not isinstance(exc, NothingAnswers):  # the other protocol's port: say what to pass
            raise ServiceUnavailableError(str(exc)) from exc
        raise nothing_answers(settings, exc) from exc
    except (InferenceServerException, OSError, ValueError) as exc:
        raise nothing_answers(settings, exc) from exc
    if not ready:
        raise ServiceUnavailableError(
            f"the Triton server at {settings.where} answers, but it has no ready "
            f"{contract.OCR_MODEL!r} model: is it a triton-ocr service?"
        )
    return ServiceInfo(config_parameter(config, "pack"), str(metadata["version"]))


def nothing_answers(settings: TritonOptions, reason: Exception) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        f"no triton-ocr service answers at {settings.where}: {reason}. Start one "
        "(triton-ocr serve) or point --triton-url and --triton-protocol at it."
    )


def info_of(settings: TritonOptions) -> ServiceInfo:
    return service_info(settings.model_dump_json())


def read_page(
    image: Path, what: str, settings: TritonOptions, word_boxes: bool, **overrides: Any
) -> Page:
    """The service's reading of one page image (the file OCRmyPDF rasterised), sent as it is;
    any refusal or failure becomes an OCRmyPDF error naming the page (`what`) and the reason."""
    parameters = {**request_parameters(settings.param), **overrides}
    try:
        with OcrClient(settings.address, settings.protocol, timeout=settings.timeout) as client:
            document = client.read_document(image.read_bytes(), word_boxes, **parameters)
    except (InferenceServerException, ImageDecodeError, OSError) as exc:
        raise ServiceError(
            f"the triton-ocr service at {settings.where} could not read {what}: {exc}"
            f"{size_hint(str(exc))}"
        ) from exc
    return only_page(document, what)


def size_hint(refusal: str) -> str:
    """What to do about a page image over the service's size limits (its pixels or bytes)."""
    if "limit" not in refusal:
        return ""
    return "; --max-ocr-image-mpixels N makes OCRmyPDF send a smaller image for OCR"


def only_page(document: Document, what: str) -> Page:
    """An image is one page; a page the server could not read is an error, not an empty page."""
    if len(document.pages) != 1:
        raise ServiceError(f"{what}: the service read {len(document.pages)} pages, not 1")
    page = document.pages[0]
    if page.error:
        raise ServiceError(f"the triton-ocr service could not read {what}: {page.error}")
    return page


# --- the service's page as OCRmyPDF's tree -----------------------------------------------------


def image_geometry(image: Path) -> tuple[tuple[int, int], float]:
    """The page image's size in pixels and its resolution (OCRmyPDF writes square DPI)."""
    with Image.open(image) as opened:
        size, dpi = opened.size, opened.info.get("dpi")
    if not dpi or not float(dpi[0]) > 0:
        raise ServiceError(f"{image.name} states no resolution: the text layer cannot be placed")
    return size, float(dpi[0])


def box(polygon: Polygon, size: tuple[int, int]) -> BoundingBox:
    left, top, right, bottom = bbox_of(polygon, *size)
    return BoundingBox(left=left, top=top, right=right, bottom=bottom)


def text_angle(polygon: Polygon) -> int:
    """The quarter turn nearest the line's reading direction (its first vertex to its second),
    counter-clockwise on the page as hOCR's textangle counts: 0 for level text, 270 for text
    that runs down the page."""
    (x0, y0), (x1, y1) = polygon[0], polygon[1]
    degrees = math.degrees(math.atan2(y0 - y1, x1 - x0))  # y grows downwards
    return round(degrees / 90) % 4 * 90


def confidence(score: float) -> float:
    return min(max(float(score), 0.0), 1.0)


def word_element(word: Word, size: tuple[int, int]) -> OcrElement:
    return OcrElement(
        ocr_class=OcrClass.WORD,
        bbox=box(word.polygon, size),
        poly=list(word.polygon),
        text=word.text,
        confidence=confidence(word.score),
    )


def line_element(line: TextLine, size: tuple[int, int], kind: str = OcrClass.LINE) -> OcrElement:
    """A line and its words at its quarter turn; a line read without word boxes is one word (so
    it is still written). No baseline: OCRmyPDF's renderer sizes the font from a given
    baseline's height in the box, and the detector's box is taller than the ink, so it would
    write the text too large; without one it places the baseline by its font's metrics (a
    skewed line is then written level across its box)."""
    angle = text_angle(line.polygon)
    words = line.words or (Word(line.text, line.polygon, line.score),)
    return OcrElement(
        ocr_class=kind,
        bbox=box(line.polygon, size),
        poly=list(line.polygon),
        confidence=confidence(line.score),
        textangle=float(angle),
        children=[word_element(word, size) for word in words],
    )


def page_blocks(page: Page) -> tuple[Block, ...]:
    """The page's blocks; a page without them (an older server) is one block of its lines."""
    if page.blocks or not page.lines:
        return page.blocks
    return (Block(tuple(point for line in page.lines for point in line.polygon), page.lines),)


def block_element(block: Block, size: tuple[int, int]) -> OcrElement:
    """A block as a content area holding one paragraph, as Tesseract's hOCR nests them, its
    lines of the class Tesseract gives a heading's or a caption's."""
    kind = LINE_CLASSES.get(block.type, OcrClass.LINE)
    paragraph = OcrElement(
        ocr_class=OcrClass.PARAGRAPH,
        bbox=box(block.polygon, size),
        children=[line_element(line, size, kind) for line in block.lines],
    )
    return OcrElement(ocr_class=OcrClass.CAREA, bbox=paragraph.bbox, children=[paragraph])


def page_element(page: Page, size: tuple[int, int], dpi: float, number: int) -> OcrElement:
    """The page as OCRmyPDF's tree: PAGE -> CAREA -> PARAGRAPH -> LINE -> WORD, in the image's
    pixels (the service's polygons refer to the image as sent, turned pages included)."""
    if (page.width, page.height) != tuple(size):
        raise ServiceError(
            f"the service read a {page.width}x{page.height} image where OCRmyPDF sent "
            f"{size[0]}x{size[1]}"
        )
    return OcrElement(
        ocr_class=OcrClass.PAGE,
        bbox=BoundingBox(left=0, top=0, right=size[0], bottom=size[1]),
        dpi=dpi,
        page_number=number,
        children=[block_element(block, size) for block in page_blocks(page)],
    )


def page_text(page: Page) -> str:
    """The sidecar text of a page: its lines, a blank line between blocks."""
    return page.text + "\n" if page.lines else ""


def orientation(page: Page) -> OrientationConfidence:
    """The service's page turn in OCRmyPDF's terms. Both count the degrees the content came
    turned clockwise (90: its top faces right), which is the clockwise turn OCRmyPDF undoes."""
    sure = TURN_TAKEN_CONFIDENCE if page.rotation else NO_TURN_CONFIDENCE
    return OrientationConfidence(angle=page.rotation, confidence=sure)


# --- the engine --------------------------------------------------------------------------------


class TritonOcrEngine(OcrEngine):
    """OCRmyPDF's OCR engine backed by the triton-ocr service (one `ocr` call per page)."""

    @staticmethod
    def version() -> str:
        return __version__

    @staticmethod
    def creator_tag(options) -> str:
        if not reads_pages(options):
            return f"triton-ocr {__version__}"
        info = info_of(options.triton)
        return f"triton-ocr {__version__} ({info.pack} pack on Triton {info.triton_version})"

    def __str__(self) -> str:
        return f"triton-ocr {__version__}"

    @staticmethod
    def languages(options) -> Set[str]:
        """The -l codes the served pack reads (empty, so unchecked, for a pack not listed or a
        run that reads no page)."""
        if not reads_pages(options):
            return frozenset()
        return PACK_LANGUAGES.get(info_of(options.triton).pack, frozenset())

    @staticmethod
    def get_orientation(input_file: Path, options) -> OrientationConfidence:
        """How the page came turned, as the service finds it (one read of the preview)."""
        turn = {contract.PAGE_ORIENTATION_PARAMETER: "auto"}
        page = read_page(input_file, input_file.name, options.triton, False, **turn)
        return orientation(page)

    @staticmethod
    def get_deskew(input_file: Path, options) -> float:
        """The service reads skewed lines as they lie and measures no page skew."""
        return 0.0

    @staticmethod
    def supports_generate_ocr() -> bool:
        return True

    @staticmethod
    def generate_ocr(input_file: Path, options, page_number: int = 0) -> tuple[OcrElement, str]:
        size, dpi = image_geometry(input_file)
        page = read_page(input_file, f"page {page_number + 1}", options.triton, True)
        return page_element(page, size, dpi, page_number), page_text(page)

    @staticmethod
    def generate_hocr(input_file: Path, output_hocr: Path, output_text: Path, options) -> None:
        """hOCR for OCRmyPDF's hOCR-only route: the client's hOCR of the page, and its text."""
        page = read_page(input_file, input_file.name, options.triton, True)
        output_hocr.write_text(Document((page,)).to_hocr(), encoding="utf-8")
        output_text.write_text(page_text(page), encoding="utf-8")

    @staticmethod
    def generate_pdf(input_file: Path, output_pdf: Path, output_text: Path, options) -> None:
        raise NotImplementedError(SANDWICH_REFUSED)


# --- hooks -------------------------------------------------------------------------------------


@hookimpl
def initialize(plugin_manager) -> None:
    """Block the Tesseract plugin: its check_options demands a tesseract binary whatever the
    engine, and this plugin is the engine."""
    plugin_manager.set_blocked(TESSERACT_PLUGIN)


@hookimpl
def register_options() -> dict[str, type[BaseModel]]:
    """Ours, and Tesseract's model (its plugin is blocked): OCRmyPDF's own validation reads
    options.tesseract whatever the engine."""
    return {NAMESPACE: TritonOptions, "tesseract": TesseractOptions}


@hookimpl
def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("triton-ocr", "The triton-ocr service as the OCR engine")
    group.add_argument(
        "--triton-url",
        metavar="HOST:PORT",
        dest="triton_url",
        help=f"The service's address (default: {DEFAULT_URLS['http']} for http, "
        f"{DEFAULT_URLS['grpc']} for grpc).",
    )
    group.add_argument(
        "--triton-protocol",
        choices=PROTOCOLS,
        default="http",
        dest="triton_protocol",
        help="How to talk to the service (default: http).",
    )
    group.add_argument(
        "--triton-timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        dest="triton_timeout",
        help="Seconds one page may take, retries included: a server that refuses it as "
        "overloaded is asked again, backing off, until then (default: "
        f"{DEFAULT_TIMEOUT_S:g}).",
    )
    group.add_argument(
        "--triton-param",
        action="append",
        metavar="KEY=VALUE",
        dest="triton_param",
        help="A request parameter of the service's `ocr` entry point, e.g. text_score=0.3 "
        "(repeatable; docs/api.md lists them).",
    )


@hookimpl
def check_options(options) -> None:
    """Refuse what this engine cannot do, then reach the service once: a wrong address or a
    server without the `ocr` model fails here, before any page is rasterised."""
    if not reads_pages(options):
        return
    if options.ocr_engine == "tesseract":
        raise BadArgsError(
            "--plugin triton_ocr.ocrmypdf replaces Tesseract: drop --ocr-engine tesseract "
            "or the plugin"
        )
    if options.pdf_renderer == "sandwich":
        raise BadArgsError(SANDWICH_REFUSED)
    if options.deskew:
        log.warning("--deskew has no effect with triton-ocr: the service measures no page skew")
    settings = options.triton
    check_address(settings.address)
    request_parameters(settings.param)
    info = info_of(settings)
    check_languages(options.languages, info.pack)
    log.debug(
        "triton-ocr: %s serves %s on Triton %s", settings.where, info.pack, info.triton_version
    )


@hookimpl
def get_ocr_engine(options) -> OcrEngine | None:
    """This engine unless --ocr-engine none (OCRmyPDF's null engine) was asked for."""
    if options is not None and getattr(options, "ocr_engine", "auto") == "none":
        return None
    return TritonOcrEngine()
