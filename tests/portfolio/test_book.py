"""The AI book (portfolio/book.py): a long-only mandate that holds the `names` LONG names
with the largest expected excess, each sized to one slot (exposure x liquid equity /
names) within its capacity share of ADV_20; sells on AVOID any day under the exit rail;
tops up a partly filled name; and, on a rebalance day, replaces a held name only when a
candidate's expected excess beats it by more than the pair's round trip."""

from __future__ import annotations

import math
from decimal import Decimal

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from market.costs import FeeSchedule
from models.decisions import decide
from portfolio.backtest import signals_of
from portfolio.book import BookDay, Mandate, Outlook, pair_round_trip, plan_book
from portfolio.executor import Signal, fill_orders
from portfolio.rails import MarketDay, exit_state, value_positions

NO_FEES = FeeSchedule(Decimal("0"), Decimal("0"))
FEES = FeeSchedule(Decimal("0.005"), Decimal("0"))


def market(symbol: str, **changes) -> MarketDay:
    base = dict(
        symbol=symbol,
        close=10.0,
        volume=1_000_000,
        adv_20=1_000_000.0,
        bid=9.99,
        ask=10.01,
        high=10.1,
        low=9.9,
        volatility=0.02,
    )
    return MarketDay(**{**base, **changes})


def signal(symbol: str, edge: float, action: str = "LONG", score: float = 70.0) -> Signal:
    tercile = "TOP" if action == "LONG" else "MIDDLE"
    return Signal(symbol, score, action, tercile, 0.1, edge, edge, 0.01, f"{symbol} edge {edge:+.2%}")


def sides(plan) -> list[tuple[str, str]]:
    return [(o.symbol, o.side) for o in plan.orders]


# --- replacements -------------------------------------------------------------------------


def full_book(candidate_edge: float, weak_edge: float = 0.01):
    """Two names held at their slots (equity 1,000,000; slot 475,000 = 47,500 shares at 10),
    5% cash, and a LONG candidate C; plus the pair's round trip of replacing B by C."""
    held = {"A": 47_500, "B": 47_500}
    cash = Decimal("50000")
    days = {"A": market("A"), "B": market("B"), "C": market("C", volatility=0.03)}
    signals = {"A": signal("A", 0.08, "HOLD"), "B": signal("B", weak_edge, "HOLD"), "C": signal("C", candidate_edge)}
    cost = pair_round_trip(days["B"], 47_500, days["C"], 47_500, float(FEES.rate))
    return cash, held, signals, days, cost


def test_a_held_name_is_replaced_only_when_the_gap_beats_the_pairs_round_trip() -> None:
    _, _, _, _, cost = full_book(0.0)
    # half of each 0.2% spread, the impact of 47,500 shares twice and two 0.5% fees
    impact = (0.02 + 0.03) * math.sqrt(47_500 / 1_000_000)  # each name's sigma x sqrt(participation)
    assert cost == pytest.approx(0.002 / 2 + 0.002 / 2 + impact + 2 * 0.005, rel=1e-6)
    kept_cash, held, signals, days, cost = full_book(0.01 + cost - 0.0005)
    kept = plan_book(BookDay(kept_cash, dict(held), signals, days, FEES), Mandate(names=2))
    assert kept.orders == []
    (left,) = [s for s in kept.skipped if s.symbol == "C"]
    assert "the book is full" in left.reason and "(B)" in left.reason

    cash, held, signals, days, cost = full_book(0.01 + cost + 0.0005)
    swapped = plan_book(BookDay(cash, dict(held), signals, days, FEES), Mandate(names=2))
    assert sides(swapped) == [("B", "SELL"), ("C", "BUY")]
    sell, buy = swapped.orders
    assert sell.quantity == 47_500  # the whole held name
    assert buy.rationale["reason"].startswith("replaces B")
    assert buy.rationale["entry"] == "slot"  # the replacement takes the place the replaced name left
    assert f"round trip {cost:.2%}" in buy.rationale["reason"]
    # the sale's proceeds pay for the replacement: a whole slot, not the 5% cash left over
    assert buy.quantity >= 46_500


