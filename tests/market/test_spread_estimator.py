"""The spread estimator where no quotes exist (market/liquidity.py `estimate_spreads`):
it recovers a known spread from closes, highs and lows alone, reads no bar after the day
it estimates, gives way to Corwin-Schultz or the tick floor where Abdi-Ranaldo reads
zero (and says so), loses to quotes, and a fill it priced says so."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from market.costs import FeeSchedule, Session, fill
from market.liquidity import (
    MIN_PAIRS,
    QUOTE_CARRY,
    WINDOW,
    abdi_ranaldo,
    corwin_schultz,
    estimate_spreads,
    latest_estimates,
    spread_fraction,
    spreads_with_source,
    tick_size,
    with_spread_estimates,
)
from portfolio.rails import HIGH_SPREAD_FLAG, MarketDay, check_entry, exit_state

START = date(2020, 1, 1)


def simulated_bars(spread: float, days: int, seed: int, sigma: float = 0.015, steps: int = 40) -> pd.DataFrame:
    """An efficient log price on a random walk (daily sd `sigma`, `steps` trades a day),
    every trade at the bid or the ask (probability 1/2 each) of a quote `spread` wide
    around it: the day's high, low and last trade are what a file without quotes keeps."""
    rng = np.random.default_rng(seed)
    path = np.cumsum(rng.normal(0, sigma / np.sqrt(steps), days * steps)).reshape(days, steps) + np.log(50.0)
    side = rng.choice([-1.0, 1.0], size=(days, steps))
    trades = np.exp(path) * (1 + side * spread / 2)
    return pd.DataFrame(
        {
            "symbol": "SIM",
            "date": [START + timedelta(days=i) for i in range(days)],
            "close": trades[:, -1],
            "high": trades.max(axis=1),
            "low": trades.min(axis=1),
            "volume": 1_000,
        }
    )


@pytest.mark.parametrize("spread", [0.01, 0.02, 0.04])
def test_abdi_ranaldo_recovers_a_known_spread_from_closes_highs_and_lows(spread: float) -> None:
    bars = pd.concat([simulated_bars(spread, 1_500, seed).assign(symbol=f"S{seed}") for seed in range(4)])
    bars = bars.reset_index(drop=True)
    whole = abdi_ranaldo(bars, window=1_500).groupby(bars["symbol"]).last()
    # over the whole sample, each name within 15% of the spread its trades paid
    assert whole.to_numpy() == pytest.approx(spread, rel=0.15)
    estimated = estimate_spreads(bars)
    ready = estimated.groupby(bars["symbol"]).cumcount() >= WINDOW
    # the 60-session windows: the median within 10%, and the estimator priced nearly all of them
    assert estimated.loc[ready, "spread_estimate"].median() == pytest.approx(spread, rel=0.10)
    assert (estimated.loc[ready, "spread_source"] == "abdi_ranaldo").mean() > 0.9
    # the day's range, the proxy it replaces, is far wider: it is mostly volatility
    assert ((bars["high"] - bars["low"]) / bars["close"]).median() > spread + 0.01


def test_the_estimate_is_point_in_time_a_later_bar_never_changes_an_earlier_day() -> None:
    bars = simulated_bars(0.02, 200, seed=11)
    before = estimate_spreads(bars)
    for day in (30, 120, 199):
        changed = bars.copy()
        changed.loc[day, ["close", "high", "low"]] = [80.0, 95.0, 20.0]
        after = estimate_spreads(changed)
        pd.testing.assert_frame_equal(after.iloc[:day], before.iloc[:day])
        assert after.iloc[day:].ne(before.iloc[day:]).any().any() or day == 199
    # and the row order of the input does not matter: the same figure on the same row
    shuffled = bars.sample(frac=1.0, random_state=3)
    pd.testing.assert_frame_equal(estimate_spreads(shuffled).sort_index(), before)


