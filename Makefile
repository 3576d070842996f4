# Two commands on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# A second environment with the heavy converters (TensorFlow, tf2onnx, torch) for the east-str
# export and its tests; the serving environment never pulls them.
EXPORT_VENV ?= .venv-export
EXPORT_STAMP := $(EXPORT_VENV)/.installed
# The benchmark's environment: the server plus RapidOCR as the in-process baseline.
BENCH_VENV ?= .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

.PHONY: setup setup-export demo test lint bench export serve clean

# Create the virtual environment, install the package with the local Triton runtime and the
# dev tools, and make sure the Python backend stub can run (installs libpython if missing).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/triton-ocr doctor --fix
	touch $(STAMP)

$(EXPORT_STAMP): pyproject.toml
	$(PYTHON) -m venv $(EXPORT_VENV)
	$(EXPORT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(EXPORT_VENV)/bin/python -m pip install --quiet -e ".[dev,export]"
	touch $(EXPORT_STAMP)

$(BENCH_STAMP): pyproject.toml
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e ".[serve,bench]"
	$(BENCH_VENV)/bin/python -m pip install --quiet --no-deps rapidocr-onnxruntime==1.4.4
	touch $(BENCH_STAMP)

setup: $(STAMP)

setup-export: $(STAMP) $(EXPORT_STAMP)

# Export the ppocr pack, start Triton, OCR a rendered sample, print the text, stop.
demo: setup
	$(BIN)/triton-ocr demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Unit tests and end-to-end tests against the real Triton server (ppocr), then the east-str
# export and its end-to-end tests in the converters' environment.
test: lint setup-export
	$(BIN)/pytest --ignore=tests/export
	TRITON_OCR_EXPORT_TESTS=1 $(EXPORT_VENV)/bin/pytest tests/export

# The benchmark (several minutes): results and chart in bench-results/.
bench: $(STAMP) $(BENCH_STAMP)
	$(BENCH_VENV)/bin/triton-ocr bench $(BENCH_ARGS)

export: setup
	$(BIN)/triton-ocr export ppocr

serve: export
	$(BIN)/triton-ocr serve

clean:
	rm -rf $(VENV) $(EXPORT_VENV) $(BENCH_VENV) repository/*/1/*.onnx
