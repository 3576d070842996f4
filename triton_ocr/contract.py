"""Names shared by the server, the client and the tools: the default ports, every model of the
repository, and the tensors of the two entry points callers reach. No dependencies, so the
light client has it.

tests/config/test_repository.py checks them against every pack's config.pbtxt files.
"""

# Where a client finds the service: Triton's own default ports, which `serve` keeps, and the
# REST gateway's (`serve --rest-port`, `triton-ocr gateway --port`).
HTTP_PORT, GRPC_PORT, METRICS_PORT = 8000, 8001, 8002
TRITON_PORTS = {"http": HTTP_PORT, "grpc": GRPC_PORT}
REST_PORT = 8080
# How long a caller waits for its answer, overload retries included: an image or a few (the
# clients' default, `read`'s), and an upload of several files or a PDF page at the plugin's DPI
# (the REST gateway's, the OCRmyPDF plugin's).
REQUEST_TIMEOUT_S = 60.0
UPLOAD_TIMEOUT_S = 120.0

# The models of the repository, in the order a request passes them (each folder's config.pbtxt
# `name`).
DETECTION_PREPROCESSING = "detection_preprocessing"  # also holds the ensemble's decode limits
PAGE_ORIENTATION = "page_orientation"  # the 0/90/180/270-degree page classifier, every pack's
TEXT_DETECTION = "text_detection"
DETECTION_POSTPROCESSING = "detection_postprocessing"
GROUPED_RECOGNITION = "grouped_recognition"  # rows -> texts, the ensemble's last step
TEXT_ORIENTATION = "text_orientation"  # the 0/180-degree classifier, shared by every pack
TEXT_RECOGNITION = "text_recognition"
ENSEMBLE_MODEL = "ensemble_model"
OCR_MODEL = "ocr"
MODELS = (
    DETECTION_PREPROCESSING,
    PAGE_ORIENTATION,
    TEXT_DETECTION,
    DETECTION_POSTPROCESSING,
    GROUPED_RECOGNITION,
    TEXT_ORIENTATION,
    TEXT_RECOGNITION,
    ENSEMBLE_MODEL,
    OCR_MODEL,
)
ENTRY_POINTS = (ENSEMBLE_MODEL, OCR_MODEL)  # the models callers reach
# the ONNX models
NETWORKS = (PAGE_ORIENTATION, TEXT_DETECTION, TEXT_RECOGNITION, TEXT_ORIENTATION)
# What each entry point needs loaded (`serve --entry-points`): `ocr` runs the Python steps
# itself and calls the networks; the ensemble chains the Python step models, which call the
# networks.
ENTRY_POINT_MODELS = {
    ENSEMBLE_MODEL: tuple(m for m in MODELS if m != OCR_MODEL),
    OCR_MODEL: (OCR_MODEL, *NETWORKS),
}
# Each entry point's first model: its queue policy bounds the entry point's waiting work (an
# ensemble has no queue: its first step's holds it, beside the gate; docs/reliability.md,
# "Overload"), and its config holds the decode limits the clients read (Triton serves the
# configs of loaded models only, so each entry point carries its own).
ENTRY_STEPS = {ENSEMBLE_MODEL: DETECTION_PREPROCESSING, OCR_MODEL: OCR_MODEL}
# Each entry queue's policy (the configs are generated with it): beyond this many waiting
# requests Triton refuses one at once, and one waits at most the caller's deadline, else
# REQUEST_TIMEOUT_S (docs/reliability.md, "Overload")
ENTRY_QUEUE_SIZE = 12
# Networks every pack serves alike (one config.pbtxt, no pack variants)
SHARED_NETWORKS = (PAGE_ORIENTATION, TEXT_ORIENTATION)

# `ensemble_model`: one encoded image per call (the Triton guide's Part 5 contract).
INPUT_IMAGE = "input_image"  # UINT8 [1, nbytes]: the encoded file, batch of one
OUTPUT_TEXT = "recognized_text"  # BYTES [1, N]
OUTPUT_POLYGONS = "text_polygons"  # FP32 [1, N, 4, 2]: tl, tr, br, bl in original pixels
OUTPUT_SCORES = "text_scores"  # FP32 [1, N]
OUTPUTS = (OUTPUT_TEXT, OUTPUT_POLYGONS, OUTPUT_SCORES)

