# The two commands of the README. Each sets up what it needs on a fresh machine.
#   make site   build the sample site from sample_evidence/ into site/ (installs what ikreport needs)
#   make test   ruff, mypy, then the whole test suite (installs the test tools and system packages)
#   make check  ruff, mypy, then every test but the browser, crash-trial and fuzz groups, in parallel
#   make screenshots   docs/screenshots/ from the committed site/, history and changelog from a temp copy (Chromium)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: site test check lint hooks setup setup-test sample-evidence clean screenshots

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(BIN)/.installed-test: $(BIN)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,s3]'
	touch $@

setup: $(BIN)/.installed hooks

setup-test: $(BIN)/.installed-test hooks

# the repository's commit-msg hook, where this is a git checkout
hooks:
	@if [ -d .git ] || [ -f .git ]; then git config core.hooksPath .githooks; fi

site: setup
	$(BIN)/ikreport build sample_evidence -o site

lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	bash scripts/setup_system.sh
	$(BIN)/python -m pytest

check: lint
	$(BIN)/python -m pytest -q -n auto -m "not browser and not crash and not fuzz"

screenshots: setup-test
	bash scripts/setup_system.sh
	$(BIN)/python scripts/screenshots.py

sample-evidence: setup
	IK=$(BIN)/ikreport bash scripts/make_sample_evidence.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
