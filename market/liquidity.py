"""The spread and the per-instrument liquidity gates, defined once, as scalar and
vectorised twins side by side.

Spread = (ask - bid) / mid from the closing quotes, when both sides are quoted (bid > 0,
ask >= bid). When a source has no usable quotes (one side missing, crossed quotes, or the
NSE files, which carry none) the day's range (high - low) / close stands in: a wider,
conservative proxy. With neither, the spread is unknown (NaN / None). Where the spread is
compared with a threshold it is rounded to 6 decimals first (0.01 basis point), so a quoted
5.00% is exactly at the threshold, not a float's width above it.

The per-instrument entry gates (the liquidity rail's first three; the fourth, position
size, needs a quantity and lives with the rail in portfolio/rails.py):
- ADV_20 >= 5,000 shares;
- volume today > 0;
- spread known and <= 5%.

Readers: the feature registry (`models/features.spread_pct`, unrounded), the tercile
gating in `models/decisions.py`, the rail's scalar checks (`portfolio/rails.py`), the
instrument liquidity view (`views/instrument.py`) and the T0 day table (`pipeline/t0.py`,
in percent). `tests/market/test_liquidity.py` checks both twins on one table.
"""

from __future__ import annotations

import math

import pandas as pd

MIN_ADV = 5_000
MAX_ENTRY_SPREAD = 0.05
SPREAD_DECIMALS = 6


def known(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def spread_fraction(
    bid: float | None, ask: float | None, high: float | None, low: float | None, close: float | None
) -> tuple[float | None, str]:
    """(spread as a fraction rounded to 6 decimals, where it came from: 'quotes', 'range'
    or 'none')."""
    if known(bid) and known(ask) and bid > 0 and ask >= bid:
        return round((ask - bid) / ((ask + bid) / 2), SPREAD_DECIMALS), "quotes"
    if known(high) and known(low) and known(close) and close > 0 and high >= low:
        return round((high - low) / close, SPREAD_DECIMALS), "range"
    return None, "none"


def spread_series(frame: pd.DataFrame) -> pd.Series:
    """`spread_fraction` over a frame with bid, ask, high, low and close columns, not
    rounded (the model feature keeps full precision); NaN where neither is known."""
    quoted = ((frame["ask"] - frame["bid"]) / ((frame["ask"] + frame["bid"]) / 2)).where(
        (frame["bid"] > 0) & (frame["ask"] >= frame["bid"])
    )
    proxy = ((frame["high"] - frame["low"]) / frame["close"]).where(
        (frame["high"] >= frame["low"]) & (frame["close"] > 0)
    )
    return quoted.where(quoted.notna(), proxy)


def effective_spread(frame: pd.DataFrame) -> pd.Series:
    """The spread as the gates compare it: `spread_series` rounded to 6 decimals."""
    return spread_series(frame).round(SPREAD_DECIMALS)


def entry_gates(adv_20: float | None, volume: float | None, spread: float | None) -> dict[str, bool]:
    """The three per-instrument entry gates for one instrument-day, by name."""
    return {
        "adv_20": known(adv_20) and adv_20 >= MIN_ADV,
        "volume_today": known(volume) and volume > 0,
        "spread": known(spread) and spread <= MAX_ENTRY_SPREAD,
    }


def passes_entry_gates(frame: pd.DataFrame) -> pd.Series:
    """`entry_gates` over a frame with adv_20, volume and the spread inputs: True where all
    three pass."""
    spread = effective_spread(frame)
    return (frame["adv_20"] >= MIN_ADV) & (frame["volume"] > 0) & spread.notna() & (spread <= MAX_ENTRY_SPREAD)
