"""
### T2: morning intel, weekdays 07:00 America/Jamaica (12:00 UTC; the exchange keeps no daylight saving)

When T1 closes a day (its asset `marketintel_t1_close` updates), for the next trading
day, and weekdays at 07:00 America/Jamaica, before the session: the `t2_suggestions` stage
notebook turns the latest scored day into pending trade suggestions for every client
portfolio (each one a user confirms or rejects; unconfirmed ones expire at the session's
close). Whichever of the asset run and the 07:00 run comes second finds the morning done
for that close and skips at `trading_day`, so the morning runs once per close (a manual
run with `run_date` always runs).

`trading_day` skips the run on weekends and exchange holidays (reason in its log). The
trading date is the `run_date` param, else the trading day after the day T1's close names
(a run started by the asset), else the run's own date on the exchange clock: the morning
of the day the suggestions are for.

A failure after the last retry sends the signed webhook alert (TASK_FAILED; PREFLIGHT_FAILED
for T1's pre-flight). Every stage task's log ends with its stage summary: status, rows
written per table, duration and the executed notebook. Re-running and backfilling past
exchange days: docs/airflow.md, "Airflow: re-running and backfilling".
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import AssetOrTimeSchedule, dag, task

from pipeline.airflow_plugin import T1_CLOSE, ExchangeTimetable, marketintel_dag


@dag(
    **marketintel_dag(
        "marketintel_t2",
        AssetOrTimeSchedule(timetable=ExchangeTimetable("0 7 * * 1-5"), assets=[T1_CLOSE]),
        ["t2", "morning"],
        __doc__,
        retries=2,
        retry_minutes=2,
        timeout_minutes=15,
    )
)
def marketintel_t2() -> None:
    @task.short_circuit(task_id="trading_day", execution_timeout=timedelta(minutes=2))
    def trading_day(**context) -> bool:  # noqa: ANN003
        from pipeline.airflow_tasks import trading_day_gate

        return trading_day_gate(context, current=("t2_suggestions", "t1_trade"), input_is_previous_day=True)

    @task(task_id="t2_suggestions")
    def suggestions(**context) -> object:  # noqa: ANN003 - the stage summary; a dict annotation would split its XCom
        from pipeline.airflow_tasks import run_notebook_task

        return run_notebook_task("t2_suggestions", context)

    trading_day() >> suggestions()


marketintel_t2()
