"""Session-wide test environment, set before anything is collected (including the stage
notebooks that nbval runs in their own kernels, which inherit this environment).

Every run (each worker's, under `pytest -n`) gets a private SQLite store, runs folder and
data folder under a temporary directory, and the built-in exchange simulator on a loopback
port (published through the notebooks' default date), so the stage notebooks run as they
would in production; a developer's `.env` is ignored.

nbval runs each stage notebook as "Run All" does: with its default parameters, a preview
that stores nothing (pipeline/runner.py). So that each preview has its inputs (T1 needs
T0's day, the trade needs the predictions), a session that collects stage notebooks first
runs the notebooks' day for real: T0 over HTTP from the simulator, then T1's stages, and
T3 for its Monday (its notebook also charts the stored releases and parameters).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

_SESSION_DIR: Path | None = None
_SIMULATOR = None  # the context manager serving the simulated exchange
NOTEBOOK_DEFAULT_DATE = "2026-11-20"  # the run_date default in every stage notebook but t3_macro's
T3_NOTEBOOK_DATE = "2026-11-16"  # t3_macro's run_date default: the Monday of that week


def _is_xdist_controller(config) -> bool:  # noqa: ANN001
    """Under `pytest -n N` (make test) the controller only hands files to the workers: each
    worker sets up its own session below, so the controller sets up none."""
    return not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") != "no"


def pytest_configure(config) -> None:  # noqa: ANN001
    global _SESSION_DIR
    if _is_xdist_controller(config):
        return
    _SESSION_DIR = Path(tempfile.mkdtemp(prefix="marketintel-tests-"))
    os.environ.update(
        {
            "MARKETINTEL_NO_DOTENV": "1",
            "MARKETINTEL_DATABASE_URL": f"sqlite:///{_SESSION_DIR / 'session.db'}",
            "MARKETINTEL_RUNS_DIR": str(_SESSION_DIR / "runs"),
            "MARKETINTEL_DATA_DIR": str(_SESSION_DIR / "data"),
            "MARKETINTEL_MODELS_DIR": str(_SESSION_DIR / "models"),
            "MARKETINTEL_REPORTS_DIR": str(_SESSION_DIR / "reports"),
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
    _backfill_history(engine)
    engine.dispose()
    _start_simulator()


def _backfill_history(engine) -> None:  # noqa: ANN001
    """30 simulated days before the notebooks' date, so the model notebooks have history;
    the date itself is left for the T0 notebook to scrape over HTTP."""
    from datetime import date

    from pipeline.backfill import backfill
    from market.clock import default_calendar
    from market.settings import get_settings

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


def pytest_collection_modifyitems(session, config, items) -> None:  # noqa: ANN001
    from market.settings import PROJECT_ROOT

    if hasattr(config, "workerinput"):
        _slow_files_first(items)
    stage_notebooks = PROJECT_ROOT / "notebooks"
    if any(Path(str(item.fspath)).parent == stage_notebooks for item in items):
        _run_the_notebooks_day()


def _slow_files_first(items: list) -> None:  # noqa: ANN001
    """Under `pytest -n N --dist loadfile --no-loadscope-reorder` (make test) the workers take
    whole files in this order. A file whose tests take minutes (marked `slow`) handed out
    last would leave one worker running it alone at the end, so those files go first, the
    one with the most slow tests first; every other file keeps its place."""
    slow: dict[str, int] = {}
    for item in items:
        if item.get_closest_marker("slow"):
            slow[str(item.fspath)] = slow.get(str(item.fspath), 0) + 1
    items.sort(key=lambda item: -slow.get(str(item.fspath), 0))  # stable: in-file order kept


def _run_the_notebooks_day() -> None:
    from market.settings import get_settings
    from pipeline.stage_lists import T0_STAGES, T1_STAGES
    from pipeline.runner import run_stage

    get_settings.cache_clear()  # the simulator's URL was set after the first read
    for stage in T0_STAGES + T1_STAGES:
        run_stage(stage, NOTEBOOK_DEFAULT_DATE, trigger="cli")
    run_stage("t3_macro", T3_NOTEBOOK_DATE, trigger="cli")
    get_settings.cache_clear()


def pytest_unconfigure(config) -> None:  # noqa: ANN001
    if _SIMULATOR is not None:
        _SIMULATOR.__exit__(None, None, None)
    if _SESSION_DIR is not None:
        shutil.rmtree(_SESSION_DIR, ignore_errors=True)