def test_at_most_swaps_replacements_per_rebalance_and_none_on_other_days() -> None:
    held = {"A": 31_666, "B": 31_666, "D": 31_666}
    days = {s: market(s) for s in "ABDCEF"}
    signals = {
        "A": signal("A", 0.001, "HOLD"),
        "B": signal("B", 0.002, "HOLD"),
        "D": signal("D", 0.003, "HOLD"),
        **{s: signal(s, 0.2 + i / 100) for i, s in enumerate("CEF")},
    }
    cash = Decimal("50000")
    for swaps in (0, 1, 2, 3):
        plan = plan_book(BookDay(cash, dict(held), signals, days, FEES), Mandate(names=3, swaps=swaps))
        sells = [o.symbol for o in plan.orders if o.side == "SELL"]
        buys = [o.symbol for o in plan.orders if o.side == "BUY"]
        assert sells == ["A", "B", "D"][:swaps]  # the weakest first
        assert buys == ["F", "E", "C"][:swaps]  # the best candidate first
        assert len([s for s in plan.skipped if s.symbol in "CEF"]) == 3 - swaps
    quiet = plan_book(BookDay(cash, dict(held), signals, days, FEES), Mandate(names=3, swaps=3), rebalance=False)
    assert quiet.orders == []


def test_a_name_topped_up_today_is_not_sold_in_the_same_plan() -> None:
    """B is below its slot (topped up) and the weakest: the swap takes the next weakest,
    and never sells shares the book does not own yet."""
    held = {"A": 47_500, "B": 10_000}
    days = {s: market(s) for s in "ABC"}
    signals = {"A": signal("A", 0.02, "HOLD"), "B": signal("B", 0.001, "HOLD"), "C": signal("C", 0.3)}
    plan = plan_book(BookDay(Decimal("420000"), held, signals, days, NO_FEES), Mandate(names=2), realistic=False)
    owned = {"A": 47_500, "B": 10_000}
    for order in plan.orders:
        if order.side == "SELL":
            assert order.quantity <= owned[order.symbol]
    assert ("B", "BUY") in sides(plan) and ("B", "SELL") not in sides(plan)


# --- capacity ------------------------------------------------------------------------------


def test_no_position_exceeds_its_capacity_share_of_adv_20() -> None:
    # equity 1,000,000, two names: a slot is 475,000 = 47,500 shares at 10
    mandate = Mandate(names=2, capacity=0.05)
    cases = {
        2_000_000.0: 47_500,  # 5% of ADV_20 is 100,000 shares: the slot binds
        600_000.0: 30_000,  # 30,000 shares: bought up to capacity
        400_000.0: 20_000,  # 20,000 shares: a thin name is held small, never past its capacity
    }
    for adv, bought in cases.items():
        days = {"C": market("C", adv_20=adv)}
        plan = plan_book(
            BookDay(Decimal("1000000"), {}, {"C": signal("C", 0.05)}, days, NO_FEES), mandate, realistic=False
        )
        assert [(o.symbol, o.quantity) for o in plan.orders] == [("C", bought)]


def test_money_a_capacity_leaves_uninvested_goes_to_the_reserve() -> None:
    """Two slots of 47,500 shares; every name can hold 20,000 (5% of ADV_20), so about a
    slot stays uninvested and the book buys its reserve, best first, up to twice its names."""
    mandate = Mandate(names=2, capacity=0.05)
    edges = {"A": 0.05, "B": 0.04, "C": 0.03, "D": 0.02, "E": 0.01}
    days = {s: market(s, adv_20=400_000.0) for s in edges}
    signals = {s: signal(s, e) for s, e in edges.items()}
    plan = plan_book(BookDay(Decimal("1000000"), {}, signals, days, NO_FEES), mandate, realistic=False)
    assert [(o.symbol, o.quantity) for o in plan.orders] == [("A", 20_000), ("B", 20_000), ("C", 20_000), ("D", 20_000)]
    assert {s.symbol for s in plan.skipped} == {"E"}
    roomy = {s: market(s, adv_20=2_000_000.0) for s in edges}  # the slots fit: no reserve
    plan = plan_book(BookDay(Decimal("1000000"), {}, signals, roomy, NO_FEES), mandate, realistic=False)
    assert [o.symbol for o in plan.orders] == ["A", "B"]


