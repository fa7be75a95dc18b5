"""One exit per name per plan (portfolio/book.py): a held name the plan already sells (an
AVOID exit the rail caps at 25% of today's volume) is neither trimmed nor replaced in the
same plan, so its one sell stays within the rail and the next session records one trade
for it (a second sell would share its trade id, `AI-<day>-<symbol>-SELL`, and fail the day
and every day after it)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from market.costs import FeeSchedule
from market.settings import Settings
from portfolio.ai import execute_day
from portfolio.book import BookDay, Mandate, plan_book
from portfolio.executor import DayPlan, Order, Signal
from portfolio.rails import MarketDay, adv_20, exit_state
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_market


def _sells(plan: DayPlan, symbol: str) -> list[Order]:
    return [o for o in plan.orders if o.symbol == symbol and o.side == "SELL"]


def _liquid(symbol: str) -> MarketDay:
    return MarketDay(symbol, 50.0, 400_000, 400_000.0, bid=49.95, ask=50.05, volatility=0.01)


def test_an_avoid_name_the_rail_caps_is_not_replaced_in_the_same_plan() -> None:
    """X turned AVOID and is SLOW_EXIT: the rail sells 10,000 of its 13,000 today. The swap's
    weakest held name is X's remainder; it is not sold a second time in the plan."""
    x = MarketDay("X", 10.0, 40_000, adv_20([8_000] * 19 + [40_000]), bid=9.99, ask=10.01, volatility=0.01)
    market, held = {"X": x}, {"X": 13_000}
    signals = {"X": Signal("X", 30.0, "AVOID", "BOTTOM", 0.0, 0.0, -0.10, 0.012, "bad")}
    for i in range(3):
        market[f"C{i}"] = _liquid(f"C{i}")
        signals[f"C{i}"] = Signal(f"C{i}", 70.0 - i, "LONG", "TOP", 0.95, 0.0, 0.05 - 0.001 * i, 0.012, "good")
    for i in range(14):
        market[f"H{i}"] = _liquid(f"H{i}")
        signals[f"H{i}"] = Signal(f"H{i}", 60.0, "HOLD", "MIDDLE", 0.0, 0.0, 0.001, 0.012, "ok")
        held[f"H{i}"] = 3_000
    plan = plan_book(BookDay(Decimal(100_000), held, signals, market, FeeSchedule()), Mandate(), rebalance=True)
    allowed = exit_state(x, 13_000).sellable_today
    assert allowed == 10_000
    (sell,) = _sells(plan, "X")
    assert sell.quantity == allowed and sell.rationale["limits"]["sellable_today"] == allowed
    assert sell.rationale["reason"] == "turned AVOID: bad"
    assert not any("replaces X" in o.rationale["reason"] for o in plan.orders)


def test_an_avoid_name_past_two_slots_is_not_trimmed_as_well() -> None:
    """A held X of three slots turns AVOID under SLOW_EXIT on a rebalance day: one sell, the
    AVOID exit at the rail's cap, not a second one trimming the remainder to its slot."""
    x = MarketDay("X", 10.0, 3_000, 1_000.0, bid=9.99, ask=10.01, volatility=0.01)
    signals = {"X": Signal("X", 30.0, "AVOID", "BOTTOM", 0.0, 0.0, -0.10, 0.012, "bad")}
    plan = plan_book(BookDay(Decimal(2_000), {"X": 9_000}, signals, {"X": x}, FeeSchedule()), Mandate(names=3))
    (sell,) = _sells(plan, "X")
    assert sell.quantity == exit_state(x, 9_000).sellable_today == 750
    assert sell.rationale["reason"] == "turned AVOID: bad"


def test_a_trim_of_a_slow_exit_position_sells_within_the_positions_rail() -> None:
    """The exit rail judges the position, not the part a trim sells: X's 9,000 shares take 6
    days at 25% of ADV_20 (SLOW_EXIT), so today sells at most 25% of today's 3,000 shares,
    750, though the 5,934 shares trimmed back to the slot alone would take under 5 days."""
    x = MarketDay("X", 10.0, 3_000, 6_000.0, bid=9.99, ask=10.01, volatility=0.01)
    signals = {"X": Signal("X", 60.0, "HOLD", "MIDDLE", 0.0, 0.0, 0.001, 0.012, "ok")}
    plan = plan_book(BookDay(Decimal(2_000), {"X": 9_000}, signals, {"X": x}, FeeSchedule()), Mandate(names=3))
    (sell,) = _sells(plan, "X")
    assert sell.rationale["reason"].startswith("trimmed to its slot")
    assert sell.quantity == exit_state(x, 9_000).sellable_today == 750
    assert sell.rationale["limits"] == {"held": 9_000, "sellable_today": 750, "bound_by": "exit_rail"}


def _predict(engine, day, action: str, edge: float) -> None:
    row = {
        "symbol": "X",
        "trading_date": day,
        "model_id": "m",
        "horizon_days": 5,
        "predicted_return": edge,
        "p_up": 0.6,
        "score": 60.0,
        "action": action,
        "weight": 0.0633,
        "tercile": "TOP",
        "layer1_p_up": 0.5,
        "layer1_backend": "x",
        "held_edge": edge,
        "round_trip_cost": 0.012,
        "decision_reason": action,
        "expected_return": edge,
        "raw_score": 0.1,
    }
    with engine.begin() as conn:
        append_history(conn, tables.predictions, [row])


def _bar(engine, day, close: float, volume: int) -> None:
    with engine.begin() as conn:
        append_history(
            conn, tables.eod_prices, [price_row("X", day, close, volume, close - 0.05, close + 0.05, cents=False)]
        )


def test_the_ai_book_sells_a_capped_avoid_name_once_and_keeps_trading(settings: Settings) -> None:
    """Through t1_trade's code path: X bought, then 25 thin sessions at 2.5 times the price
    (worth more than two slots, SLOW_EXIT), then AVOID on a rebalance day. The plan sells X
    once within the rail's 25% of the day's volume, and the next two sessions fill and record
    it (before the fix two sells shared one trade id and every later day failed)."""
    engine = service_engine(settings)
    seed_market(engine, {"X": {"close": 100.0, "volume": 100_000, "bid": 99.95, "ask": 100.05}})
    _predict(engine, DAY, "LONG", 0.02)
    execute_day(engine, settings, DAY)
    day = CALENDAR.next_trading_day(DAY)
    _bar(engine, day, 100.0, 100_000)
    _predict(engine, day, "HOLD", 0.0)
    assert [o.side for o in execute_day(engine, settings, day).orders] == ["BUY"]
    for session in range(29):
        day = CALENDAR.next_trading_day(day)
        _bar(engine, day, 250.0, 1_000 if session < 28 else 3_000)
        if 25 <= session < 28:  # three executed days between the first rebalance and the next
            _predict(engine, day, "HOLD", 0.0)
            execute_day(engine, settings, day)
    _predict(engine, day, "AVOID", -0.2)  # the rebalance day (the 5th executed day)
    decided = execute_day(engine, settings, day).pending
    assert Counter((o.symbol, o.side) for o in decided) == {("X", "SELL"): 1}
    (sell,) = decided
    assert sell.quantity == sell.rationale["exit"]["sellable_today"] == 750  # 25% of the day's 3,000
    assert "SLOW_EXIT" in sell.rationale["exit"]["flags"]
    for _ in range(2):
        day = CALENDAR.next_trading_day(day)
        _bar(engine, day, 250.0, 10_000)
        _predict(engine, day, "AVOID", -0.2)
        assert [(o.symbol, o.side) for o in execute_day(engine, settings, day).orders] == [("X", "SELL")]
