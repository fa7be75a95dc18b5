"""T1 step 6 (autonomous execution) and T2 (morning suggestions) as stages."""
from __future__ import annotations

from portfolio.ai import execute_day
from portfolio.suggestions import generate
from pipeline.stage import Stage, StageContext, StageOutcome


def run_execute(ctx: StageContext) -> StageOutcome:
    result = execute_day(ctx.engine, ctx.settings, ctx.trading_date)
    summary = {k: result[k] for k in ("model_id", "cash", "market_value", "equity", "liquid_equity", "would_trade",
                                      "blocked_by_rails", "cut_by_rails", "rerun")}
    summary["orders"] = len(result["orders"])
    summary["decided"] = len(result.get("pending", []))
    summary["dividends"] = len(result.get("dividends", []))  # a day executed before dividends were credited has none
    return StageOutcome(summary=summary, tables={
        "orders": result["orders"],
        "lapsed": result.get("lapsed", []),
        "decided": [{"symbol": o["symbol"], "side": o["side"], "quantity": o["quantity"], "price": o["price"],
                     "bound_by": o["rationale"]["limits"]["bound_by"], "reason": o["rationale"]["reason"]}
                    for o in result.get("pending", [])],
        "dividends": result.get("dividends", []),
        "skipped": [{"symbol": s["symbol"], "side": s["side"], "reason": s["reason"]} for s in result["skipped"]],
        "illiquid_discounts": [{"symbol": k, "discount": v} for k, v in result["illiquid_discounts"].items()],
    })


EXECUTE = Stage("t1_trade", run_execute, "Autonomous AI portfolio: yesterday's decisions filled in this session, today's exits and entries decided under the liquidity rails.")


def run_suggestions(ctx: StageContext) -> StageOutcome:
    result = generate(ctx.engine, ctx.settings, ctx.trading_date)
    return StageOutcome(
        summary={"signals_from": result["signals_from"], "portfolios": result["portfolios"],
                 "suggestions": len(result["suggestions"]), "expired": result["expired"],
                 "dividends": len(result["dividends"])},
        tables={"suggestions": result["suggestions"], "dividends": result["dividends"]},
    )


SUGGEST = Stage("t2_suggestions", run_suggestions, "Morning pre-market suggestions for every client portfolio.")
