"""The one cost model: a buy pays the ask (a sell gets the bid) where quoted, half the
spread proxy elsewhere, square-root impact on top, never more than 25% of the session's
volume, and the parts it reports add up to what the fill cost."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from market.costs import (
    FALLBACK_SPREAD,
    IMPACT_Y,
    MAX_PARTICIPATION,
    FeeSchedule,
    Session,
    fill,
    impact_fraction,
    round_trip_cost,
    size_for_edge,
)

FEES = FeeSchedule(Decimal("0.005"), Decimal("0"))


def session(**changes) -> Session:
    base = dict(close=10.0, volume=40_000, adv_20=40_000.0, bid=9.9, ask=10.1, high=10.3, low=9.8, volatility=0.02)
    return Session(**{**base, **changes})


@pytest.mark.parametrize("quantity", [1, 100, 5_000, 10_000])
def test_a_buy_never_fills_below_the_ask_nor_a_sell_above_the_bid(quantity: int) -> None:
    buy, sell = fill("BUY", quantity, session(), FEES), fill("SELL", quantity, session(), FEES)
    assert buy.price >= Decimal("10.1") and buy.touch_source == "quotes"
    assert sell.price <= Decimal("9.9")
    # the impact is the square-root law's: Y x sigma x sqrt(quantity / volume)
    assert buy.impact == pytest.approx(IMPACT_Y * 0.02 * math.sqrt(quantity / 40_000))


def test_without_quotes_the_touch_is_half_the_range_proxy_away_from_the_close() -> None:
    quiet = session(bid=None, ask=None)
    buy = fill("BUY", 1, quiet, FEES)
    assert buy.touch == pytest.approx(10.0 * (1 + 0.05 / 2)) and buy.touch_source == "range"
    sell = fill("SELL", 1, session(bid=None, ask=None, high=None, low=None), FEES)
    assert sell.touch == pytest.approx(10.0 * (1 - FALLBACK_SPREAD / 2)) and sell.touch_source == "fallback"


def test_impact_grows_with_the_share_of_the_smaller_of_session_volume_and_adv() -> None:
    small, large = impact_fraction(1_000, session()), impact_fraction(4_000, session())
    assert large == pytest.approx(2 * small)
    # a block trade that inflated ADV_20 does not make a thin session cheap
    assert impact_fraction(1_000, session(volume=4_000, adv_20=400_000.0)) == pytest.approx(
        0.02 * math.sqrt(1_000 / 4_000)
    )


def test_no_fill_exceeds_its_share_of_the_session_volume_and_the_rest_lapses() -> None:
    done = fill("BUY", 50_000, session(volume=8_000), FEES)
    assert done.quantity == int(MAX_PARTICIPATION * 8_000) == 2_000
    assert done.lapsed == 48_000 and "25%" in done.lapse_reason
    none = fill("SELL", 100, session(volume=0), FEES)
    assert none.quantity == 0 and none.lapse_reason == "no trades in the session" and none.fee == 0


def test_the_cost_parts_add_up_to_what_the_fill_paid_over_the_close() -> None:
    done = fill("BUY", 3_000, session(), FEES)
    costs = {k: Decimal(v) for k, v in done.costs.as_text().items()}
    paid_over_close = (done.price - Decimal("10")) * done.quantity
    assert costs["spread"] + costs["impact"] == pytest.approx(paid_over_close, abs=Decimal("0.01"))
    assert costs["fees"] == done.fee == FEES.fee(done.gross)
    assert costs["total"] == costs["spread"] + costs["impact"] + costs["fees"]


def test_the_comparison_switch_fills_whole_at_the_close_for_free() -> None:
    free = fill("BUY", 50_000, session(volume=8_000), FEES, realistic=False)
    assert (free.quantity, free.price, free.fee, free.costs.as_text()["total"]) == (50_000, Decimal("10"), 0, "0")


def test_round_trip_and_the_size_an_edge_pays_for() -> None:
    assert round_trip_cost(0.02, 0.005) == pytest.approx(0.03)
    assert round_trip_cost(None, 0.005) == pytest.approx(FALLBACK_SPREAD + 0.01)
    assert size_for_edge(0.02, 0.02, 0.005, session()) == 0  # below the touch cost: no size at all
    q = size_for_edge(0.04, 0.02, 0.005, session())
    assert round_trip_cost(0.02, 0.005, impact_fraction(q, session())) == pytest.approx(0.04)


def test_a_price_that_never_moves_still_pays_impact_of_a_one_tick_range() -> None:
    """A thin name printing 8.00 every session (high = low = close, 20-day volatility 0):
    sigma fell back to 0.6 x the day's range, 0, so buying a quarter of the session cost
    no impact. Sigma is at least Parkinson's reading of a one-tick range (0.6 x tick /
    close): a price moves by a tick at least."""
    from market.liquidity import tick_size

    flat = Session(close=8.0, volume=6_000, adv_20=6_000.0, high=8.0, low=8.0, volatility=0.0)
    floor = 0.6 * float(tick_size(8.0)) / 8.0
    done = fill("BUY", 1_500, flat, FeeSchedule())
    assert done.impact == pytest.approx(floor * math.sqrt(1_500 / 6_000)) and done.impact > 0
    assert (
        fill("BUY", 1_500, Session(close=8.0, volume=6_000, adv_20=6_000.0, high=8.0, low=8.0), FeeSchedule()).impact
        > 0
    )
    # a known volatility above the floor is the volatility, unchanged
    moving = Session(close=8.0, volume=6_000, adv_20=6_000.0, high=8.2, low=7.8, volatility=0.02)
    assert fill("BUY", 1_500, moving, FeeSchedule()).impact == pytest.approx(0.02 * 0.5)


@pytest.mark.parametrize("close", [0.12, 0.5, 3.07])
def test_a_price_under_a_few_units_pays_its_spread_to_the_cent_against_the_trader(close: float) -> None:
    """A foreign market's names below 1: rounded half up to the cent, a 6% spread estimate on
    a name at 0.12 (half a spread 0.0036) was no cost either way, the buy and the sell both
    filled at the close, and at 0.50 the buy paid 0.02 where the sell gave up 0.01. The
    price goes to the cent against the order: a buy never fills below its touch, a sell
    never above it, and the round trip costs at least the spread estimate."""
    quiet = session(close=close, bid=None, ask=None, high=None, low=None, spread_estimate=0.06, volatility=0.0)
    buy, sell = fill("BUY", 100, quiet, FEES), fill("SELL", 100, quiet, FEES)
    assert buy.price >= Decimal(str(close * 1.03)) - Decimal("1e-9") and buy.spread_cost > 0
    assert sell.price <= Decimal(str(close * 0.97)) + Decimal("1e-9") and sell.spread_cost > 0
    assert float(buy.price - sell.price) >= 0.06 * close - 1e-9
    # a price already on the cent stays there: a float's last digits are no cent
    exact = fill("BUY", 100, session(close=12.0, bid=11.64, ask=12.36, volatility=0.0), FEES)
    assert exact.touch == 12.36
