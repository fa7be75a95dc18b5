"""Runs one stage for one trading date and records the attempt in `stage_runs`.

The same function serves the CLI, the stage notebooks and (through the notebooks) the
Airflow tasks, so a stage behaves the same wherever it is started. Every attempt leaves
a STARTED row and one of SUCCEEDED, FAILED or SKIPPED (one the CLI's commands started and
Ctrl-C or SIGTERM cut short: FAILED, recorded by the command, pipeline/day.py); the stage's own data writes are a
separate transaction that either commits whole or leaves nothing. A SUCCEEDED row's
detail holds the stage's summary and `rows_written`, the rows it inserted per history
table (counted by `store.history.counting_writes`; zero everywhere on a re-run that
found everything right), which the Airflow task logs as its last line.

`write=False` is a preview: the very same stage function runs, on an engine whose every
write is rolled back at the end (store/engine.py `preview_engine`), `stage_runs` records
included, so the result shows what the stage would do and the store is left as it was.
This is what a stage notebook opened by hand does (its `write` parameter defaults to
False); papermill runs (CLI, Airflow, the demo) pass `write=True`. A stage with an effect
outside the store checks `ctx.write` (t1_analysis sends no webhook in a preview); files
the stages keep under the data and models folders (raw snapshots, documents, model
files) are caches keyed by their content and may still be written.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import Engine, select

from market.clock import TradingCalendar, default_calendar, exchange_date, parse_trading_date, utc_now
from market.errors import InvalidInputError, MarketIntelError, StageFailedError
from market.settings import Settings, get_settings
from pipeline.registry import get_stage
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.engine import preview_engine
from store.history import append_history, counting_writes
from store.migrations import current_store
from store.transactions import write_transaction

log = logging.getLogger(__name__)
_DECIMAL = re.compile(r"-?\d+\.\d+")  # a Decimal summary value stored as text (cash)


@dataclass
class StageResult:
    stage: str
    trading_date: date
    run_id: str
    status: str  # SUCCEEDED or SKIPPED; failures raise StageFailedError
    written: bool  # False: a preview, nothing was stored
    summary: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)
    alarm: str | None = None  # what the stage found wrong (StageOutcome.alarm)
    note: str | None = None  # what its rows do not show, or why it did nothing (StageOutcome.note)

    def frame(self, name: str):  # noqa: ANN201 - pandas is imported lazily
        """One of the stage's tables as a pandas DataFrame, to compute on (an empty table
        is an empty DataFrame); to display one, use `show`."""
        import pandas as pd

        return pd.DataFrame(self.tables.get(name, []))

    def show(self, name: str, empty: str | None = None):  # noqa: ANN201 - IPython is imported lazily
        """One of the stage's tables for a notebook to display: formatted (percentages,
        thousands separators, no index: reports.figures.styled; `.data` is the DataFrame),
        or when the table is empty a sentence saying so: `empty` (the notebook knows what an
        empty table means), else one naming the table and day; a skipped stage says why it
        did not run. Never an empty frame or a one-cell placeholder."""
        rows = self.tables.get(name, [])
        if rows:
            from reports.figures import styled

            return styled(self.frame(name))
        from IPython.display import Markdown

        what = name.replace("_", " ")
        return Markdown(self.nothing(what) if self.status == "SKIPPED" else empty or self.nothing(what))

    def nothing(self, what: str) -> str:
        """The sentence for an empty table: why there is nothing, as far as the runner knows."""
        if self.status == "SKIPPED":
            from reports.figures import markdown_text

            reason = markdown_text(self.summary.get("skipped_reason", "not a trading day"))
            return f"No {what}: {self.stage} was skipped, {reason}."
        return f"No {what} for {self.trading_date.isoformat()}."

    def headline(self) -> str:
        """One sentence: what ran, its status, and whether anything was stored."""
        day = self.trading_date.isoformat()
        if self.written:
            return f"{self.stage} for {day}: {self.status}."
        return (
            f"{self.stage} for {day}: {self.status}, as a preview: nothing was stored. To store it, run "
            f"`marketintel stage run {self.stage} --date {day} --notebook` (or set `write = True` here)."
        )

    def _repr_markdown_(self) -> str:
        """In a notebook: the headline, then the summary as a two-column table."""
        lines = [f"**{self.headline()}**", ""]
        if self.summary:
            lines += ["| | |", "|---|---|"]
            lines += [f"| {key.replace('_', ' ')} | {_cell(value)} |" for key, value in self.summary.items()]
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(
            {
                "stage": self.stage,
                "trading_date": self.trading_date.isoformat(),
                "run_id": self.run_id,
                "status": self.status,
                "summary": self.summary,
            },
            default=str,
        )


def _cell(value: Any) -> str:
    """A summary value as Markdown table text: mappings as `key: value` pairs, numbers
    with thousands separators (decimals, also as text, to two places), yes/no; the text
    escaped (`markdown_text`: a stored name or a reason is data, shown as written)."""
    from reports.figures import markdown_text

    if isinstance(value, dict):
        value = ", ".join(f"{k}: {_number(v)}" for k, v in value.items()) or "none"
    elif isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value) or "none"
    elif value is None:
        value = "-"
    else:
        value = _number(value)
    return markdown_text(value)


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return f"{float(value):,.2f}"
    return value


def run_stage(
    name: str,
    trading_date: date | str,
    *,
    settings: Settings | None = None,
    trigger: str = "cli",
    write: bool = True,
    run_id: str | None = None,
) -> StageResult:
    """Run stage `name` for `trading_date` (a date or 'YYYY-MM-DD'); with `write=False`,
    a preview that stores nothing (see the module's docstring). `run_id`: the id its
    `stage_runs` records carry (a new one when not given): a caller that runs the stage's
    notebook reads its outcome back by it (`recorded_outcome`)."""
    stage = get_stage(name)
    day = parse_trading_date(trading_date)
    settings = settings or get_settings()
    stored = current_store(settings)
    with nullcontext(stored) if write else preview_engine(settings) as engine:
        ctx = StageContext(stage.name, day, run_id or uuid.uuid4().hex, settings, engine, default_calendar(), write)
        return _run(stage, ctx, trigger)


def _run(stage: Stage, ctx: StageContext, trigger: str) -> StageResult:
    day, calendar = ctx.trading_date, ctx.calendar
    closed = calendar.closed_reason(day)
    refuse_to_start(day, calendar, (stage.trading_days_only, stage.after_close), ctx.settings if ctx.write else None)
    _record(ctx, "STARTED", trigger, {})

    if stage.trading_days_only and closed:
        log.info("stage %s skipped for %s: %s", stage.name, day, closed)
        _record(ctx, "SKIPPED", trigger, {"reason": closed})
        return StageResult(stage.name, day, ctx.run_id, "SKIPPED", ctx.write, {"skipped_reason": closed})

    try:
        with counting_writes() as written:
            outcome: StageOutcome = stage.run(ctx)
    except Exception as exc:
        reason = exc.detail if isinstance(exc, MarketIntelError) else f"{type(exc).__name__}: {exc}"
        _record(ctx, "FAILED", trigger, {"error": reason})
        raise StageFailedError(f"stage '{stage.name}' for {day.isoformat()} failed: {reason}") from exc
    if written.get("eod_prices") or written.get("corporate_actions"):
        _refresh_read_models(ctx)
    said = {key: value for key, value in (("alarm", outcome.alarm), ("note", outcome.note)) if value}
    _record(
        ctx, "SUCCEEDED", trigger, {"summary": outcome.summary, "rows_written": dict(sorted(written.items())), **said}
    )
    log.info(
        "stage %s for %s succeeded%s: %s",
        stage.name,
        day,
        "" if ctx.write else " (preview, nothing stored)",
        outcome.summary,
    )
    return StageResult(
        stage.name,
        day,
        ctx.run_id,
        "SUCCEEDED",
        ctx.write,
        outcome.summary,
        outcome.tables,
        outcome.alarm,
        outcome.note,
    )


def refuse_to_start(day: date, calendar: TradingCalendar, rule: tuple[bool, bool], settings: Settings | None) -> None:
    """Everything a stage is refused for before anything is recorded, wherever it starts:
    the runner, and the callers that would otherwise start its notebook first
    (pipeline/notebooks.py `run_stage_notebook`, run-day before its first stage, so a
    refused day or setting leaves no notebook and no row). A day the exchange has not
    reached for the stage's `rule` (`refuse_unreached`); and, for a run that stores and
    sends (`settings`; None: a preview, which sends nothing), notification settings a
    delivery would refuse (`analysis.notify.webhook_target`: a webhook URL without its
    secret, or not http(s)). A stage sends its notifications after its rows are committed,
    and a failed stage alerts through the same webhook, so such a setting failed t1_monitor
    after its rows were written and stopped the day before its analysis and trade."""
    refuse_unreached(day, calendar, rule)
    if settings is not None:
        from analysis.notify import webhook_target  # loaded here: run-day's own process loads no stage code

        webhook_target(settings)


def refuse_unreached(day: date, calendar: TradingCalendar, rule: tuple[bool, bool]) -> None:
    """Refuse, before anything is recorded, a day the exchange has not reached for a stage
    of `rule` (trading_days_only, after_close: the Stage's flags, or pipeline/registry.py
    `day_rule` where the stage's code is not loaded): an after-close trading-day stage a day
    whose session has not closed (`_refuse_unclosed`), any stage a day past the one it may
    run for (`_refuse_future`); a weekend or holiday after today, for an after-close
    trading-day stage, in the unclosed day's words. A trading-day stage's weekend or holiday
    up to today is left to skip with its reason. The runner applies it, and so do the callers that would otherwise
    start the stage's notebook first (pipeline/notebooks.py `run_stage_notebook`, run-day),
    through `refuse_to_start`: a refused day leaves no notebook, no runs/index.md row and no
    `stage_runs` row."""
    trading_days_only, after_close = rule
    ahead = day > exchange_date(utc_now())  # a closed day ahead is refused, not skipped
    if trading_days_only and after_close and (ahead or not calendar.closed_reason(day)):
        _refuse_unclosed(day, calendar)
    _refuse_future(after_close, day, calendar)


def _refuse_future(after_close: bool, day: date, calendar: TradingCalendar) -> None:
    """No stage runs for a day the exchange has not reached: a health check or a macro fetch
    recorded for next month is a record of something that has not happened. A stage for a
    session ahead (T2's suggestions, which T1's close starts for the next session) may run
    for that next session and no later one; the rest for today at the latest."""
    now = utc_now()
    if not after_close:
        ahead = next_session(calendar, now)
        if day > ahead:
            raise InvalidInputError(f"{day.isoformat()} is past the next session ({ahead.isoformat()})")
    elif day > (today := exchange_date(now)):
        raise InvalidInputError(f"{day.isoformat()} is after today ({today.isoformat()} on the exchange's clock)")


def next_session(calendar: TradingCalendar, now: datetime) -> date:
    """The session ahead at `now`: the trading day after the latest closed one (today's
    before its close, the next trading day's after it)."""
    return calendar.next_trading_day(calendar.closed_day_at(now))


def default_day(rule: tuple[bool, bool], calendar: TradingCalendar) -> date:
    """The day a stage of `rule` (trading_days_only, after_close: pipeline/registry.py
    `day_rule`) runs for when none is named (`marketintel stage run` without --date): a
    trading-day stage after the close, the latest closed trading day; one for the session
    ahead (T2's suggestions), the next session; one of any calendar day (T3's macro week,
    health), today on the exchange's clock. The latest closed day for every stage made T2
    suggest for a session already closed and T3 fetch last week."""
    trading_days_only, after_close = rule
    now = utc_now()
    if not after_close:
        return next_session(calendar, now)
    return calendar.closed_day_at(now) if trading_days_only else exchange_date(now)


def _refuse_unclosed(day: date, calendar: TradingCalendar) -> None:
    """A trading day whose session has not closed has no data yet: a stage run for it
    (a scrape that would fail as "not published", a T1 stage on a simulated future, an AI
    day executed ahead of the real sessions before it, which would then be refused for
    good) is refused before anything is recorded."""
    latest = calendar.closed_day_at(utc_now())
    if day > latest:
        raise InvalidInputError(
            f"{day.isoformat()} has not closed yet; the latest closed trading day is {latest.isoformat()}"
        )


def _refresh_read_models(ctx: StageContext) -> None:
    """A stage that appended prices or corporate actions (a split puts the bars before it on
    a new share count) brings the stored daily bars and indicators up to date (views/bars.py)
    before it reports success, so the API never recomputes them per request and a read
    after the stage finds them stored."""
    inserted = ctx.desk.refresh_bars()
    log.info("stage %s for %s: %d daily bars rebuilt", ctx.stage, ctx.trading_date, inserted)


def recorded_outcome(
    engine: Engine, stage: str, day: date, since: datetime, run_id: str | None = None
) -> dict[str, Any]:
    """A stage's latest outcome for `day` recorded in `stage_runs` at or after `since` (by
    the run `run_id` alone, when given: another process running the same stage and day at
    once records its own): `status` (SUCCEEDED, SKIPPED, or FAILED, also when it died
    before recording one), `rows_written` per history table (empty unless SUCCEEDED),
    for a failure or a skip, `reason`, for a stage that found a problem, `alarm`, and for
    one that said what its rows do not show (StageOutcome.note), `note`. What the Airflow
    task log and `run-day` report."""
    c = tables.stage_runs.c
    mine = [c.run_id == run_id] if run_id is not None else []
    with engine.connect() as conn:
        row = conn.execute(
            select(c.event, c.detail)
            .where(
                c.stage == stage,
                c.trading_date == day,
                c.recorded_at >= since,
                c.event.in_(["SUCCEEDED", "FAILED", "SKIPPED"]),
                *mine,
            )
            .order_by(c.recorded_at.desc(), c.id.desc())
            .limit(1)
        ).first()
    detail = dict(row.detail) if row else {}
    outcome: dict[str, Any] = {"status": row.event if row else "FAILED", "rows_written": detail.get("rows_written", {})}
    if "error" in detail or "reason" in detail:
        outcome["reason"] = detail.get("error") or detail.get("reason")
    for said in ("alarm", "note"):
        if detail.get(said):
            outcome[said] = detail[said]
    return outcome


def record_interrupted(engine: Engine, stage: str, day: date, run_id: str, trigger: str, reason: str) -> bool:
    """FAILED with `reason` for the run `run_id` of `stage` when it recorded no end (its
    process was interrupted while the stage ran); False, writing nothing, when it did."""
    c = tables.stage_runs.c
    with engine.connect() as conn:
        ended = conn.execute(
            select(c.id).where(c.run_id == run_id, c.event.in_(["SUCCEEDED", "FAILED", "SKIPPED"])).limit(1)
        ).first()
    if ended is not None:
        return False
    _append(engine, (run_id, stage, day), "FAILED", trigger, {"error": reason})
    return True


def _record(ctx: StageContext, event: str, trigger: str, detail: dict[str, Any]) -> None:
    _append(ctx.engine, (ctx.run_id, ctx.stage, ctx.trading_date), event, trigger, detail)


def _append(engine: Engine, run: tuple[str, str, date], event: str, trigger: str, detail: Mapping[str, object]) -> None:
    run_id, stage, day = run
    row = {
        "run_id": run_id,
        "stage": stage,
        "trading_date": day,
        "event": event,
        "trigger": trigger,
        "detail": json.loads(json.dumps(detail, default=str)),
    }
    # the database's write lock taken up front (SQLite: BEGIN IMMEDIATE waits out another
    # run's write; a deferred transaction that read first was refused at once, "database is locked")
    with write_transaction(engine, f"stage-run:{run_id}") as conn:
        append_history(conn, tables.stage_runs, [row])
