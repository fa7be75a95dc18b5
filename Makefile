# make demo: set up, upgrade the embedded SQLite store, run the day's stages, then the API.
# make test: set up, run the whole test suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
export AIRFLOW_HOME ?= $(CURDIR)/var/airflow
export AIRFLOW__CORE__LOAD_EXAMPLES = False
export AIRFLOW__CORE__DAGS_FOLDER = $(CURDIR)/dags
export AIRFLOW__CORE__PARALLELISM = 4

.PHONY: install demo test lab airflow clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: install
	$(BIN)/marketintel demo

test: install
	$(BIN)/python -m pytest

lab: install
	$(BIN)/jupyter lab notebooks/

airflow: install
	$(BIN)/airflow db migrate
	$(BIN)/airflow standalone

clean:
	rm -rf $(VENV) var runs .pytest_cache
