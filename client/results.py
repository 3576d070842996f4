"""What the OCR service returns, as plain values: words, lines, pages and documents.

`parse_ocr_outputs` turns the output tensors of the `ocr` entry point into one `Document` per
requested item (an image is a document of one page), `parse_lines` those of `ensemble_model`
into lines. numpy and the standard library only: no Triton here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from triton_ocr import contract

Polygon = tuple[tuple[float, float], ...]  # tl, tr, br, bl as (x, y), original pixels


def polygon_list(polygon: Polygon) -> list[list[float]]:
    return [list(point) for point in polygon]


@dataclass(frozen=True)
class Word:
    """One word of a line: its text, 4-point polygon (original pixels) and confidence."""

    text: str
    polygon: Polygon
    score: float

    def to_dict(self) -> dict:
        return {"text": self.text, "polygon": polygon_list(self.polygon), "score": self.score}


@dataclass(frozen=True)
class TextLine:
    """One recognized text: its content, 4-point polygon (original pixels) and confidence, and
    its words when they were asked for (`word_boxes`)."""

    text: str
    polygon: Polygon
    score: float
    words: tuple[Word, ...] = ()

    def to_dict(self) -> dict:
        found = {"text": self.text, "polygon": polygon_list(self.polygon), "score": self.score}
        if self.words:
            found["words"] = [word.to_dict() for word in self.words]
        return found

    as_dict = to_dict  # the name of the first releases


@dataclass(frozen=True)
class Block:
    """A block of a page (a column, a paragraph, a region): its box (original pixels), its
    lines, top to bottom, and what it is (one of contract.BLOCK_TYPES: "paragraph", "heading",
    "list", "table", "header", "footer", "caption", "figure"; "" from a server that does not
    say)."""

    polygon: Polygon
    lines: tuple[TextLine, ...]
    type: str = ""

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def to_dict(self) -> dict:
        return {
            "type": self.type,
            "polygon": polygon_list(self.polygon),
            "lines": [line.to_dict() for line in self.lines],
        }


@dataclass(frozen=True)
class Cell:
    """One cell of a table: its row and column (0-based, the table's own as read upright), how
    many rows and columns it spans, its box (original pixels) and the text read in it."""

    row: int
    column: int
    row_span: int
    column_span: int
    polygon: Polygon
    text: str

    def to_dict(self) -> dict:
        return {
            "row": self.row,
            "column": self.column,
            "row_span": self.row_span,
            "column_span": self.column_span,
            "polygon": polygon_list(self.polygon),
            "text": self.text,
        }


@dataclass(frozen=True)
class Table:
    """A table found on a page (request parameter `tables`): its box, its size in rows and
    columns, and its cells row by row (a spanning cell once, at its first row and column)."""

    polygon: Polygon
    rows: int
    columns: int
    cells: tuple[Cell, ...]

    def grid(self) -> list[list[Cell | None]]:
        """rows x columns: each place holds the cell that starts there, None where a spanning
        cell covers it."""
        places: list[list[Cell | None]] = [[None] * self.columns for _ in range(self.rows)]
        for cell in self.cells:
            places[cell.row][cell.column] = cell
        return places

    def to_dict(self) -> dict:
        return {
            "polygon": polygon_list(self.polygon),
            "rows": self.rows,
            "columns": self.columns,
            "cells": [cell.to_dict() for cell in self.cells],
        }


@dataclass(frozen=True)
class Page:
    """One page read: `number` is its 0-based index in its item (an image is page 0), its size
    is that of the image the server read (pixels, EXIF orientation applied; a PDF page as
    rendered at the request's DPI), its lines in reading order, block by block."""

    number: int
    width: int
    height: int
    lines: tuple[TextLine, ...] = ()
    # why the server could not read this page ("" when it did): a document's other pages are
    # still read; its size is the one its header states, (0, 0) when none could be read
    error: str = ""
    # the degrees (0, 90, 180, 270) the page's content came turned clockwise; the server read
    # it turned back, and every polygon still refers to the page as sent
    rotation: int = 0
    blocks: tuple[Block, ...] = ()  # the lines again, grouped (empty from ensemble_model)
    # how it was read: "ocr", "layer" (a PDF page's own text layer, exact, confidence 1) or
    # "both" (a page of pictures: its drawn text from the layer, OCR's lines elsewhere)
    read_from: str = "ocr"
    tables: tuple[Table, ...] = ()  # when asked for (`tables`), top to bottom

    @property
    def text(self) -> str:
        """The lines, one per row, with a blank line between blocks."""
        if not self.blocks:
            return "\n".join(line.text for line in self.lines)
        return "\n\n".join(block.text for block in self.blocks)

    def to_dict(self) -> dict:
        """Pages counted from 1, as people count them; "error" only on a page not read."""
        found = {
            "page": self.number + 1,
            "width": self.width,
            "height": self.height,
            "rotation": self.rotation,
            "read_from": self.read_from,
            "lines": [line.to_dict() for line in self.lines],
            "blocks": [block.to_dict() for block in self.blocks],
            "tables": [table.to_dict() for table in self.tables],
        }
        if self.error:
            found["error"] = self.error
        return found


@dataclass(frozen=True)
class Document:
    """One item of a request (an image, a PDF, a multi-page TIFF): its pages in order, and the
    path it was read from, if any."""

    pages: tuple[Page, ...]
    source: str | None = None

    def __len__(self) -> int:
        return len(self.pages)

    def __iter__(self) -> Iterator[Page]:
        return iter(self.pages)

    @overload
    def __getitem__(self, index: int) -> Page: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Page, ...]: ...

    def __getitem__(self, index: int | slice) -> Page | tuple[Page, ...]:
        return self.pages[index]

    @property
    def lines(self) -> list[TextLine]:
        """Every line of every page, in page order."""
        return [line for page in self.pages for line in page.lines]

    @property
    def errors(self) -> list[str]:
        """Why each page that could not be read was not (empty when every page was)."""
        return [page.error for page in self.pages if page.error]

    @property
    def text(self) -> str:
        """The pages' text, separated by a form feed (as Tesseract's text output does)."""
        return "\n\f".join(page.text for page in self.pages)

    def to_dict(self) -> dict:
        return {"file": self.source, "pages": [page.to_dict() for page in self.pages]}

    def to_hocr(self) -> str:
        """This document as one hOCR (XHTML) file: pages, lines and words with their boxes."""
        from .hocr import to_hocr

        return to_hocr(self.pages, self.source)

    def to_markdown(self, headers_footers: bool = False) -> str:
        """This document as Markdown (CommonMark): headings, paragraphs and lists from its
        blocks in reading order, a comment between pages; running headers and footers left out
        unless `headers_footers`."""
        from .markdown import to_markdown

        return to_markdown(self.pages, headers_footers)

    def to_alto(self) -> str:
        """This document as one ALTO v4 XML file: pages, blocks, lines and words."""
        from .alto import to_alto

        return to_alto(self.pages, self.source)


def as_text(value: object) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def as_polygons(polygons: np.ndarray) -> list[Polygon]:
    return [tuple((float(x), float(y)) for x, y in poly) for poly in polygons]


# The shape of one entry of the outputs that are not one value per entry.
ENTRY_SHAPES = {
    contract.OUTPUT_POLYGONS: (4, 2),
    contract.OCR_OUTPUT_WORD_POLYGONS: (4, 2),
    contract.OCR_OUTPUT_PAGE_SIZE: (2,),
    contract.OCR_OUTPUT_BLOCK_POLYGONS: (4, 2),
    contract.OCR_OUTPUT_TABLE_POLYGONS: (4, 2),
    contract.OCR_OUTPUT_TABLE_GRID: (2,),
    contract.OCR_OUTPUT_CELL_GRID: (4,),
    contract.OCR_OUTPUT_CELL_POLYGONS: (4, 2),
}


def column(outputs: Mapping[str, np.ndarray | None], name: str, dtype=None) -> np.ndarray:
    """One output tensor flattened to one entry per element ([N], [N, 4, 2] or [N, 2])."""
    value = outputs.get(name)
    if value is None:
        raise ValueError(f"inconsistent response: output {name!r} is missing")
    array = np.asarray(value, dtype=dtype)
    inner = ENTRY_SHAPES.get(name, ())
    if array.size % int(np.prod(inner, dtype=np.int64)):
        raise ValueError(
            f"inconsistent response: output {name!r} of shape {list(array.shape)} is not a "
            f"list of {list(inner)} entries"
        )
    return array.reshape(-1, *inner)


def parse_lines(
    texts: np.ndarray,
    polygons: np.ndarray,
    scores: np.ndarray,
    words: Sequence[tuple[Word, ...]] | None = None,
) -> list[TextLine]:
    """Turn the three output tensors of one image into TextLines (reading order kept), with
    their `words` (one tuple per line) if given."""
    texts = np.asarray(texts).reshape(-1)
    polygons = column({contract.OUTPUT_POLYGONS: polygons}, contract.OUTPUT_POLYGONS, np.float32)
    scores = np.asarray(scores, dtype=np.float32).reshape(-1)
    if not len(texts) == len(polygons) == len(scores):
        raise ValueError(
            f"inconsistent response: {len(texts)} texts, {len(polygons)} polygons, "
            f"{len(scores)} scores"
        )
    words = words if words is not None else [()] * len(texts)
    return [
        TextLine(text=as_text(t), polygon=poly, score=float(s), words=tuple(w))
        for t, poly, s, w in zip(texts, as_polygons(polygons), scores, words, strict=True)
    ]


def parse_words(outputs: Mapping[str, np.ndarray | None], lines: int) -> list[tuple[Word, ...]]:
    """The words of each of the `lines` lines (none when the word outputs are absent or empty:
    the request did not ask for them)."""
    names = contract.OCR_WORD_OUTPUTS
    if all((value := outputs.get(name)) is None or np.size(value) == 0 for name in names):
        return [()] * lines
    texts = column(outputs, contract.OCR_OUTPUT_WORD_TEXT).reshape(-1)
    polygons = column(outputs, contract.OCR_OUTPUT_WORD_POLYGONS, np.float32)
    scores = column(outputs, contract.OCR_OUTPUT_WORD_SCORES, np.float32)
    line_of = column(outputs, contract.OCR_OUTPUT_WORD_LINE, np.int64)
    if not len(texts) == len(polygons) == len(scores) == len(line_of):
        raise ValueError(
            f"inconsistent response: {len(texts)} word texts, {len(polygons)} word polygons, "
            f"{len(scores)} word scores, {len(line_of)} word lines"
        )
    check_index(line_of, lines, "word_line", "lines", "words are not grouped by line in order")
    per_line: list[list[Word]] = [[] for _ in range(lines)]
    for text, polygon, score, line in zip(
        texts, as_polygons(polygons), scores, line_of, strict=True
    ):
        per_line[int(line)].append(Word(as_text(text), polygon, float(score)))
    return [tuple(words) for words in per_line]


def check_index(index: np.ndarray, count: int, name: str, what: str, unordered: str) -> None:
    """`index` (an output naming entries of another) must name existing ones, in order."""
    if len(index) and (index.min() < 0 or index.max() >= count):
        raise ValueError(
            f"inconsistent response: {name} {sorted(set(index.tolist()))} names {what} outside "
            f"the {count} {what}"
        )
    if np.any(np.diff(index) < 0):
        raise ValueError(f"inconsistent response: {unordered}")


def page_errors(outputs: Mapping[str, np.ndarray | None], pages: int) -> list[str]:
    """Each page's error ("" for a page read); all "" from a server without the output."""
    if outputs.get(contract.OCR_OUTPUT_PAGE_ERROR) is None:
        return [""] * pages
    errors = [as_text(e) for e in column(outputs, contract.OCR_OUTPUT_PAGE_ERROR).reshape(-1)]
    if len(errors) != pages:
        raise ValueError(f"inconsistent response: {len(errors)} page errors for {pages} pages")
    return errors


def page_rotations(outputs: Mapping[str, np.ndarray | None], pages: int) -> list[int]:
    """Each page's turn in degrees; all 0 from a server without the output."""
    if outputs.get(contract.OCR_OUTPUT_PAGE_ROTATION) is None:
        return [0] * pages
    rotations = column(outputs, contract.OCR_OUTPUT_PAGE_ROTATION, np.int64).reshape(-1)
    if len(rotations) != pages or not set(rotations.tolist()) <= {0, 90, 180, 270}:
        raise ValueError(f"inconsistent response: page rotations {rotations.tolist()}")
    return [int(r) for r in rotations]


def page_sources(outputs: Mapping[str, np.ndarray | None], pages: int) -> list[str]:
    """How each page was read; all "ocr" from a server without the output."""
    if outputs.get(contract.OCR_OUTPUT_PAGE_SOURCE) is None:
        return ["ocr"] * pages
    sources = [as_text(s) for s in column(outputs, contract.OCR_OUTPUT_PAGE_SOURCE).reshape(-1)]
    if len(sources) != pages or not set(sources) <= set(contract.PAGE_SOURCES):
        raise ValueError(f"inconsistent response: page sources {sources}")
    return sources


def parse_blocks(
    outputs: Mapping[str, np.ndarray | None], lines: Sequence[TextLine], pages: int
) -> list[list[Block]]:
    """Each page's blocks, from the line_block, block_polygons and block_page outputs (none
    from a server without them), with their types (block_type; "" from a server without it)."""
    names = [name for name in contract.OCR_BLOCK_OUTPUTS if name != contract.OCR_OUTPUT_BLOCK_TYPE]
    if any(outputs.get(name) is None for name in names):
        return [[] for _ in range(pages)]
    line_block = column(outputs, contract.OCR_OUTPUT_LINE_BLOCK, np.int64).reshape(-1)
    polygons = as_polygons(column(outputs, contract.OCR_OUTPUT_BLOCK_POLYGONS, np.float32))
    block_page = column(outputs, contract.OCR_OUTPUT_BLOCK_PAGE, np.int64).reshape(-1)
    if len(line_block) != len(lines) or len(polygons) != len(block_page):
        raise ValueError(
            f"inconsistent response: {len(line_block)} line blocks for {len(lines)} lines, "
            f"{len(polygons)} block polygons for {len(block_page)} block pages"
        )
    check_index(line_block, len(polygons), "line_block", "blocks", "lines are not block by block")
    check_index(block_page, pages, "block_page", "pages", "blocks are not in page order")
    types = block_types(outputs, len(polygons))
    members: list[list[TextLine]] = [[] for _ in polygons]
    for line, block in zip(lines, line_block, strict=True):
        members[int(block)].append(line)
    found: list[list[Block]] = [[] for _ in range(pages)]
    for polygon, page, held, kind in zip(polygons, block_page, members, types, strict=True):
        found[int(page)].append(Block(polygon, tuple(held), kind))
    return found


def block_types(outputs: Mapping[str, np.ndarray | None], blocks: int) -> list[str]:
    """Each block's type; all "" from a server without the output."""
    if outputs.get(contract.OCR_OUTPUT_BLOCK_TYPE) is None:
        return [""] * blocks
    types = [as_text(t) for t in column(outputs, contract.OCR_OUTPUT_BLOCK_TYPE).reshape(-1)]
    if len(types) != blocks or not set(types) <= set(contract.BLOCK_TYPES):
        raise ValueError(f"inconsistent response: {len(types)} block types for {blocks} blocks")
    return types


def parse_tables(outputs: Mapping[str, np.ndarray | None], pages: int) -> list[list[Table]]:
    """Each page's tables, from the table and cell outputs (none from a server without them or
    a request that did not ask)."""
    if any(outputs.get(name) is None for name in contract.OCR_TABLE_OUTPUTS):
        return [[] for _ in range(pages)]
    table_page = column(outputs, contract.OCR_OUTPUT_TABLE_PAGE, np.int64).reshape(-1)
    polygons = as_polygons(column(outputs, contract.OCR_OUTPUT_TABLE_POLYGONS, np.float32))
    grid = column(outputs, contract.OCR_OUTPUT_TABLE_GRID, np.int64)
    cell_table = column(outputs, contract.OCR_OUTPUT_CELL_TABLE, np.int64).reshape(-1)
    cell_grid = column(outputs, contract.OCR_OUTPUT_CELL_GRID, np.int64)
    cell_polygons = as_polygons(column(outputs, contract.OCR_OUTPUT_CELL_POLYGONS, np.float32))
    cell_text = column(outputs, contract.OCR_OUTPUT_CELL_TEXT).reshape(-1)
    if not len(table_page) == len(polygons) == len(grid):
        raise ValueError(
            f"inconsistent response: {len(table_page)} table pages, {len(polygons)} table "
            f"polygons, {len(grid)} table grids"
        )
    if not len(cell_table) == len(cell_grid) == len(cell_polygons) == len(cell_text):
        raise ValueError(
            f"inconsistent response: {len(cell_table)} cell tables, {len(cell_grid)} cell grids, "
            f"{len(cell_polygons)} cell polygons, {len(cell_text)} cell texts"
        )
    check_index(table_page, pages, "table_page", "pages", "tables are not in page order")
    check_index(cell_table, len(grid), "cell_table", "tables", "cells are not table by table")
    cells: list[list[Cell]] = [[] for _ in grid]
    for table, (row, col, rows, cols), polygon, text in zip(
        cell_table, cell_grid, cell_polygons, cell_text, strict=True
    ):
        size = grid[int(table)]
        if min(row, col) < 0 or min(rows, cols) < 1 or row + rows > size[0] or col + cols > size[1]:
            raise ValueError(
                f"inconsistent response: a cell at row {row}, column {col} spanning {rows} x "
                f"{cols} outside its table of {size[0]} x {size[1]}"
            )
        cells[int(table)].append(
            Cell(int(row), int(col), int(rows), int(cols), polygon, as_text(text))
        )
    found: list[list[Table]] = [[] for _ in range(pages)]
    for page, polygon, (rows, cols), held in zip(table_page, polygons, grid, cells, strict=True):
        found[int(page)].append(Table(polygon, int(rows), int(cols), tuple(held)))
    return found


def parse_ocr_outputs(
    outputs: Mapping[str, np.ndarray | None],
    items: int,
    sources: Sequence[str | None] | None = None,
) -> list[Document]:
    """The `ocr` entry point's output tensors (by name, as `InferResult.as_numpy` gives them,
    less their batch dimension of one) for a request of `items` items: one Document per item,
    in request order, every page read listed (with or without text), lines in reading order
    with their words if any.

    Raises ValueError when the response does not hold together (lengths that differ, indices
    naming items, pages or lines that are not there).
    """
    if sources is not None and len(sources) != items:
        raise ValueError(f"{len(sources)} sources given for {items} items")
    image_of = column(outputs, contract.OCR_OUTPUT_IMAGE_INDEX, np.int64)
    page_of = column(outputs, contract.OCR_OUTPUT_PAGE_INDEX, np.int64)
    page_image = column(outputs, contract.OCR_OUTPUT_PAGE_IMAGE, np.int64)
    page_size = column(outputs, contract.OCR_OUTPUT_PAGE_SIZE, np.int64)
    if len(page_image) != len(page_size):
        raise ValueError(
            f"inconsistent response: {len(page_image)} page_image_index entries, "
            f"{len(page_size)} page sizes"
        )
    check_index(page_image, items, "page_image_index", "items", "pages are not in request order")
    page_error = page_errors(outputs, len(page_image))
    if any(
        size.min() <= 0 and not error for size, error in zip(page_size, page_error, strict=True)
    ):
        raise ValueError("inconsistent response: a page read of zero width or height")
    texts = column(outputs, contract.OUTPUT_TEXT)
    if not len(texts) == len(image_of) == len(page_of):
        raise ValueError(
            f"inconsistent response: {len(texts)} lines, {len(image_of)} image indices, "
            f"{len(page_of)} page indices"
        )
    lines = parse_lines(
        texts,
        column(outputs, contract.OUTPUT_POLYGONS, np.float32),
        column(outputs, contract.OUTPUT_SCORES, np.float32),
        parse_words(outputs, len(texts)),
    )

    rotations = page_rotations(outputs, len(page_image))
    read_from_of = page_sources(outputs, len(page_image))
    blocks = parse_blocks(outputs, lines, len(page_image))
    tables = parse_tables(outputs, len(page_image))
    # page number k of item i: the k-th page listed for item i
    sizes: list[list[tuple[int, int, str, int, list[Block], str, list[Table]]]] = [
        [] for _ in range(items)
    ]
    for item, (width, height), error, rotation, held, read_from, found_tables in zip(
        page_image, page_size, page_error, rotations, blocks, read_from_of, tables, strict=True
    ):
        sizes[int(item)].append(
            (int(width), int(height), error, rotation, held, read_from, found_tables)
        )
    found: list[list[list[TextLine]]] = [[[] for _ in pages] for pages in sizes]
    for n, (item, page) in enumerate(zip(image_of, page_of, strict=True)):
        if not (0 <= item < items and 0 <= page < len(sizes[item])):
            raise ValueError(
                f"inconsistent response: line {n} is on page {int(page)} of item {int(item)}, "
                f"which the response does not list"
            )
        found[item][page].append(lines[n])
    return [
        Document(
            pages=tuple(
                Page(
                    number,
                    width,
                    height,
                    tuple(found[item][number]),
                    error,
                    rotation,
                    tuple(held),
                    read_from,
                    tuple(found_tables),
                )
                for number, (
                    width,
                    height,
                    error,
                    rotation,
                    held,
                    read_from,
                    found_tables,
                ) in enumerate(sizes[item])
            ),
            source=sources[item] if sources is not None else None,
        )
        for item in range(items)
    ]
