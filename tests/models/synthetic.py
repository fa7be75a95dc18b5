"""Synthetic panels for the model tests: random-walk prices for a set of instruments, with
an optional planted signal (tomorrow's return leans on today's sentiment), labelled with
the next-day return the signal moves (the walk-forward's machinery is what these test)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from models.dataset import build_panel


def synthetic_prices(
    instruments: int = 30, days: int = 320, signal: float = 0.0, seed: int = 5
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2024-01-01", periods=days).date
    rows, sentiment = [], []
    for k in range(instruments):
        mood = rng.normal(0, 1, days)
        returns = rng.normal(0, 0.02, days)
        returns[1:] += signal * 0.02 * mood[:-1]  # day t's sentiment moves day t+1
        closes = 50 * np.exp(np.cumsum(returns))
        for i, day in enumerate(dates):
            rows.append(
                {
                    "symbol": f"S{k:02d}",
                    "date": day,
                    "close": round(float(closes[i]), 4),
                    "volume": int(rng.integers(0, 20_000)),
                    "bid": np.nan,
                    "ask": np.nan,
                    "high": round(float(closes[i]) * 1.01, 4),
                    "low": round(float(closes[i]) * 0.99, 4),
                }
            )
            sentiment.append({"symbol": f"S{k:02d}", "date": day, "score": float(np.tanh(mood[i]))})
    return pd.DataFrame(rows), pd.DataFrame(sentiment)


def synthetic_panel(**options) -> pd.DataFrame:
    prices, sentiment = synthetic_prices(**options)
    return build_panel(prices, 1, sentiment, label="next_day")  # the planted signal moves the next close