def test_days_without_trades_are_skipped_and_carry_the_last_traded_estimate() -> None:
    bars = simulated_bars(0.02, 120, seed=5)
    quiet = bars.copy()
    rows = quiet.index[1::3]  # every third day nothing trades: high = low = close = the last close
    quiet.loc[rows, "volume"] = 0
    previous_close = quiet["close"].shift()
    quiet.loc[rows, ["close", "high", "low"]] = np.repeat(previous_close[rows].to_numpy()[:, None], 3, axis=1)
    estimated = estimate_spreads(quiet)
    traded_only = estimate_spreads(quiet.drop(index=rows))
    pd.testing.assert_frame_equal(estimated.drop(index=rows), traded_only)
    carried = estimated["spread_estimate"].shift().loc[rows]
    assert estimated.loc[rows, "spread_estimate"].to_numpy() == pytest.approx(carried.to_numpy(), nan_ok=True)


def test_the_latest_estimates_are_the_estimators_figures_on_each_names_latest_row() -> None:
    """`latest_estimates` (what a day's market reads: portfolio/market.py) reads the traded
    sessions alone; it gives what `estimate_spreads` gives on each name's latest row, that
    row traded or not, names in any order, and leaves out a name that never traded."""
    names = []
    for seed, (days, quiet_every) in enumerate([(150, 0), (90, 3), (30, 2), (12, 0)]):
        bars = simulated_bars(0.01 + 0.01 * seed, days, seed).assign(symbol=f"S{seed}")
        if quiet_every:
            bars.loc[bars.index[quiet_every - 1 :: quiet_every], "volume"] = 0
        names.append(bars)
    names.append(pd.DataFrame({"symbol": "NEVER", "date": [START], "close": [5.0], "high": [5.0], "low": [5.0]}))
    bars = pd.concat(names).assign(volume=lambda f: f["volume"].fillna(0)).sample(frac=1.0, random_state=1)
    bars = bars.reset_index(drop=True)
    estimated = bars[["symbol", "date"]].join(estimate_spreads(bars))
    last = estimated.sort_values("date").groupby("symbol").tail(1).dropna(subset=["spread_estimate"])
    expected = {r.symbol: (r.spread_estimate, r.spread_source) for r in last.itertuples()}
    found = latest_estimates(bars)
    assert set(found) == set(expected) == {"S0", "S1", "S2", "S3"}
    assert found == expected
    assert bars.loc[bars["symbol"] == "S2"].sort_values("date")["volume"].iloc[-1] == 0  # its latest row untraded


def test_a_recent_two_sided_quote_stands_in_before_the_bars_estimate() -> None:
    """A one-sided or unquoted day reads the name's latest two-sided quote of its last
    QUOTE_CARRY stored sessions (a 5.2% quote is not read as the bars' ~1%), the day's own
    quote still wins (the estimate beside it stays the bars'), a crossed quote is not a
    quote, and past the carry the bars' estimate comes back; `latest_estimates` agrees on
    the latest row."""
    bars = simulated_bars(0.01, 120, seed=4).assign(bid=np.nan, ask=np.nan)
    quoted_day = 100
    mid = bars.loc[quoted_day, "close"]
    bars.loc[quoted_day, ["bid", "ask"]] = [mid * (1 - 0.026), mid * (1 + 0.026)]
    bars.loc[quoted_day + 1, ["bid", "ask"]] = [np.nan, mid * 1.03]  # ask only
    bars.loc[quoted_day + 2, ["bid", "ask"]] = [mid * 1.01, mid * 0.99]  # crossed
    quoted = (bars.loc[quoted_day, "ask"] - bars.loc[quoted_day, "bid"]) / mid
    estimated = estimate_spreads(bars)
    carried = estimated.iloc[quoted_day + 1 : quoted_day + QUOTE_CARRY]
    assert set(carried["spread_source"]) == {"recent_quotes"}
    # the quoted day itself keeps the bars' estimate beside its quote
    assert estimated.iloc[quoted_day]["spread_source"] == "abdi_ranaldo"
    assert carried["spread_estimate"].to_numpy() == pytest.approx(quoted)
    after = estimated.iloc[quoted_day + QUOTE_CARRY]
    assert after["spread_source"] == "abdi_ranaldo" and after["spread_estimate"] < 0.02
    assert estimated.iloc[quoted_day - 1]["spread_source"] == "abdi_ranaldo"  # point in time
    spread = spreads_with_source(bars.join(estimated.rename(columns={"spread_source": "spread_estimate_source"})))
    assert spread.loc[quoted_day, "spread_source"] == "quotes"
    assert spread.loc[quoted_day + 1].tolist() == [pytest.approx(quoted), "recent_quotes"]
    assert latest_estimates(bars.iloc[: quoted_day + 3])["SIM"] == (pytest.approx(quoted), "recent_quotes")
    assert latest_estimates(bars)["SIM"][1] == "abdi_ranaldo"
    # a name quoted but never traded has the quote and nothing else
    days = [START, START + timedelta(days=1)]
    quiet = pd.DataFrame({"symbol": "Q", "date": days, "close": 10.0, "high": 10.0, "low": 10.0, "volume": 0})
    quiet = quiet.assign(bid=[9.5, np.nan], ask=[10.5, 10.5])
    assert latest_estimates(quiet) == {"Q": (pytest.approx(0.1), "recent_quotes")}


