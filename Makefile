# SL5R Referee. `make run` serves the site on a fresh clone; `make test` is what CI runs.

PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8000
VENV ?= .venv
# The second test pass runs the database tests on this PostgreSQL server (Django creates and
# drops a `test_`-prefixed database next to the one named here).
SL5R_TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test
# What the PostgreSQL pass runs: the database tests, the fault tests and the cluster test,
# less those marked one_database (each says why the database makes no difference to it).
POSTGRES_TESTS := tests/referees tests/strategic_map tests/battles tests/abuse tests/faults tests/cluster
# pytest-xdist workers in each pass: one per core by default (`auto`; 0: one process). The
# tests that must share a worker are grouped in tests/conftest.py; figures in
# docs/development.md.
TEST_WORKERS ?= auto
XDIST = -n $(TEST_WORKERS) --dist loadgroup
# Each pass prints its slowest tests, so that a landing that got slower says which.
DURATIONS = --durations=15
# `make check`, the inner loop: lint, then the rules engine, the board, the services and the
# API, without the tests marked slow or browser (not yet timed: issue 28).
CHECK_TESTS := tests/rules tests/strategic_map tests/battles tests/referees tests/abuse \
	tests/test_api_errors.py tests/test_architecture.py tests/test_translations.py
CHECK_MARKERS := not slow and not browser
# Where `make test` writes the time each stage took, and prints it at the end.
STAGE_TIMES := artifacts/test-stages.txt
# The several-machines stories (tests/hosts: five network-namespace hosts, about 5 minutes
# that are mostly waiting for hosts, turns and pages) are a stage of their own, which
# `make test` runs beside the two pytest passes so that their waiting never holds one of
# the passes' workers; its output goes here and is printed at the end.
HOSTS_TESTS := tests/hosts
HOSTS_LOG := artifacts/test-hosts.log

# Every process the tests start (pytest's workers, servers, Celery workers, manage.py) keeps
# the compiled modules and pytest's rewritten test modules in __pycache__ (git ignores it):
# with PYTHONDONTWRITEBYTECODE set, as some machines set it, each of them compiled the whole
# project again, about 4 CPU-seconds a pytest worker (docs/development.md).
unexport PYTHONDONTWRITEBYTECODE

# `make cluster` keeps its secret key, logs and cluster.json here; CLUSTER_ARGS adds options
# (e.g. --no-demo, --asgi-ports 0,0, --concurrency 4).
CLUSTER_DIR ?= var/cluster
CLUSTER_ARGS ?=

BIN := $(VENV)/bin
PY := $(BIN)/python
# Reinstalls only when a requirements file changes; lives in the venv so that deleting the
# venv also forgets the installation.
STAMP := $(VENV)/requirements.stamp

.DEFAULT_GOAL := help
.PHONY: help install wheelhouse migrate demo run venue restore cluster cluster-stop haproxy test \
	stage test-sqlite test-postgres test-hosts migrations-check check lint fmt messages clean distclean

help:
	@echo "make run        create .venv, install, migrate, load the demo tournament, serve on :$(PORT)"
	@echo "make venue      the same, served to the phones on this machine's network (DEBUG off,"
	@echo "                a kept secret key, backups; HOST, PORT, VENUE_HOSTS, SITE_URL, TLS_CERT/KEY)"
	@echo "make restore BACKUP=FILE  continue a venue tournament from a backup (a file or a folder)"
	@echo "make cluster    the production shape on this machine, in the foreground (Ctrl-C stops):"
	@echo "                PostgreSQL, Redis, HAProxy on :$(PORT) before two ASGI processes,"
	@echo "                a Celery worker and one beat, kept by supervisord"
	@echo "                (CLUSTER_DIR=$(CLUSTER_DIR), CLUSTER_ARGS=...; installs HAProxy as root)"
	@echo "make cluster-stop  stop the cluster running in CLUSTER_DIR"
	@echo "make test       everything CI runs: lint, makemigrations --check, the whole suite on"
	@echo "                SQLite (make test-sqlite), the database tests on PostgreSQL"
	@echo "                (make test-postgres) and, beside both, the several-machines stories"
	@echo "                (make test-hosts); prints the time each stage took"
	@echo "make check      the inner loop: lint, then the rules, services and API tests"
	@echo "make lint       ruff check, ruff format --check, mypy and the import contracts only"
	@echo "make fmt        format and auto-fix with ruff"
	@echo "make demo       migrate and load the demo tournament (prints the judge login, join links)"
	@echo "make messages   update and compile the translations (needs GNU gettext)"
	@echo "make wheelhouse DIR=/media/usb/sl5r  the project and its packages on a USB stick, to"
	@echo "                install another laptop with no internet (make venue there, from that copy)"
	@echo "make clean      remove caches; make distclean also removes .venv, db.sqlite3 and var/"

