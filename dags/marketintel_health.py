"""
### Store health

Runs the `health` stage notebook (`notebooks/health.ipynb`) for one trading date: is the
database reachable, is every migration applied, does every history table reject UPDATE
and DELETE, and how many rows does each table hold. The executed notebook lands in
`runs/<date>/health.ipynb`.

Scheduled at 15:45 exchange time (America/Jamaica) on weekdays, before the end-of-day
scrape. Trigger by hand with `{"run_date": "YYYY-MM-DD"}` to check another date.
"""
from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import Param, dag, task


@dag(
    dag_id="marketintel_health",
    schedule="45 15 * * 1-5",
    start_date=pendulum.datetime(2026, 1, 1, tz="America/Jamaica"),
    catchup=False,
    max_active_runs=1,
    tags=["marketintel", "health"],
    doc_md=__doc__,
    default_args={
        "owner": "marketintel",
        "retries": 2,
        "retry_delay": timedelta(minutes=1),
        "retry_exponential_backoff": True,
        "execution_timeout": timedelta(minutes=15),
    },
    params={
        "run_date": Param(
            None,
            type=["null", "string"],
            description="Trading date YYYY-MM-DD; empty means the run's own date in exchange time.",
        )
    },
)
def marketintel_health() -> None:
    @task
    def health(**context) -> str:  # noqa: ANN003
        from pipeline.airflow_tasks import run_notebook_task

        return run_notebook_task("health", context)

    health()


marketintel_health()
