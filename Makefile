# Two commands on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint export serve clean

# Create the virtual environment, install the package with the local Triton runtime and the
# dev tools, and make sure the Python backend stub can run (installs libpython if missing).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/triton-ocr doctor --fix
	touch $(STAMP)

setup: $(STAMP)

# Export the ppocr pack, start Triton, OCR a rendered sample, print the text, stop.
demo: setup
	$(BIN)/triton-ocr demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Unit tests plus end-to-end tests against the real Triton server.
test: lint
	$(BIN)/pytest

export: setup
	$(BIN)/triton-ocr export ppocr

serve: export
	$(BIN)/triton-ocr serve

clean:
	rm -rf $(VENV) repository/*/1/model.onnx