$(PY):
	$(PYTHON) -m venv $(VENV)

# A folder of wheels in the project (`make wheelhouse` puts one there): everything is
# installed from it alone, with no package index (a second laptop at a venue without
# internet). WHEELHOUSE=DIR names another.
WHEELHOUSE ?= $(wildcard wheelhouse)
PIP_FROM = $(if $(WHEELHOUSE),--no-index --find-links $(WHEELHOUSE))

$(STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q $(PIP_FROM) -r requirements-dev.txt
	touch $@

install: $(STAMP)

# `make wheelhouse DIR=/media/usb/sl5r`: the project and every pinned package, built as
# wheels for this platform and Python, in DIR/sl5r-referee. On another laptop of the same
# kind (same OS, processor and Python 3.x) with no network: copy that folder, then
# `make venue` there installs from its wheelhouse/ alone.
wheelhouse: install
	@test -n "$(DIR)" || { echo "make wheelhouse DIR=/path/on/the/usb/stick: where to put it" >&2; exit 2; }
	rm -rf "$(DIR)/sl5r-referee"
	mkdir -p "$(DIR)/sl5r-referee"
	tar -c --exclude=./$(VENV) --exclude=./var --exclude=./.git --exclude='./db.sqlite3*' \
		--exclude=./artifacts --exclude=./wheelhouse --exclude=./staticfiles \
		--exclude='*/__pycache__' --exclude=./.mypy_cache --exclude=./.ruff_cache \
		--exclude=./.pytest_cache --exclude=./.hypothesis . | tar -x -C "$(DIR)/sl5r-referee"
	$(PY) -m pip wheel --disable-pip-version-check -q -r requirements-dev.txt \
		-w "$(DIR)/sl5r-referee/wheelhouse"
	@echo "The project and $$(ls "$(DIR)/sl5r-referee/wheelhouse" | wc -l) wheels are in $(DIR)/sl5r-referee."
	@echo "On the other laptop: copy that folder, cd into it, and run make venue (no network needed)."

migrate: install
	$(PY) manage.py migrate --noinput

# Loads the map and "Demo: Winter Court" once; later runs only print the join links again.
demo: migrate
	$(PY) manage.py loaddemo --base-url http://$(HOST):$(PORT)

# Daphne and, in the embedded setup (SL5R_CLOCK=inprocess), the turn clock in one process.
run: demo
	$(PY) manage.py serve --host $(HOST) --port $(PORT)

# `make run` for a venue's Wi-Fi (referees/management/commands/venue.py): migrates, loads the
# map and the demo, then serves every address of this machine on PORT. HOST, VENUE_HOSTS,
# SITE_URL, TLS_CERT/TLS_KEY, VENUE_DIR and VENUE_BACKUP_DIR are read from the environment.
# Every interface unless HOST is given (HOST's 127.0.0.1 above is `make run`'s default).
venue: install
	SL5R_VENUE=1 HOST=$(if $(filter file,$(origin HOST)),0.0.0.0,$(HOST)) PORT=$(PORT) \
		$(PY) manage.py venue

# A venue backup (a file, or a folder: its newest) in place of this laptop's database and key;
# then `make venue` goes on with the clock paused (referees/venue/restore.py).
restore: install
	@test -n "$(BACKUP)" || { echo "make restore BACKUP=path/to/sl5r-backup-….zip (or a folder)" >&2; exit 2; }
	$(PY) manage.py restore "$(BACKUP)"

# The production shape: sl5r/cluster.py sets up, then supervisord (deploy/supervisord.conf)
# runs HAProxy (deploy/haproxy/haproxy.cfg), two ASGI processes, a Celery worker and one
# beat. Configured by DATABASE_URL, REDIS_URL, SECRET_KEY... (docs/deployment.md, "Configuration").
cluster: install haproxy
	$(PY) -m sl5r.cluster --dir $(CLUSTER_DIR) --port $(PORT) $(CLUSTER_ARGS)

cluster-stop:
	$(PY) -m sl5r.cluster stop --dir $(CLUSTER_DIR)

# The balancer comes from Debian's packages; installed here when missing (as root), as
# .ci/run does.
haproxy:
	@command -v haproxy >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing HAProxy (apt-get install haproxy)"; \
			apt-get update -q </dev/null && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy </dev/null; \
		else \
			echo "make cluster needs HAProxy: sudo apt-get install haproxy" >&2; exit 2; \
		fi; }

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: install
	@mkdir -p $(dir $(STAGE_TIMES)); : > $(STAGE_TIMES)
	@$(MAKE) --no-print-directory stage STAGE=lint
	@$(MAKE) --no-print-directory stage STAGE=migrations-check
	@$(MAKE) --no-print-directory stage STAGE=test-hosts > $(HOSTS_LOG) 2>&1 </dev/null & hosts=$$!; \
	status=0; \
	$(MAKE) --no-print-directory stage STAGE=test-sqlite || status=$$?; \
	$(MAKE) --no-print-directory stage STAGE=test-postgres || status=$$?; \
	echo "make test: waiting for make test-hosts, run beside the passes (its output follows)"; \
	wait $$hosts || status=$$?; \
	cat $(HOSTS_LOG); \
	echo "make test: the time each stage took"; cat $(STAGE_TIMES); \
	exit $$status

# One stage of `make test`, timed into STAGE_TIMES. A failed test pass does not stop the
# others, so that one CI run reports every failure; a failed lint stage stops make test.
stage:
	@start=$$(date +%s); status=0; $(MAKE) --no-print-directory $(STAGE) || status=$$?; \
	printf '%-17s %5d s%s\n' "$(STAGE)" "$$(( $$(date +%s) - start ))" \
		"$$([ $$status -eq 0 ] || echo '  FAILED')" >> $(STAGE_TIMES); \
	if [ $$status -ne 0 ]; then echo "make test: the time each stage took"; cat $(STAGE_TIMES); fi; \
	exit $$status

migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

# The whole suite on SQLite (a WAL file per worker), spread over TEST_WORKERS workers, less
# the several-machines stories (make test-hosts).
test-sqlite: install
	$(BIN)/pytest $(XDIST) $(DURATIONS) --ignore=$(HOSTS_TESTS)

# The several-machines stories in one process of their own: their five hosts are built once
# for the module, and every story is mostly waiting (make test runs this beside the passes).
test-hosts: install
	$(BIN)/pytest $(DURATIONS) $(HOSTS_TESTS)

check: lint
	$(BIN)/pytest $(XDIST) -q $(CHECK_TESTS) -m '$(CHECK_MARKERS)'

# The database tests again with PostgreSQL as Django's database (the pass above uses SQLite):
# row locks, the racing clocks, a real Celery worker and beat. pytest-django never prompts;
# --create-db drops a test database left over from an interrupted run. Without PostgreSQL
# the pass is skipped, unless CI is set: then it fails.
test-postgres: install
	@$(PY) -c 'import sys; from tests.service_checks import in_ci, postgres_problem; \
		problem = postgres_problem(sys.argv[1]); \
		problem and print(f"test-postgres: PostgreSQL is not available: {problem}", file=sys.stderr); \
		sys.exit(1 if problem and in_ci() else 3 if problem else 0)' '$(SL5R_TEST_POSTGRES_URL)'; \
	status=$$?; \
	if [ $$status -eq 3 ]; then echo "test-postgres: skipped (CI is not set)"; exit 0; fi; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	echo "DATABASE_URL=$(SL5R_TEST_POSTGRES_URL) pytest $(POSTGRES_TESTS) -m 'not one_database'"; \
	DATABASE_URL='$(SL5R_TEST_POSTGRES_URL)' $(BIN)/pytest $(XDIST) $(DURATIONS) $(POSTGRES_TESTS) \
		-m 'not one_database' -q --create-db

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
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm var
