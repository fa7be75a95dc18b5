"""
### Store health: weekdays 15:45 America/Jamaica (20:45 UTC; the exchange keeps no daylight saving)

Runs the `health` stage notebook (`notebooks/health.ipynb`) for one trading date: is the
database reachable, is every migration applied, does every history table reject UPDATE
and DELETE, and how many rows does each table hold. The executed notebook lands in
`runs/<date>/health.ipynb`.

Scheduled at 15:45 exchange time (America/Jamaica) on weekdays, before the end-of-day
scrape. Trigger by hand with `{"run_date": "YYYY-MM-DD"}` to check another date.
"""

from __future__ import annotations

from airflow.sdk import dag

from pipeline.airflow_plugin import marketintel_dag, stage_task


@dag(**marketintel_dag("marketintel_health", __doc__))
def marketintel_health() -> None:
    stage_task("health")


marketintel_health()
