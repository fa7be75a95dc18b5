"""Session-wide test environment, set before anything is collected (including the stage
notebooks that nbval runs in their own kernels, which inherit this environment).

Every run (each worker's, under `pytest -n`) gets a private SQLite store and the folders
the service writes (runs, data, models, secrets, reports: market/settings.py
`work_environment`) under a temporary directory, and the built-in exchange simulator on a
loopback port (published through the notebooks' default date), so the stage notebooks run
as they would in production; a developer's `.env` is ignored.

nbval runs each stage notebook as "Run All" does: with its default parameters, a preview
that stores nothing (pipeline/runner.py). So that each preview has its inputs (T1 needs
T0's day, the trade needs the predictions), a session, before its first stage notebook,
backfills 30 simulated days and runs the notebooks' day for real: T0 over HTTP from the
simulator, then T1's stages, and T3 for its Monday (its notebook also charts the stored
releases and parameters). A session that runs none (`make check`, and under `make test`
every worker but the one the stage notebooks go to) stays on the empty store.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from market.settings import work_environment

if TYPE_CHECKING:
    from xdist.remote import Producer
    from xdist.scheduler.protocol import Scheduling

_SESSION_DIR: Path | None = None
_SIMULATOR = None  # the context manager serving the simulated exchange
NOTEBOOK_DEFAULT_DATE = "2026-11-20"  # the run_date default in every stage notebook but t3_macro's
T3_NOTEBOOK_DATE = "2026-11-16"  # t3_macro's run_date default: the Monday of that week


def _is_xdist_controller(config) -> bool:
    """Under `pytest -n N` (make test) the controller only hands files to the workers: each
    worker sets up its own session below, so the controller sets up none."""
    return not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") != "no"


def pytest_configure(config) -> None:
    global _SESSION_DIR
    if _is_xdist_controller(config):
        return
    _SESSION_DIR = Path(tempfile.mkdtemp(prefix="marketintel-tests-"))
    os.environ.update(
        {
            "MARKETINTEL_NO_DOTENV": "1",
            **work_environment(_SESSION_DIR, "session.db"),
            # Airflow keeps its own metadata database and config here, never in ~/airflow.
            "AIRFLOW_HOME": str(_SESSION_DIR / "airflow"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(Path(__file__).resolve().parent / "dags"),
            # No model or dataset download, ever, in tests.
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    for key in ("MARKETINTEL_ADMIN_KEY", "MARKETINTEL_MIGRATION_DATABASE_URL"):
        os.environ.pop(key, None)
    # The stage notebooks run against this store, so it must be current before they start.
    from store.engine import build_engine
    from store.migrations import upgrade

    engine = build_engine(os.environ["MARKETINTEL_DATABASE_URL"])
    upgrade(engine)
    engine.dispose()
    _start_simulator()


def _backfill_history(engine) -> None:
    """30 simulated days before the notebooks' date, so the model notebooks have history;
    the date itself is left for the T0 notebook to scrape over HTTP."""
    from datetime import date

    from market.clock import default_calendar
    from market.settings import get_settings
    from pipeline.backfill import backfill

    day = default_calendar().previous_trading_day(date.fromisoformat(NOTEBOOK_DEFAULT_DATE))
    backfill(engine, get_settings(), 30, day, with_text=False)
    get_settings.cache_clear()


def _start_simulator() -> None:
    global _SIMULATOR
    from datetime import date

    from ingest.simulator.market import SimulatedMarket
    from ingest.simulator.site import SimulatorSite
    from pipeline.serving import serve_in_thread

    site = SimulatorSite(SimulatedMarket(), published_through=date.fromisoformat(NOTEBOOK_DEFAULT_DATE))
    _SIMULATOR = serve_in_thread(site.asgi_app())
    os.environ["MARKETINTEL_EXCHANGE_BASE_URL"] = _SIMULATOR.__enter__()


# The two lanes (docs/testing.md). `make check` runs the tests not marked `integration`;
# `make test` runs every test. A test is integration when it needs a real server or data set
# (Postgres, Redis, a browser, the NSE files, an exchange simulator in its own process), runs
# the day through the stage notebooks or Airflow, or takes a minute or more (`slow`); or when
# its module or itself is named below, with the reason: it starts processes or kernels,
# renders the PDF reports, trains models over a history, waits out real timeouts, or loads
# the machine on purpose.
INTEGRATION_MARKS = frozenset({"slow", "airflow", "postgres"})
INTEGRATION_FIXTURES = frozenset(
    {"postgres_server", "postgres_url", "redis_url", "nse_data", "browser", "simulator_process", "served_demo"}
)
INTEGRATION_MODULES = {
    "tests/pipeline/test_cli.py": "the CLI in its own process",
    "tests/pipeline/test_cli_t0.py": "the CLI in its own process, against a simulator process",
    "tests/pipeline/test_cli_portfolio.py": "the CLI in its own process",
    "tests/reports/test_reports.py": "renders PDFs, and the CLI in its own process",
    "tests/api/test_reports.py": "renders every PDF report over HTTP",
    "tests/pipeline/test_notebooks.py": "stage notebooks in Jupyter kernels",
    "tests/research/test_research_notebooks.py": "research notebooks in Jupyter kernels",
    "tests/dags/test_dag_integrity.py": "Airflow's DAG processor and dag.test()",
    "tests/dags/test_make_airflow.py": "Airflow standalone",
    "tests/pipeline/test_bootstrap.py": "trains the walk-forward validation record",
    "tests/pipeline/test_predict_stages.py": "trains and refits the risk model through the stages",
    "tests/pipeline/test_fault_recovery.py": "kills a stage process and reruns it",
    "tests/api/test_control_sweep.py": "sweeps every operation with every control character",
    "tests/api/test_pool.py": "hundreds of concurrent requests on a small pool",
    "tests/api/test_contract.py": "walks every GET and GraphQL root field of a seeded world",
    "tests/reports/test_report_claims.py": "renders the PDF reports",
    "tests/api/test_track_record_isolation.py": "loads the service on purpose for seconds",
    "tests/pipeline/test_cli_number_rule.py": "the CLI in its own process",
    "tests/pipeline/test_cli_serve.py": "the server in its own process",
    "tests/pipeline/test_bounded_stop.py": "stops a server process mid-upload",
    "tests/api/test_worker_processes.py": "starts the server's report worker processes",
    "tests/api/test_heavy_share.py": "loads the service with PDF reports on purpose",
    "tests/reports/test_briefing_reads.py": "renders the PDF reports",
    "tests/reports/test_null_books_report.py": "renders the PDF reports",
    "tests/reports/test_track_record_report.py": "renders the PDF reports",
}
INTEGRATION_TESTS = {
    "tests/pipeline/test_monitor.py::test_the_stable_world_raises_no_alert": "trains a validation record",
    "tests/pipeline/test_monitor.py::test_a_broken_input_feed": "trains a validation record",
    "tests/pipeline/test_monitor.py::test_the_reference_is_read_from_its_cache": "trains a validation record",
    "tests/models/test_reasons.py::test_the_live_stage_stores_the_reasons": "trains the risk model through the stages",
    "tests/models/test_walkforward.py::test_shuffled_labels_give_coin_toss_accuracy": "walk-forward training",
    "tests/models/test_walkforward.py::test_a_planted_signal_is_found": "walk-forward training",
    "tests/models/test_layer1.py::test_a_local_chronos_bolt_loads_offline": "loads the foundation model with torch",
    "tests/models/test_layer1.py::test_a_day_is_computed_once_and_cached_per_model": "builds a Chronos-Bolt with torch",
    "tests/api/test_hardening.py::test_another_client_is_answered_at_once": "floods the service on purpose",
    "tests/api/test_hardening.py::test_uploads_past_a_clients_share": "floods the uploads on purpose",
    "tests/pipeline/test_analysis_and_notify.py::test_a_failing_language_model_falls_back_and_says_why[sqlite-slow": (
        "waits out a real read timeout"
    ),
    "tests/ingest/test_text_sources.py::test_hostile_sources_are_stored_failures": "waits out real timeouts",
    "tests/ingest/test_t0_faults.py::test_a_slow_response_is_retried_and_a_dead_slow_site_fails": (
        "waits out real timeouts"
    ),
    "tests/dags/test_airflow_prod_script.py::test_stop_repeats_a_term": "waits out the 10 s before the repeated TERM",
    "tests/ingest/test_pdf_sandboxes.py::test_four_bombs_at_once": "loads the machine's memory on purpose",
    "tests/pipeline/test_run_index.py::test_run_day_refuses_a_closed_day": "the CLI in its own process",
    "tests/ingest/test_stylised_facts.py::test_the_simulator_has_the_nse_multi_week_predictability": (
        "simulates six markets of years each"
    ),
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(session, config, items) -> None:
    for item in items:
        if is_integration(item):
            item.add_marker(pytest.mark.integration)
    if hasattr(config, "workerinput"):
        _slow_files_first(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the cyclic garbage collector off what collection imported. A test process holds
    every test module and the libraries they import (pandas, SQLAlchemy, Airflow, ...), and
    with CPython's defaults each full collection walks all of it again, and the first
    generation is collected every 700 allocations. So, once collected: what is alive is
    frozen (`gc.freeze()`: never walked again, never freed, as it would live to the end
    anyway) and the first generation waits for 20,000 allocations. The quick lane, 4 runs
    alternating on 2 cores: 73.9 and 72.8 s of pytest without, 67.6 and 66.7 s with
    (docs/benchmarks.md, "The test suite", with the command; docs/testing.md, "What keeps
    the suite quick", says why). Processes the tests start (the CLI, kernels, Airflow) are
    left as they run in production."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 10)


def is_integration(item: pytest.Item) -> bool:
    if _is_stage_notebook(item):
        return True
    module = item.nodeid.partition("::")[0]
    if module in INTEGRATION_MODULES or any(item.nodeid.startswith(test) for test in INTEGRATION_TESTS):
        return True
    if any(item.get_closest_marker(name) for name in INTEGRATION_MARKS):
        return True
    return bool(INTEGRATION_FIXTURES & set(getattr(item, "fixturenames", ())))


def _is_stage_notebook(item: pytest.Item) -> bool:
    return _is_stage_notebook_file(item.nodeid.partition("::")[0])


def _is_stage_notebook_file(path: str) -> bool:
    """Whether a file (its path from the root, as in a test id) is a stage notebook."""
    folder, _, name = path.rpartition("/")
    return folder == "notebooks" and name.endswith(".ipynb")


_NOTEBOOKS_DAY: list[bool] = []  # set once this session has run the notebooks' day
# Besides the stage notebooks, the research notebooks read the session's store (the data
# quality notebook charts its zero-volume and stale prices), so they run on that day too.
ON_THE_NOTEBOOKS_DAY = ("tests/research/test_research_notebooks.py",)


def _on_the_notebooks_day(scope: str) -> bool:
    """Whether the tests of this file (its path from the root) run on the notebooks' day."""
    return _is_stage_notebook_file(scope) or scope in ON_THE_NOTEBOOKS_DAY


