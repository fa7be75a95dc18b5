"""Each of the 14 features against values worked out by hand on tiny panels."""

import numpy as np
import pandas as pd
import pytest

from models import features as f


def panel(closes, volumes=None, bid=None, ask=None, high=None, low=None, **extra) -> pd.DataFrame:
    n = len(closes)
    return pd.DataFrame(
        {
            "close": closes,
            "volume": volumes if volumes is not None else [100] * n,
            "bid": bid if bid is not None else [np.nan] * n,
            "ask": ask if ask is not None else [np.nan] * n,
            "high": high if high is not None else [np.nan] * n,
            "low": low if low is not None else [np.nan] * n,
            "sentiment": extra.get("sentiment", [np.nan] * n),
            "market_sentiment": extra.get("market_sentiment", [0.2] * n),
            "market_breadth": extra.get("market_breadth", [0.1] * n),
            "layer1_p_up": extra.get("layer1_p_up", [0.55] * n),
        },
        dtype=float,
    )


def test_exactly_fourteen_documented_features() -> None:
    assert len(f.FEATURES) == 14 and len(set(f.FEATURE_NAMES)) == 14
    assert all(len(feature.definition) > 30 for feature in f.FEATURES)


def test_rsi_extremes_and_a_hand_computed_value() -> None:
    assert f.rsi_14(panel(list(range(1, 17)))).iloc[-1] == 100.0
    assert f.rsi_14(panel([5.0] * 16)).iloc[-1] == 50.0
    closes = [10.0] * 14 + [11.0, 10.5]  # changes: 13 zeros, +1, -0.5
    alpha = 1 / 14
    gain = loss = 0.0  # Wilder smoothing from a zero start (the first 13 changes are zero)
    for change in np.diff(closes):
        gain = (1 - alpha) * gain + alpha * max(change, 0)
        loss = (1 - alpha) * loss + alpha * max(-change, 0)
    assert f.rsi_14(panel(closes)).iloc[-1] == pytest.approx(100 - 100 / (1 + gain / loss))
    assert np.isnan(f.rsi_14(panel([1.0] * 10)).iloc[-1])  # fewer than 14 changes


def test_bollinger_on_a_known_window() -> None:
    closes = [10.0] * 19 + [12.0]
    mean = (19 * 10 + 12) / 20  # 10.1
    std = np.sqrt((19 * (10 - mean) ** 2 + (12 - mean) ** 2) / 20)  # population std
    lower, upper = mean - 2 * std, mean + 2 * std
    p = panel(closes)
    assert f.bollinger_pct_b(p).iloc[-1] == pytest.approx((12 - lower) / (upper - lower))
    assert f.bollinger_bandwidth(p).iloc[-1] == pytest.approx((upper - lower) / mean)
    assert f.bollinger_pct_b(panel([7.0] * 20)).iloc[-1] == 0.5  # no width


def test_momentum_and_last_return() -> None:
    closes = [float(x) for x in range(100, 161)]  # 61 closes
    p = panel(closes)
    assert f.momentum_5(p).iloc[-1] == pytest.approx(160 / 155 - 1)
    assert f.momentum_20(p).iloc[-1] == pytest.approx(160 / 140 - 1)
    assert f.return_1d(p).iloc[-1] == pytest.approx(160 / 159 - 1)


def test_volatility_of_alternating_log_returns() -> None:
    closes = [100.0 * (1.01 if i % 2 else 1.0) for i in range(21)]  # log returns +-log(1.01)
    assert f.volatility_20(panel(closes)).iloc[-1] == pytest.approx(np.log(1.01))


def test_volume_features() -> None:
    volumes = [0] * 10 + [1000] * 9 + [5000]
    p = panel([1.0] * 20, volumes=volumes)
    assert f.volume_ratio_20(p).iloc[-1] == pytest.approx(5000 / ((9000 + 5000) / 20))
    assert f.zero_volume_share_20(p).iloc[-1] == pytest.approx(0.5)
    assert f.volume_ratio_20(panel([1.0] * 20, volumes=[0] * 20)).iloc[-1] == 0.0


