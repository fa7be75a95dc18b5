"""
### T0: end-of-day scrape, weekdays 16:00 America/Jamaica (21:00 UTC; the exchange keeps no daylight saving)

Weekdays at 16:00 America/Jamaica: the `t0_scrape` stage notebook fetches the day's prices,
trade summaries (closing bid/ask) and fundamentals from the exchange website
(`MARKETINTEL_EXCHANGE_BASE_URL`; the simulator in the embedded default), validates them and
stores the day with its raw snapshot and delivery manifest, all or nothing. T1's pre-flight
at 16:15 checks this delivery. Each stored day updates the `marketintel_t0_delivery` asset
(its extra names the trading date), which starts T1 for that day without waiting for
16:15.

`trading_day` skips the run on weekends and exchange holidays (reason in its log). The
trading date is the `run_date` param, else the run's own date on the exchange clock.
Retries back off exponentially: the website is often slow right after the close.

A failure after the last retry sends the signed webhook alert (TASK_FAILED; PREFLIGHT_FAILED
for T1's pre-flight). Every stage task's log ends with its stage summary: status, rows
written per table, duration and the executed notebook. Re-running and backfilling past
exchange days: docs/airflow.md, "Airflow: re-running and backfilling".
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import dag, task

from pipeline.airflow_plugin import T0_DELIVERY, ExchangeTimetable, marketintel_dag


@dag(
    **marketintel_dag(
        "marketintel_t0",
        ExchangeTimetable("0 16 * * 1-5"),
        ["t0", "ingest"],
        __doc__,
        retries=3,
        retry_minutes=1,
        timeout_minutes=20,
    )
)
def marketintel_t0() -> None:
    @task.short_circuit(task_id="trading_day", execution_timeout=timedelta(minutes=2))
    def trading_day(**context) -> bool:  # noqa: ANN003
        from pipeline.airflow_tasks import trading_day_gate

        return trading_day_gate(context)

    @task(task_id="t0_scrape", outlets=[T0_DELIVERY])
    def scrape(**context) -> object:  # noqa: ANN003 - the stage summary; a dict annotation would split its XCom
        from pipeline.airflow_tasks import run_notebook_task

        return run_notebook_task("t0_scrape", context)

    trading_day() >> scrape()


marketintel_t0()