def test_a_top_up_stays_within_capacity() -> None:
    mandate = Mandate(names=2, capacity=0.05)
    days = {"C": market("C", adv_20=600_000.0)}  # capacity 30,000 shares; the slot 47,500
    plan = plan_book(
        BookDay(Decimal("900000"), {"C": 10_000}, {"C": signal("C", 0.05)}, days, NO_FEES), mandate, True, False
    )
    assert [(o.symbol, o.quantity) for o in plan.orders] == [("C", 20_000)]
    full = plan_book(
        BookDay(Decimal("700000"), {"C": 30_000}, {"C": signal("C", 0.05)}, days, NO_FEES), mandate, True, False
    )
    assert full.orders == []


name = st.sampled_from("ABCDEFGH")


@hsettings(max_examples=100, deadline=None)
@given(
    closes=st.dictionaries(name, st.floats(0.5, 300), min_size=8, max_size=8),
    advs=st.dictionaries(name, st.sampled_from([5_000.0, 20_000.0, 100_000.0, 2_000_000.0]), min_size=8, max_size=8),
    edges=st.dictionaries(name, st.floats(-0.1, 0.2), min_size=8, max_size=8),
    actions=st.dictionaries(name, st.sampled_from(["LONG", "LONG", "HOLD", "AVOID"]), min_size=8, max_size=8),
    holdings=st.dictionaries(name, st.integers(0, 50_000), max_size=4),
    cash=st.integers(0, 5_000_000),
    names=st.integers(1, 6),
    capacity=st.sampled_from([0.02, 0.05, 0.15]),
    rebalance=st.booleans(),
)
def test_property_no_buy_takes_a_position_past_its_capacity(
    closes, advs, edges, actions, holdings, cash, names, capacity, rebalance
) -> None:
    days = {s: market(s, close=c, bid=c * 0.999, ask=c * 1.001, high=c * 1.01, low=c * 0.99) for s, c in closes.items()}
    days = {s: MarketDay(**{**d.__dict__, "adv_20": advs[s], "volume": int(advs[s])}) for s, d in days.items()}
    signals = {s: signal(s, edges[s], actions[s]) for s in closes}
    plan = plan_book(
        BookDay(Decimal(cash), dict(holdings), signals, days, FEES), Mandate(names=names, capacity=capacity), rebalance
    )
    after = dict(holdings)
    assert len({o.symbol for o in plan.orders}) == len(plan.orders)  # one order per name
    for order in plan.orders:
        after[order.symbol] = after.get(order.symbol, 0) + (order.quantity if order.side == "BUY" else -order.quantity)
        assert order.quantity > 0
        if order.side == "SELL":
            assert after[order.symbol] >= 0  # never sells what it does not own
            assert order.quantity <= exit_state(days[order.symbol], holdings[order.symbol]).sellable_today
    for symbol in {o.symbol for o in plan.orders if o.side == "BUY"}:
        assert after[symbol] <= math.floor(capacity * advs[symbol])
        assert actions[symbol] != "AVOID"
    assert len({s for s, q in after.items() if q > 0}) <= max(2 * names, len([s for s, q in holdings.items() if q > 0]))
    assert planned_cash(Decimal(cash), plan) >= 0


def planned_cash(cash: Decimal, plan) -> Decimal:
    """The cash the plan leaves: its sells' proceeds in, its buys' value and fees out, at
    the prices it planned (a suggestion's limit, what its confirmation charges)."""
    for order in plan.orders:
        cash += order.gross - order.fees if order.side == "SELL" else -(order.gross + order.fees)
    return cash


def test_a_buy_sized_to_the_cash_is_paid_for_at_its_own_price() -> None:
    """960,000 held in eight names and 40,000 cash: LIQ's slot (about 1,266 shares) is more
    than the cash pays for, so the buy is sized to the cash at the price of the quantity
    bought (impact and the tick included), not one share's: before, 791 at 50.15 and
    337.18 in fees planned 40,005.83 of 40,000."""
    days = {f"H{i}": market(f"H{i}", close=100.0, bid=99.9, ask=100.1, volume=40_000, adv_20=4e4) for i in range(8)}
    days["LIQ"] = market("LIQ", close=50.0, bid=49.9, ask=50.1, high=50.5, low=49.5, volume=40_000, adv_20=40_000.0)
    signals = {s: signal(s, 0.01, "HOLD", 60.0) for s in days if s != "LIQ"} | {"LIQ": signal("LIQ", 0.03)}
    fees = FeeSchedule(Decimal("0.00725"), Decimal("0"))
    book = BookDay(Decimal(40_000), {f"H{i}": 1_200 for i in range(8)}, signals, days, fees)
    plan = plan_book(book, Mandate(names=9))
    (bought,) = plan.orders
    assert (bought.symbol, bought.bound_by) == ("LIQ", "cash")
    assert Decimal(0) <= planned_cash(Decimal(40_000), plan) < Decimal(400)  # within 1% of the cash


# --- filling the book ----------------------------------------------------------------------


def test_empty_slots_fill_best_expected_excess_first_up_to_names() -> None:
    edges = {"A": 0.03, "B": 0.06, "C": 0.05, "D": 0.04, "E": 0.02}
    days = {s: market(s) for s in edges}
    signals = {s: signal(s, e) for s, e in edges.items()}
    plan = plan_book(BookDay(Decimal("1000000"), {}, signals, days, FEES), Mandate(names=3))
    assert sides(plan) == [("B", "BUY"), ("C", "BUY"), ("D", "BUY")]
    assert plan.orders[0].rationale["reason"].startswith("fills an empty slot (1 of 3)")
    # every LONG name not bought is in `skipped`, with a reason
    skipped = {s.symbol: s.reason for s in plan.skipped}
    assert set(skipped) == {"A", "E"} and all(skipped.values())

    # after the buys fill in the next session, the book holds about `exposure` of its equity
    run = fill_orders(plan.orders, days, Decimal("1000000"), FEES)
    held = {o.symbol: o.quantity for o in run.filled}
    valuation = value_positions(float(run.cash), held, days)
    assert 0.93 <= valuation.market_value / valuation.liquid_equity <= 0.965
    assert run.lapsed == []


def test_a_name_that_is_not_long_never_enters_the_book() -> None:
    """The signals come from `decide`: X has the best expected excess and Score but is a
    typed non-equity (ordinary False), so it is not LONG and the book never buys it."""
    symbols = ["X", "A", "B", "C", "D", "E"]
    frame = pd.DataFrame(
        {
            "symbol": symbols,
            "date": [pd.Timestamp("2026-01-05").date()] * 6,
            "close": [10.0] * 6,
            "volume": [1_000_000] * 6,
            "adv_20": [1_000_000.0] * 6,
            "bid": [9.99] * 6,
            "ask": [10.01] * 6,
            "high": [10.1] * 6,
            "low": [9.9] * 6,
            "p_up": [0.8, 0.7, 0.7, 0.6, 0.5, 0.3],
            "expected_return": [0.09, 0.05, 0.03, 0.02, 0.01, -0.05],
            "predicted_return": [0.01] * 6,
            "ordinary": [False, True, True, True, True, True],
        }
    )
    signals = signals_of(decide(frame, fee_rate=0.005, book_names=5))
    assert signals["X"].action == "HOLD" and not signals["X"].ordinary and signals["A"].action == "LONG"
    assert [s for s, g in signals.items() if g.action == "LONG"] == ["A", "B", "C", "D"]  # E is AVOID
    days = {s: market(s) for s in symbols}
    # a HOLD name with a large expected excess and an AVOID one do not fill the empty slot
    # either: empty slots take LONG names only (the reserve fills only what capacity leaves)
    signals["H"], days["H"] = signal("H", 0.5, "HOLD"), market("H")
    signals["V"], days["V"] = signal("V", 0.4, "AVOID"), market("V")
    plan = plan_book(BookDay(Decimal("1000000"), {}, signals, days, FEES), Mandate(names=5))
    assert [o.symbol for o in plan.orders] == ["A", "B", "C", "D"]
    assert not {"X", "H", "V"} & {s.symbol for s in plan.skipped}


