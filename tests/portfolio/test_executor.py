"""The executor's plan: what it buys and sells, what bounds each size, what the rails
block, and (property) that cash, positions and equity stay consistent over random days."""
from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings as hsettings, strategies as st

from portfolio.executor import FeeSchedule, Signal, plan_day
from portfolio.rails import MarketDay, value_positions

NO_FEES = FeeSchedule(Decimal("0"), Decimal("0"))


def market(symbol, **changes) -> MarketDay:
    base = dict(symbol=symbol, close=10.0, volume=10_000, adv_20=20_000.0, bid=9.99, ask=10.01, high=10.1, low=9.9)
    return MarketDay(**{**base, **changes})


def signal(symbol, score=70.0, action="LONG", tercile="TOP", weight=0.1, predicted_return=0.01) -> Signal:
    return Signal(symbol, score, action, tercile, weight, predicted_return)


def test_entry_is_sized_by_weight_of_liquid_equity() -> None:
    plan = plan_day(Decimal("100000"), {}, {"AAA": signal("AAA", weight=0.02)}, {"AAA": market("AAA")}, NO_FEES)
    (order,) = plan.orders
    assert (order.side, order.quantity, order.rationale["limits"]["bound_by"]) == ("BUY", 200, "weight")
    assert order.rationale["gates"]["passed"] is True and len(order.rationale["gates"]["gates"]) == 4


def test_entry_capped_by_fifteen_percent_of_adv_and_by_cash() -> None:
    plan = plan_day(Decimal("1000000"), {}, {"AAA": signal("AAA", weight=0.15)}, {"AAA": market("AAA")}, NO_FEES)
    assert plan.orders[0].quantity == 3_000 and plan.orders[0].rationale["limits"]["bound_by"] == "adv_20"
    assert plan.cut_by_rails == 1
    fees = FeeSchedule(Decimal("0.01"), Decimal("0"))
    plan = plan_day(Decimal("1000"), {}, {"AAA": signal("AAA", weight=0.15)}, {"AAA": market("AAA", close=1.0)}, fees)
    assert plan.orders[0].quantity == 150  # weight: 15% of 1,000 at 1; 151.50 with the fee fits
    plan = plan_day(Decimal("100"), {"BBB": 0}, {"AAA": signal("AAA", weight=0.15)},
                    {"AAA": market("AAA", close=1.0)}, fees)
    # weight: 15 shares of 100 equity; cash 100 could pay 99 (+0.99 fee); weight binds
    assert plan.orders[0].quantity == 15 and plan.orders[0].rationale["limits"]["bound_by"] == "weight"
    plan = plan_day(Decimal("10"), {"AAA": 200}, {"AAA": signal("AAA", weight=0.15)},
                    {"AAA": market("AAA", close=1.0)}, fees)
    # equity 210: target 31, held 200, nothing to buy; then cash binds for a new name
    assert plan.orders == [] and plan.skipped[0]["reason"] == "already at its target weight"
    plan = plan_day(Decimal("10"), {"BBB": 200}, {"AAA": signal("AAA", weight=0.15)},
                    {"AAA": market("AAA", close=1.0), "BBB": market("BBB", close=1.0)}, fees)
    assert plan.orders[0].quantity == 9 and plan.orders[0].rationale["limits"]["bound_by"] == "cash"


def test_only_long_names_in_the_top_tercile_are_bought_best_score_first() -> None:
    signals = {"A": signal("A", score=60), "B": signal("B", score=80), "C": signal("C", tercile="MIDDLE"),
               "D": signal("D", action="HOLD")}
    plan = plan_day(Decimal("100000"), {}, signals, {s: market(s) for s in signals}, NO_FEES)
    assert [o.symbol for o in plan.orders] == ["B", "A"]


def test_failed_gate_blocks_the_entry_and_says_which() -> None:
    plan = plan_day(Decimal("100000"), {}, {"AAA": signal("AAA")}, {"AAA": market("AAA", bid=9.0, ask=11.0)}, NO_FEES)
    assert plan.orders == [] and plan.blocked_by_rails == 1
    assert plan.skipped[0]["reason"] == "entry gates failed: spread"
    unrailed = plan_day(Decimal("100000"), {}, {"AAA": signal("AAA")}, {"AAA": market("AAA", bid=9.0, ask=11.0)},
                        NO_FEES, rails=False)
    assert unrailed.orders[0].quantity == 1_000


