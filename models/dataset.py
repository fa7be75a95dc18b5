"""The modelling panel: one row per instrument and trading day with the 14 features, the
label and what the decisions need.

The label is the forward return over `horizon` of the instrument's own trading days,
close[t + h] / close[t] - 1, and `label_end` is the date it becomes known (t + h): the
walk-forward trainer never trains on a row whose label_end is not strictly before the
first day it predicts (purge), minus an embargo.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from models.features import FEATURE_NAMES, compute_features, market_breadth_by_day
from models.layer1 import empirical_p_up_series

PRICE_COLUMNS = ["symbol", "date", "close", "volume", "bid", "ask", "high", "low"]


def build_panel(
    prices: pd.DataFrame,
    horizon: int = 1,
    sentiment: pd.DataFrame | None = None,
    market_sentiment: pd.Series | None = None,
    layer1: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """`prices`: PRICE_COLUMNS (bid/ask/high/low may be NaN). `sentiment`: symbol, date,
    score. `market_sentiment`: score by date. `layer1`: symbol, date, p_up (missing rows
    use the empirical fallback, which is also what layer1=None means). The market breadth
    input is worked out from `prices` across instruments, so `prices` must hold every
    instrument of the market on the days it covers, not a selection."""
    frame = prices.copy()
    for column in ("bid", "ask", "high", "low"):
        frame[column] = frame[column].astype(float) if column in frame else np.nan
    frame = frame.sort_values(["symbol", "date"]).reset_index(drop=True)
    if sentiment is not None and len(sentiment):
        frame = frame.merge(
            sentiment.rename(columns={"score": "sentiment"})[["symbol", "date", "sentiment"]],
            on=["symbol", "date"],
            how="left",
        )
    else:
        frame["sentiment"] = 0.0
    frame["market_sentiment"] = frame["date"].map(market_sentiment) if market_sentiment is not None else 0.0
    frame["market_breadth"] = frame["date"].map(market_breadth_by_day(frame)) if len(frame) else 0.0
    if layer1 is not None and len(layer1):
        frame = frame.merge(
            layer1.rename(columns={"p_up": "layer1_p_up"})[["symbol", "date", "layer1_p_up"]],
            on=["symbol", "date"],
            how="left",
        )
    else:
        frame["layer1_p_up"] = np.nan
    parts = []
    for _, panel in frame.groupby("symbol", sort=False):
        panel = panel.reset_index(drop=True)
        fallback = empirical_p_up_series(panel["close"], horizon)
        panel["layer1_p_up"] = panel["layer1_p_up"].fillna(fallback)
        features = compute_features(panel)
        panel[FEATURE_NAMES] = features[FEATURE_NAMES]
        panel["forward_return"] = panel["close"].shift(-horizon) / panel["close"] - 1
        panel["label_end"] = panel["date"].shift(-horizon)
        panel["adv_20"] = panel["volume"].rolling(20).mean()
        panel["last_return"] = features["return_1d"]
        parts.append(panel)
    return pd.concat(parts, ignore_index=True) if parts else frame
