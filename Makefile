# One entry point for people, the README and CI. Every target uses the project's .venv.
# `make setup` creates it; the others assume it exists.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: help setup test test-fast lint format types docs check bench demo messages clean

help:
	@echo "make setup      create .venv and install the project with its dev tools"
	@echo "make demo       run the whole system with demo data (web, worker, beat, Redis)"
	@echo "make test       the README's test command: every test, against a real Redis"
	@echo "make test-fast  the suite on 2 processes, browser tests left out"
	@echo "make lint       ruff check, ruff format --check, the layer contracts (lint-imports)"
	@echo "make format     ruff format and ruff check --fix"
	@echo "make types      mypy over the whole project"
	@echo "make docs       build the docs site (mkdocs build --strict: broken links fail)"
	@echo "make check      lint + types + test + docs (what CI runs before the extra passes)"
	@echo "make bench      print the performance figures (project against baselines)"
	@echo "make messages   refresh and compile the zh_Hans translations (needs gettext)"

setup:
	$(PY) -m venv $(VENV) && $(BIN)/pip install -q -e ".[dev]"

demo:
	$(PY) -m venv $(VENV) && $(BIN)/pip install -q -e . && $(BIN)/python manage.py demo

test:
	$(PY) -m venv $(VENV) && $(BIN)/pip install -q -e ".[dev]" && $(BIN)/pytest -n 2

test-fast:
	$(BIN)/pytest -q -n 2 -m "not browser"

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo

format:
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

types:
	$(BIN)/mypy .

# Into site/ (git-ignored); --strict fails on a broken link or anchor.
docs:
	$(BIN)/mkdocs build --strict --site-dir site

check: lint types test docs

# Every row of issue 12's table, project against baseline (~5 min; BENCH_ARGS=--quick ~1 min).
bench:
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

messages:
	$(BIN)/python manage.py makemessages -l zh_Hans -d django --ignore=.venv --ignore=staticfiles
	$(BIN)/python manage.py makemessages -l zh_Hans -d djangojs --ignore=.venv --ignore=staticfiles
	$(BIN)/python manage.py compilemessages --ignore=.venv

clean:
	rm -rf .pytest_cache .ruff_cache .mypy_cache test-artifacts site
