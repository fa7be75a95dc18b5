"""Every gate and flag of the liquidity rail at and around its threshold."""

from __future__ import annotations

import math

import pytest

from portfolio.rails import (
    HIGH_SPREAD_FLAG,
    SLOW_EXIT,
    TRAPPED,
    MarketDay,
    adv_20,
    check_entry,
    days_to_exit,
    exit_state,
    illiquid_discount,
    max_position_shares,
    value_positions,
)


def day(**changes) -> MarketDay:
    base = dict(symbol="AAA", close=100.0, volume=10_000, adv_20=20_000.0, bid=99.0, ask=101.0, high=102.0, low=98.0)
    return MarketDay(**{**base, **changes})


def gate(check, name):
    return next(g for g in check.gates if g.name == name)


@pytest.mark.parametrize("adv, passed", [(4_999, False), (4_999.99, False), (5_000, True), (5_001, True)])
def test_adv_gate(adv, passed) -> None:
    assert gate(check_entry(day(adv_20=adv), 100), "adv_20").passed is passed


def test_adv_gate_fails_without_twenty_days() -> None:
    assert adv_20([10_000] * 19) is None
    assert adv_20([0] * 10 + [10_000] * 10) == 5_000
    assert gate(check_entry(day(adv_20=None), 100), "adv_20").passed is False


@pytest.mark.parametrize("volume, passed", [(0, False), (1, True)])
def test_volume_today_gate(volume, passed) -> None:
    assert gate(check_entry(day(volume=volume), 100), "volume_today").passed is passed


@pytest.mark.parametrize(
    "bid, ask, passed",
    [
        (97.5, 102.5, True),  # exactly 5.00%
        (97.495, 102.505, False),  # 5.01%
        (97.6, 102.4, True),  # 4.8%
    ],
)
def test_spread_gate_on_quotes(bid, ask, passed) -> None:
    check = check_entry(day(bid=bid, ask=ask), 100)
    assert gate(check, "spread").passed is passed


def test_spread_without_quotes_uses_the_range_and_without_either_fails() -> None:
    # the rule's table is tests/market/test_liquidity.py; here, the rail's gate reads it
    assert gate(check_entry(day(bid=None, ask=None, high=102.5, low=97.5), 100), "spread").passed
    assert gate(check_entry(day(bid=None, ask=None, high=None, low=None), 100), "spread").passed is False


@pytest.mark.parametrize("shares, passed", [(2_999, True), (3_000, True), (3_001, False), (0, False)])
def test_position_size_gate_is_fifteen_percent_of_adv(shares, passed) -> None:
    assert max_position_shares(20_000) == 3_000
    assert gate(check_entry(day(), shares), "position_size").passed is passed


def test_entry_passes_only_with_all_four_gates() -> None:
    assert check_entry(day(), 3_000).passed
    assert check_entry(day(volume=0), 3_000).failed == ["volume_today"]
    assert check_entry(day(adv_20=4_000, volume=0), 100).failed == ["adv_20", "volume_today"]


def test_trapped_on_zero_volume_sells_nothing_and_leaves_liquid_equity() -> None:
    state = exit_state(day(volume=0), 1_000)
    assert TRAPPED in state.flags and state.sellable_today == 0
    assert exit_state(day(volume=1), 1).flags == ()
    assert illiquid_discount(day(volume=0), 1_000) == 100_000.0


@pytest.mark.parametrize("quantity, slow", [(25_000, False), (25_001, True)])
def test_slow_exit_beyond_five_days_at_a_quarter_of_adv(quantity, slow) -> None:
    # 25% of ADV_20 (20,000) is 5,000 shares a day: 25,000 shares take exactly 5 days.
    assert days_to_exit(25_000, 20_000) == 5.0
    state = exit_state(day(), quantity)
    assert (SLOW_EXIT in state.flags) is slow
    assert state.sellable_today == (2_500 if slow else quantity)  # 25% of today's 10,000


def test_days_to_exit_without_volume_is_infinite_and_without_history_unknown() -> None:
    assert math.isinf(days_to_exit(10, 0.0)) and days_to_exit(0, None) == 0
    assert math.isnan(days_to_exit(10, None))  # fewer than 20 sessions: unknown, not never


@pytest.mark.parametrize("bid, ask, high_spread", [(95.0, 105.0, False), (94.99, 105.01, True)])
def test_high_spread_above_ten_percent_discounts_liquid_equity(bid, ask, high_spread) -> None:
    market = day(bid=bid, ask=ask)
    state = exit_state(market, 100)
    assert (HIGH_SPREAD_FLAG in state.flags) is high_spread
    if high_spread:
        assert illiquid_discount(market, 100) == pytest.approx(100 * 100 * state.spread)
    else:
        assert illiquid_discount(market, 100) == 0


def test_liquid_equity_is_equity_less_the_discounts() -> None:
    market = {
        "LIQ": day(symbol="LIQ"),
        "TRP": day(symbol="TRP", volume=0, close=50.0),
        "WIDE": day(symbol="WIDE", bid=90.0, ask=110.0),
    }
    valuation = value_positions(1_000.0, {"LIQ": 10, "TRP": 20, "WIDE": 10}, market)
    assert valuation.equity == 1_000 + 1_000 + 1_000 + 1_000
    assert valuation.discounts == {"TRP": 1_000.0, "WIDE": pytest.approx(200.0)}
    assert valuation.liquid_equity == pytest.approx(4_000 - 1_200)
