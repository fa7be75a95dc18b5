"""T1 step 6 (autonomous execution) and T2 (morning suggestions) as stages."""

from __future__ import annotations

from dataclasses import asdict
from typing import TypedDict

from market.contract import conform
from market.errors import NotReadyError
from market.money import Money
from pipeline.stage import Stage, StageContext, StageOutcome


class TradeDaySummary(TypedDict):
    """t1_trade's summary: the day's valuation (money, printed as the contract prints it
    wherever the summary is shown: the CLI, the notebook) and what the day did, counted."""

    model_id: str | None
    cash: Money
    market_value: Money
    equity: Money
    liquid_equity: Money
    would_trade: int
    blocked_by_rails: int
    cut_by_rails: int
    rerun: bool
    superseded: str | None  # a rerun's note that the day's inputs were corrected after it ran
    orders: int
    decided: int
    dividends: int


def run_execute(ctx: StageContext) -> StageOutcome:
    day = ctx.desk.ai_day(ctx.trading_date)
    summary: TradeDaySummary = {
        "model_id": day.model_id,
        "cash": day.cash,
        "market_value": day.market_value,
        "equity": day.equity,
        "liquid_equity": day.liquid_equity,
        "would_trade": day.would_trade,
        "blocked_by_rails": day.blocked_by_rails,
        "cut_by_rails": day.cut_by_rails,
        "rerun": day.rerun,
        "superseded": day.superseded,
        "orders": len(day.orders),
        "decided": len(day.pending),
        "dividends": len(day.dividends),
    }
    return StageOutcome(
        summary=conform(summary, TradeDaySummary),
        tables={
            "orders": [o.to_json() for o in day.orders],
            "lapsed": [lapse.to_json() for lapse in day.lapsed],
            "decided": [
                {
                    "symbol": o.symbol,
                    "side": o.side,
                    "quantity": o.quantity,
                    "price": str(o.price),
                    "bound_by": o.bound_by,
                    "reason": o.reason,
                }
                for o in day.pending
            ],
            "dividends": day.dividends,
            "skipped": [{"symbol": s.symbol, "side": s.side, "reason": s.reason} for s in day.skipped],
            "illiquid_discounts": [{"symbol": k, "discount": v} for k, v in day.illiquid_discounts.items()],
        },
    )


EXECUTE = Stage(
    "t1_trade",
    run_execute,
    "Autonomous AI portfolio: yesterday's decisions filled in this session, today's exits and entries decided "
    "under the liquidity rails.",
)


def refuse_unexecuted_session(ctx: StageContext) -> None:
    """T2 for D plans from the previous session's signals, once T1 has closed it: refused
    (NotReadyError, before anything is written) while the record T2 reads
    (`suggestions.record_before`) has not scored D's previous trading day, whatever the AI
    book's history (a store whose book never executed planned from older signals), or the
    AI book, which executed a day before, has not executed it (T1 for it has not run or not
    finished). A store with nothing scored before D is left to T2's own refusal."""
    from portfolio.ai import record_name
    from portfolio.ledger import AI_PORTFOLIO, latest_executed_day
    from portfolio.suggestions import latest_scored_day, record_before

    day = ctx.trading_date
    previous = ctx.calendar.previous_trading_day(day)
    with ctx.engine.connect() as conn:
        record = record_before(conn, day)
        scored = latest_scored_day(conn, day, record)
        latest = latest_executed_day(conn, AI_PORTFOLIO)
    if latest is not None and latest < previous:
        missing = f"the AI book has not executed it (its latest executed day is {latest.isoformat()})"
    elif scored is not None and scored < previous:
        missing = f"the {record_name(record)} record has not scored it (its latest day is {scored.isoformat()})"
    else:
        return
    raise NotReadyError(
        f"T2 for {day.isoformat()} waits for T1 of {previous.isoformat()}: {missing}, and T2 plans from the "
        f"previous session's signals; run `marketintel run-day --date {previous.isoformat()}` first"
    )


def run_suggestions(ctx: StageContext) -> StageOutcome:
    refuse_unexecuted_session(ctx)
    result = ctx.desk.morning_suggestions(ctx.trading_date)
    return StageOutcome(
        summary={
            "signals_from": result.signals_from,
            "replaced": result.replaced,
            "portfolios": result.portfolios,
            "suggestions": len(result.suggestions),
            "expired": result.expired,
            "dividends": len(result.dividends),
        },
        tables={
            "suggestions": [asdict(s) for s in result.suggestions],
            "left_out": [asdict(s) for s in result.left_out],
            "dividends": result.dividends,
        },
    )


SUGGEST = Stage(
    "t2_suggestions",
    run_suggestions,
    "Morning pre-market suggestions for every client portfolio.",
    after_close=False,  # for the session ahead, before its close
)
