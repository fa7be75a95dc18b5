"""One function per stage of the trading day, the runner that records every run, the
papermill notebook runner and the `marketintel` CLI.

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
