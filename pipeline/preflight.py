"""T1 step 1, pre-flight: refuse to score a day that T0 did not deliver whole.

The day passes when the AI book can still trade it (`refuse_untradable`: a day before the
book's latest executed day that it never executed can only be re-scored), no earlier day
waits for T1 (`untraded_days`: T0 or a backfill delivered it COMPLETE, the AI
book has not traded it and still can: the book executes its days in date order, so a later
day traded first would leave it refused for good), every trading day since the book's latest
executed day was delivered whole (`undelivered_days`: else the day would read the sessions
between as one, and those days could never be traded; the operator declares an unscheduled
closure in MARKETINTEL_EXCHANGE_CLOSURES, which the calendar reads), the latest delivery for
it is COMPLETE with no unresolved errors and every instrument active on that date (listed on
or before it, not delisted by it) has an end-of-day row for it; a no-trade day is a row with zero volume,
which counts as present. Otherwise `NotReadyError` says what is missing, and T1 stops
there, before any T1 stage writes.
"""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import Connection, Engine, func, select

from market.clock import TradingCalendar
from market.errors import NotReadyError
from pipeline.stage import Stage, StageContext, StageOutcome
from portfolio.ledger import AI_PORTFOLIO, executed_on, latest_executed_day
from store import tables
from store.history import current_rows


def untraded_days(conn: Connection, through: date) -> list[date]:
    """The days T1 still owes, earliest first, up to and including `through`: each trading
    day after the AI book's latest executed day whose latest T0 delivery (`deliveries`) is
    COMPLETE, whoever delivered it (`t0_scrape`, `marketintel backfill`), and whose
    `t1_trade` has not succeeded. Before the book's first executed day, the history
    delivered before T0's first scrape is not owed (the book starts after it). T1 runs them
    in date order (the pre-flight refuses a later day while one is owed; the asset-started
    Airflow run takes the first)."""
    d, c = tables.deliveries.c, tables.stage_runs.c
    floor = latest_executed_day(conn, AI_PORTFOLIO)
    if floor is None:
        scraped = select(func.min(c.trading_date)).where(c.stage == "t0_scrape", c.event == "SUCCEEDED")
        first = conn.execute(scraped).scalar()
        if first is None:
            return []
        floor = first - timedelta(days=1)
    delivered = complete_deliveries(conn, [d.trading_date <= through, d.trading_date > floor])
    traded = select(c.trading_date).where(c.stage == "t1_trade", c.event == "SUCCEEDED", c.trading_date <= through)
    return sorted(delivered - set(conn.execute(traded.distinct()).scalars()))


def complete_deliveries(conn: Connection, where: list) -> set[date]:
    """The days (of those `where` selects in `deliveries`) whose latest T0 delivery is
    COMPLETE, whoever delivered it (`t0_scrape`, `marketintel backfill`): what T1 owes and
    the health check's `previous_day` count as delivered."""
    rows = current_rows(conn, tables.deliveries, where=where)
    return {r["trading_date"] for r in rows if r["status"] == "COMPLETE"}


def refuse_untradable(conn: Connection, day: date) -> None:
    """Refuse a day before the AI book's latest executed day that the book never executed:
    T1 would score, monitor, analyse and notify it, then fail at `t1_trade` (the book
    executes its days in date order). A day the book executed may be run again."""
    latest = latest_executed_day(conn, AI_PORTFOLIO)
    if latest is not None and day < latest and not executed_on(conn, AI_PORTFOLIO, day):
        raise NotReadyError(
            f"T1 for {day.isoformat()} cannot trade it: the AI book has executed {latest.isoformat()} and executes "
            f"its days in date order, so {day.isoformat()} can only be re-scored "
            f"(`marketintel stage run t1_predict --date {day.isoformat()}`), not traded"
        )


def undelivered_days(conn: Connection, calendar: TradingCalendar, day: date) -> list[date]:
    """The trading days (by `calendar`) after the AI book's latest executed day and before
    `day` whose latest delivery is not COMPLETE, or that have none: T1 for `day` would read
    the sessions since the book's last day as one (each return, each fill since), and the
    book, which executes its days in date order, could never trade them once they came.
    None before the book's first executed day (it starts where it starts)."""
    latest = latest_executed_day(conn, AI_PORTFOLIO)
    if latest is None or day <= latest:
        return []
    between = calendar.trading_days(latest + timedelta(days=1), day - timedelta(days=1))
    if not between:
        return []
    d = tables.deliveries.c
    delivered = complete_deliveries(conn, [d.trading_date > latest, d.trading_date < day])
    return [x for x in between if x not in delivered]


def refuse_gaps(conn: Connection, calendar: TradingCalendar, day: date) -> None:
    """Refuse `day` while an earlier day is owed (`untraded_days`: delivered, not traded) or
    a trading day since the book's latest is not delivered whole (`undelivered_days`), naming
    the first and how to settle it: deliver it, or declare an unscheduled closure."""
    owed = [d for d in untraded_days(conn, day) if d < day]
    if owed:
        first = owed[0].isoformat()
        raise NotReadyError(
            f"T1 for {day.isoformat()} waits for {first}: T0 delivered it and T1 has not traded it, and the AI "
            f"book executes its days in date order; run `marketintel run-day --date {first}` "
            f"(or trigger T1 with run_date {first}) first"
        )
    missing = undelivered_days(conn, calendar, day)
    if missing:
        first, more = missing[0].isoformat(), len(missing) - 1
        also = f" (and {more} later trading day{'s' if more > 1 else ''} before it)" if more else ""
        raise NotReadyError(
            f"T1 for {day.isoformat()} waits for {first}{also}: the calendar says the exchange traded then and no "
            f"complete delivery is stored, so the AI book would read the sessions since its last day as one and "
            f"could never trade {first}; deliver it (`marketintel scrape --date {first}`) and run T1 for it, "
            f"or, if the exchange did not open that day, add it to MARKETINTEL_EXCHANGE_CLOSURES"
        )


def check_delivery(engine: Engine, day: date, calendar: TradingCalendar) -> dict:
    with engine.connect() as conn:
        refuse_untradable(conn, day)
        refuse_gaps(conn, calendar, day)
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


def alert_failed_preflight(day: date, reason: str, run_id: str, try_number: int = 1) -> None:
    """Store and send the PREFLIGHT_FAILED alert: called by Airflow on the last retry (its
    DAG run and try) and by `marketintel run-day`, which has no retries (an id of its own
    per invocation). Its id names the run and try, as TASK_FAILED's does, so a pre-flight
    that fails again for the same day (a cleared task, another run-day) alerts again."""
    from analysis.notify import Notification, alert
    from market.settings import get_settings
    from store.engine import service_engine

    settings = get_settings()
    alert(
        service_engine(settings),
        settings,
        Notification(
            f"{day.isoformat()}:preflight-failed:{run_id}:{try_number}",
            day,
            "PREFLIGHT_FAILED",
            "CRITICAL",
            f"T1 pre-flight failed for {day.isoformat()}: the day is not scored or traded",
            {"reason": reason, "run_id": run_id, "try_number": try_number},
        ),
    )


def run_preflight(ctx: StageContext) -> StageOutcome:
    report = check_delivery(ctx.engine, ctx.trading_date, ctx.calendar)
    return StageOutcome(
        summary={k: v for k, v in report.items() if k != "warnings"} | {"warning_count": len(report["warnings"])},
        tables={"warnings": [{"warning": w} for w in report["warnings"]]},
    )


PREFLIGHT = Stage(
    name="t1_preflight",
    run=run_preflight,
    description="Refuse the day unless T0 delivered it complete and validated.",
)
