"""
### T3: weekly macro, Mondays 09:00 America/Jamaica (14:00 UTC; the exchange keeps no daylight saving)

Mondays at 09:00 America/Jamaica: the `t3_macro` stage notebook reads the central bank
(CSV), statistics institute (HTML) and planning institute (PDF) releases, stores every
release point in time (a revision is a new row) and computes the week's macro parameters
(rates regime, FX pressure, macro risk) from what was published before the Monday.

It runs on an exchange holiday too: the macro sources do not follow the exchange's
calendar, and skipping a holiday Monday would leave the week without parameters. The
date is the `run_date` param, else the run's own date on the exchange clock.

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
        "marketintel_t3",
        ExchangeTimetable("0 9 * * 1"),
        ["t3", "macro"],
        __doc__,
        retries=3,
        retry_minutes=5,
        timeout_minutes=30,
        run_date_help="The Monday of the macro week to run",
    )
)
def marketintel_t3() -> None:
    @task(task_id="t3_macro")
    def macro(**context) -> object:  # noqa: ANN003 - the stage summary; a dict annotation would split its XCom
        from pipeline.airflow_tasks import run_notebook_task

        return run_notebook_task("t3_macro", context)

    macro()


marketintel_t3()
