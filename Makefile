# make demo: set up, upgrade the embedded SQLite store, run the day's stages, then the API.
# make test: set up, run the whole test suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
export AIRFLOW_HOME ?= $(CURDIR)/var/airflow
export AIRFLOW__CORE__LOAD_EXAMPLES = False
export AIRFLOW__CORE__DAGS_FOLDER = $(CURDIR)/dags
export AIRFLOW__CORE__PARALLELISM = 4

.PHONY: install demo test lab airflow report-images clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# make demo MARKET=../shared/data/nse-kenya/daily replays that real history instead of the simulator.
demo: install
	$(BIN)/marketintel demo $(if $(MARKET),--market "$(MARKET)")

test: install
	$(BIN)/python -m pytest

lab: install
	$(BIN)/jupyter lab notebooks/

airflow: install
	$(BIN)/airflow db migrate
	$(BIN)/airflow dags reserialize
	$(BIN)/airflow standalone

# Page images of the demo's reports for the README (needs pdftoppm: Debian's poppler-utils).
report-images:
	@test -f var/reports/quant-briefing.pdf || { echo "run make demo first: var/reports/ has no reports"; exit 1; }
	mkdir -p docs/reports
	pdftoppm -r 70 -png var/reports/quant-briefing.pdf docs/reports/quant-briefing
	pdftoppm -r 70 -png var/reports/compliance-report.pdf docs/reports/compliance-report

clean:
	rm -rf $(VENV) var runs .pytest_cache
