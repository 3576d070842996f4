# The OCR service in NVIDIA's Triton container (Triton 2.51, the same server as `triton-ocr serve`).
#   docker build -t triton-ocr .
#   docker run --rm --shm-size=1g -p 8000:8000 -p 8001:8001 -p 8002:8002 triton-ocr
# --shm-size: Triton's Python models pass whole images through /dev/shm; Docker's 64 MB default
# is too small for large photos.
FROM nvcr.io/nvidia/tritonserver:24.10-py3

WORKDIR /opt/triton-ocr

# The package (pure pre/post-processing, model adapters' imports, export and client code).
COPY pyproject.toml README.md ./
COPY triton_ocr ./triton_ocr
COPY preprocessing ./preprocessing
COPY postprocessing ./postprocessing
COPY export ./export
COPY client ./client
# hadolint ignore=DL3013
RUN python3 -m pip install --no-cache-dir .

# The model repository: configs + adapters from the project, ONNX files fetched at build time.
# The container's own C++ onnxruntime backend serves text_detection / text_recognition.
COPY repository /models
RUN triton-ocr export ppocr --repository /models

EXPOSE 8000 8001 8002
ENTRYPOINT ["tritonserver", "--model-repository=/models", \
            "--backend-config=python,shm-default-byte-size=16777216", \
            "--backend-config=python,shm-growth-byte-size=16777216"]
