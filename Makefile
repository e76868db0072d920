# SL5R Referee. `make run` serves the site on a fresh clone; `make test` is what CI runs.

PYTHON ?= python3
PORT ?= 8000
VENV ?= .venv

BIN := $(VENV)/bin
PY := $(BIN)/python
# Reinstalls only when a requirements file changes; lives in the venv so that deleting the
# venv also forgets the installation.
STAMP := $(VENV)/requirements.stamp

.DEFAULT_GOAL := help
.PHONY: help install migrate demo run test lint fmt messages clean distclean

help:
	@echo "make run        create .venv, install, migrate, load the demo data, serve on :$(PORT)"
	@echo "make test       ruff, ruff format --check, mypy, makemigrations --check, pytest"
	@echo "make lint       ruff check, ruff format --check and mypy only"
	@echo "make fmt        format and auto-fix with ruff"
	@echo "make demo       migrate and load the demo data (for now: the bundled map)"
	@echo "make messages   update and compile the translations (needs GNU gettext)"
	@echo "make clean      remove caches; make distclean also removes .venv and db.sqlite3"

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

# The demo tournament comes later; for now the demo is the bundled Rokugan map.
demo: migrate
	$(PY) manage.py loadmap

run: demo
	$(BIN)/daphne -b 127.0.0.1 -p $(PORT) sl5r.asgi:application

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(PY) manage.py makemigrations --check --dry-run
	$(BIN)/pytest

fmt: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

messages: install
	$(PY) manage.py makemessages -l ru --no-location \
		--ignore=.venv --ignore=tests --ignore=sl5r/rules --ignore=docs --ignore=benchmarks \
		--ignore=staticfiles --ignore=artifacts
	$(PY) manage.py compilemessages -l ru --ignore=.venv

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis staticfiles artifacts
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm
