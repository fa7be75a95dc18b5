"""What the Airflow task callables and callbacks do, kept out of `dags/` so the DAG files
stay thin and read nothing at parse time. Airflow itself is not imported here.

Every stage task ends its log with the stage summary (status, rows written per table,
duration, executed-notebook path) and returns it, so Airflow's closing "Returned value
was: ..." line and the task's XCom are that summary too (the DAGs annotate the task
functions `-> object`: a dict annotation makes Airflow push one XCom per key). A task
that fails after its last retry calls `alert_task_failure` (each DAG's
`on_failure_callback`), which stores and sends the signed webhook alert of
`analysis.notify`; retries in between alert nobody.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from market.clock import exchange_date, parse_trading_date, utc_now
from market.errors import InvalidInputError, MarketIntelError, StageAlarmError

log = logging.getLogger(__name__)


def trading_date_from_context(context: Mapping[str, Any]) -> date:
    """The trading date of a run: the `run_date` param when given; else, for a run started
    by T0's delivery asset, the date that delivery carried (a T0 re-run for a past day
    starts T1 for that day, not for today), or an earlier delivered day T1 still owes
    (`_delivered_date`), and for a run started by T1's close asset the
    trading day after the day it closed (T2 is that morning's suggestions); else the run's
    own time on the exchange clock. A manually triggered Airflow 3 run has no logical date,
    so its `run_after` is used."""
    params = context.get("params") or {}
    if params.get("run_date"):
        return parse_trading_date(str(params["run_date"]))
    delivered = _delivered_date(context.get("triggering_asset_events"))
    if delivered is not None:
        return delivered
    moment = context.get("logical_date")
    if moment is None and context.get("dag_run") is not None:
        moment = context["dag_run"].run_after
    if moment is None:
        raise InvalidInputError("the run has neither a run_date param, a logical date nor a run_after time")
    return exchange_date(moment)


# Assets whose event names a day whose consumer runs for the next trading day: T1's close
# of day D starts T2 for D's next trading day (pipeline.airflow_plugin.T1_CLOSE).
NEXT_MORNING_ASSETS = frozenset({"marketintel_t1_close"})


def _delivered_date(events: Any) -> date | None:
    """The trading date a run started by asset events is for. Airflow hands a run every
    event queued since the last one, and they may name several days. T1's close names the
    next morning: the latest event's is run (an earlier morning has passed). T0's delivery:
    the earliest day T1 still owes up to the latest delivered (`pipeline.preflight
    .untraded_days`: the AI book executes its days in date order, and the pre-flight refuses
    a later one while an earlier is owed), so each run started by a delivery takes the next
    owed day; else (a correction of a day already traded) the latest event's day. The days
    not run are logged."""
    if not events:
        return None
    dated = sorted(
        (event.timestamp, _run_day_of(asset, event), _asset_name(asset, event))
        for asset in events
        for event in events[asset]
        if (getattr(event, "extra", None) or {}).get("trading_date")
    )
    if not dated:
        return None
    latest = dated[-1][1]
    owed = None if any(name in NEXT_MORNING_ASSETS for *_, name in dated) else _first_owed(max(d for _, d, _ in dated))
    day = owed or latest
    others = sorted({d.isoformat() for _, d, _ in dated} - {day.isoformat()})
    if others:
        log.warning(
            "the upstream asset named several days since the last run: running %s; %s",
            day.isoformat(),
            f"the next run started by a delivery takes the next of {', '.join(others)} still owed, "
            "or trigger them in date order with run_date"
            if owed
            else f"re-run {', '.join(others)} with run_date",
        )
    return day


def _first_owed(through: date) -> date | None:
    """The earliest day up to `through` delivered COMPLETE (by T0 or a backfill) that T1
    has not traded, if any: `untraded_days`, the pre-flight's rule (None also when the store
    cannot be read: the stage's pre-flight says why)."""
    from sqlalchemy.exc import SQLAlchemyError

    from market.settings import get_settings
    from pipeline.preflight import untraded_days
    from store.engine import service_engine

    try:
        with service_engine(get_settings()).connect() as conn:
            owed = untraded_days(conn, through)
    except SQLAlchemyError:
        log.exception("the days T1 owes could not be read; running the latest delivered day")
        return None
    return owed[0] if owed else None


def _asset_name(asset: Any, event: Any) -> str | None:
    return getattr(asset, "name", None) or getattr(getattr(event, "asset", None), "name", None)


def _run_day_of(asset: Any, event: Any) -> date:
    day = parse_trading_date(str(event.extra["trading_date"]))
    if _asset_name(asset, event) in NEXT_MORNING_ASSETS:
        from market.clock import default_calendar

        return default_calendar().next_trading_day(day)
    return day


def run_notebook_task(stage_name: str, context: Mapping[str, Any], input_stage: str | None = None) -> dict[str, Any]:
    """Execute the stage notebook for the run's trading date; log the stage summary as the
    last line (a failed stage's too, before the failure propagates) and return it. With
    `input_stage`, a scheduled or asset-triggered run does not run a stage again that
    already succeeded for the day after `input_stage`'s latest success (`_done_for_input`,
    the gate's rule): a run that retries the day's last stage (its first try failed) does
    not trade the day again."""
    from pipeline.notebooks import run_stage_notebook

    day = trading_date_from_context(context)
    done = _done_for_input(context, stage_name, day, input_stage) if input_stage else None
    if done is not None:
        return _not_run_again(stage_name, day, done, context)
    since, started, run_id = utc_now(), time.monotonic(), uuid.uuid4().hex
    try:
        run_stage_notebook(stage_name, day, trigger="airflow", run_id=run_id)
    except Exception as exc:
        try:
            log_stage_summary(stage_name, day, since, time.monotonic() - started, run_id, exc)
        except Exception:
            log.exception("no stage summary for %s on %s", stage_name, day.isoformat())
        raise
    summary = log_stage_summary(stage_name, day, since, time.monotonic() - started, run_id)
    _name_the_day(context, day, summary["status"])
    if summary.get("alarm"):  # it ran and recorded what it found, which needs a person: the task fails
        raise StageAlarmError(f"{stage_name} for {day.isoformat()}: {summary['alarm']}")
    return summary


def _name_the_day(context: Mapping[str, Any], day: date, status: str) -> None:
    """The task's asset events (T0's delivery, T1's close) name the day and the stage's status."""
    outlet_events = context.get("outlet_events")
    for outlet in getattr(context.get("task"), "outlets", None) or []:
        if outlet_events is not None:
            outlet_events[outlet].extra = {"trading_date": day.isoformat(), "status": status}


def _not_run_again(stage_name: str, day: date, done: Done, context: Mapping[str, Any]) -> dict[str, str]:
    """The summary of a stage task that did not run its stage again (`_done_for_input`),
    logged as a stage summary is. Its asset events still name the day, so a run they start
    (T2 after T1's close) is for that day and finds it done too."""
    why = done.said()
    log.info("stage summary: %s for %s SUCCEEDED earlier, not run again: %s", stage_name, day.isoformat(), why)
    _name_the_day(context, day, "SUCCEEDED")
    return {"stage": stage_name, "trading_date": day.isoformat(), "status": "SUCCEEDED", "not_run_again": why}


def log_stage_summary(
    stage_name: str,
    day: date,
    since: datetime,
    seconds: float,
    run_id: str | None = None,
    failure: Exception | None = None,
) -> dict[str, Any]:
    """The stage's summary for a task log: its latest outcome in `stage_runs` recorded since
    `since` (FAILED when the notebook died before recording one), the rows it inserted per
    table, how long the task's notebook ran and where the executed notebook is. A task that
    failed (`failure`) with nothing recorded and no notebook written (refused before it
    started: a day not closed, a webhook set up wrong) says so, with the refusal as its
    reason, rather than name a notebook that does not exist."""
    from market.settings import get_settings
    from pipeline.notebooks import executed_notebook
    from pipeline.runner import recorded_outcome
    from store.engine import service_engine

    settings = get_settings()
    outcome = recorded_outcome(service_engine(settings), stage_name, day, since, run_id)
    summary = {
        "stage": stage_name,
        "trading_date": day.isoformat(),
        "status": outcome["status"],
        "rows_written": outcome["rows_written"],
        "duration_seconds": round(seconds, 1),
        "notebook": str(notebook)
        if (notebook := executed_notebook(stage_name, day, settings, run_id)).is_file()
        else "none (not started)",
    }
    if failure is not None and "reason" not in outcome:
        outcome["reason"] = (
            failure.detail if isinstance(failure, MarketIntelError) else f"{type(failure).__name__}: {failure}"
        )
    for said in ("reason", "alarm", "note"):
        if said in outcome:
            summary[said] = outcome[said]
    written = ", ".join(f"{table} {n}" for table, n in summary["rows_written"].items() if n) or "none"
    log.info(
        "stage summary: %s for %s %s in %.1f s; rows written: %s; notebook: %s%s%s",
        stage_name,
        day.isoformat(),
        summary["status"],
        seconds,
        written,
        summary["notebook"],
        f"; reason: {summary['reason']}" if "reason" in summary else "",
        f"; note: {summary['note']}" if "note" in summary else "",
    )
    if "alarm" in summary:
        log.error("stage %s for %s found a problem: %s", stage_name, day.isoformat(), summary["alarm"])
    return summary


def trading_day_gate(
    context: Mapping[str, Any], current: tuple[str, str] | None = None, input_is_previous_day: bool = False
) -> bool:
    """False (downstream tasks skip) when the run's trading date is an exchange holiday or
    a weekend, with the reason logged.

    `current=(last_stage, input_stage)` also skips a scheduled or asset-triggered run when
    `last_stage` already succeeded for the day after `input_stage`'s latest success: T1 runs
    when T0's delivery asset updates and again on the 16:15 clock, and whichever comes
    second finds the day done for that delivery (T1's last stage, `t1_reports`, succeeded)
    and skips, so the day runs once per delivery; when the first failed on the way, the
    second runs, and each of its stage tasks passes over a stage already done
    (`run_notebook_task` with `input_stage`): t1_trade does not trade the day twice. A
    new T0 delivery (a correction) makes the day due again; manual and backfill runs
    always run (an operator asked for them). With `input_is_previous_day`
    the input is the previous trading day's: T2 for a morning runs once per T1 close of
    the day before (the asset run in the evening, then the 07:00 run skips). A `run_date`
    no retry can help, one that is not a date or one after the next trading day on the
    exchange clock, raises InvalidInputError, which the `trading_day` task turns into a
    failure without retries (`pipeline.airflow_plugin.trading_day_task`)."""
    from market.clock import default_calendar

    day = trading_date_from_context(context)
    calendar = default_calendar()
    reason = calendar.closed_reason(day)
    if reason:
        log.info("no run for %s: the exchange is closed (%s)", day.isoformat(), reason)
        return False
    due = calendar.next_trading_day(exchange_date(utc_now()))
    if day > due:  # nothing is published for it, and no retry changes that (the task fails at once)
        raise InvalidInputError(
            f"run_date {day.isoformat()} is after {due.isoformat()}, the next trading day on the exchange clock: "
            "nothing can be delivered or traded for it yet; trigger the run with a day up to that one"
        )
    done = _done_for_input(context, current[0], day, current[1], input_is_previous_day) if current else None
    if done is not None:
        log.info("no run for %s: %s", day.isoformat(), done.said())
        return False
    return True


@dataclass(frozen=True)
class Done:
    """A stage that succeeded for `day` after its input stage's latest success (`at`, and
    `delivered`, None when the input never succeeded) for `input_day`."""

    stage: str
    day: date
    at: datetime
    input_stage: str
    input_day: date
    delivered: datetime | None

    def said(self) -> str:
        return (
            f"{self.stage} already succeeded for this day at {self.at.isoformat()}, after {self.input_stage}'s "
            f"latest success for {self.input_day.isoformat()}; trigger with run_date to run it again"
        )


def _done_for_input(
    context: Mapping[str, Any], stage: str, day: date, input_stage: str, input_is_previous_day: bool = False
) -> Done | None:
    """For a scheduled or asset-triggered run (manual and backfill runs always run: an
    operator asked for them): `stage` already succeeded for `day` after `input_stage`'s
    latest success (for the previous trading day with `input_is_previous_day`), or None."""
    from market.clock import default_calendar

    run_type = str(getattr(context.get("dag_run"), "run_type", "") or "")
    if run_type.split(".")[-1].lower() not in ("scheduled", "asset_triggered"):
        return None
    input_day = default_calendar().previous_trading_day(day) if input_is_previous_day else day
    done, delivered = _last_success(stage, day), _last_success(input_stage, input_day)
    if done is not None and (delivered is None or done > delivered):
        return Done(stage, day, done, input_stage, input_day, delivered)
    return None


def _last_success(stage: str, day: date) -> datetime | None:
    from sqlalchemy import func, select

    from market.settings import get_settings
    from store import tables
    from store.engine import service_engine
    from store.types import as_utc

    c = tables.stage_runs.c
    with service_engine(get_settings()).connect() as conn:
        moment = conn.execute(
            select(func.max(c.recorded_at)).where(c.stage == stage, c.trading_date == day, c.event == "SUCCEEDED")
        ).scalar()
    return as_utc(moment) if moment is not None else None


def alert_task_failure(context: Mapping[str, Any]) -> None:
    """Airflow's `on_failure_callback` for every task, called once a task has failed its
    last retry: store and send (signed, retried, at least once) a CRITICAL alert naming the
    DAG, the task, the trading date and the reason. A failed T1 pre-flight is the
    PREFLIGHT_FAILED alert (`marketintel run-day` sends the same one); any other task is
    TASK_FAILED, one per DAG run, task and try, so clearing a task that fails again alerts
    again. An alert that cannot be stored or sent is logged, never raised: the callback must
    not hide the task's own failure."""
    from analysis.notify import Notification, alert
    from market.settings import get_settings
    from pipeline.preflight import alert_failed_preflight
    from store.engine import service_engine

    ti = context.get("ti") or context.get("task_instance")
    dag_id = getattr(context.get("dag"), "dag_id", None) or getattr(ti, "dag_id", "?")
    task_id = getattr(ti, "task_id", None) or getattr(context.get("task"), "task_id", "?")
    run_id = getattr(context.get("dag_run"), "run_id", None) or context.get("run_id") or "?"
    exc = context.get("exception")
    reason = exc.detail if isinstance(exc, MarketIntelError) else f"{type(exc).__name__}: {exc}" if exc else "unknown"
    try:
        day = trading_date_from_context(context)
    except MarketIntelError:  # a malformed run_date param is what failed: date the alert today
        day = exchange_date(utc_now())
    try:
        try_number = getattr(ti, "try_number", 1)
        if task_id == "t1_preflight":
            alert_failed_preflight(day, reason, run_id, try_number)
            return
        settings = get_settings()
        alert(
            service_engine(settings),
            settings,
            Notification(
                f"{day.isoformat()}:task-failed:{dag_id}.{task_id}:{run_id}:{try_number}",
                day,
                "TASK_FAILED",
                "CRITICAL",
                f"{dag_id}.{task_id} failed for {day.isoformat()} after {try_number} tries",
                {
                    "dag_id": dag_id,
                    "task_id": task_id,
                    "run_id": run_id,
                    "try_number": try_number,
                    "reason": reason,
                    "log_url": getattr(ti, "log_url", None),
                },
            ),
        )
    except Exception:
        log.exception("the failure alert for %s.%s on %s could not be stored or sent", dag_id, task_id, day)
