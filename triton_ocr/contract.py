"""Names shared by the server, the client and the tools: every model of the repository, and the
tensors of the two entry points callers reach. No dependencies, so the light client has it.

tests/config/test_repository.py checks them against every pack's config.pbtxt files.
"""

# The models of the repository, in the order a request passes them (each folder's config.pbtxt
# `name`).
DETECTION_PREPROCESSING = "detection_preprocessing"  # also holds the decode limits
TEXT_DETECTION = "text_detection"
DETECTION_POSTPROCESSING = "detection_postprocessing"
GROUPED_RECOGNITION = "grouped_recognition"
TEXT_ORIENTATION = "text_orientation"  # the 0/180-degree classifier, shared by every pack
TEXT_RECOGNITION = "text_recognition"
RECOGNITION_POSTPROCESSING = "recognition_postprocessing"
ENSEMBLE_MODEL = "ensemble_model"
OCR_MODEL = "ocr"
MODELS = (
    DETECTION_PREPROCESSING,
    TEXT_DETECTION,
    DETECTION_POSTPROCESSING,
    GROUPED_RECOGNITION,
    TEXT_ORIENTATION,
    TEXT_RECOGNITION,
    RECOGNITION_POSTPROCESSING,
    ENSEMBLE_MODEL,
    OCR_MODEL,
)
ENTRY_POINTS = (ENSEMBLE_MODEL, OCR_MODEL)  # the models callers reach
NETWORKS = (TEXT_DETECTION, TEXT_RECOGNITION, TEXT_ORIENTATION)  # the ONNX models

# `ensemble_model`: one encoded image per call (the Triton guide's Part 5 contract).
INPUT_IMAGE = "input_image"  # UINT8 [1, nbytes]: the encoded file, batch of one
OUTPUT_TEXT = "recognized_text"  # BYTES [1, N]
OUTPUT_POLYGONS = "text_polygons"  # FP32 [1, N, 4, 2]: tl, tr, br, bl in original pixels
OUTPUT_SCORES = "text_scores"  # FP32 [1, N]
OUTPUTS = (OUTPUT_TEXT, OUTPUT_POLYGONS, OUTPUT_SCORES)

# `ocr`: several images per request, request parameters (README), and one entry per text with
# the index of the image it belongs to.
OCR_INPUT_IMAGES = "images"  # BYTES [n_images]: encoded files
OCR_OUTPUT_IMAGE_INDEX = "image_index"  # INT32 [N]
OCR_OUTPUTS = (OCR_OUTPUT_IMAGE_INDEX, OUTPUT_TEXT, OUTPUT_POLYGONS, OUTPUT_SCORES)

# The best path (argmax class, its probability per time step) that the export appends to every
# recognizer: what text_recognition returns to the server's CTC decode.
BEST_CLASS = "best_class"  # INT64 [N, T]
BEST_SCORE = "best_score"  # FP32 [N, T]