# --- exits and top-ups ---------------------------------------------------------------------


def test_avoid_sells_on_any_day_under_the_exit_rail() -> None:
    held = {"A": 20_000, "B": 20_000}
    signals = {"A": signal("A", -0.05, "AVOID"), "B": signal("B", 0.01, "HOLD")}
    untrimmed = Mandate(trim=None)  # two names of a 15-name mandate are many slots each: no trims here
    for rebalance in (True, False):
        plan = plan_book(
            BookDay(Decimal("0"), dict(held), signals, {s: market(s) for s in held}, FEES),
            untrimmed,
            rebalance=rebalance,
        )
        assert [(o.symbol, o.side, o.quantity) for o in plan.orders] == [("A", "SELL", 20_000)]
        assert plan.orders[0].rationale["reason"].startswith("turned AVOID")
    trapped = plan_book(
        BookDay(Decimal("0"), dict(held), signals, {"A": market("A", volume=0), "B": market("B")}, FEES), untrimmed
    )
    assert trapped.orders == [] and trapped.blocked_by_rails == 1
    assert "TRAPPED" in trapped.skipped[0].reason


def test_a_partly_filled_name_is_topped_up_to_its_slot_on_a_rebalance_day() -> None:
    # equity 1,000,000, two names: a slot of 47,500 shares at 10
    days = {"A": market("A")}
    for action in ("LONG", "HOLD"):
        plan = plan_book(
            BookDay(Decimal("900000"), {"A": 10_000}, {"A": signal("A", 0.02, action)}, days, NO_FEES),
            Mandate(names=2),
            True,
            False,
        )
        assert [(o.symbol, o.side, o.quantity) for o in plan.orders] == [("A", "BUY", 37_500)]
        assert plan.orders[0].rationale["reason"].startswith("tops up to its slot")
        assert "entry" not in plan.orders[0].rationale  # a top-up opens nothing: the position keeps its entry
    between = plan_book(
        BookDay(Decimal("900000"), {"A": 10_000}, {"A": signal("A", 0.02)}, days, NO_FEES),
        Mandate(names=2),
        False,
        False,
    )
    assert between.orders == []  # not between rebalances
    # at half its slot or more (a price that drifted, not a cut-short buy): left alone
    near = plan_book(
        BookDay(Decimal("762500"), {"A": 23_750}, {"A": signal("A", 0.02)}, days, NO_FEES),
        Mandate(names=2),
        True,
        False,
    )
    assert near.orders == []


# --- the outlook: what a trade is expected to earn over the hold ------------------------------


def test_a_persistent_signal_pays_a_replacement_the_labels_horizon_does_not() -> None:
    """The same gap, too small for the pair's round trip over the label's 5 sessions, pays
    it once the signal is known to keep paying over the hold (Garleanu-Pedersen): the
    outlook's multiplier scales the gap, and the reason says over how long."""
    _, _, _, _, cost = full_book(0.0)
    cash, held, signals, days, cost = full_book(0.01 + cost / 2)
    mandate = Mandate(names=2, hold=60)
    assert plan_book(BookDay(cash, dict(held), signals, days, FEES), mandate, outlook=Outlook(60, 1.0)).orders == []
    lasting = Outlook.of({"1-5": 0.1, "6-10": 0.05, "11-20": 0.05, "21-40": 0.05, "41-60": 0.05}, 60)
    assert lasting.multiplier > 2  # the gap of cost / 2, times it, beats the cost
    swapped = plan_book(BookDay(cash, dict(held), signals, days, FEES), mandate, outlook=lasting)
    assert sides(swapped) == [("B", "SELL"), ("C", "BUY")]
    assert "over 60 sessions" in swapped.orders[1].rationale["reason"]
    assert swapped.orders[1].rationale["outlook"] == {"hold": 60, "multiplier": round(lasting.multiplier, 4)}


