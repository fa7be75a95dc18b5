"""The modelling panel: one row per instrument and trading day with the 14 features, the
label (defined once in market/labels.py) and what the decisions need.

The label (`label="excess"`, the product's) is what a position decided after the close of
day t can earn: the return from the close of t+1 (the first price an order decided after
t's close can get) to the close of t+1+H, H = `horizon` of the instrument's own trading
days, minus the same return of the equal-weighted liquid universe (the ordinary shares
that passed the entry gates on day t, market/liquidity.py) over the same span. Qlib's
default label, Ref($close, -2) / Ref($close, -1) - 1, starts at t+1 for the same reason: a
label that starts at t's close reads the bid-ask bounce of the close the decision was made
from, which no order can trade. `label_end` is the date it becomes known (t+1+H): the
walk-forward never trains on a row whose label_end is not strictly before the first day it
predicts (purge), minus an embargo.

`label="next_day"` is the reference label, close[t+1] / close[t] - 1 (mostly the bounce of
the close it reads: benchmarks/model_quality.py shows what its accuracy is made of).

Columns besides the features: `forward_return` (the label), `label_end`, `held_return`
(the raw held return of the excess label, NaN for the reference), `next_return` (close
t to t+1, both labels), `adv_20`, `last_return`, `spread_estimate` /
`spread_estimate_source` (the spread where no quotes exist, market/liquidity.estimate_spreads:
every spread read from the panel, the spread_pct input, the entry gates and the costs, uses it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.labels import with_labels
from market.liquidity import with_spread_estimates
from market.windows import Runs
from models.decisions import HORIZON
from models.features import FEATURE_NAMES, compute_features, market_breadth_by_day
from models.layer1 import empirical_p_up_series

PRICE_COLUMNS = ["symbol", "date", "close", "volume", "bid", "ask", "high", "low"]


def build_panel(
    prices: pd.DataFrame,
    horizon: int = HORIZON,
    sentiment: pd.DataFrame | None = None,
    market_sentiment: pd.Series | None = None,
    layer1: pd.DataFrame | None = None,
    label: str = "excess",
) -> pd.DataFrame:
    """`prices`: PRICE_COLUMNS (bid/ask/high/low may be NaN; an optional boolean
    `ordinary` column keeps other instrument types out of the label's universe).
    `sentiment`: symbol, date, score. `market_sentiment`: score by date. `layer1`: symbol,
    date, p_up (missing rows use the empirical fallback over the same horizon, which is
    also what layer1=None means). The market breadth input and the excess label's universe
    are worked out from `prices` across instruments, so `prices` must hold every
    instrument of the market on the days it covers, not a selection."""
    frame = _with_inputs(prices, sentiment, market_sentiment, layer1)
    if frame.empty:
        return frame
    # every instrument in one pass: `frame` is sorted by symbol, then date (`_with_inputs`)
    runs = Runs.of(frame)
    frame["layer1_p_up"] = frame["layer1_p_up"].fillna(empirical_p_up_series(frame["close"], horizon, runs))
    features = compute_features(frame, runs)
    frame[FEATURE_NAMES] = features[FEATURE_NAMES]
    frame["last_return"] = features["return_1d"]
    return with_labels(frame, horizon, label)


def _with_inputs(
    prices: pd.DataFrame,
    sentiment: pd.DataFrame | None,
    market_sentiment: pd.Series | None,
    layer1: pd.DataFrame | None,
) -> pd.DataFrame:
    """The price rows with the quote columns as floats, the spread estimate where the
    estimator is available, the sentiment inputs, the market breadth and the layer-1
    probabilities joined on (symbol, date)."""
    frame = prices.copy()
    for column in ("bid", "ask", "high", "low"):
        frame[column] = frame[column].astype(float) if column in frame else np.nan
    frame = frame.sort_values(["symbol", "date"]).reset_index(drop=True)
    frame = with_spread_estimates(frame) if len(frame) else frame
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
        return frame.merge(
            layer1.rename(columns={"p_up": "layer1_p_up"})[["symbol", "date", "layer1_p_up"]],
            on=["symbol", "date"],
            how="left",
        )
    frame["layer1_p_up"] = np.nan
    return frame
