"""market/windows.py: a column's windows, shifts and averages within each instrument's run of
a many-instrument panel are, bit for bit, the same operation on each instrument's rows
alone; and the registry's features over a whole panel are each instrument's."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from market.windows import Runs
from models.features import FEATURE_NAMES, compute_features


def _panel(seed: int = 1, names: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for k in range(names):
        n = int(rng.integers(1, 90))  # runs shorter and longer than every window
        close = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, n)))
        close[rng.random(n) < 0.05] = np.nan
        volume = rng.integers(0, 3, n) * rng.integers(0, 5000, n)
        high, low = close * (1 + rng.random(n) * 0.02), close * (1 - rng.random(n) * 0.02)
        parts.append(
            pd.DataFrame(
                {
                    "symbol": f"S{k:03d}",
                    "close": close,
                    "volume": volume,
                    "bid": np.where(rng.random(n) < 0.5, low, np.nan),
                    "ask": np.where(rng.random(n) < 0.5, high, np.nan),
                    "high": high,
                    "low": low,
                    "sentiment": np.where(rng.random(n) < 0.2, rng.normal(0, 0.3, n), np.nan),
                    "market_sentiment": rng.normal(0, 0.1, n),
                    "market_breadth": rng.uniform(-1, 1, n),
                    "layer1_p_up": rng.uniform(0, 1, n),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _each(panel: pd.DataFrame, compute: Callable[[pd.DataFrame], pd.Series]) -> np.ndarray:
    parts = [compute(rows.reset_index(drop=True)) for _, rows in panel.groupby("symbol", sort=False)]
    return pd.concat(parts, ignore_index=True).to_numpy(float)


OPERATIONS = {
    "shift": (lambda s: s.shift(5), lambda r, s: r.shift(s, 5)),
    "shift back": (lambda s: s.shift(-5), lambda r, s: r.shift(s, -5)),
    "diff": (lambda s: s.diff(), lambda r, s: r.diff(s)),
    "cumsum": (lambda s: s.notna().cumsum(), lambda r, s: r.cumsum(s.notna())),
    "mean 20": (lambda s: s.rolling(20).mean(), lambda r, s: r.rolling(s, 20).mean()),
    "std 20": (lambda s: s.rolling(20).std(ddof=0), lambda r, s: r.rolling(s, 20).std(ddof=0)),
    "sum 37, any count": (lambda s: s.rolling(37, min_periods=0).sum(), lambda r, s: r.rolling(s, 37, 0).sum()),
    "ewm": (
        lambda s: s.ewm(alpha=1 / 14, adjust=False, min_periods=14).mean(),
        lambda r, s: r.ewm_mean(s, 1 / 14, 14),
    ),
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_each_operation_within_runs_is_the_one_on_each_instrument_alone(name: str) -> None:
    panel = _panel()
    alone, within = OPERATIONS[name]
    runs = Runs.of(panel)
    expected = _each(panel, lambda rows: alone(rows["close"]))
    assert np.array_equal(within(runs, panel["close"]).to_numpy(float), expected, equal_nan=True)


def test_the_features_of_a_whole_panel_are_each_instruments_own() -> None:
    panel = _panel(seed=2)
    whole = compute_features(panel)
    for name in FEATURE_NAMES:
        alone = _each(panel, lambda rows, name=name: compute_features(rows)[name])
        assert np.array_equal(whole[name].to_numpy(float), alone, equal_nan=True), name


def test_a_panel_not_sorted_by_instrument_is_refused() -> None:
    panel = pd.DataFrame({"symbol": ["A", "B", "A"], "close": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="not sorted"):
        Runs.of(panel)
    assert Runs.of(panel.drop(columns="symbol")).run_start.tolist() == [0, 0, 0]  # no symbol: one instrument