def test_before_enough_pairs_the_window_mean_range_stands_in_and_nothing_known_is_none() -> None:
    bars = simulated_bars(0.02, MIN_PAIRS + 5, seed=2)
    estimated = estimate_spreads(bars)
    early = estimated.iloc[:MIN_PAIRS]
    assert set(early["spread_source"]) <= {"range_window", "tick"}
    day_range = (bars["high"] - bars["low"]) / bars["close"]
    assert early["spread_estimate"].iloc[4] == pytest.approx(day_range.iloc[:5].mean())
    assert estimated["spread_source"].iloc[MIN_PAIRS] in {"abdi_ranaldo", "corwin_schultz", "tick"}
    untraded = pd.DataFrame({"symbol": ["X"], "date": [START], "close": [10.0], "high": [10.0], "low": [10.0]})
    untraded["volume"] = 0
    assert estimate_spreads(untraded).iloc[0].tolist()[1] == "none"
    assert np.isnan(estimate_spreads(untraded)["spread_estimate"].iloc[0])


def test_where_abdi_ranaldo_reads_zero_the_tick_floor_takes_over_and_says_so() -> None:
    # a steady climb without intraday range: positive autocorrelation, AR reads exactly zero
    days = 80
    close = 50.0 * 1.01 ** np.arange(days)
    close = np.round(close / 0.05) * 0.05
    bars = pd.DataFrame(
        {"symbol": "UP", "date": [START + timedelta(days=i) for i in range(days)], "close": close}
    ).assign(high=close, low=close, volume=500)
    assert (abdi_ranaldo(bars).dropna() == 0).all()
    estimated = estimate_spreads(bars)
    late = estimated.iloc[MIN_PAIRS + 1 :]
    assert (late["spread_source"] == "tick").all()
    assert late["spread_estimate"].to_numpy() == pytest.approx(
        tick_size(close[MIN_PAIRS + 1 :]) / close[MIN_PAIRS + 1 :]
    )


def test_where_abdi_ranaldo_reads_zero_corwin_schultz_takes_over_above_the_floor() -> None:
    # closes at the middle of wide daily ranges (an averaged close, no bounce left in it):
    # AR reads exactly zero while the two-day ranges still say something
    rng = np.random.default_rng(4)
    days = 120
    mid = 50.0 * np.exp(np.cumsum(rng.normal(0, 0.002, days)))
    bars = pd.DataFrame({"symbol": "MID", "date": [START + timedelta(days=i) for i in range(days)]}).assign(
        high=mid * 1.02, low=mid / 1.02, close=mid, volume=500
    )
    ar, cs = abdi_ranaldo(bars), corwin_schultz(bars)
    estimated = estimate_spreads(bars)
    zero = (ar < 1e-9) & (cs > tick_size(mid) / mid)
    assert zero.sum() == days - MIN_PAIRS
    assert (estimated.loc[zero, "spread_source"] == "corwin_schultz").all()
    assert estimated.loc[zero, "spread_estimate"].to_numpy() == pytest.approx(cs[zero].to_numpy())


