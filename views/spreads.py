"""The spread estimate of one day, read from stored history, for the readers that show a
single day's spread (the instrument liquidity view, the T0 day table).

`stored_estimates(conn, day, symbols)` runs `market.liquidity.estimate_spreads` over the
bars stored in the ESTIMATE_LOOKBACK_CALENDAR_DAYS up to `day` (about 95 sessions: the
estimator's whole 60-pair window for a name that trades on two sessions in three; a name
that trades more rarely gets a shorter window than the model's panel, which reads its
whole history, and reads the window's mean range below 20 pairs). Bars before a split
known by `day` are put on the new count first, so the ex-date is not read as a jump.
The estimate is the name's on its latest bar on or before `day` (a day without trades
carries the last traded session's). Quotes still win where the day has them
(`market.liquidity.spread_fraction`).
"""

from __future__ import annotations

from datetime import date, timedelta

import pandas as pd
from sqlalchemy import Connection

from market.liquidity import WINDOW, estimate_spreads
from store import tables
from store.history import current_rows
from store.splits import stored_splits

ESTIMATE_LOOKBACK_CALENDAR_DAYS = 140


def stored_estimates(
    conn: Connection, day: date, symbols: list[str] | None = None, window: int = WINDOW
) -> dict[str, tuple[float, str]]:
    """symbol -> (spread estimate as a fraction, its source) on `day`, from the stored
    bars (point in time: none after `day`); a symbol without a traded bar is absent."""
    c = tables.eod_prices.c
    where = [c.trading_date <= day, c.trading_date > day - timedelta(days=ESTIMATE_LOOKBACK_CALENDAR_DAYS)]
    if symbols is not None:
        if not symbols:
            return {}
        where.append(c.symbol.in_(sorted(set(symbols))))
    rows = current_rows(conn, tables.eod_prices, where=where)
    if not rows:
        return {}
    frame = pd.DataFrame(rows)[["symbol", "trading_date", "close", "high", "low", "volume"]]
    frame = frame.rename(columns={"trading_date": "date"}).reset_index(drop=True)
    for column in ("close", "high", "low", "volume"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    for split in stored_splits(conn, day, frame["symbol"].unique()):
        before = (frame["symbol"] == split.symbol) & (frame["date"] < split.ex_date)
        frame.loc[before, ["close", "high", "low"]] /= split.factor
    estimated = frame.join(estimate_spreads(frame, window))
    latest = estimated.sort_values("date").groupby("symbol").tail(1)
    latest = latest[latest["spread_estimate"].notna()]
    return {
        r.symbol: (float(r.spread_estimate), str(r.spread_source))
        for r in latest[["symbol", "spread_estimate", "spread_source"]].itertuples(index=False)
    }
