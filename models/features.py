"""The feature registry: exactly 14 features, each computed for an instrument and a
trading day D only from data dated D or earlier (nothing after the close of D).

Input is a daily panel, one row per instrument and trading day the instrument was listed:
`close`, `volume`, `bid`, `ask`, `high`, `low`, `sentiment`, `market_sentiment`,
`market_breadth`, `layer1_p_up`; one instrument's rows oldest first, or many instruments'
sorted by `symbol`, then date, which every function computes in one pass as it would on
each instrument's rows alone (market/windows.py: each window, shift and average stops at
the instrument's first row, the same figures bit for bit). The two market columns are the
same for every instrument on a day and are worked out across instruments
(`market_breadth_by_day` here, the sentiment composites in models/sentiment); they too use
nothing dated after the day. Missing quotes are NaN and stay NaN (the risk model handles
missing values); nothing is filled from the future.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from market.liquidity import spread_series
from market.windows import Runs

FEATURE_SET = "core14-v4"  # v2: close_location for momentum_60, spread_pct falls back to the range proxy;
# v3: market_breadth for bollinger_bandwidth (docs/model-appendix-rounds.md, third screening round);
# v4: volatility_60 for close_location and log_value_adv20 for spread_pct, for the excess label over
# 10 sessions (rank IC of the raw score; chosen on NSE 2008-2011 alone: the tenth screening round)


def _runs(p: pd.DataFrame, runs: Runs | None) -> Runs:
    """Where each instrument's rows start in `p` (given, or found once here)."""
    return runs if runs is not None else Runs.of(p)