# `ocr`: several images per request, request parameters (docs/api.md), and one entry per text with
# the index of the image it belongs to. Every tensor has a leading batch dimension of one (the
# request; max_batch_size 1, never merged), left out of the shapes below.
OCR_INPUT_IMAGES = "images"  # BYTES [n_images]: encoded files, sent as [1, n_images]
OCR_OUTPUT_IMAGE_INDEX = "image_index"  # INT32 [N]
OCR_OUTPUTS = (OCR_OUTPUT_IMAGE_INDEX, OUTPUT_TEXT, OUTPUT_POLYGONS, OUTPUT_SCORES)
# An item of `images` may be a document (a PDF, a multi-page TIFF): each of its pages is read as
# an image. Lines say which page they are on; every page read is listed, with its size, even
# when no text was found on it. An image is one page (page_index 0).
OCR_OUTPUT_PAGE_INDEX = "page_index"  # INT32 [N]: per line, its page in its item, 0-based
OCR_OUTPUT_PAGE_IMAGE = "page_image_index"  # INT32 [P]: per page read, its item (request order)
OCR_OUTPUT_PAGE_SIZE = "page_size"  # INT32 [P, 2]: per page read, its width and height (pixels)
# BYTES [P]: per page, why it could not be read ("" when it was): a document answers with its
# good pages and an error for each bad one
OCR_OUTPUT_PAGE_ERROR = "page_error"
# INT32 [P]: per page, the degrees (0, 90, 180, 270) its content was turned clockwise, which
# the service turned back before reading it (polygons still refer to the page as sent)
OCR_OUTPUT_PAGE_ROTATION = "page_rotation"
# BYTES [P]: per page, how it was read: "ocr", "layer" (a PDF page's own text layer, request
# parameter pdf_text) or "both" (a page of pictures with drawn text: the layer's lines, OCR's
# where none of them lie)
OCR_OUTPUT_PAGE_SOURCE = "page_source"
PAGE_SOURCES = ("ocr", "layer", "both")
OCR_PAGE_OUTPUTS = (
    OCR_OUTPUT_PAGE_INDEX,
    OCR_OUTPUT_PAGE_IMAGE,
    OCR_OUTPUT_PAGE_SIZE,
    OCR_OUTPUT_PAGE_ERROR,
    OCR_OUTPUT_PAGE_ROTATION,
    OCR_OUTPUT_PAGE_SOURCE,
)
# Blocks (columns, paragraphs, regions): lines come in reading order, block by block.
OCR_OUTPUT_LINE_BLOCK = "line_block"  # INT32 [N]: per line, its block among the B blocks
OCR_OUTPUT_BLOCK_POLYGONS = "block_polygons"  # FP32 [B, 4, 2]: each block's box, original pixels
OCR_OUTPUT_BLOCK_PAGE = "block_page"  # INT32 [B]: per block, its page among the P pages read
OCR_OUTPUT_BLOCK_TYPE = "block_type"  # BYTES [B]: what it is, one of BLOCK_TYPES
# ("figure": a picture on a document page, a block with no lines, or text read in one)
BLOCK_TYPES = ("paragraph", "heading", "list", "table", "header", "footer", "caption", "figure")
(BLOCK_PARAGRAPH, BLOCK_HEADING, BLOCK_LIST, BLOCK_TABLE) = BLOCK_TYPES[:4]
(BLOCK_HEADER, BLOCK_FOOTER, BLOCK_CAPTION, BLOCK_FIGURE) = BLOCK_TYPES[4:]
# A "list" block's items each start with one of these (a bullet, a number, a letter), followed
# by whitespace and text: the server types blocks by them and clients split items at them.
LIST_MARKERS = (
    r"^([•·‣▪▫●○◦■□➢►▶✓✔*+\-–—])\s+(?=\S)",
    r"^(\d{1,3})([.)])\s+(?=\S)",
    r"^(\(?[a-zA-Z0-9]{1,3}\))\s+(?=\S)",
)
OCR_BLOCK_OUTPUTS = (
    OCR_OUTPUT_LINE_BLOCK,
    OCR_OUTPUT_BLOCK_POLYGONS,
    OCR_OUTPUT_BLOCK_PAGE,
    OCR_OUTPUT_BLOCK_TYPE,
)
# Word boxes (request parameter word_boxes=true; empty otherwise): one entry per word, grouped
# by line in line order, words in reading order within their line.
OCR_OUTPUT_WORD_TEXT = "word_text"  # BYTES [W]
OCR_OUTPUT_WORD_POLYGONS = "word_polygons"  # FP32 [W, 4, 2]: tl, tr, br, bl, original pixels
OCR_OUTPUT_WORD_SCORES = "word_scores"  # FP32 [W]
OCR_OUTPUT_WORD_LINE = "word_line"  # INT32 [W]: the index of its line among the N lines
OCR_WORD_OUTPUTS = (
    OCR_OUTPUT_WORD_TEXT,
    OCR_OUTPUT_WORD_POLYGONS,
    OCR_OUTPUT_WORD_SCORES,
    OCR_OUTPUT_WORD_LINE,
)
# Tables (request parameter tables=true; empty otherwise), top to bottom on each page, and their
# cells row by row. Rows and columns are the table's as read upright (page_rotation turned back).
OCR_OUTPUT_TABLE_PAGE = "table_page"  # INT32 [T]: per table, its page among the P pages read
OCR_OUTPUT_TABLE_POLYGONS = "table_polygons"  # FP32 [T, 4, 2]: each table's box, original pixels
OCR_OUTPUT_TABLE_GRID = "table_grid"  # INT32 [T, 2]: its rows and columns
OCR_OUTPUT_CELL_TABLE = "cell_table"  # INT32 [C]: per cell, its table among the T tables
OCR_OUTPUT_CELL_GRID = "cell_grid"  # INT32 [C, 4]: its row, column, row span, column span
OCR_OUTPUT_CELL_POLYGONS = "cell_polygons"  # FP32 [C, 4, 2]: each cell's box, original pixels
OCR_OUTPUT_CELL_TEXT = "cell_text"  # BYTES [C]: the text read in it ("" for an empty cell)
OCR_TABLE_OUTPUTS = (
    OCR_OUTPUT_TABLE_PAGE,
    OCR_OUTPUT_TABLE_POLYGONS,
    OCR_OUTPUT_TABLE_GRID,
    OCR_OUTPUT_CELL_TABLE,
    OCR_OUTPUT_CELL_GRID,
    OCR_OUTPUT_CELL_POLYGONS,
    OCR_OUTPUT_CELL_TEXT,
)
# the config's order
OCR_ALL_OUTPUTS = (
    OCR_OUTPUTS + OCR_PAGE_OUTPUTS + OCR_WORD_OUTPUTS + OCR_BLOCK_OUTPUTS + OCR_TABLE_OUTPUTS
)
# What ensemble_model answers, and the client says before sending, when given a document (what:
# "a PDF document", "a TIFF with 3 pages").
DOCUMENT_REFUSED = (
    f"{{what}}: {ENSEMBLE_MODEL} reads one image per call; send documents (PDFs, multi-page "
    f"TIFFs) to the `{OCR_MODEL}` model, which reads each page"
)
# Request parameters the client sets by name (the full list: config/requests.py).
WORD_BOXES = "word_boxes"
TABLES = "tables"
PAGE_ORIENTATION_PARAMETER = "page_orientation"  # "auto" or "off"
PDF_DPI = "pdf_dpi"
PDF_TEXT = "pdf_text"  # "auto", "layer" or "ocr"

# The best path (argmax class, its probability per time step) that the export appends to every
# recognizer: what text_recognition returns to the server's CTC decode.
BEST_CLASS = "best_class"  # INT64 [N, T]
BEST_SCORE = "best_score"  # FP32 [N, T]
