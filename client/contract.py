"""Tensor names of `ensemble_model`, as declared in repository/ensemble_model/config.pbtxt.

The client cannot read the server's files, so it keeps these names; tests/unit/test_repository.py
(test_client_contract_matches_ensemble) checks them against every pack's config.
"""

MODEL_NAME = "ensemble_model"
INPUT_IMAGE = "input_image"  # UINT8 [1, nbytes]: the encoded file, batch of one
OUTPUT_TEXT = "recognized_text"  # BYTES [1, N]
OUTPUT_POLYGONS = "text_polygons"  # FP32 [1, N, 4, 2]: tl, tr, br, bl in original pixels
OUTPUT_SCORES = "text_scores"  # FP32 [1, N]
OUTPUTS = (OUTPUT_TEXT, OUTPUT_POLYGONS, OUTPUT_SCORES)

# The BLS entry point: several images per request, request parameters (README), and one entry
# per text with the index of the image it belongs to.
OCR_MODEL_NAME = "ocr"
OCR_INPUT_IMAGES = "images"  # BYTES [n_images]: encoded files
OCR_OUTPUT_IMAGE_INDEX = "image_index"  # INT32 [N]
OCR_OUTPUTS = (OCR_OUTPUT_IMAGE_INDEX, OUTPUT_TEXT, OUTPUT_POLYGONS, OUTPUT_SCORES)

ENTRY_POINTS = (MODEL_NAME, OCR_MODEL_NAME)  # the models callers reach

# Whose config holds the decode limits (max_image_bytes, max_image_pixels) the client applies
# before sending.
DECODE_MODEL_NAME = "detection_preprocessing"