def test_quotes_win_then_the_estimate_then_the_days_range() -> None:
    frame = pd.DataFrame(
        {
            "bid": [9.9, np.nan, np.nan, np.nan],
            "ask": [10.1, np.nan, np.nan, np.nan],
            "high": [10.5, 10.5, 10.5, np.nan],
            "low": [9.5, 9.5, 9.5, np.nan],
            "close": [10.0, 10.0, 10.0, 10.0],
            "spread_estimate": [0.013, 0.013, np.nan, np.nan],
            "spread_estimate_source": ["abdi_ranaldo", "abdi_ranaldo", None, None],
        }
    )
    out = spreads_with_source(frame)
    assert out["spread"].tolist()[:3] == pytest.approx([0.02, 0.013, 0.10])
    assert np.isnan(out["spread"].iloc[3])
    assert out["spread_source"].tolist() == ["quotes", "abdi_ranaldo", "range", "none"]
    assert spread_fraction(9.9, 10.1, 10.5, 9.5, 10.0, (0.013, "abdi_ranaldo")) == (pytest.approx(0.02), "quotes")
    assert spread_fraction(None, None, 10.5, 9.5, 10.0, (0.013, "abdi_ranaldo")) == (0.013, "abdi_ranaldo")
    assert spread_fraction(None, None, 10.5, 9.5, 10.0) == (0.1, "range")


def test_with_spread_estimates_puts_the_estimate_where_spread_series_reads_it() -> None:
    bars = simulated_bars(0.02, 100, seed=9)
    out = spreads_with_source(with_spread_estimates(bars))
    assert out["spread"].iloc[-1] == pytest.approx(estimate_spreads(bars)["spread_estimate"].iloc[-1])
    assert out["spread_source"].iloc[-1] == estimate_spreads(bars)["spread_source"].iloc[-1]


def test_a_fill_priced_with_an_estimate_says_so_in_its_touch_source() -> None:
    fees = FeeSchedule(Decimal("0.005"), Decimal("0"))
    bare = Session(close=10.0, volume=40_000, adv_20=40_000.0, high=10.5, low=9.5, volatility=0.02)
    estimated = replace(bare, spread_estimate=0.012, spread_estimate_source="abdi_ranaldo")
    buy, sell = fill("BUY", 100, estimated, fees), fill("SELL", 100, estimated, fees)
    assert buy.touch == pytest.approx(10.0 * 1.006) and buy.touch_source == "abdi_ranaldo"
    assert sell.touch == pytest.approx(10.0 * 0.994) and sell.as_dict()["touch_source"] == "abdi_ranaldo"
    quoted = replace(estimated, bid=9.9, ask=10.1)
    assert fill("BUY", 100, quoted, fees).touch_source == "quotes"
    # without an estimate the day's range (10%) prices it, as for a caller with no history
    assert (
        fill("BUY", 100, bare, fees).touch == pytest.approx(10.5)
        and fill("BUY", 100, bare, fees).touch_source == "range"
    )


def test_the_rail_gates_and_flags_on_the_estimate_the_market_day_carries() -> None:
    wide_range = dict(symbol="X", close=10.0, volume=10_000, adv_20=20_000.0, high=10.6, low=9.4)
    bare, estimated = (
        MarketDay(**wide_range),
        MarketDay(**wide_range, spread_estimate=0.015, spread_estimate_source="tick"),
    )
    assert bare.spread == pytest.approx(0.12) and HIGH_SPREAD_FLAG in exit_state(bare, 100).flags
    assert not check_entry(bare, 100).passed
    assert estimated.spread == 0.015 and estimated.spread_source == "tick"
    assert HIGH_SPREAD_FLAG not in exit_state(estimated, 100).flags and check_entry(estimated, 100).passed
    assert estimated.session().spread_estimate == 0.015
    assert fill("BUY", 10, estimated.session(), FeeSchedule()).touch_source == "tick"


def test_the_whole_panel_is_estimated_fast() -> None:
    import time

    bars = pd.concat([simulated_bars(0.02, 2_000, seed, steps=4).assign(symbol=f"S{seed}") for seed in range(60)])
    bars = bars.reset_index(drop=True).sample(frac=1.0, random_state=1)
    started = time.perf_counter()
    estimated = estimate_spreads(bars)
    assert time.perf_counter() - started < 3.0
    assert estimated.index.equals(bars.index) and estimated["spread_estimate"].notna().all()
