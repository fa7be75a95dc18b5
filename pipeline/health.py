"""The `health` stage: is the store reachable, current and append-only, did the previous
trading day's pipeline finish, and what does the store hold.

It records one row per check in `health_checks` for the date; re-running it when nothing
changed writes nothing, while a changed row count becomes a new version of that check.

`previous_day`: each T0 and T1 stage's outcome for the previous trading day in
`stage_runs`; a stage that SUCCEEDED or SKIPPED (said why it had nothing to do) for the
day is done, even when a later re-run of it failed: every stage is one transaction, so a
failed re-run left what the success stored (a T0 re-run refused by the exchange leaves the
day's COMPLETE delivery, and T1 ran on it); such re-runs are listed as `failed_reruns`,
not failures. T0 is done for a day whose latest delivery is COMPLETE, whoever delivered it
(`t0_scrape`, or `marketintel backfill` filling a day T0 missed), as the pre-flight counts
it (`pipeline.preflight.complete_deliveries`). A stage that never succeeded and last FAILED, started and never finished,
or never ran is not done, and the check names each. A
day nobody ran was otherwise seen only in Airflow's failure alerts, and not at all when a
DAG run never started. A store where no T0 or T1 stage has run before the date (a new
one, or one whose earlier days were backfilled) has nothing to check: ok, and it says so.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import Connection, select, text

from market.clock import TradingCalendar
from pipeline.preflight import complete_deliveries
from pipeline.stage import Stage, StageContext, StageOutcome
from pipeline.stage_lists import T0_STAGES, T1_STAGES
from store import tables
from store.history import append_history, row_counts
from store.inspection import tables_without_append_only
from store.migrations import status as migration_status

# Tables the health stage itself (or the runner around it) writes: counting them would
# make every re-run differ from the last.
_SELF_WRITTEN = {"health_checks", "stage_runs", "schema_migrations"}


def run_health(ctx: StageContext) -> StageOutcome:
    """The checks, recorded; the summary says `healthy` and names the failed checks, and a
    failed check is the outcome's `alarm` (pipeline/stage.py): the stage still SUCCEEDED
    (its findings are recorded and its notebook shows them), and the callers make an
    unhealthy store seen: `marketintel stage run health` exits 2, the Airflow task fails
    (so the DAG's failure alert is sent)."""
    with ctx.engine.connect() as conn:
        backend = conn.execute(text("SELECT 1")).scalar_one() == 1 and ctx.engine.dialect.name
        counts = row_counts(conn, [t for t in tables.HISTORY_TABLES.values() if t.name not in _SELF_WRITTEN])
        previous = _previous_day(conn, ctx.calendar, ctx.trading_date)
    day = ctx.trading_date
    checks = [*_store_checks(ctx, backend), previous, {"check_name": "row_counts", "ok": True, "detail": counts}]
    with ctx.transaction() as conn:
        written = append_history(conn, tables.health_checks, [{"trading_date": day, **c} for c in checks])
    failed = [c["check_name"] for c in checks if not c["ok"]]
    with ctx.engine.connect() as conn:
        model = ctx.desk.monitor_state(conn, as_of=day)  # of the day checked: a re-run shows nothing later
    return StageOutcome(
        alarm=_alarm(checks, day) if failed else None,
        summary={
            "healthy": not failed,
            "failed_checks": failed,
            "database": backend,
            "total_rows": sum(counts.values()),
            "health_rows_written": written.inserted,
            # the model monitor's latest day (t1_monitor; docs/monitoring.md), shown, not a health check of the store
            "model_monitor": model["state"],
            "model_monitor_date": model["trading_date"].isoformat() if model["trading_date"] else None,
            "model_monitor_alerts": [c["check"] for c in model["checks"] if c["state"] == "ALERT"],
            # how far behind that day is: the predicted days after it (every one when it never ran)
            "model_monitor_unmonitored_days": model["unmonitored_days"],
            "model_monitor_latest_predicted": model["latest_predicted"].isoformat()
            if model["latest_predicted"]
            else None,
        },
        tables={
            "checks": [{"check": c["check_name"], "ok": c["ok"]} for c in checks],
            "row_counts": [{"table": name, "rows": n} for name, n in sorted(counts.items())],
            "model_monitor": [
                {"check": c["check"], "state": c["state"], "figure": c["figure"]} for c in model["checks"]
            ],
        },
    )


def _store_checks(ctx: StageContext, backend: object) -> list[dict]:
    """The database, schema, append-only and calendar checks of the day, in that order."""
    migrations = migration_status(ctx.engine)
    unguarded = tables_without_append_only(ctx.engine)
    day = ctx.trading_date
    closed = ctx.calendar.closed_reason(day)
    return [
        {"check_name": "database", "ok": bool(backend), "detail": {"backend": backend}},
        {
            "check_name": "schema",
            "ok": all(m.state == "applied" for m in migrations),
            "detail": {"versions": {f"{m.version:04d}_{m.name}": m.state for m in migrations}},
        },
        {"check_name": "append_only", "ok": not unguarded, "detail": {"unguarded_tables": unguarded}},
        {
            "check_name": "calendar",
            "ok": True,
            "detail": {
                "trading_day": closed is None,
                "closed_reason": closed,
                "previous_trading_day": ctx.calendar.previous_trading_day(day).isoformat(),
                "next_trading_day": ctx.calendar.next_trading_day(day).isoformat(),
            },
        },
    ]


def _alarm(checks: list[dict], day: date) -> str:
    """One line naming each failed check, with what `previous_day` found wrong."""
    named = []
    for c in checks:
        if c["ok"]:
            continue
        found = {k: v for k, v in c["detail"].items() if k in ("failed", "unfinished", "not_run") and v}
        said = "; ".join(f"{k.replace('_', ' ')} {', '.join(v)}" for k, v in found.items())
        on = c["detail"].get("trading_date")
        named.append(f"{c['check_name']} ({on}: {said})" if said else c["check_name"])
    return f"the store is not healthy on {day.isoformat()}: failed checks {', '.join(named)}"


PIPELINE_STAGES = (*T0_STAGES, *T1_STAGES)  # what a trading day's close runs, in order
_OUTCOMES = ("SUCCEEDED", "SKIPPED", "FAILED")


def _previous_day(conn: Connection, calendar: TradingCalendar, day: date) -> dict:
    """The `previous_day` check (module docstring): the previous trading day's T0 and T1
    stages by their latest outcome."""
    previous = calendar.previous_trading_day(day)
    c = tables.stage_runs.c
    wanted = c.stage.in_(PIPELINE_STAGES)
    detail: dict = {"trading_date": previous.isoformat()}
    if conn.execute(select(c.id).where(wanted, c.trading_date < day).limit(1)).first() is None:
        return {
            "check_name": "previous_day",
            "ok": True,
            "detail": {**detail, "reason": "no T0 or T1 stage ran before"},
        }
    rows = conn.execute(
        select(c.stage, c.event).where(wanted, c.trading_date == previous).order_by(c.recorded_at, c.id)
    ).all()
    latest = {stage: event for stage, event in rows if event in _OUTCOMES}
    done = {stage for stage, event in rows if event in ("SUCCEEDED", "SKIPPED")}
    started = {stage for stage, _ in rows}
    if complete_deliveries(conn, [tables.deliveries.c.trading_date == previous]):
        done |= {"t0_scrape"}  # delivered whole, by T0's scrape or by `marketintel backfill`
    detail["failed"] = [s for s in PIPELINE_STAGES if latest.get(s) == "FAILED" and s not in done]
    detail["unfinished"] = [s for s in PIPELINE_STAGES if s in started and s not in latest and s not in done]
    detail["not_run"] = [s for s in PIPELINE_STAGES if s not in started and s not in done]
    # a re-run that failed after the stage had succeeded for the day: shown, not a failure
    detail["failed_reruns"] = [s for s in PIPELINE_STAGES if latest.get(s) == "FAILED" and s in done]
    ok = not (detail["failed"] or detail["unfinished"] or detail["not_run"])
    return {"check_name": "previous_day", "ok": ok, "detail": detail}


HEALTH = Stage(
    name="health",
    run=run_health,
    description=(
        "Check the store (reachable, schema current, append-only), the previous trading day's T0 and T1, "
        "and count its rows."
    ),
    trading_days_only=False,
)
