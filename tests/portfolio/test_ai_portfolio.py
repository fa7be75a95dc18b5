"""T1 step 6 through the stage runner on a hand-set market: the trades it records, their
rationale and exchange-time timestamps, the day record, and re-runs that change nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from market.errors import ConflictError, NotReadyError
from market.money import to_cents
from market.settings import Settings
from pipeline.runner import run_stage
from portfolio import ledger
from portfolio.ai import execute_day
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_market, seed_predictions
from views.portfolio import ai_positions
from views.track_record import ai_track_record

MARKET = {
    "LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1},  # passes every gate
    "THIN": {"close": 20.0, "volume": 4_000, "bid": 19.9, "ask": 20.1},  # ADV_20 under 5,000
    "WIDE": {"close": 10.0, "volume": 90_000, "bid": 9.0, "ask": 11.0},  # 20% spread
    "SOLD": {"close": 30.0, "volume": 60_000, "bid": 29.9, "ask": 30.1},
}


def _count(engine, table) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def next_session(engine, day, bars: dict[str, dict]) -> None:
    """One more bar per symbol: the session after `day`'s decisions."""
    with engine.begin() as conn:
        append_history(
            conn,
            tables.eod_prices,
            [
                price_row(s, day, b["close"], b["volume"], b.get("bid"), b.get("ask"), cents=False)
                for s, b in bars.items()
            ],
        )


def test_a_day_decides_and_the_next_session_fills(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, MARKET)
    seed_predictions(
        engine,
        DAY,
        {
            "LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15},
            "THIN": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.15},
            "WIDE": {"score": 69.0, "action": "LONG", "tercile": "TOP", "weight": 0.15},
            "SOLD": {"score": 30.0, "action": "AVOID", "tercile": "BOTTOM"},
        },
    )
    with pytest.raises(NotReadyError, match="run t1_predict"):
        execute_day(engine, settings, CALENDAR.previous_trading_day(DAY))

    result = run_stage("t1_trade", DAY, settings=settings)
    # Decided after the close: nothing fills at it. LIQ: 15% of 10,000,000 is about 30,000
    # shares; the size gate allows 15% of ADV_20 = 6,000, decided for the next session.
    assert result.tables["orders"] == []
    (decided,) = result.tables["decided"]
    assert (decided["symbol"], decided["side"], decided["quantity"], decided["bound_by"]) == (
        "LIQ",
        "BUY",
        6000,
        "adv_20",
    )
    reasons = {row["symbol"]: row["reason"] for row in result.tables["skipped"]}
    assert reasons == {"THIN": "entry gates failed: adv_20", "WIDE": "entry gates failed: spread"}
    assert result.summary["blocked_by_rails"] == 2 and result.summary["cut_by_rails"] == 1
    assert Decimal(result.summary["cash"]) == Decimal("10000000")

    nxt = CALENDAR.next_trading_day(DAY)
    next_session(engine, nxt, {"LIQ": {"close": 51.0, "volume": 20_000, "bid": 50.9, "ask": 51.1}})
    seed_predictions(engine, nxt, {"LIQ": {"score": 60.0, "action": "HOLD", "tercile": "TOP"}})
    filled = run_stage("t1_trade", nxt, settings=settings)
    (order,) = filled.tables["orders"]
    # 25% of the session's 20,000 shares fill, at the next session's ask plus impact; the rest lapses
    assert (order["symbol"], order["side"], order["quantity"], order["decided_on"]) == (
        "LIQ",
        "BUY",
        5000,
        DAY.isoformat(),
    )
    assert Decimal(order["price"]) > Decimal("51.1")
    assert filled.tables["lapsed"] == [
        {
            "symbol": "LIQ",
            "side": "BUY",
            "quantity": 1000,
            "reason": "capped at 25% of the session's volume (20,000 shares)",
        }
    ]
    costs = {k: Decimal(v) for k, v in order["costs"].items()}
    assert costs["fees"] == Decimal(order["fees"]) and costs["spread"] == Decimal("0.1") * 5000
    assert costs["total"] == costs["fees"] + costs["spread"] + costs["impact"]
    gross = to_cents(Decimal(order["price"]) * 5000)  # money moved is stored in cents
    assert Decimal(filled.summary["cash"]) == Decimal("10000000") - gross - Decimal(order["fees"])
    assert Decimal(order["fees"]) == to_cents(Decimal(order["fees"]))

    with engine.connect() as conn:
        (position,) = ai_positions(conn, nxt)
        (trade,) = ledger.trade_rows(conn, ledger.AI_PORTFOLIO)
    assert position["symbol"] == "LIQ" and position["direction"] == "LONG" and position["quantity"] == 5000
    assert trade["trading_date"] == nxt and position["timestamp"] == f"{nxt.isoformat()}T16:00:00"
    assert trade["rationale"]["score"] == 71.0 and trade["rationale"]["gates"]["passed"] is True
    assert trade["rationale"]["fill"]["touch"] == 51.1 and trade["rationale"]["decided_on"] == DAY.isoformat()
    stored = (trade["fees"], trade["spread_cost"], trade["impact_cost"])
    assert stored == (costs["fees"], costs["spread"], costs["impact"])  # the fill's parts, as the trade's columns

    with engine.connect() as conn:
        record = ai_track_record(conn, settings.ai_starting_cash).as_dict()
    # the record's costs are the parts the fill stored; its return is equity over the opening cash
    assert record["days"] == 2 and record["trades"] == 1
    assert record["costs"]["total"] == to_cents(costs["total"])  # exact money, to the cent
    equity = float(Decimal(filled.summary["cash"])) + 5000 * 51.0
    assert record["total_return"] == pytest.approx(equity / 10_000_000 - 1, abs=1e-4)
    assert set(record["benchmarks"]["equal_weight_liquid"]) >= {"information_ratio", "tracking_error", "beta"}

    counts = {t.name: _count(engine, t) for t in (tables.trades, tables.cash_entries, tables.portfolio_days)}
    again = run_stage("t1_trade", nxt, settings=settings)
    assert again.summary["rerun"] is True and again.tables["orders"] == filled.tables["orders"]
    assert {t.name: _count(engine, t) for t in (tables.trades, tables.cash_entries, tables.portfolio_days)} == counts

    with pytest.raises(ConflictError, match=f"already executed {nxt.isoformat()}"):
        seed_predictions(
            engine, CALENDAR.previous_trading_day(DAY), {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "TOP"}}
        )
        execute_day(engine, settings, CALENDAR.previous_trading_day(DAY))


