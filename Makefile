# The two commands of the README. Each sets up what it needs on a fresh machine.
#   make site   build the sample site from sample_evidence/ into site/
#   make test   run the whole test suite
#   make screenshots   docs/screenshots/ from the committed site/, history and changelog from a temp copy (Chromium)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: site test setup sample-evidence clean screenshots

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/.installed

site: setup
	$(BIN)/ikreport build sample_evidence -o site

test: setup
	bash scripts/setup_system.sh
	$(BIN)/python -m pytest

screenshots: setup
	bash scripts/setup_system.sh
	$(BIN)/python scripts/screenshots.py

sample-evidence: setup
	IK=$(BIN)/ikreport bash scripts/make_sample_evidence.sh

clean:
	rm -rf $(VENV) .pytest_cache
