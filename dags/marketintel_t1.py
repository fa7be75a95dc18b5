"""
### T1: the trading day's close, weekdays 16:15 America/Jamaica (21:15 UTC; the exchange keeps no daylight saving)

When T0's delivery asset (`marketintel_t0_delivery`) updates, for the day it delivered,
and weekdays at 16:15 America/Jamaica; whichever comes second finds the day already done
for that delivery (its last stage, `t1_reports`, succeeded since) and skips at
`trading_day`, so a day runs once per delivery (a manual run with `run_date` always runs).
When the first failed on the way, the second runs the stages that have not succeeded
since the delivery and passes over the rest (a stage task that finds its stage done says
so in its log): a failed `t1_reports` is retried at 16:15 without trading the day again.
One task per stage notebook, in this order, each a transaction that a re-run leaves as
one run would:

1. `t1_preflight`: T0 delivered the same trading date whole, and no earlier day T0
   delivered still waits for its `t1_trade` (the AI book trades its days in order).
   Retried every 5 minutes for 30 minutes (T0 may be late); then the run fails with the
   reason and the failure callback stores and sends a PREFLIGHT_FAILED alert to the webhook.
2. `t1_ingest_text`: news feeds and disclosure PDFs.
3. `t1_sentiment`: the sentiment composite.
4. `t1_features`, then `t1_predict`: the 14 features, layer 1 and the risk model (Score,
   Action, Weight, Tercile); retrains when 5 trading days have passed since the last model.
   Then `t1_monitor`: the model monitor (input and Score drift, live accuracy and
   calibration; MODEL_DRIFT / MODEL_DEGRADED to the webhook after the persistence days).
5. `t1_analysis`: the written analysis and its notifications (webhook).
6. `t1_trade`: the AI portfolio trades under the liquidity rails. Each day it closes
   updates the asset `marketintel_t1_close` (its extra names the day), which starts T2
   for the next trading day's morning.
7. `t1_reports`: both PDF reports of the day (Quant Briefing, Compliance Report) written
   to the reports folder under their file names of the day; for a day before the latest
   priced one it writes nothing and says why (a report reads the store as it is now).

The first task, `trading_day`, skips everything on weekends and exchange holidays with
the reason in its log. The trading date is the `run_date` param, else the day T0's
delivery names (a run started by the asset; the earliest delivered day not yet traded
when there are several), else the run's own date on the exchange clock
(a manual run has no logical date: its `run_after` is used).
Executed notebooks land in `runs/<date>/<stage>.ipynb`.
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import dag

from pipeline.airflow_plugin import T1_CLOSE, marketintel_dag, stage_task, trading_day_task
from pipeline.stage_lists import T1_PREFLIGHT, T1_STAGES, T1_TIMEOUT_MINUTES

# t1_trade closes the day: each time it succeeds it updates T1_CLOSE, which starts T2.
OUTLETS = {"t1_trade": [T1_CLOSE]}


@dag(**marketintel_dag("marketintel_t1", __doc__))
def marketintel_t1() -> None:
    gate = trading_day_task(current=(T1_STAGES[-1], "t0_scrape"))  # done: the day's last stage, since the delivery
    # T0 may be late: the pre-flight retries every 5 minutes for 30 minutes, no backoff.
    chain = gate >> stage_task(
        T1_PREFLIGHT,
        "t0_scrape",
        retries=6,
        retry_delay=timedelta(minutes=5),
        retry_exponential_backoff=False,
        execution_timeout=timedelta(minutes=T1_TIMEOUT_MINUTES[T1_PREFLIGHT]),
    )
    for name in T1_STAGES[1:]:
        timeout = timedelta(minutes=T1_TIMEOUT_MINUTES[name])
        chain = chain >> stage_task(name, "t0_scrape", execution_timeout=timeout, outlets=OUTLETS.get(name, []))


marketintel_t1()
