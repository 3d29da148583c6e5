# qlin: `make demo` and `make test` do all set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Python writes and reads its bytecode caches: every qlin process a test starts would
# otherwise compile qlin's sources again (0.76 s -> 0.44 s a start on a small model)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test remeasure bench fuzz lint fixtures clean target-data

# The install: the venv is made without pip (ensurepip takes about 8 s on this 2-core machine),
# the system's pip puts uv in it (pip 22.3 or later: --python), and uv installs the pinned set and
# pip itself in parallel (a clean .venv: about 6 s for the venv and uv, against 12 s for a venv with
# pip and pip installing uv; uv's install 12-16 s against pip's 29-40 s). Where that cannot be done
# (no pip for the system's Python, no uv wheel), a venv with pip installs it all. Neither compiles
# every module of every package it installs (openvino's thousands among them: pip took 92 s with
# compiling, 58 s without); Python compiles the ones a run imports, once.
# uv depends on nothing: pip takes its wheel alone, resolving nothing (3.0-3.4 s against 3.4-5.0 s).
PIP_INSTALL := $(BIN)/python -m pip install -q --no-compile -c constraints.txt
UV_INSTALL := $(BIN)/uv pip install -q --python $(BIN)/python -c constraints.txt
VENV_WITH_UV := $(PY) -m venv --without-pip $(VENV) && $(PY) -m pip --python $(BIN)/python install -q --no-compile --disable-pip-version-check --no-deps --only-binary=:all: uv 2>/dev/null
INSTALL = { $(VENV_WITH_UV) && $(UV_INSTALL) pip $(1); } || { $(PY) -m venv $(VENV) && $(PIP_INSTALL) $(1); }

$(STAMP): pyproject.toml constraints.txt
	$(call INSTALL,-e '.[dev]')
	touch $(STAMP)

# qlin and its run-time dependencies only (no test tools, no runtimes): what `make demo` needs
RUNTIME_STAMP := $(VENV)/.runtime-stamp
$(RUNTIME_STAMP): pyproject.toml constraints.txt
	$(call INSTALL,-e .)
	touch $(RUNTIME_STAMP)

demo: $(RUNTIME_STAMP)
	@echo "== qlin check on the bundled clean models (expect: no errors)"
	$(BIN)/qlin check fixtures/models/clean
	@echo
	@echo "== qlin check on the bundled broken models (expect: errors, exit 1)"
	$(BIN)/qlin check fixtures/models/broken; test $$? -eq 1
	@echo
	@echo "== qlin convert: opset 13 -> 21 and to com.microsoft, proven bit for bit (dry run)"
	$(BIN)/qlin convert fixtures/models/clean/per_channel_chain.onnx --to-opset 21 --to-domain com.microsoft --dry-run
	@echo
	@echo "== qlin convert: int4 blocked weights cannot go to opset 19 (expect: refusal, exit 1)"
	$(BIN)/qlin convert fixtures/models/clean/blocked_int4.onnx --to-opset 19 --dry-run; test $$? -eq 1
	@echo
	@echo "qlin is installed in $(VENV): run $(BIN)/qlin check MODELS (or: source $(BIN)/activate; qlin --help)"

# Two workers (pytest-xdist); one that runs out of tests takes some of the other's
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal

# The target data against the onnxruntime and openvino installed here: every probe key run
# again in each (about 6 minutes on 2 cores), and the runs `make test` reads from tests/data/
# (QLIN_WRITE_RECORDED=1 rewrites them); `make test` holds the data to the probes by digest
remeasure: $(STAMP)
	$(BIN)/python -m pytest -q -m remeasure -p no:randomly -p no:xdist

# the `hub` extra (Dask) for bench/bench_hub.py only: make test and make demo never install it
HUB_STAMP := $(VENV)/.hub-stamp
$(HUB_STAMP): $(STAMP)
	$(call INSTALL,-e '.[dev,hub]')
	touch $(HUB_STAMP)

bench: $(HUB_STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; QLIN_MATRIX=full $(BIN)/python $$f || exit 1; done
	@echo "== the full target matrix against onnxruntime and openvino"
	$(BIN)/python -m pytest -q -m targets_full

fuzz: $(STAMP)
	QLIN_FUZZ_EXAMPLES=5000 $(BIN)/python -m pytest -m fuzz -p no:randomly
	QLIN_VALIDITY_BASES=all $(BIN)/python -m pytest -q -p no:randomly tests/test_validity_differential.py

# ruff, and mypy --strict on the public API and a caller of it (tests/test_api_types.py; seconds)
lint: $(STAMP)
	$(BIN)/ruff check .
	QLIN_MYPY=1 $(BIN)/python -m pytest -q -p no:xdist -p no:randomly tests/test_api_types.py

# Measure a released runtime and write its target data: make target-data RUNTIME=onnxruntime VERSION=1.33.0
# (and records the probe set it was measured on, tests/data/probe_set.json, which make test reads)
target-data: $(STAMP)
	$(BIN)/python tools/gen_target_data.py $(RUNTIME) $(VERSION)
	$(BIN)/python tools/probe_models.py --record

fixtures: $(STAMP)
	$(BIN)/python fixtures/make_fixtures.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
