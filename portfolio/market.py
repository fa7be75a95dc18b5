"""Market facts the portfolio code reads from the store, point in time.

`market_days(conn, day)` gives each instrument's latest bar on or before `day` as a rail
`MarketDay`, with ADV_20 over the instrument's last 20 stored bars and the volatility of
their closes (the cost model's sigma) (a bar with no trades
counts as zero volume). A symbol whose latest bar is older than `day` is reported with
volume 0 for `day`: no trade was reported, so nothing could have been bought or sold.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import numpy as np
import pandas as pd
from sqlalchemy import Connection

from market.errors import NotFoundError
from portfolio.rails import MarketDay, adv_20
from store import tables
from store.history import current_rows
from store.splits import stored_splits

LOOKBACK_CALENDAR_DAYS = 60  # comfortably more than 20 trading days, holidays included


def _frame(conn: Connection, day: date, symbols: list[str] | None) -> pd.DataFrame:
    c = tables.eod_prices.c
    where = [c.trading_date <= day, c.trading_date > day - timedelta(days=LOOKBACK_CALENDAR_DAYS)]
    if symbols is not None:
        where.append(c.symbol.in_(symbols))
    rows = current_rows(conn, tables.eod_prices, where=where)
    return pd.DataFrame(rows, columns=[x.name for x in tables.eod_prices.c])


def _known(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def market_days(conn: Connection, day: date, symbols: list[str] | None = None) -> dict[str, MarketDay]:
    """ADV_20 counts the volumes before a split (known by `day`) on the new count, so a
    10-for-1 split does not make a name look ten times less liquid for 20 sessions."""
    frame = _frame(conn, day, symbols)
    splits: dict[str, list] = {}
    for split in stored_splits(conn, day, symbols):
        splits.setdefault(split.symbol, []).append(split)
    result: dict[str, MarketDay] = {}
    for symbol, bars in frame.sort_values("trading_date").groupby("symbol"):
        last = bars.iloc[-1]
        stale = last["trading_date"] != day
        volumes = bars["volume"].astype(float).to_numpy()
        for split in splits.get(symbol, []):
            volumes = np.where((bars["trading_date"] < split.ex_date).to_numpy(), volumes * split.factor, volumes)
        result[symbol] = MarketDay(
            symbol=symbol,
            close=float(last["close"]),
            volume=0 if stale else int(last["volume"]),
            adv_20=adv_20(volumes[-20:]),
            bid=None if stale else _known(last["bid"]),
            ask=None if stale else _known(last["ask"]),
            high=None if stale else _known(last["high"]),
            low=None if stale else _known(last["low"]),
            volatility=_volatility(bars["close"].astype(float).to_numpy()),
        )
    return result


def _volatility(closes: np.ndarray) -> float | None:
    """volatility_20 as the features define it: the standard deviation of the last 20
    daily returns (the cost model's sigma); None with fewer than 5."""
    returns = np.diff(closes[-21:]) / closes[-21:-1] if len(closes) > 1 else np.array([])
    returns = returns[np.isfinite(returns)]
    return float(returns.std(ddof=1)) if len(returns) >= 5 else None


def known_symbols(conn: Connection) -> set[str]:
    return {r["symbol"] for r in current_rows(conn, tables.instruments)}


def reference_close(conn: Connection, symbol: str, day: date) -> tuple[Decimal, date]:
    """The latest close of `symbol` on or before `day`, and its date."""
    c = tables.eod_prices.c
    rows = current_rows(
        conn,
        tables.eod_prices,
        where=[
            c.symbol == symbol,
            c.trading_date <= day,
            c.trading_date > day - timedelta(days=LOOKBACK_CALENDAR_DAYS),
        ],
    )
    if not rows:
        raise NotFoundError(f"no price for {symbol} in the {LOOKBACK_CALENDAR_DAYS} days up to {day.isoformat()}")
    latest = max(rows, key=lambda r: r["trading_date"])
    return Decimal(str(latest["close"])), latest["trading_date"]


def trading_currency(conn: Connection, default: str = "JMD") -> str:
    """The currency the listed instruments trade in (the most common one among them, as
    their delivery or import recorded it; KES for a replayed NSE), `default` before any
    instrument is stored. Money figures of the AI portfolio are in this currency."""
    from collections import Counter

    counts = Counter(r["currency"] for r in current_rows(conn, tables.instruments) if r["currency"])
    return counts.most_common(1)[0][0] if counts else default
