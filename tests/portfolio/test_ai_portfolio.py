"""T1 step 6 through the stage runner on a hand-set market: the trades it records, their
rationale and exchange-time timestamps, the day record, and re-runs that change nothing."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from market.costs import CostBreakdown
from market.errors import ConflictError, NotReadyError
from market.money import to_cents
from market.settings import Settings
from pipeline.runner import run_stage
from portfolio import ledger
from portfolio.ai import ExecutedDay, execute_day
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
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
    assert again.summary["superseded"] is None
    assert {t.name: _count(engine, t) for t in (tables.trades, tables.cash_entries, tables.portfolio_days)} == counts
    # a corrected close for the executed day (an adversarial run: the rerun said nothing of it)
    with engine.begin() as conn:
        (close,) = current_rows(
            conn,
            tables.eod_prices,
            where=[tables.eod_prices.c.symbol == "LIQ", tables.eod_prices.c.trading_date == nxt],
        )
        corrected = {k: close[k] for k in ("symbol", "trading_date", "volume", "source")}
        append_history(conn, tables.eod_prices, [{**corrected, "close": close["close"] + 0.5}])
    corrected_rerun = run_stage("t1_trade", nxt, settings=settings)
    assert corrected_rerun.summary["rerun"] is True and corrected_rerun.tables["orders"] == filled.tables["orders"]
    assert "on inputs corrected since (1 eod_prices recorded after it)" in corrected_rerun.summary["superseded"]
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
    assert [(o.side, o.quantity) for o in bought.orders] == [("BUY", 6000)]
    next_session(engine, days[1], {"LIQ": {"close": 55.0, "volume": 40_000, "bid": 54.9, "ask": 55.1}})
    seed_predictions(engine, days[1], {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    result = execute_day(engine, settings, days[1])
    (sell,) = result.orders
    assert (sell.side, sell.quantity) == ("SELL", 6000) and sell.price < Decimal("54.9")
    with engine.connect() as conn:
        assert ledger.holdings(conn, ledger.AI_PORTFOLIO) == {}
        (stored,) = [t for t in ledger.trade_rows(conn, ledger.AI_PORTFOLIO) if t["side"] == "SELL"]
    assert stored["rationale"]["reason"].startswith("turned AVOID") and stored["trading_date"] == days[1]


# A day as the first AI book stored it (portfolio/ai.py before the next-session fills): no
# record name, lapses, pending orders, dividends or delistings; fills at the decision's
# close without cost parts or a deciding day; a refused buy with its limits.
FIRST_BOOK_DAY = {
    "trading_date": "2026-11-20",
    "model_id": "m-1",
    "timestamp": "2026-11-20T16:00:00",
    "orders": [
        {"symbol": "LIQ", "side": "BUY", "quantity": 6000, "price": "50.00", "fees": "1500.00", "bound_by": "adv_20"}
    ],
    "skipped": [
        {
            "symbol": "THIN",
            "side": "BUY",
            "reason": "entry gates failed: adv_20",
            "gates": {
                "passed": False,
                "gates": [{"name": "adv_20", "value": 4000.0, "threshold": 5000, "passed": False}],
            },
            "limits": {"target": 75_000, "held": 0},
        }
    ],
    "would_trade": 2,
    "blocked_by_rails": 1,
    "cut_by_rails": 1,
    "cash": "9698500.00",
    "market_value": 300000.0,
    "equity": 9998500.0,
    "liquid_equity": 9998500.0,
    "illiquid_discounts": {},
}
# A day as the book stores it now: a fill in the next session with its parts, a lapse, a
# sell the exit rail held back, a refused buy, an order decided for the next session and a
# delisting (the JSON `summary` writes, key for key and in its order).
TODAYS_DAY = {
    "trading_date": "2026-11-24",
    "model_id": "test-model",
    "timestamp": "2026-11-24T16:00:00",
    "orders": [
        {
            "symbol": "LIQ",
            "side": "BUY",
            "quantity": 5000,
            "price": "51.21",
            "fees": "2176.43",
            "costs": {"spread": "500.000000", "impact": "550.000000", "fees": "2176.43", "total": "3226.430000"},
            "decided_on": "2026-11-23",
            "bound_by": "adv_20",
        }
    ],
    "skipped": [
        {
            "symbol": "OLD",
            "side": "SELL",
            "reason": "turned AVOID; but TRAPPED: no volume today",
            "exit": {
                "flags": ["TRAPPED"],
                "days_to_exit": None,
                "spread": 0.019011,
                "spread_source": "corwin_schultz",
                "sellable_today": 0,
            },
        },
        {
            "symbol": "THIN",
            "side": "BUY",
            "reason": "entry gates failed: adv_20",
            "gates": {
                "passed": False,
                "gates": [{"name": "adv_20", "value": 4000.0, "threshold": 5000, "passed": False}],
            },
        },
        {"symbol": "NEXT", "side": "BUY", "reason": "LONG, but no cash or slot was left this rebalance"},
    ],
    "would_trade": 3,
    "blocked_by_rails": 2,
    "cut_by_rails": 0,
    "cash": "9741773.570000",
    "market_value": 255000.0,
    "equity": 9996773.57,
    "liquid_equity": 9741773.57,
    "illiquid_discounts": {"OLD": 255000.0},
    "record": "validation",
    "lapsed": [
        {
            "symbol": "LIQ",
            "side": "BUY",
            "quantity": 1000,
            "reason": "capped at 25% of the session's volume (20,000 shares)",
        }
    ],
    "pending": [
        {
            "symbol": "MID",
            "side": "BUY",
            "quantity": 300,
            "price": "20.10",
            "fees": "60.30",
            "rationale": {
                "reason": "fills an empty slot (2 of 15)",
                "limits": {"slot_shares": 300, "bound_by": "slot"},
            },
        }
    ],
    "dividends": [
        {
            "symbol": "LIQ",
            "ex_date": "2026-11-24",
            "shares": 5000,
            "per_share": "0.5",
            "amount": "2500.0",
            "entry_id": "D",
        }
    ],
    "delisted": [
        {
            "symbol": "GONE",
            "quantity": 100,
            "last_row": "2026-11-18",
            "delisted_on": "2026-11-24",
            "sessions_without_row": 3,
            "last_close": 12.5,
            "valued_at": "nothing",
            "value": 0.0,
            "value_nothing": 0.0,
            "value_last_close": 1250.0,
        }
    ],
}


def test_a_stored_day_reads_back_typed_whichever_code_stored_it() -> None:
    first = ExecutedDay.from_summary(FIRST_BOOK_DAY)
    assert (first.record, first.lapsed, first.pending, first.dividends, first.delisted) == ("live", [], [], [], [])
    (fill,) = first.orders
    assert (fill.price, fill.fees, fill.bound_by, fill.costs, fill.decided_on) == (
        Decimal("50.00"),
        Decimal("1500.00"),
        "adv_20",
        None,
        None,
    )
    (refused,) = first.skipped
    assert (refused.symbol, refused.reason, refused.exit, refused.gates["passed"]) == (
        "THIN",
        "entry gates failed: adv_20",
        None,
        False,
    )
    assert first.summary()["orders"] == FIRST_BOOK_DAY["orders"]  # an old fill's JSON as it was stored

    today = ExecutedDay.from_summary(TODAYS_DAY, rerun=True)
    (fill,) = today.orders
    assert fill.costs == CostBreakdown(fees=Decimal("2176.43"), spread=Decimal("500"), impact=Decimal("550"))
    assert [(s.symbol, s.exit is not None, s.gates is not None) for s in today.skipped] == [
        ("OLD", True, False),
        ("THIN", False, True),
        ("NEXT", False, False),
    ]
    (lapse,) = today.lapsed
    (order,) = today.pending
    (gone,) = today.delisted
    assert (lapse.quantity, order.price, order.bound_by, order.reason) == (
        1000,
        Decimal("20.10"),
        "slot",
        "fills an empty slot (2 of 15)",
    )
    assert (gone.delisted_on, gone.value_last_close, today.record, today.rerun) == (
        date(2026, 11, 24),
        1250.0,
        "validation",
        True,
    )
    # written back, the record is what was stored, key for key and in its order
    assert json.dumps(today.summary()) == json.dumps(TODAYS_DAY)