def test_an_outlook_without_measured_skill_is_the_labels_horizon() -> None:
    assert Outlook.of(None, 60).multiplier == 1.0
    assert Outlook.of({"1-5": -0.02, "6-10": 0.05}, 60).multiplier == 1.0  # no skill in the label's window
    # windows not measured yet count nothing; a fleeting signal adds little
    assert Outlook.of({"1-5": 0.1, "6-10": None}, 60).multiplier == 1.0
    assert Outlook.of({"1-5": 0.1, "6-10": 0.0, "11-20": 0.0, "21-40": 0.0, "41-60": 0.0}, 60).multiplier == 1.0
    # a signal as strong in every window: the square root of each window's span over the first's
    even = {"1-5": 0.1, "6-10": 0.1, "11-20": 0.1, "21-40": 0.1, "41-60": 0.1}
    assert Outlook.of(even, 60).multiplier == pytest.approx(1 + 1 + 2**0.5 + 2 + 2)
    assert Outlook.of(even, 15).multiplier == pytest.approx(1 + 1 + 2**0.5 / 2)  # half the 11-20 window


def test_a_name_expected_to_lose_more_than_its_round_trip_over_the_hold_is_sold() -> None:
    """HOLD on the label's horizon (its expected excess is above minus a round trip) but
    below it over the hold: sold on a rebalance day with that reason (not between them: a
    day's dip is not a trend); kept with the label's outlook."""
    held = {"A": 20_000}
    signals = {"A": signal("A", -0.008, "HOLD")}  # its own round trip is 1% (signal's round_trip_cost 0.01)
    days = {"A": market("A")}
    assert plan_book(BookDay(Decimal("0"), dict(held), signals, days, FEES), Mandate(trim=None)).orders == []
    outlook, mandate = Outlook(40, 2.0), Mandate(hold=40, trim=None)
    between = plan_book(BookDay(Decimal("0"), dict(held), signals, days, FEES), mandate, False, outlook=outlook)
    assert between.orders == []
    plan = plan_book(BookDay(Decimal("0"), dict(held), signals, days, FEES), mandate, outlook=outlook)
    assert [(o.symbol, o.side, o.quantity) for o in plan.orders] == [("A", "SELL", 20_000)]
    assert plan.orders[0].rationale["reason"].startswith("expected to lose 1.60% over 40 sessions")


def test_a_position_past_its_trim_is_sold_back_to_its_slot() -> None:
    """Two names, a slot of 47,500 shares at 10: A grew to 3 slots' worth. With a trim of
    2 slots it is sold back to its slot and the proceeds fill B's slot; without, it stays."""
    days = {"A": market("A", close=30.0, bid=29.99, ask=30.01, high=30.3, low=29.7), "B": market("B")}
    signals = {"A": signal("A", 0.02, "HOLD"), "B": signal("B", 0.03)}
    kept = plan_book(BookDay(Decimal("0"), {"A": 47_500}, signals, days, FEES), Mandate(names=2, trim=None))
    assert all(o.side == "BUY" or o.symbol != "A" for o in kept.orders)
    plan = plan_book(BookDay(Decimal("0"), {"A": 47_500}, signals, days, FEES), Mandate(names=2, trim=2.0))
    sell = next(o for o in plan.orders if o.side == "SELL")
    slot = 0.95 * 47_500 * 30 / 2
    assert sell.symbol == "A" and sell.quantity == 47_500 - math.floor(slot / 30)
    assert sell.rationale["reason"].startswith("trimmed to its slot: 2.1 slots, past the mandate's 2")
    assert ("B", "BUY") in sides(plan)


