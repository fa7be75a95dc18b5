"""What the Airflow task callables and callbacks do, kept out of `dags/` so the DAG files
stay thin and read nothing at parse time. Airflow itself is not imported here.

Every stage task ends its log with the stage summary (status, rows written per table,
duration, executed-notebook path) and returns it, so Airflow's closing "Returned value
was: ..." line and the task's XCom are that summary too (the DAGs annotate the task
functions `-> object`: a dict annotation makes Airflow push one XCom per key). A task that fails after its last
retry calls `alert_task_failure` (each DAG's `on_failure_callback`), which stores and sends
the signed webhook alert of `pipeline.notify`; retries in between alert nobody.
"""
from __future__ import annotations

import logging
import time
from datetime import date, datetime
from typing import Any, Mapping

from market.clock import exchange_date, parse_trading_date, utc_now
from market.errors import InvalidInputError, MarketIntelError

log = logging.getLogger(__name__)


def trading_date_from_context(context: Mapping[str, Any]) -> date:
    """The trading date of a run: the `run_date` param when given, else the run's own time
    on the exchange clock. A manually triggered Airflow 3 run has no logical date, so its
    `run_after` is used."""
    params = context.get("params") or {}
    if params.get("run_date"):
        return parse_trading_date(str(params["run_date"]))
    moment = context.get("logical_date")
    if moment is None and context.get("dag_run") is not None:
        moment = context["dag_run"].run_after
    if moment is None:
        raise InvalidInputError("the run has neither a run_date param, a logical date nor a run_after time")
    return exchange_date(moment)


def run_notebook_task(stage_name: str, context: Mapping[str, Any]) -> dict[str, Any]:
    """Execute the stage notebook for the run's trading date; log the stage summary as the
    last line (a failed stage's too, before the failure propagates) and return it."""
    from pipeline.notebooks import run_stage_notebook

    day = trading_date_from_context(context)
    since, started = utc_now(), time.monotonic()
    try:
        run_stage_notebook(stage_name, day, trigger="airflow")
    except Exception:
        log_stage_summary(stage_name, day, since, time.monotonic() - started)
        raise
    return log_stage_summary(stage_name, day, since, time.monotonic() - started)


def log_stage_summary(stage_name: str, day: date, since: datetime, seconds: float) -> dict[str, Any]:
    """The stage's summary for a task log: its latest outcome in `stage_runs` recorded since
    `since` (FAILED when the notebook died before recording one), the rows it inserted per
    table, how long the task's notebook ran and where the executed notebook is."""
    from sqlalchemy import select

    from market.settings import get_settings
    from pipeline.notebooks import notebook_paths
    from store import tables
    from store.engine import service_engine

    settings = get_settings()
    c = tables.stage_runs.c
    with service_engine(settings).connect() as conn:
        row = conn.execute(select(c.event, c.detail).where(
            c.stage == stage_name, c.trading_date == day, c.recorded_at >= since,
            c.event.in_(["SUCCEEDED", "FAILED", "SKIPPED"])).order_by(c.recorded_at.desc(), c.id.desc()).limit(1)).first()
    detail = dict(row.detail) if row else {}
    summary = {"stage": stage_name, "trading_date": day.isoformat(), "status": row.event if row else "FAILED",
               "rows_written": detail.get("rows_written", {}), "duration_seconds": round(seconds, 1),
               "notebook": str(notebook_paths(stage_name, day, settings)[1])}
    if "error" in detail or "reason" in detail:
        summary["reason"] = detail.get("error") or detail.get("reason")
    written = ", ".join(f"{table} {n}" for table, n in summary["rows_written"].items() if n) or "none"
    log.info("stage summary: %s for %s %s in %.1f s; rows written: %s; notebook: %s%s", stage_name, day.isoformat(),
             summary["status"], seconds, written, summary["notebook"],
             f"; reason: {summary['reason']}" if "reason" in summary else "")
    return summary


def trading_day_gate(context: Mapping[str, Any]) -> bool:
    """False (downstream tasks skip) when the run's trading date is an exchange holiday or
    a weekend, with the reason logged."""
    from market.clock import default_calendar

    day = trading_date_from_context(context)
    reason = default_calendar().closed_reason(day)
    if reason:
        log.info("no run for %s: the exchange is closed (%s)", day.isoformat(), reason)
        return False
    return True


def alert_task_failure(context: Mapping[str, Any]) -> None:
    """Airflow's `on_failure_callback` for every task, called once a task has failed its
    last retry: store and send (signed, retried, at least once) a CRITICAL alert naming the
    DAG, the task, the trading date and the reason. A failed T1 pre-flight is the
    PREFLIGHT_FAILED alert (`marketintel run-day` sends the same one); any other task is
    TASK_FAILED, one per DAG run, task and try, so clearing a task that fails again alerts
    again. An alert that cannot be stored or sent is logged, never raised: the callback must
    not hide the task's own failure."""
    from market.settings import get_settings
    from pipeline.notify import Notification, alert
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
        if task_id == "t1_preflight":
            alert_failed_preflight(day, reason)
            return
        try_number = getattr(ti, "try_number", 1)
        settings = get_settings()
        alert(service_engine(settings), settings, Notification(
            f"{day.isoformat()}:task-failed:{dag_id}.{task_id}:{run_id}:{try_number}", day, "TASK_FAILED", "CRITICAL",
            f"{dag_id}.{task_id} failed for {day.isoformat()} after {try_number} tries",
            {"dag_id": dag_id, "task_id": task_id, "run_id": run_id, "try_number": try_number, "reason": reason,
             "log_url": getattr(ti, "log_url", None)}))
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("the failure alert for %s.%s on %s could not be stored or sent", dag_id, task_id, day)
