"""T1 step 6 through the stage runner on a hand-set market: the trades it records, their
rationale and exchange-time timestamps, the day record, and re-runs that change nothing."""
from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from market.errors import ConflictError, NotReadyError
from market.settings import Settings
from pipeline.runner import run_stage
from portfolio import ledger
from portfolio.ai import execute_day
from views.portfolio import ai_positions, equity_curve
from store import tables
from store.engine import service_engine
from tests.portfolio.seed import CALENDAR, DAY, seed_market, seed_predictions

MARKET = {
    "LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1},    # passes every gate
    "THIN": {"close": 20.0, "volume": 4_000, "bid": 19.9, "ask": 20.1},    # ADV_20 under 5,000
    "WIDE": {"close": 10.0, "volume": 90_000, "bid": 9.0, "ask": 11.0},    # 20% spread
    "SOLD": {"close": 30.0, "volume": 60_000, "bid": 29.9, "ask": 30.1},
}


def _count(engine, table) -> int:  # noqa: ANN001
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_a_day_of_the_ai_portfolio(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, MARKET)
    seed_predictions(engine, DAY, {
        "LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15},
        "THIN": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.15},
        "WIDE": {"score": 69.0, "action": "LONG", "tercile": "TOP", "weight": 0.15},
        "SOLD": {"score": 30.0, "action": "AVOID", "tercile": "BOTTOM"},
    })
    with pytest.raises(NotReadyError, match="run t1_predict"):
        execute_day(engine, settings, CALENDAR.previous_trading_day(DAY))

    result = run_stage("t1_trade", DAY, settings=settings)
    # LIQ: 15% of 10,000,000 is 30,000 shares; the size gate allows 15% of ADV_20 = 6,000
    assert result.tables["orders"] == [{"symbol": "LIQ", "side": "BUY", "quantity": 6000, "price": "50.000000",
                                         "fees": "1500.000000", "bound_by": "adv_20"}]
    reasons = {row["symbol"]: row["reason"] for row in result.tables["skipped"]}
    assert reasons == {"THIN": "entry gates failed: adv_20", "WIDE": "entry gates failed: spread"}
    assert result.summary["blocked_by_rails"] == 2 and result.summary["cut_by_rails"] == 1
    assert Decimal(result.summary["cash"]) == Decimal("10000000") - 300_000 - 1_500

    with engine.connect() as conn:
        (position,) = ai_positions(conn, DAY)
        curve = equity_curve(conn)
    assert position["symbol"] == "LIQ" and position["direction"] == "LONG" and position["quantity"] == 6000
    assert position["timestamp"] == "2026-11-20T16:00:00"
    assert position["rationale"]["score"] == 71.0 and position["rationale"]["gates"]["passed"] is True
    assert position["rationale"]["limits"]["bound_by"] == "adv_20" and position["flags"] == []
    assert curve == [{"trading_date": DAY, "cash": 9_698_500.0, "market_value": 300_000.0,
                      "equity": 9_998_500.0, "liquid_equity": 9_998_500.0}]

    counts = {t.name: _count(engine, t) for t in (tables.trades, tables.cash_entries, tables.portfolio_days)}
    again = run_stage("t1_trade", DAY, settings=settings)
    assert again.summary["rerun"] is True and again.tables["orders"] == result.tables["orders"]
    assert {t.name: _count(engine, t) for t in (tables.trades, tables.cash_entries, tables.portfolio_days)} == counts

    with pytest.raises(ConflictError, match="already executed 2026-11-20"):
        seed_predictions(engine, CALENDAR.previous_trading_day(DAY), {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "TOP"}})
        execute_day(engine, settings, CALENDAR.previous_trading_day(DAY))


def test_the_next_day_exits_an_avoid_name(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, MARKET)
    seed_predictions(engine, DAY, {"LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15}})
    execute_day(engine, settings, DAY)
    nxt = CALENDAR.next_trading_day(DAY)
    seed_market(engine, {"LIQ": {"close": 55.0, "volume": 40_000, "bid": 54.9, "ask": 55.1}}, day=nxt)
    seed_predictions(engine, nxt, {"LIQ": {"score": 40.0, "action": "AVOID", "tercile": "BOTTOM"}})
    result = execute_day(engine, settings, nxt)
    assert [(o["symbol"], o["side"], o["quantity"]) for o in result["orders"]] == [("LIQ", "SELL", 6000)]
    with engine.connect() as conn:
        assert ledger.holdings(conn, ledger.AI_PORTFOLIO) == {}
        (sell,) = [t for t in ledger.trade_rows(conn, ledger.AI_PORTFOLIO) if t["side"] == "SELL"]
        curve = equity_curve(conn)
    assert sell["rationale"]["reason"] == "turned AVOID" and sell["rationale"]["exit"]["flags"] == []
    # bought 6,000 at 50 (+1,500 fee), sold at 55 (-1,650 fee)
    assert curve[-1]["equity"] == 10_000_000 - 1_500 + 30_000 - 1_650
