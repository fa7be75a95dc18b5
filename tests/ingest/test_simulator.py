"""The simulated market is deterministic and looks like a thin national market."""

from datetime import date

import numpy as np
import pytest

from ingest.simulator.market import SimulatedMarket

DAY = date(2026, 11, 20)


@pytest.fixture(scope="module")
def market() -> SimulatedMarket:
    return SimulatedMarket(seed=7, size=60)


@pytest.fixture(scope="module")
def year(market: SimulatedMarket) -> list:
    end = market.days.index(DAY)
    return [market.day(d) for d in market.days[end - 249 : end + 1]]


def test_same_seed_same_market_whatever_the_order_of_requests() -> None:
    a, b = SimulatedMarket(seed=11, size=60), SimulatedMarket(seed=11, size=60)
    late_first = b.day(DAY).bars
    assert a.day(date(2025, 3, 3)).bars == b.day(date(2025, 3, 3)).bars
    assert a.day(DAY).bars == late_first
    assert SimulatedMarket(seed=12, size=60).day(DAY).bars != late_first


def test_at_least_sixty_instruments_on_two_boards_across_sectors(market: SimulatedMarket) -> None:
    securities = market.day(DAY).securities
    assert len(securities) >= 60
    assert {s["board"] for s in securities} == {"MAIN", "JUNIOR"}
    assert len({s["sector"] for s in securities}) >= 8


def test_trading_frequency_ranges_from_daily_to_weekly(year: list) -> None:
    traded: dict[str, list[bool]] = {}
    for day in year:
        for bar in day.bars:
            traded.setdefault(bar["symbol"], []).append(bar["volume"] > 0)
    shares = {s: np.mean(v) for s, v in traded.items() if len(v) > 100}
    assert min(shares.values()) < 0.3  # junior names that trade about once a week
    assert max(shares.values()) > 0.9  # banks that trade almost every day
    assert shares["KCB"] > 0.9


def test_spreads_range_from_under_one_to_over_ten_percent(year: list) -> None:
    spreads = [
        (b["ask"] - b["bid"]) / ((b["ask"] + b["bid"]) / 2) for d in year for b in d.bars if b["bid"] and b["ask"]
    ]
    assert min(spreads) < 0.01 and max(spreads) > 0.10
    assert all(b["bid"] < b["ask"] for d in year for b in d.bars if b["bid"] and b["ask"])
    one_sided = sum(1 for d in year for b in d.bars if (b["bid"] is None) != (b["ask"] is None))
    assert one_sided > 0


def test_no_trade_days_keep_the_last_traded_price(year: list) -> None:
    previous: dict[str, float] = {}
    for day in year:
        for bar in day.bars:
            if bar["volume"] == 0 and bar["symbol"] in previous:
                assert bar["close"] == previous[bar["symbol"]] and bar["open"] is None
            previous[bar["symbol"]] = bar["close"]


def test_corporate_life_happens(market: SimulatedMarket, year: list) -> None:
    kinds = {n["kind"] for d in year for n in d.notices}
    assert {"DIVIDEND", "HALT", "RESUME"} <= kinds
    all_notices = {
        n["kind"] for d in (market.day(x) for x in market.days[: market.days.index(DAY) + 1]) for n in d.notices
    }
    assert {"LISTING", "DELISTING"} <= all_notices
    halted = [b for d in year for b in d.bars if b["status"] == "HALTED"]
    assert halted and all(b["volume"] == 0 and b["bid"] is None for b in halted)


def test_fundamentals_change_only_on_quarterly_reports(year: list) -> None:
    eps = [next(f for f in d.fundamentals if f["symbol"] == "KCB") for d in year]
    report_dates = {f["report_date"] for f in eps}
    assert 3 <= len(report_dates) <= 5
    for before, after in zip(eps, eps[1:]):
        if before["report_date"] == after["report_date"]:
            assert before == after


def _tone_return_correlation(market: SimulatedMarket) -> float:
    end = market.days.index(DAY)
    tones, returns = [], []
    for i in range(end - 400, end):
        events = {e.symbol: e.tone for e in market.day(market.days[i]).events}
        following = market.day(market.days[i + 1])
        for symbol, tone in events.items():
            bar = next((b for b in following.bars if b["symbol"] == symbol), None)
            if bar and bar["volume"] > 0 and bar["prev_close"]:
                tones.append(tone)
                returns.append(bar["close"] / bar["prev_close"] - 1)
    return float(np.corrcoef(tones, returns)[0, 1])


def test_news_tone_weakly_leads_returns_and_can_be_switched_off() -> None:
    assert 0.05 < _tone_return_correlation(SimulatedMarket(seed=7, size=60)) < 0.6
    assert abs(_tone_return_correlation(SimulatedMarket(seed=7, size=60, news_signal=0.0))) < 0.08


@pytest.mark.parametrize("signal", [float("nan"), float("inf")])
def test_a_news_signal_that_is_not_a_number_is_refused(signal: float) -> None:
    """`exchange serve --news-signal nan` served a market whose companies' values were NaN
    (its prints stuck near their first days' prices)."""
    from market.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="news_signal must be a finite number"):
        SimulatedMarket(seed=7, size=10, news_signal=signal)


def test_the_day_range_holds_open_and_close_and_closes_bounce(year: list) -> None:
    traded = [b for d in year for b in d.bars if b["volume"] > 0]
    assert all(b["low"] <= min(b["open"], b["close"]) and max(b["open"], b["close"]) <= b["high"] for b in traded)
    assert all(b["close"] >= 0.01 and abs(b["close"] / b["prev_close"] - 1) <= 0.15 + 0.01 for b in traded)
    # Bid-ask bounce: a close in the top fifth of the day's range is followed more often by a
    # fall than by a rise (closes with an untraded or unchanged next day left out).
    nxt = {}
    for before, after in zip(year, year[1:]):
        following = {b["symbol"]: b["close"] for b in after.bars}
        for b in before.bars:
            if b["volume"] > 0 and b["high"] > b["low"] and following.get(b["symbol"], b["close"]) != b["close"]:
                nxt.setdefault((b["close"] - b["low"]) / (b["high"] - b["low"]) >= 0.8, []).append(
                    following[b["symbol"]] > b["close"]
                )
    assert np.mean(nxt[True]) < 0.4
