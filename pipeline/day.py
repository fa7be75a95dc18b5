"""One trading day without Airflow (`marketintel run-day`): T0 then T1's stages, in the
DAGs' order, through the same stage notebooks. A failed pre-flight stores and sends the
PREFLIGHT_FAILED alert (there is no retry window here: run it again when T0 has
delivered) and stops the day; any failed stage stops the day with its reason, and a
re-run redoes only what is not already stored (every stage is a transaction)."""
from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Iterator

from market.clock import default_calendar
from market.errors import InvalidInputError, StageFailedError
from market.settings import Settings
from pipeline.notebooks import run_stage_notebook
from pipeline.preflight import alert_failed_preflight

T0_STAGES = ["t0_scrape"]
T1_STAGES = ["t1_preflight", "t1_ingest_text", "t1_sentiment", "t1_features", "t1_predict", "t1_analysis", "t1_trade"]


def run_day(day: date, settings: Settings, trigger: str = "cli") -> Iterator[tuple[str, Path]]:
    """Run T0 and T1 for `day`; yields (stage, executed notebook) as each one finishes."""
    reason = default_calendar().closed_reason(day)
    if reason:
        raise InvalidInputError(f"nothing to run: {reason}")
    for stage in T0_STAGES + T1_STAGES:
        try:
            output = run_stage_notebook(stage, day, settings=settings, trigger=trigger)
        except StageFailedError as exc:
            if stage == "t1_preflight":
                alert_failed_preflight(day, exc.detail)
            raise
        yield stage, output
