"""
### Store health: weekdays 15:45 America/Jamaica (20:45 UTC; the exchange keeps no daylight saving)

Runs the `health` stage notebook (`notebooks/health.ipynb`) for one trading date: is the
database reachable, is every migration applied, does every history table reject UPDATE
and DELETE, and how many rows does each table hold. The executed notebook lands in
`runs/<date>/health.ipynb`.

Scheduled at 15:45 exchange time (America/Jamaica) on weekdays, before the end-of-day
scrape. Trigger by hand with `{"run_date": "YYYY-MM-DD"}` to check another date.

A failure after the last retry sends the signed webhook alert (TASK_FAILED; PREFLIGHT_FAILED
for T1's pre-flight). Every stage task's log ends with its stage summary: status, rows
written per table, duration and the executed notebook. Re-running and backfilling past
exchange days: docs/airflow.md, "Airflow: re-running and backfilling".
"""

from __future__ import annotations

from airflow.sdk import dag, task

from pipeline.airflow_plugin import ExchangeTimetable, marketintel_dag


@dag(
    **marketintel_dag(
        "marketintel_health",
        ExchangeTimetable("45 15 * * 1-5"),
        ["health"],
        __doc__,
        retries=2,
        retry_minutes=1,
        timeout_minutes=15,
    )
)
def marketintel_health() -> None:
    @task
    def health(**context) -> object:  # noqa: ANN003 - the stage summary; a dict annotation would split its XCom
        from pipeline.airflow_tasks import run_notebook_task

        return run_notebook_task("health", context)

    health()


marketintel_health()