def rsi_14(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Wilder's RSI over 14 days: 100 - 100 / (1 + avg gain / avg loss), where the averages
    are exponential with alpha 1/14 over daily close changes; 100 when there was no loss,
    50 when the close never moved."""
    runs = _runs(p, runs)
    change = runs.diff(p["close"])
    gain = runs.ewm_mean(change.clip(lower=0), alpha=1 / 14, min_periods=14)
    loss = runs.ewm_mean(-change.clip(upper=0), alpha=1 / 14, min_periods=14)
    rsi = 100 - 100 / (1 + gain / loss)
    rsi = rsi.where(loss > 0, 100.0).where(gain + loss > 0, 50.0)
    return rsi.where(runs.cumsum(change.notna()) >= 14)


def _bands(p: pd.DataFrame, runs: Runs | None) -> tuple[pd.Series, pd.Series, pd.Series]:
    window = _runs(p, runs).rolling(p["close"], 20)
    mean, std = window.mean(), window.std(ddof=0)
    return mean - 2 * std, mean, mean + 2 * std


def bollinger_pct_b(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """%B of the 20-day, 2-standard-deviation Bollinger Bands: (close - lower) / (upper -
    lower); 0.5 when the bands have no width (the close did not move for 20 days)."""
    lower, _, upper = _bands(p, runs)
    width = upper - lower
    return ((p["close"] - lower) / width).where(width > 0, 0.5).where(width.notna())


def bollinger_bandwidth(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Bollinger bandwidth: (upper - lower) / middle band, the 20-day volatility of price.
    A daily-bar indicator the API serves (views/market.py); not a model input since
    core14-v3 (it says what volatility_20 says)."""
    lower, middle, upper = _bands(p, runs)
    return (upper - lower) / middle


def momentum_5(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Return over the last 5 trading days: close / close 5 days earlier - 1."""
    return p["close"] / _runs(p, runs).shift(p["close"], 5) - 1


def momentum_20(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Return over the last 20 trading days."""
    return p["close"] / _runs(p, runs).shift(p["close"], 20) - 1


def close_location(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Where the close sits in the day's range: (close - low) / (high - low), 0 at the low,
    1 at the high; 0.5 when the range is zero, NaN when high or low is unknown. In a thin
    market a close at the day's high is often a trade at the ask that the next day's trades
    at the bid undo (bid-ask bounce): on the NSE data this one input lifts a yearly-trained
    classifier's binary accuracy from 57.6% to 60.0% (in place of a 60-day momentum). A
    daily-bar indicator, not a model input since core14-v4: a label that starts at the next
    close cannot trade the bounce (volatility_60 took its slot)."""
    day_range = p["high"] - p["low"]
    return ((p["close"] - p["low"]) / day_range).where(day_range > 0, 0.5).where(day_range.notna())


def return_1d(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """The last day's return (short-term reversal is strong in thin markets)."""
    return p["close"] / _runs(p, runs).shift(p["close"], 1) - 1


def _log_return_std(p: pd.DataFrame, runs: Runs | None, days: int) -> pd.Series:
    runs = _runs(p, runs)
    return runs.rolling(runs.diff(np.log(p["close"])), days).std(ddof=0)


def volatility_20(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Standard deviation of daily log returns over 20 days (not annualised)."""
    return _log_return_std(p, runs, 20)


def volatility_60(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Standard deviation of daily log returns over the last 60 days, today's included (not
    annualised; population standard deviation, ddof 0); NaN until 60 returns are known.
    The slow volatility: over the next weeks the calmer names earned more than the market
    on the NSE early span (the low-volatility effect), which 20 days measure noisily."""
    return _log_return_std(p, runs, 60)


def volume_ratio_20(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Today's volume over ADV_20, the mean daily volume of the last 20 days (today
    included); 0 when nothing traded in 20 days."""
    adv = _runs(p, runs).rolling(p["volume"], 20).mean()
    return (p["volume"] / adv).where(adv > 0, 0.0).where(adv.notna())


def zero_volume_share_20(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Share of the last 20 days with no trade at all."""
    return _runs(p, runs).rolling((p["volume"] == 0).astype(float), 20).mean()


def spread_pct(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Closing bid-ask spread over the mid when both sides are quoted, else the day's range
    over the close on a traded day; NaN when neither is known, as on a day without trades
    or quotes (market/liquidity.py's rule, unrounded). An
    indicator the API serves (views/market.py) and the gates and costs read; not a model
    input since core14-v4 (log_value_adv20 took its slot)."""
    return spread_series(p)


def log_value_adv20(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Log of one plus ADV_20 in value: ln(1 + the mean of close x volume over the last 20
    trading days, today's included), in the price's currency; NaN until 20 days are known.
    Size and liquidity in one number: a name that trades more in value is followed more
    closely by the market, and on the NSE early span it ranked the excess return over the
    next weeks better than the closing spread it replaced."""
    value = p["close"].astype(float) * p["volume"].astype(float)
    return np.log1p(_runs(p, runs).rolling(value, 20).mean())


def market_breadth_by_day(prices: pd.DataFrame) -> pd.Series:
    """Net breadth of each trading day: (advancers - decliners) / instruments priced that
    day, in [-1, 1]. An advancer traded (volume > 0; an unknown volume counts as traded)
    and closed above its own previous close, a decliner below; an instrument that did not
    trade, or has no previous close, counts in the denominator only. The counts are those
    of the market breadth the API serves (views/breadth.py); `prices` has symbol, date,
    close, volume, one row per instrument and day, every instrument of the market."""
    frame = prices[["symbol", "date", "close", "volume"]].sort_values(["symbol", "date"])
    change = frame["close"].astype(float) - frame.groupby("symbol", sort=False)["close"].shift(1).astype(float)
    traded = ~(frame["volume"].astype(float) == 0)
    direction = np.sign(change.where(traded, 0.0).fillna(0.0))
    return direction.groupby(frame["date"]).mean()


def market_breadth(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """The day's net market breadth, (advancers - decliners) / instruments priced, the
    same for every instrument on a day (`market_breadth_by_day`). In a thin market the
    prices that did not move yet follow the market's move of the day: on the NSE early
    span this one input, in place of the Bollinger bandwidth, lifts the walk-forward's
    binary accuracy from 59.8% to 61.9% (docs/model.md)."""
    return p["market_breadth"]


def sentiment(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """The instrument's sentiment composite for the day (0 when nothing was said)."""
    return p["sentiment"].fillna(0.0)


def market_sentiment(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """The market-wide sentiment composite for the day."""
    return p["market_sentiment"].fillna(0.0)


def layer1_p_up(p: pd.DataFrame, runs: Runs | None = None) -> pd.Series:
    """Layer 1's probability that the close is higher after the label horizon, from the
    last 200 closes (the foundation model, or the labelled fallback)."""
    return p["layer1_p_up"]


@dataclass(frozen=True)
class Feature:
    name: str
    compute: Callable[[pd.DataFrame, Runs | None], pd.Series]  # (panel, its runs: found when None)

    @property
    def definition(self) -> str:
        return " ".join((self.compute.__doc__ or "").split())


FEATURES: list[Feature] = [
    Feature(f.__name__, f)
    for f in (
        rsi_14,
        bollinger_pct_b,
        market_breadth,
        momentum_5,
        momentum_20,
        volatility_60,
        return_1d,
        volatility_20,
        volume_ratio_20,
        zero_volume_share_20,
        log_value_adv20,
        sentiment,
        market_sentiment,
        layer1_p_up,
    )
]
FEATURE_NAMES = [f.name for f in FEATURES]
assert len(FEATURES) == 14, "the risk model is specified on exactly 14 features"

# What each input is called where a person reads it (the reasons behind a prediction,
# models/reasons.py, served by the API and written into rationales).
FEATURE_LABELS = {
    "rsi_14": "RSI (14 days)",
    "bollinger_pct_b": "Bollinger %B (20 days)",
    "market_breadth": "Market breadth",
    "momentum_5": "Momentum, 5 days",
    "momentum_20": "Momentum, 20 days",
    "volatility_60": "Volatility, 60 days (daily)",
    "return_1d": "Last day's return",
    "volatility_20": "Volatility, 20 days (daily)",
    "volume_ratio_20": "Volume over ADV_20",
    "zero_volume_share_20": "Share of no-trade days, 20 days",
    "log_value_adv20": "Traded value, 20-day average (log)",
    "sentiment": "Sentiment",
    "market_sentiment": "Market sentiment",
    "layer1_p_up": "Layer 1 P(up)",
}
assert list(FEATURE_LABELS) == FEATURE_NAMES, "one label per feature, in the registry's order"

# The labels of inputs earlier feature sets had (FEATURE_SET's history above): a prediction
# stored under one of them keeps its reasons and names those inputs, and a client reads them
# by the label they were shown under, never by the registry name.
RETIRED_FEATURE_LABELS = {
    "momentum_60": "Momentum, 60 days",  # until core14-v2
    "bollinger_bandwidth": "Bollinger bandwidth (20 days)",  # until core14-v3
    "close_location": "Close in the day's range",  # until core14-v4
    "spread_pct": "Closing spread",  # until core14-v4
}
assert not set(RETIRED_FEATURE_LABELS) & set(FEATURE_LABELS), "a retired input is not a current one"


def feature_label(name: str) -> str:
    """The label a person reads an input by, of the current feature set or an earlier one
    (`RETIRED_FEATURE_LABELS`); the name itself only for one no feature set ever had."""
    return FEATURE_LABELS.get(name) or RETIRED_FEATURE_LABELS.get(name, name)


def compute_features(panel: pd.DataFrame, runs: Runs | None = None) -> pd.DataFrame:
    """All 14 features for a panel (same index): one instrument's rows oldest first, or many
    instruments' sorted by symbol, then date (`runs`: where each starts, found when None)."""
    runs = _runs(panel, runs)
    return pd.DataFrame({f.name: f.compute(panel, runs) for f in FEATURES}, index=panel.index)
