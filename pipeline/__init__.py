"""Orchestration: one adapter per stage of the trading day (registry.py), the stage lists
the DAGs read (stage_lists.py), the runner that records every run, the papermill notebook
runner, run-day, backfill and bootstrap, and what the Airflow tasks call.

May import: market, store, ingest, models, portfolio, views, analysis, reports.

`run_stage` is loaded on first use (PEP 562), not when the package is imported: the DAG
files import `pipeline.airflow_plugin` at parse time, and that must not pull in the
runner's database, pandas and model imports."""

from __future__ import annotations

from typing import Any

__all__ = ["run_stage"]


def __getattr__(name: str) -> Any:
    if name == "run_stage":
        from pipeline.runner import run_stage

        return run_stage
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
