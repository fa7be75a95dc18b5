"""T1 step 1, pre-flight: refuse to score a day that T0 did not deliver whole.

The day passes when the latest delivery for it is COMPLETE with no unresolved errors and
every instrument active on that date (listed on or before it, not delisted by it) has an
end-of-day row for it; a no-trade day is a row with zero volume, which counts as present.
Otherwise `NotReadyError` says what is missing, and T1 stops there.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import Engine

from market.errors import NotReadyError
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import current_rows


def check_delivery(engine: Engine, day: date) -> dict:
    with engine.connect() as conn:
        deliveries = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == day])
        if not deliveries:
            raise NotReadyError(
                f"no T0 delivery for {day.isoformat()}; run `marketintel scrape --date {day.isoformat()}`"
            )
        delivery = deliveries[0]
        if delivery["status"] != "COMPLETE" or delivery["manifest"].get("errors"):
            reasons = "; ".join(delivery["manifest"].get("errors", [])[:5]) or "no reason recorded"
            raise NotReadyError(f"T0 delivery for {day.isoformat()} is {delivery['status']}: {reasons}")
        active = {
            r["symbol"]
            for r in current_rows(conn, tables.instruments)
            if (r["listed_on"] is None or r["listed_on"] <= day)
            and (r["delisted_on"] is None or r["delisted_on"] > day)
        }
        prices = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == day])
    present = {p["symbol"] for p in prices}
    missing = sorted(active - present)
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise NotReadyError(f"T0 delivery for {day.isoformat()} lacks {len(missing)} active instruments: {shown}")
    return {
        "delivery_id": delivery["id"],
        "checksum": delivery["checksum"],
        "active_instruments": len(active),
        "traded": sum(1 for p in prices if p["volume"] > 0),
        "no_trade": sum(1 for p in prices if p["volume"] == 0),
        "halted": sum(1 for p in prices if p["halted"]),
        "warnings": delivery["manifest"].get("warnings", []),
    }


def alert_failed_preflight(day: date, reason: str) -> None:
    """Store and send the PREFLIGHT_FAILED alert: called by Airflow on the last retry and by
    `marketintel run-day`, which has no retries."""
    from analysis.notify import Notification, alert
    from market.settings import get_settings
    from store.engine import service_engine

    settings = get_settings()
    alert(
        service_engine(settings),
        settings,
        Notification(
            f"{day.isoformat()}:preflight-failed",
            day,
            "PREFLIGHT_FAILED",
            "CRITICAL",
            f"T1 pre-flight failed for {day.isoformat()}: the day is not scored or traded",
            {"reason": reason},
        ),
    )


def run_preflight(ctx: StageContext) -> StageOutcome:
    report = check_delivery(ctx.engine, ctx.trading_date)
    return StageOutcome(
        summary={k: v for k, v in report.items() if k != "warnings"} | {"warning_count": len(report["warnings"])},
        tables={"warnings": [{"warning": w} for w in report["warnings"]]},
    )


PREFLIGHT = Stage(
    name="t1_preflight",
    run=run_preflight,
    description="Refuse the day unless T0 delivered it complete and validated.",
)
