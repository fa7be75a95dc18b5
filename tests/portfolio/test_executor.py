"""The executor's plan and its fills: what it buys and sells, what bounds each size, what
the rails block, that a plan fills in the next session at the touch or worse within the
session's volume, and (property) that cash, positions and equity stay consistent over
random days. Sizing tests plan cost-free (`realistic=False`) so the figures are round."""

from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from market.costs import FeeSchedule
from portfolio.executor import Signal, fill_orders, plan_day
from portfolio.rails import MarketDay, value_positions

NO_FEES = FeeSchedule(Decimal("0"), Decimal("0"))


def market(symbol, **changes) -> MarketDay:
    base = dict(symbol=symbol, close=10.0, volume=10_000, adv_20=20_000.0, bid=9.99, ask=10.01, high=10.1, low=9.9)
    return MarketDay(**{**base, **changes})


def signal(
    symbol,
    score=70.0,
    action="LONG",
    tercile="TOP",
    weight=0.1,
    predicted_return=0.01,
    held_edge=math.nan,
    round_trip_cost=math.nan,
) -> Signal:
    return Signal(symbol, score, action, tercile, weight, predicted_return, held_edge, round_trip_cost)


def test_entry_is_sized_by_weight_of_liquid_equity() -> None:
    plan = plan_day(
        Decimal("100000"), {}, {"AAA": signal("AAA", weight=0.02)}, {"AAA": market("AAA")}, NO_FEES, realistic=False
    )
    (order,) = plan.orders
    assert (order.side, order.quantity, order.rationale["limits"]["bound_by"]) == ("BUY", 200, "weight")
    assert order.rationale["gates"]["passed"] is True and len(order.rationale["gates"]["gates"]) == 4


def test_entry_capped_by_fifteen_percent_of_adv_and_by_cash() -> None:
    plan = plan_day(
        Decimal("1000000"), {}, {"AAA": signal("AAA", weight=0.15)}, {"AAA": market("AAA")}, NO_FEES, realistic=False
    )
    assert plan.orders[0].quantity == 3_000 and plan.orders[0].rationale["limits"]["bound_by"] == "adv_20"
    assert plan.cut_by_rails == 1
    fees = FeeSchedule(Decimal("0.01"), Decimal("0"))
    plan = plan_day(
        Decimal("1000"),
        {},
        {"AAA": signal("AAA", weight=0.15)},
        {"AAA": market("AAA", close=1.0)},
        fees,
        realistic=False,
    )
    assert plan.orders[0].quantity == 150  # weight: 15% of 1,000 at 1; 151.50 with the fee fits
    plan = plan_day(
        Decimal("100"),
        {"BBB": 0},
        {"AAA": signal("AAA", weight=0.15)},
        {"AAA": market("AAA", close=1.0)},
        fees,
        realistic=False,
    )
    # weight: 15 shares of 100 equity; cash 100 could pay 99 (+0.99 fee); weight binds
    assert plan.orders[0].quantity == 15 and plan.orders[0].rationale["limits"]["bound_by"] == "weight"
    plan = plan_day(
        Decimal("10"),
        {"AAA": 200},
        {"AAA": signal("AAA", weight=0.15)},
        {"AAA": market("AAA", close=1.0)},
        fees,
        realistic=False,
    )
    # equity 210: target 31, held 200, nothing to buy; then cash binds for a new name
    assert plan.orders == [] and plan.skipped[0]["reason"] == "already at its target weight"
    plan = plan_day(
        Decimal("10"),
        {"BBB": 200},
        {"AAA": signal("AAA", weight=0.15)},
        {"AAA": market("AAA", close=1.0), "BBB": market("BBB", close=1.0)},
        fees,
        realistic=False,
    )
    assert plan.orders[0].quantity == 9 and plan.orders[0].rationale["limits"]["bound_by"] == "cash"


def test_only_long_names_in_the_top_tercile_are_bought_best_score_first() -> None:
    signals = {
        "A": signal("A", score=60),
        "B": signal("B", score=80),
        "C": signal("C", tercile="MIDDLE"),
        "D": signal("D", action="HOLD"),
    }
    plan = plan_day(Decimal("100000"), {}, signals, {s: market(s) for s in signals}, NO_FEES, realistic=False)
    assert [o.symbol for o in plan.orders] == ["B", "A"]