def test_an_avoid_name_is_sold_at_the_next_sessions_bid(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, MARKET)
    seed_predictions(engine, DAY, {"LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15}})
    execute_day(engine, settings, DAY)
    days = [CALENDAR.add_trading_days(DAY, i) for i in (1, 2, 3)]
    next_session(engine, days[0], {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}})
    seed_predictions(engine, days[0], {"LIQ": {"score": 40.0, "action": "AVOID", "tercile": "BOTTOM"}})
    bought = execute_day(engine, settings, days[0])
    assert [(o["side"], o["quantity"]) for o in bought.orders] == [("BUY", 6000)]
    next_session(engine, days[1], {"LIQ": {"close": 55.0, "volume": 40_000, "bid": 54.9, "ask": 55.1}})
    seed_predictions(engine, days[1], {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    result = execute_day(engine, settings, days[1])
    (sell,) = result.orders
    assert (sell["side"], sell["quantity"]) == ("SELL", 6000) and Decimal(sell["price"]) < Decimal("54.9")
    with engine.connect() as conn:
        assert ledger.holdings(conn, ledger.AI_PORTFOLIO) == {}
        (stored,) = [t for t in ledger.trade_rows(conn, ledger.AI_PORTFOLIO) if t["side"] == "SELL"]
    assert stored["rationale"]["reason"].startswith("turned AVOID") and stored["trading_date"] == days[1]