@pytest.hookimpl(tryfirst=True)  # before the notebook's kernel starts, in its file's setup
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A session runs the notebooks' day before its first test that runs on it; a session
    (a worker under `make test`) that runs none does not run it."""
    if not _NOTEBOOKS_DAY and _on_the_notebooks_day(item.nodeid.partition("::")[0]):
        _NOTEBOOKS_DAY.append(True)
        _run_the_notebooks_day()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> Scheduling | None:
    """Under `--dist loadfile` (make test), the tests that run on the notebooks' day (the
    stage and research notebooks) go to one worker as one unit of work, so one worker runs
    that day (about 15 s) rather than each; every other file is its own unit, as loadfile
    makes it."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class StageNotebooksTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return "on the notebooks' day" if _on_the_notebooks_day(scope) else scope

    return StageNotebooksTogether(config, log)


def _slow_files_first(items: list) -> None:
    """Under `pytest -n N --dist loadfile --no-loadscope-reorder` (make test) the workers take
    whole files in this order. A file whose tests take minutes (marked `slow`) handed out
    last would leave one worker running it alone at the end, so those files go first, the
    one with the most slow tests first; then the stage and research notebooks, one unit of
    work of about a minute and a half with the notebooks' day; every other file keeps its
    place."""
    slow: dict[str, int] = {}
    for item in items:
        if item.get_closest_marker("slow"):
            slow[str(item.fspath)] = slow.get(str(item.fspath), 0) + 1

    def rank(item: pytest.Item) -> float:
        on_the_day = _on_the_notebooks_day(item.nodeid.partition("::")[0])
        return -slow.get(str(item.fspath), 0) or (-0.5 if on_the_day else 0)

    items.sort(key=rank)  # stable: in-file order kept


def _run_the_notebooks_day() -> None:
    from market.settings import get_settings
    from pipeline.runner import run_stage
    from pipeline.stage_lists import T0_STAGES, T1_STAGES
    from store.engine import build_engine

    engine = build_engine(os.environ["MARKETINTEL_DATABASE_URL"])
    _backfill_history(engine)
    engine.dispose()
    get_settings.cache_clear()  # the simulator's URL was set after the first read
    for stage in T0_STAGES + T1_STAGES:
        run_stage(stage, NOTEBOOK_DEFAULT_DATE, trigger="cli")
    run_stage("t3_macro", T3_NOTEBOOK_DATE, trigger="cli")
    get_settings.cache_clear()


def pytest_unconfigure(config) -> None:
    if _SIMULATOR is not None:
        _SIMULATOR.__exit__(None, None, None)
    if _SESSION_DIR is not None:
        shutil.rmtree(_SESSION_DIR, ignore_errors=True)
