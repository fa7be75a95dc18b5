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
"""

from __future__ import annotations

from airflow.sdk import dag

from pipeline.airflow_plugin import marketintel_dag, stage_task, trading_day_task


@dag(**marketintel_dag("marketintel_t2", __doc__))
def marketintel_t2() -> None:
    gate = trading_day_task(current=("t2_suggestions", "t1_trade"), input_is_previous_day=True)
    gate >> stage_task("t2_suggestions")


marketintel_t2()
