"""The spread rule and the per-instrument entry gates: one table, both twins (scalar and
vectorised) must give every row's answer."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from market.liquidity import effective_spread, entry_gates, passes_entry_gates, spread_fraction, spread_series

NAN = float("nan")
# bid, ask, high, low, close -> spread, source
SPREADS = [
    ((99.0, 101.0, 102.0, 98.0, 100.0), 0.02, "quotes"),
    ((9.75, 10.25, 10.4, 9.6, 10.0), 0.05, "quotes"),  # exactly 5% of the mid
    ((None, None, 102.5, 97.5, 100.0), 0.05, "range"),  # no quotes: the day's range
    ((99.0, None, 103.0, 97.0, 100.0), 0.06, "range"),  # one side missing
    ((10.2, 10.1, 10.6, 9.8, 10.0), 0.08, "range"),  # crossed quotes are not a spread
    ((0.0, 1.0, 10.6, 9.8, 10.0), 0.08, "range"),  # a zero bid is no quote
    ((NAN, NAN, NAN, NAN, 100.0), None, "none"),
    ((None, None, None, None, 100.0), None, "none"),
    ((None, None, 101.0, 99.0, 0.0), None, "none"),  # no close to scale the range by
]


@pytest.mark.parametrize("inputs, spread, source", SPREADS)
def test_scalar_and_vectorised_spread_agree_on_every_row(inputs, spread, source) -> None:
    assert spread_fraction(*inputs) == (pytest.approx(spread) if spread is not None else None, source)
    frame = pd.DataFrame([inputs], columns=["bid", "ask", "high", "low", "close"], dtype=float)
    vectorised = spread_series(frame).iloc[0]
    if spread is None:
        assert math.isnan(vectorised)
    else:
        assert vectorised == pytest.approx(spread)
        assert effective_spread(frame).iloc[0] == spread_fraction(*inputs)[0]


def test_a_day_without_trades_has_no_range_to_stand_in_for_the_spread() -> None:
    """A no-trade day repeats the last close as its high and low: a range of 0, no spread;
    with trades (or no volume known) the range stands in, and quotes win either way."""
    rows = [  # bid, ask, high, low, close, volume -> spread, source
        ((None, None, 10.0, 10.0, 10.0, 0.0), None, "none"),
        ((None, None, 10.4, 9.6, 10.0, 0.0), None, "none"),
        ((None, None, 10.4, 9.6, 10.0, 500.0), 0.08, "range"),
        ((None, None, 10.4, 9.6, 10.0, None), 0.08, "range"),
        ((9.9, 10.1, 10.0, 10.0, 10.0, 0.0), 0.02, "quotes"),
    ]
    for (*prices, volume), spread, source in rows:
        assert spread_fraction(*prices, volume=volume) == (spread, source)
        frame = pd.DataFrame([[*prices, volume]], columns=["bid", "ask", "high", "low", "close", "volume"], dtype=float)
        vectorised = spread_series(frame).iloc[0]
        assert math.isnan(vectorised) if spread is None else vectorised == pytest.approx(spread), (prices, volume)


# adv_20, volume, bid, ask -> passes (high 10.4, low 9.6, close 10.0: an 8% range)
GATES = [
    ((20_000, 1_000, 9.9, 10.1), True, []),
    ((5_000, 1_000, 9.9, 10.1), True, []),
    ((4_999, 1_000, 9.9, 10.1), False, ["adv_20"]),
    ((NAN, 1_000, 9.9, 10.1), False, ["adv_20"]),  # under 20 days of history
    ((20_000, 0, 9.9, 10.1), False, ["volume_today"]),
    ((20_000, 1_000, 9.75, 10.25), True, []),  # 5.00% is at the threshold
    ((20_000, 1_000, 9.74, 10.26), False, ["spread"]),
    ((20_000, 1_000, NAN, NAN), False, ["spread"]),  # the 8% range stands in
    ((4_000, 0, NAN, NAN), False, ["adv_20", "volume_today", "spread"]),
]


@pytest.mark.parametrize("inputs, passes, failed", GATES)
def test_scalar_and_vectorised_entry_gates_agree_on_every_row(inputs, passes, failed) -> None:
    adv, volume, bid, ask = inputs
    spread, _ = spread_fraction(bid, ask, 10.4, 9.6, 10.0)
    gates = entry_gates(None if math.isnan(adv) else adv, volume, spread)
    assert [name for name, ok in gates.items() if not ok] == failed
    frame = pd.DataFrame(
        {"adv_20": [adv], "volume": [volume], "bid": [bid], "ask": [ask], "high": [10.4], "low": [9.6], "close": [10.0]}
    )
    assert bool(passes_entry_gates(frame).iloc[0]) is passes is all(gates.values())
