"""
### T3: weekly macro, Mondays 09:00 America/Jamaica (14:00 UTC; the exchange keeps no daylight saving)

Mondays at 09:00 America/Jamaica: the `t3_macro` stage notebook reads the central bank
(CSV), statistics institute (HTML) and planning institute (PDF) releases, stores every
release point in time (a revision is a new row) and computes the week's macro parameters
(rates regime, FX pressure, macro risk) from what was published before the Monday.

It runs on an exchange holiday too: the macro sources do not follow the exchange's
calendar, and skipping a holiday Monday would leave the week without parameters. The
date is the `run_date` param, else the run's own date on the exchange clock.
"""

from __future__ import annotations

from airflow.sdk import dag

from pipeline.airflow_plugin import marketintel_dag, stage_task


@dag(**marketintel_dag("marketintel_t3", __doc__))
def marketintel_t3() -> None:
    stage_task("t3_macro")


marketintel_t3()