def test_spread_and_its_no_quotes_proxy() -> None:
    p = panel(
        [10.0, 10.0, 10.0, 8.0],
        bid=[9.9, np.nan, 10.2, np.nan],
        ask=[10.1, 10.2, 10.1, np.nan],
        high=[10.5, 10.4, 10.6, np.nan],
        low=[9.5, 9.6, 9.8, np.nan],
    )
    spread = f.spread_pct(p)
    assert spread.iloc[0] == pytest.approx(0.2 / 10.0)  # quoted: (ask - bid) / mid
    assert spread.iloc[1] == pytest.approx(0.8 / 10.0)  # one side missing: (high - low) / close
    assert spread.iloc[2] == pytest.approx(0.8 / 10.0)  # crossed quotes are not a spread: the proxy
    assert np.isnan(spread.iloc[3])  # neither known


def test_close_location_in_the_days_range() -> None:
    p = panel([10.0, 11.0, 9.0, 7.0, 5.0], high=[11.0, 11.0, 9.0, 7.0, np.nan], low=[9.0, 9.0, 8.0, 7.0, 4.0])
    assert f.close_location(p).iloc[:4].tolist() == [0.5, 1.0, 1.0, 0.5]  # mid, at the high, at the high, no range
    assert np.isnan(f.close_location(p).iloc[4])  # high unknown


def test_sentiment_and_layer1_pass_through() -> None:
    p = panel([1.0, 1.0], sentiment=[np.nan, -0.3], layer1_p_up=[0.4, 0.6])
    assert f.sentiment(p).tolist() == [0.0, -0.3]
    assert f.market_sentiment(p).tolist() == [0.2, 0.2]
    assert f.layer1_p_up(p).tolist() == [0.4, 0.6]


def test_market_breadth_counts_advancers_and_decliners_of_each_day() -> None:
    day1, day2, day3 = pd.Timestamp("2026-01-05"), pd.Timestamp("2026-01-06"), pd.Timestamp("2026-01-07")
    prices = pd.DataFrame(
        [
            ("AAA", day1, 10.0, 100),
            ("AAA", day2, 11.0, 100),
            ("AAA", day3, 10.5, 100),  # up, then down
            ("BBB", day1, 5.0, 100),
            ("BBB", day2, 4.0, 100),
            ("BBB", day3, 4.0, 0),  # down, then no trade
            ("CCC", day1, 2.0, 100),
            ("CCC", day2, 2.5, 0),
            ("CCC", day3, 2.6, 100),  # a moved close without a trade: not an advance
            ("DDD", day2, 7.0, 100),
            ("DDD", day3, 7.7, np.nan),  # listed on day 2; unknown volume counts as traded
        ],
        columns=["symbol", "date", "close", "volume"],
    )
    breadth = f.market_breadth_by_day(prices.sample(frac=1, random_state=3))  # order of rows does not matter
    assert breadth[day1] == 0.0  # nobody has a previous close
    assert breadth[day2] == pytest.approx((1 - 1) / 4)  # AAA up, BBB down, CCC not traded, DDD new
    assert breadth[day3] == pytest.approx((2 - 1) / 4)  # CCC and DDD up, AAA down, BBB not traded
    later = prices.copy()
    later.loc[later["date"] == day3, "close"] *= 3  # a later day changes nothing before it
    assert f.market_breadth_by_day(later)[[day1, day2]].tolist() == breadth[[day1, day2]].tolist()
    p = panel([1.0, 1.0], market_breadth=[0.25, -0.5])
    assert f.market_breadth(p).tolist() == [0.25, -0.5]


def test_no_feature_looks_ahead() -> None:
    rng = np.random.default_rng(1)
    closes = list(100 * np.exp(np.cumsum(rng.normal(0, 0.02, 120))))
    base = f.compute_features(panel(closes))
    changed = closes[:80] + [c * 3 for c in closes[80:]]
    after = f.compute_features(panel(changed))
    pd.testing.assert_frame_equal(base.iloc[:80], after.iloc[:80])
