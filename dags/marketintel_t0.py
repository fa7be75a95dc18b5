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
The exchange may publish late: the task tries every 5 minutes until 16:40 (eight
retries), so a day published late is delivered while T1's pre-flight waits for it
(until 16:45); a day still not published then fails with the TASK_FAILED alert.
"""

from __future__ import annotations

from airflow.sdk import dag

from pipeline.airflow_plugin import T0_DELIVERY, marketintel_dag, stage_task, trading_day_task


@dag(**marketintel_dag("marketintel_t0", __doc__))
def marketintel_t0() -> None:
    trading_day_task() >> stage_task("t0_scrape", outlets=[T0_DELIVERY])


marketintel_t0()
