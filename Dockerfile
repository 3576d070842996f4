# The OCR service in NVIDIA's Triton container (Triton 2.51, the same server as `triton-ocr serve`).
#   docker build -t triton-ocr .
#   docker run --rm --shm-size=1g -e TRITON_OCR_HOST=0.0.0.0 \
#     -p 127.0.0.1:8000:8000 -p 127.0.0.1:8001:8001 -p 127.0.0.1:8002:8002 triton-ocr
# --shm-size: Triton's Python models pass whole images through /dev/shm; Docker's 64 MB default
# is too small for large photos.
# Locked down by default: the server binds to loopback unless TRITON_OCR_HOST says otherwise
# (inside a container that means 0.0.0.0, or nothing reaches it), and model load/unload, shared
# memory, trace and logging APIs answer only to the key in TRITON_OCR_ADMIN_KEY (unset: closed).
# Extra arguments go to `triton-ocr serve`, e.g. `triton-ocr --pack east-str`.
FROM nvcr.io/nvidia/tritonserver:24.10-py3

WORKDIR /opt/triton-ocr

# The package (pure pre/post-processing, model adapters' imports, export and client code), its
# dependencies from the lock (exact versions, hash-checked; the container's Python is 3.10), then
# the package itself without resolving anything.
COPY pyproject.toml README.md ./
COPY locks/runtime.txt ./locks/runtime.txt
COPY triton_ocr ./triton_ocr
COPY preprocessing ./preprocessing
COPY postprocessing ./postprocessing
COPY export ./export
COPY client ./client
# hadolint ignore=DL3013
RUN python3 -m pip install --no-cache-dir --require-hashes --no-deps -r locks/runtime.txt \
    && python3 -m pip install --no-cache-dir --no-deps --no-build-isolation .

# The model repository: configs + adapters from the project, ONNX files fetched at build time.
# The container's own C++ onnxruntime backend serves text_detection / text_recognition.
COPY repository /models
# The PP-OCR packs: ppocr-v6 (the default), ppocr-v6-tiny, the fast one, ppocr-v6-int8, its INT8
# recognizer, and ppocr, the lighter one (`--pack ppocr-v6-tiny`, `--pack ppocr-v6-int8`, ...).
RUN triton-ocr export ppocr-v6 --repository /models \
    && triton-ocr export ppocr-v6-tiny --repository /models \
    && triton-ocr export ppocr-v6-int8 --repository /models \
    && triton-ocr export ppocr --repository /models

EXPOSE 8000 8001 8002 8080
# The container's tritonserver and backends with the same flags as `triton-ocr serve`, under its
# supervisor (a model whose stub process dies is reloaded). `docker stop -t 75`: serve drains the
# entry points (their requests finish, at most 30 s), then Triton stops (killed after 40 s).
ENTRYPOINT ["triton-ocr", "serve", "--container", "--repository", "/models"]
