"""Runs one stage for one trading date and records the attempt in `stage_runs`.

The same function serves the CLI, the stage notebooks and (through the notebooks) the
Airflow tasks, so a stage behaves the same wherever it is started. Every attempt leaves
a STARTED row and one of SUCCEEDED, FAILED or SKIPPED; the stage's own data writes are a
separate transaction that either commits whole or leaves nothing. A SUCCEEDED row's
detail holds the stage's summary and `rows_written`, the rows it inserted per history
table (counted by `store.history.counting_writes`; zero everywhere on a re-run that
found everything right), which the Airflow task logs as its last line.
"""
from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from market.clock import default_calendar, parse_trading_date
from market.errors import MarketIntelError, StageFailedError
from market.settings import Settings, get_settings
from pipeline.registry import get_stage
from pipeline.stage import StageContext, StageOutcome
from store import tables
from store.engine import service_engine
from store.history import append_history, counting_writes
from store.migrations import require_current_schema

log = logging.getLogger(__name__)


@dataclass
class StageResult:
    stage: str
    trading_date: date
    run_id: str
    status: str  # SUCCEEDED or SKIPPED; failures raise StageFailedError
    summary: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def frame(self, name: str):  # noqa: ANN201 - pandas is imported lazily
        """One of the stage's tables as a pandas DataFrame, for notebooks; an empty table
        reads '(none)' rather than pandas' bare 'Empty DataFrame'."""
        import pandas as pd

        rows = self.tables.get(name, [])
        return pd.DataFrame(rows) if rows else pd.DataFrame({name: ["(none)"]})

    def to_json(self) -> str:
        return json.dumps(
            {"stage": self.stage, "trading_date": self.trading_date.isoformat(), "run_id": self.run_id,
             "status": self.status, "summary": self.summary},
            default=str,
        )


def run_stage(
    name: str,
    trading_date: date | str,
    *,
    settings: Settings | None = None,
    trigger: str = "cli",
) -> StageResult:
    """Run stage `name` for `trading_date` (a date or 'YYYY-MM-DD')."""
    stage = get_stage(name)
    day = parse_trading_date(trading_date) if isinstance(trading_date, str) else trading_date
    settings = settings or get_settings()
    engine = service_engine(settings)
    require_current_schema(engine)
    calendar = default_calendar()
    ctx = StageContext(stage.name, day, uuid.uuid4().hex, settings, engine, calendar)
    _record(ctx, "STARTED", trigger, {})

    closed = calendar.closed_reason(day)
    if stage.trading_days_only and closed:
        log.info("stage %s skipped for %s: %s", stage.name, day, closed)
        _record(ctx, "SKIPPED", trigger, {"reason": closed})
        return StageResult(stage.name, day, ctx.run_id, "SKIPPED", {"skipped_reason": closed})

    try:
        with counting_writes() as written:
            outcome: StageOutcome = stage.run(ctx)
    except Exception as exc:
        reason = exc.detail if isinstance(exc, MarketIntelError) else f"{type(exc).__name__}: {exc}"
        _record(ctx, "FAILED", trigger, {"error": reason})
        raise StageFailedError(f"stage '{stage.name}' for {day.isoformat()} failed: {reason}") from exc
    _record(ctx, "SUCCEEDED", trigger, {"summary": outcome.summary, "rows_written": dict(sorted(written.items()))})
    log.info("stage %s for %s succeeded: %s", stage.name, day, outcome.summary)
    return StageResult(stage.name, day, ctx.run_id, "SUCCEEDED", outcome.summary, outcome.tables)


def _record(ctx: StageContext, event: str, trigger: str, detail: dict[str, Any]) -> None:
    row = {"run_id": ctx.run_id, "stage": ctx.stage, "trading_date": ctx.trading_date,
           "event": event, "trigger": trigger, "detail": json.loads(json.dumps(detail, default=str))}
    with ctx.engine.begin() as conn:
        append_history(conn, tables.stage_runs, [row])