def test_failed_gate_blocks_the_entry_and_says_which() -> None:
    plan = plan_day(
        Decimal("100000"),
        {},
        {"AAA": signal("AAA")},
        {"AAA": market("AAA", bid=9.0, ask=11.0)},
        NO_FEES,
        realistic=False,
    )
    assert plan.orders == [] and plan.blocked_by_rails == 1
    assert plan.skipped[0]["reason"] == "entry gates failed: spread"
    unrailed = plan_day(
        Decimal("100000"),
        {},
        {"AAA": signal("AAA")},
        {"AAA": market("AAA", bid=9.0, ask=11.0)},
        NO_FEES,
        rails=False,
        realistic=False,
    )
    assert unrailed.orders[0].quantity == 1_000


def test_exits_follow_the_rails() -> None:
    avoid = {"AAA": signal("AAA", action="AVOID", tercile="MIDDLE")}
    plan = plan_day(Decimal("0"), {"AAA": 1_000}, avoid, {"AAA": market("AAA")}, NO_FEES, realistic=False)
    assert (plan.orders[0].side, plan.orders[0].quantity, plan.orders[0].price) == ("SELL", 1_000, Decimal("10"))
    trapped = plan_day(Decimal("0"), {"AAA": 1_000}, avoid, {"AAA": market("AAA", volume=0)}, NO_FEES, realistic=False)
    assert trapped.orders == [] and "TRAPPED" in trapped.skipped[0]["reason"] and trapped.blocked_by_rails == 1
    slow = plan_day(Decimal("0"), {"AAA": 30_000}, avoid, {"AAA": market("AAA")}, NO_FEES, realistic=False)
    assert slow.orders[0].quantity == 2_500 and slow.orders[0].rationale["exit"]["flags"] == ["SLOW_EXIT"]
    wide = plan_day(Decimal("0"), {"AAA": 100}, avoid, {"AAA": market("AAA", bid=9.0, ask=11.0)}, NO_FEES)
    assert wide.orders[0].price <= Decimal("9")  # the bid, less impact


def test_a_held_name_within_the_hysteresis_band_is_neither_sold_nor_bought_again() -> None:
    """The exit reads AVOID only: a held name whose Score fell to HOLD or the BOTTOM
    tercile is kept (the old rule sold it and bought it back on the next LONG)."""
    for drifted in (
        signal("AAA", score=50.0, action="HOLD", tercile="BOTTOM"),
        signal("AAA", score=56.0, action="HOLD", tercile="MIDDLE"),
    ):
        kept = plan_day(Decimal("0"), {"AAA": 100}, {"AAA": drifted}, {"AAA": market("AAA")}, NO_FEES)
        assert kept.orders == []
    kept = plan_day(Decimal("0"), {"AAA": 100}, {}, {"AAA": market("AAA")}, NO_FEES, realistic=False)
    assert kept.orders == []


def test_an_entry_is_cut_to_the_size_its_edge_pays_for_after_impact() -> None:
    thin = signal("AAA", weight=0.15, held_edge=0.0045, round_trip_cost=0.003)
    plan = plan_day(Decimal("1000000"), {}, {"AAA": thin}, {"AAA": market("AAA", volatility=0.02)}, NO_FEES)
    (order,) = plan.orders
    assert order.rationale["limits"]["bound_by"] == "cost"
    assert order.quantity == plan.orders[0].rationale["limits"]["cost_cap"] < 1_500
    none = plan_day(Decimal("1000000"), {}, {"AAA": signal("AAA", held_edge=0.001)}, {"AAA": market("AAA")}, NO_FEES)
    assert none.orders == [] and none.skipped[0]["reason"] == "its edge pays for no size after impact"


def test_a_plan_fills_in_the_next_session_at_the_touch_or_worse_within_its_volume() -> None:
    plan = plan_day(
        Decimal("1000000"),
        {"OLD": 2_000},
        {"NEW": signal("NEW", weight=0.1), "OLD": signal("OLD", action="AVOID")},
        {"NEW": market("NEW"), "OLD": market("OLD")},
        NO_FEES,
    )
    tomorrow = {
        "NEW": market("NEW", close=11.0, bid=10.9, ask=11.1, volume=1_000),
        "OLD": market("OLD", close=9.0, bid=8.95, ask=9.05, volume=100_000),
    }
    run = fill_orders(
        plan.orders, tomorrow, Decimal("1000000"), FeeSchedule(Decimal("0.005"), Decimal("0")), True, "2026-01-05"
    )
    buy = next(o for o in run.filled if o.side == "BUY")
    sell = next(o for o in run.filled if o.side == "SELL")
    assert buy.price >= Decimal("11.1") and sell.price <= Decimal("8.95")  # the next session's quotes, not today's
    assert buy.quantity == 250 and run.lapsed[0]["symbol"] == "NEW"  # 25% of the session's 1,000 shares
    assert (
        buy.rationale["decided_on"] == "2026-01-05" and buy.rationale["fill"]["lapsed"] == plan.orders[1].quantity - 250
    )
    assert run.cash == Decimal("1000000") + sell.gross - sell.fees - buy.gross - buy.fees


