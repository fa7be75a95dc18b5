"""The `health` stage: is the store reachable, current and append-only, and what does it hold.

It records one row per check in `health_checks` for the date; re-running it when nothing
changed writes nothing, while a changed row count becomes a new version of that check.
"""

from __future__ import annotations

from sqlalchemy import text

from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import append_history, row_counts
from store.inspection import tables_without_append_only
from store.migrations import status as migration_status

# Tables the health stage itself (or the runner around it) writes: counting them would
# make every re-run differ from the last.
_SELF_WRITTEN = {"health_checks", "stage_runs", "schema_migrations"}


def run_health(ctx: StageContext) -> StageOutcome:
    with ctx.engine.connect() as conn:
        backend = conn.execute(text("SELECT 1")).scalar_one() == 1 and ctx.engine.dialect.name
        counts = row_counts(conn, [t for t in tables.HISTORY_TABLES.values() if t.name not in _SELF_WRITTEN])
    migrations = migration_status(ctx.engine)
    unguarded = tables_without_append_only(ctx.engine)
    day = ctx.trading_date
    closed = ctx.calendar.closed_reason(day)
    checks = [
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
        {"check_name": "row_counts", "ok": True, "detail": counts},
    ]
    with ctx.transaction() as conn:
        written = append_history(conn, tables.health_checks, [{"trading_date": day, **c} for c in checks])
    failed = [c["check_name"] for c in checks if not c["ok"]]
    with ctx.engine.connect() as conn:
        model = ctx.desk.monitor_state(conn)
    return StageOutcome(
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
        },
        tables={
            "checks": [{"check": c["check_name"], "ok": c["ok"]} for c in checks],
            "row_counts": [{"table": name, "rows": n} for name, n in sorted(counts.items())],
            "model_monitor": [
                {"check": c["check"], "state": c["state"], "figure": c["figure"]} for c in model["checks"]
            ],
        },
    )


HEALTH = Stage(
    name="health",
    run=run_health,
    description="Check the store (reachable, schema current, append-only) and count its rows.",
    trading_days_only=False,
)
