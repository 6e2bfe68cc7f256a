# Two commands: `make run` starts the product on embedded defaults; `make test` passes the suite.
# Both bootstrap everything they need from a fresh machine (package registries only).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: run test bootstrap lint format chromium bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[local,dev]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

bootstrap: $(STAMP)

run: bootstrap
	$(PY) manage.py serve

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# mypy covers the pure engine modules (no Django): selection, importers, the model gateway.
MYPY_PATHS := worldbook/engine roleplay/llm/types.py roleplay/llm/errors.py \
	roleplay/llm/provider.py roleplay/llm/transcript.py roleplay/actor.py console/tokens.py

lint: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy $(MYPY_PATHS)

format: bootstrap
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test: bootstrap chromium lint
	$(PY) manage.py check --fail-level WARNING
	$(PY) -m pytest -q

clean:
	rm -rf var/
