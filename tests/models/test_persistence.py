"""The signal's persistence (models/metrics.py): the rank IC of a day's expected excess
against the excess over later windows after the fill. On a planted market whose signal
decays at a known rate the IC falls across the windows; where the signal is a lasting
drift it keeps paying in every window. The first window is the product's label, and each
day's IC is known only when its window has closed."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd
import pytest

from market.labels import with_labels
from models.metrics import PERSISTENCE_WINDOWS, persistence, window_excess

NAMES, DAYS = 30, 260


def planted(decay: float, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Prices and scores: each name's score x follows x_t = decay x_{t-1} + shock, and the
    return of day t+1 leans on x_t, so today's score predicts the return k sessions ahead
    in proportion to decay^k; decay 1 with no shocks is a lasting drift."""
    rng = np.random.default_rng(seed)
    x = np.zeros((DAYS, NAMES))
    x[0] = rng.normal(0, 1, NAMES)
    for t in range(1, DAYS):
        x[t] = decay * x[t - 1] + (rng.normal(0, np.sqrt(1 - decay**2), NAMES) if decay < 1 else 0)
    returns = rng.normal(0, 0.01, (DAYS, NAMES))
    returns[1:] += 0.004 * x[:-1]
    closes = 20 * np.exp(np.cumsum(returns, axis=0))
    dates = [pd.Timestamp("2024-01-01").date() + timedelta(days=i) for i in range(DAYS)]
    prices, scores = [], []
    for t, day in enumerate(dates):
        for k in range(NAMES):
            close = float(closes[t, k])
            row = {"symbol": f"P{k:02d}", "date": day, "close": close, "volume": 100_000}
            prices.append({**row, "high": close * 1.005, "low": close * 0.995, "bid": np.nan, "ask": np.nan})
            scores.append({"symbol": row["symbol"], "date": day, "expected_return": float(x[t, k])})
    return pd.DataFrame(prices), pd.DataFrame(scores)


def ics(decay: float) -> list[float]:
    prices, scores = planted(decay)
    found = persistence(scores, window_excess(prices)).mean()
    return [found[f"{a}-{b}"] for a, b in PERSISTENCE_WINDOWS]


def test_a_decaying_signal_pays_less_in_each_later_window() -> None:
    first, second, third, fourth, fifth = ics(decay=0.85)  # half-life about 4 sessions
    assert first > 0.2
    assert first > second > third > fourth
    assert abs(fifth) < 0.05 and abs(fourth) < 0.1  # 0.85**20 = 0.04: nothing left


def test_a_persistent_signal_keeps_paying() -> None:
    found = ics(decay=1.0)
    assert min(found) > 0.3, found
    assert found[-1] > 0.8 * found[0], found


def test_the_first_window_is_the_label_and_each_window_is_known_when_it_closes() -> None:
    prices, scores = planted(0.9)
    excess = window_excess(prices)
    label = with_labels(prices, 5)[["symbol", "date", "forward_return", "label_end"]]
    both = excess.merge(label, on=["symbol", "date"])
    pd.testing.assert_series_equal(both["excess_1-5"], both["forward_return"], check_names=False)
    assert (both["known_1-5"].dropna() == both["label_end"].dropna()).all()
    dates = sorted(prices["date"].unique())
    first = excess[excess["date"] == dates[0]].iloc[0]
    assert first["known_41-60"] == dates[61] and first["known_6-10"] == dates[11]
    closes = prices.pivot(index="date", columns="symbol", values="close")
    held = closes.shift(-21) / closes.shift(-11) - 1  # window 11-20: close t+11 to t+21
    day = excess[(excess["symbol"] == "P03") & (excess["date"] == dates[5])].iloc[0]
    assert day["excess_11-20"] == pytest.approx(held.loc[dates[5], "P03"] - held.loc[dates[5]].mean())

    found = persistence(scores, excess)
    cut = dates[120]
    early = found.mean(known_by=cut)
    known = found.known["41-60"]
    by_hand = found.daily.loc[(known <= cut).to_numpy(), "41-60"].mean()
    assert early["41-60"] == pytest.approx(by_hand)
    assert found.daily.index[(known <= cut).to_numpy()].max() == dates[120 - 61]  # nothing read before it closed
    assert set(found.by_year()) == {2024}