def test_exit_proceeds_fund_the_same_days_entries() -> None:
    signals = {"OLD": signal("OLD", action="AVOID", tercile="BOTTOM"), "NEW": signal("NEW", weight=0.15)}
    plan = plan_day(Decimal("0"), {"OLD": 1_000}, signals, {s: market(s) for s in signals}, NO_FEES, realistic=False)
    assert [(o.symbol, o.side) for o in plan.orders] == [("OLD", "SELL"), ("NEW", "BUY")]
    # with no cash at the open, only the sale's 10,000 pays for the 150 shares (15% of 10,000 at 10)
    assert plan.orders[1].quantity == 150


days = st.lists(
    st.fixed_dictionaries(
        {
            "close": st.dictionaries(st.sampled_from("ABCDE"), st.floats(0.5, 200), min_size=5, max_size=5),
            "volume": st.dictionaries(
                st.sampled_from("ABCDE"), st.sampled_from([0, 0, 100, 3_000, 50_000]), min_size=5, max_size=5
            ),
            "spread": st.dictionaries(
                st.sampled_from("ABCDE"), st.sampled_from([0.001, 0.04, 0.06, 0.2]), min_size=5, max_size=5
            ),
            "action": st.dictionaries(
                st.sampled_from("ABCDE"), st.sampled_from(["LONG", "HOLD", "AVOID"]), min_size=5, max_size=5
            ),
            "tercile": st.dictionaries(
                st.sampled_from("ABCDE"),
                st.sampled_from(["TOP", "MIDDLE", "BOTTOM", "ILLIQUID"]),
                min_size=5,
                max_size=5,
            ),
            "weight": st.dictionaries(st.sampled_from("ABCDE"), st.floats(0, 0.15), min_size=5, max_size=5),
        }
    ),
    min_size=1,
    max_size=25,
)


@hsettings(max_examples=150, deadline=None)
@given(
    days=days,
    rails=st.booleans(),
    fee_rate=st.sampled_from(["0", "0.005", "0.02"]),
    min_fee=st.sampled_from(["0", "25"]),
)
def test_cash_positions_and_equity_stay_consistent(days, rails, fee_rate, min_fee) -> None:
    """Each day fills yesterday's plan in today's session, then plans tomorrow's."""
    fees = FeeSchedule(Decimal(fee_rate), Decimal(min_fee))
    cash, held, pending = Decimal("100000"), {}, []
    for d in days:
        today = {
            s: MarketDay(
                s,
                d["close"][s],
                d["volume"][s],
                20_000.0,
                d["close"][s] * (1 - d["spread"][s] / 2),
                d["close"][s] * (1 + d["spread"][s] / 2),
            )
            for s in "ABCDE"
        }
        run = fill_orders(pending, today, cash, fees)
        for order in run.filled:
            quote = today[order.symbol]
            assert order.quantity <= 0.25 * quote.volume
            if order.side == "BUY":
                assert order.price >= Decimal(str(quote.ask)).quantize(Decimal("0.000001"))
            else:
                assert order.price <= Decimal(str(quote.bid)).quantize(Decimal("0.000001"))
            held[order.symbol] = held.get(order.symbol, 0) + (
                order.quantity if order.side == "BUY" else -order.quantity
            )
            assert held[order.symbol] >= 0, order
            assert order.quantity > 0 and order.price >= 0
        cash = run.cash
        assert cash >= 0
        signals = {s: Signal(s, 70.0, d["action"][s], d["tercile"][s], d["weight"][s], 0.01) for s in "ABCDE"}
        pending = plan_day(cash, held, signals, today, fees, rails=rails).orders
        valuation = value_positions(float(cash), held, today)
        assert abs(valuation.equity - (float(cash) + sum(q * today[s].close for s, q in held.items()))) < 1e-6
        assert valuation.liquid_equity <= valuation.equity + 1e-9
