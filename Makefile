# make demo: set up, upgrade the embedded SQLite store, run the day's stages, then the API.
# make test: set up (Debian's chromium for the browser tests too, when root), lint, run the whole test suite.
# make check: lint and the quick lane of tests (under 2 minutes; docs/testing.md).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
export AIRFLOW_HOME ?= $(CURDIR)/var/airflow
export AIRFLOW__CORE__LOAD_EXAMPLES = False
export AIRFLOW__CORE__DAGS_FOLDER = $(CURDIR)/dags
export AIRFLOW__CORE__PARALLELISM = 4
# Python writes its bytecode caches (__pycache__/, ignored by git) even where the machine's
# environment sets PYTHONDONTWRITEBYTECODE: the suite starts a few hundred Python processes
# (stage kernels, the CLI, Airflow's components), each of which would otherwise compile the
# project's modules again, and every pytest worker would rewrite every test module's asserts
# again (docs/testing.md).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install install-browser demo test check lint lab airflow airflow-prod airflow-prod-stop airflow-prod-status report-images docs-runs docs-research clean

# pip compiles the installed packages' bytecode one file after another (about 60 s of a
# fresh set-up on 2 cores); compileall does it on every core. As with pip, a file that does
# not compile (a template some package ships) is left as it is.
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]'
	$(BIN)/python -c "import compileall, sys; compileall.compile_dir(sys.argv[1], quiet=2, workers=0)" $(VENV)/lib
	touch $@

# make demo MARKET=../shared/data/nse-kenya/daily replays that real history instead of the simulator.
demo: install
	$(BIN)/marketintel demo $(if $(MARKET),--market "$(MARKET)")

# One pytest worker per core, each taking whole files (a module's fixtures and a stage
# notebook's cells stay on one worker), the files with tests marked slow first (conftest.py);
# TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
test: install install-browser lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The quick lane, under 2 minutes on 2 cores (docs/testing.md): ruff's lint and format check,
# then the tests that need no server, data set, browser, notebooks' day or Airflow (conftest.py
# marks the others `integration`), the layer contract (tests/test_layers.py) among them.
check: install lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not integration" -q tests

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The browser tests (tests/docs/test_browser.py) drive Debian's chromium through its
# chromedriver; installed here when missing and running as root. Elsewhere those tests skip
# with the reason, except under CI=true, where they fail.
install-browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium and chromium-driver for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	else echo "chromium or chromedriver missing and not root: the browser tests will skip"; fi

# JupyterLab is the `lab` extra, installed here on first use and not by `make install`
# (pyproject.toml says why).
lab: $(VENV)/.lab-installed
	$(BIN)/jupyter lab notebooks/

$(VENV)/.lab-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[dev,lab]'
	touch $@

# Airflow 3 standalone with the settings exported above (ops/airflow_standalone.sh): the
# virtualenv's bin first on PATH, since standalone starts its components by the bare name
# `airflow`; Ctrl-C stops every process it started before make returns.
airflow: install
	AIRFLOW_STANDALONE_VENV="$(abspath $(VENV))" exec ops/airflow_standalone.sh

# The production profile on this machine (docs/production.md): Postgres metadata database,
# CeleryExecutor on Redis, scheduler, dag-processor, api-server, triggerer and two Celery
# workers, the store on Postgres. AIRFLOW_PROD_* variables change ports, databases, workers.
airflow-prod: install
	ops/airflow_prod.sh start

airflow-prod-stop:
	ops/airflow_prod.sh stop

airflow-prod-status:
	ops/airflow_prod.sh status

# The executed example day under docs/runs/ (committed; .gitignore ignores only the root
# /runs/): the demo on a throwaway store in var/docs-runs, its runs folder copied over.
DOCS_RUNS := $(CURDIR)/var/docs-runs
docs-runs: install
	rm -rf $(DOCS_RUNS) && mkdir -p $(DOCS_RUNS)
	cd $(DOCS_RUNS) && MARKETINTEL_NO_DOTENV=1 MARKETINTEL_DATABASE_URL=sqlite:///$(DOCS_RUNS)/store.db \
		MARKETINTEL_DATA_DIR=$(DOCS_RUNS)/data MARKETINTEL_MODELS_DIR=$(DOCS_RUNS)/models \
		MARKETINTEL_REPORTS_DIR=$(DOCS_RUNS)/reports MARKETINTEL_SECRETS_DIR=$(DOCS_RUNS)/secrets \
		MARKETINTEL_RUNS_DIR=$(DOCS_RUNS)/runs $(CURDIR)/$(BIN)/marketintel demo --no-serve
	rm -rf docs/runs && cp -r $(DOCS_RUNS)/runs docs/runs

# The research notebooks executed, under docs/research/ (committed): on the store that
# docs-runs leaves in var/docs-runs and, when present, the shared NSE daily files
# (MARKETINTEL_SHARED_DATA, default ../shared/data). About a minute each.
docs-research: install
	@test -f $(DOCS_RUNS)/store.db || { echo "run make docs-runs first: $(DOCS_RUNS) has no store"; exit 1; }
	mkdir -p docs/research
	for notebook in notebooks/research/*.ipynb; do \
		MARKETINTEL_NO_DOTENV=1 MARKETINTEL_DATABASE_URL=sqlite:///$(DOCS_RUNS)/store.db \
		MARKETINTEL_DATA_DIR=$(DOCS_RUNS)/data MARKETINTEL_MODELS_DIR=$(DOCS_RUNS)/models HF_HUB_OFFLINE=1 \
		$(BIN)/papermill --no-progress-bar -k python3 --cwd notebooks/research $$notebook docs/research/$$(basename $$notebook) \
		|| exit 1; \
	done

# Page images of the demo's reports for docs/reports.md (reports/page_images.py: pdfplumber
# renders them, no system package). REPORTS: the folder the demo wrote them to.
REPORTS ?= var/reports
report-images: install
	@test -f $(REPORTS)/quant-briefing.pdf || { echo "run make demo first: $(REPORTS)/ has no reports"; exit 1; }
	mkdir -p docs/reports
	rm -f docs/reports/quant-briefing-*.png docs/reports/compliance-report-*.png  # a report can lose a page
	$(BIN)/python -m reports.page_images $(REPORTS)/quant-briefing.pdf docs/reports/quant-briefing
	$(BIN)/python -m reports.page_images $(REPORTS)/compliance-report.pdf docs/reports/compliance-report

clean:
	rm -rf $(VENV) var runs .pytest_cache