def test_exits_follow_the_rails() -> None:
    avoid = {"AAA": signal("AAA", action="AVOID", tercile="MIDDLE")}
    plan = plan_day(Decimal("0"), {"AAA": 1_000}, avoid, {"AAA": market("AAA")}, NO_FEES)
    assert (plan.orders[0].side, plan.orders[0].quantity, plan.orders[0].price) == ("SELL", 1_000, Decimal("10"))
    trapped = plan_day(Decimal("0"), {"AAA": 1_000}, avoid, {"AAA": market("AAA", volume=0)}, NO_FEES)
    assert trapped.orders == [] and "TRAPPED" in trapped.skipped[0]["reason"] and trapped.blocked_by_rails == 1
    slow = plan_day(Decimal("0"), {"AAA": 30_000}, avoid, {"AAA": market("AAA")}, NO_FEES)
    assert slow.orders[0].quantity == 2_500 and slow.orders[0].rationale["exit"]["flags"] == ["SLOW_EXIT"]
    wide = plan_day(Decimal("0"), {"AAA": 100}, avoid, {"AAA": market("AAA", bid=9.0, ask=11.0)}, NO_FEES)
    assert wide.orders[0].price == Decimal("8")  # 10 less the 20% spread
    bottom = plan_day(Decimal("0"), {"AAA": 100}, {"AAA": signal("AAA", action="HOLD", tercile="BOTTOM")},
                      {"AAA": market("AAA")}, NO_FEES)
    assert bottom.orders[0].rationale["reason"] == "fell to the BOTTOM tercile"
    kept = plan_day(Decimal("0"), {"AAA": 100}, {}, {"AAA": market("AAA")}, NO_FEES)
    assert kept.orders == []


def test_exit_proceeds_fund_the_same_days_entries() -> None:
    signals = {"OLD": signal("OLD", action="AVOID", tercile="BOTTOM"), "NEW": signal("NEW", weight=0.15)}
    plan = plan_day(Decimal("0"), {"OLD": 1_000}, signals, {s: market(s) for s in signals}, NO_FEES)
    assert [(o.symbol, o.side) for o in plan.orders] == [("OLD", "SELL"), ("NEW", "BUY")]
    # with no cash at the open, only the sale's 10,000 pays for the 150 shares (15% of 10,000 at 10)
    assert plan.orders[1].quantity == 150


days = st.lists(st.fixed_dictionaries({
    "close": st.dictionaries(st.sampled_from("ABCDE"), st.floats(0.5, 200), min_size=5, max_size=5),
    "volume": st.dictionaries(st.sampled_from("ABCDE"), st.sampled_from([0, 0, 100, 3_000, 50_000]), min_size=5, max_size=5),
    "spread": st.dictionaries(st.sampled_from("ABCDE"), st.sampled_from([0.001, 0.04, 0.06, 0.2]), min_size=5, max_size=5),
    "action": st.dictionaries(st.sampled_from("ABCDE"), st.sampled_from(["LONG", "HOLD", "AVOID"]), min_size=5, max_size=5),
    "tercile": st.dictionaries(st.sampled_from("ABCDE"), st.sampled_from(["TOP", "MIDDLE", "BOTTOM", "ILLIQUID"]), min_size=5, max_size=5),
    "weight": st.dictionaries(st.sampled_from("ABCDE"), st.floats(0, 0.15), min_size=5, max_size=5),
}), min_size=1, max_size=25)


@hsettings(max_examples=150, deadline=None)
@given(days=days, rails=st.booleans(), fee_rate=st.sampled_from(["0", "0.005", "0.02"]), min_fee=st.sampled_from(["0", "25"]))
def test_cash_positions_and_equity_stay_consistent(days, rails, fee_rate, min_fee) -> None:
    fees = FeeSchedule(Decimal(fee_rate), Decimal(min_fee))
    cash, held = Decimal("100000"), {}
    for d in days:
        today = {s: MarketDay(s, d["close"][s], d["volume"][s], 20_000.0, d["close"][s] * (1 - d["spread"][s] / 2),
                              d["close"][s] * (1 + d["spread"][s] / 2)) for s in "ABCDE"}
        signals = {s: Signal(s, 70.0, d["action"][s], d["tercile"][s], d["weight"][s], 0.01) for s in "ABCDE"}
        plan = plan_day(cash, held, signals, today, fees, rails=rails)
        for order in plan.orders:
            flow = order.gross if order.side == "SELL" else -order.gross
            cash += flow - order.fees
            held[order.symbol] = held.get(order.symbol, 0) + (order.quantity if order.side == "BUY" else -order.quantity)
            assert cash >= 0, order
            assert held[order.symbol] >= 0, order
            assert order.quantity > 0 and order.price > 0
        valuation = value_positions(float(cash), held, today)
        assert abs(valuation.equity - (float(cash) + sum(q * today[s].close for s, q in held.items()))) < 1e-6
        assert valuation.liquid_equity <= valuation.equity + 1e-9