def test_reserve_names_say_so_and_a_buy_expected_to_trail_says_why() -> None:
    """Capacity holds the two LONG names at a fifth of their slots: the reserve (HOLD names
    that pass the gates) takes what is uninvested, each called a reserve name, and a name
    bought with a negative expected excess says why it is bought at all."""
    days = {s: market(s, adv_20=20_000.0, volume=20_000) for s in "ABCD"}
    signals = {
        "A": signal("A", 0.02),
        "B": signal("B", 0.01),
        "C": signal("C", -0.004, "HOLD"),
        "D": signal("D", -0.005, "HOLD"),
    }
    plan = plan_book(BookDay(Decimal("1000000"), {}, signals, days, FEES), Mandate(names=2))
    reasons = {o.symbol: o.rationale["reason"] for o in plan.orders}
    assert reasons["A"].startswith("fills an empty slot (1 of 2)")
    assert reasons["C"].startswith("reserve 1: capacity holds the book's 2 names below their slots")
    assert reasons["D"].startswith("reserve 2:")
    assert "its expected excess is negative (-0.40%)" in reasons["C"] and "stays invested" in reasons["C"]
    assert "negative" not in reasons["A"]
    # what each opening buy entered as travels with it (the AI positions and the Briefing count them apart)
    assert {o.symbol: o.rationale["entry"] for o in plan.orders} == {
        "A": "slot",
        "B": "slot",
        "C": "reserve",
        "D": "reserve",
    }


def _fifteen_held(adv_20: float, shares: int, reserve_spread: float = 0.002):
    """15 LONG names held (50 each), two HOLD names that may be the reserve, cash 1,200,000."""
    days, signals = {}, {}
    for i in range(17):
        s = f"N{i:02d}"
        spread = reserve_spread if i == 15 else 0.002
        days[s] = market(s, close=50.0, volume=400_000, adv_20=adv_20, bid=50 - 25 * spread, ask=50 + 25 * spread)
        signals[s] = signal(s, 0.01 - i * 0.0001, "LONG" if i < 15 else "HOLD", 60.0 - i / 10)
    held = {f"N{i:02d}": shares for i in range(15)}
    return BookDay(Decimal(1_200_000), held, signals, days, FEES)


def test_cash_that_came_in_buys_no_reserve_where_capacity_binds_nothing() -> None:
    """The book holds its 15 names, each below its slot (about 4,275 shares) only because
    cash came in; capacity (15% of ADV_20 400,000: 60,000 shares) holds none below it. The
    cash stays a buffer: no 16th name, no reserve reason claiming capacity did it."""
    plan = plan_book(_fifteen_held(400_000.0, 2_900), Mandate())
    assert [o.symbol for o in plan.orders if o.symbol in ("N15", "N16")] == []
    assert not any(o.rationale["reason"].startswith("reserve") for o in plan.orders)


def test_the_reserve_takes_what_capacity_leaves_and_counts_only_its_buys() -> None:
    """Capacity (15% of ADV_20 20,000: 3,000 shares) holds each of the 15 names below its
    slot (4,370 shares) by 1,370: the reserve is bought. The first reserve name fails the
    entry gates (a 6% spread), so the name bought is `reserve 1`, not `reserve 2`."""
    plan = plan_book(_fifteen_held(20_000.0, 3_000, reserve_spread=0.06), Mandate())
    assert [s.symbol for s in plan.skipped if s.reason.startswith("entry gates failed")] == ["N15"]
    (bought,) = [o for o in plan.orders if o.side == "BUY"]
    assert bought.symbol == "N16" and bought.rationale["entry"] == "reserve"
    assert bought.rationale["reason"].startswith("reserve 1: capacity holds the book's 15 names below their slots")
