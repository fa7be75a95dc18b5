"""Simulated bars without quotes stored as T0 stores a day's prices, for the readers of the
spread estimated from the stored bars (portfolio.market, views.spreads and views.instrument)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Engine

from market.liquidity import estimate_spreads
from store import tables
from store.history import append_history
from tests.market.test_spread_estimator import simulated_bars
from tests.portfolio.seed import CALENDAR, DAY, days_up_to

SESSIONS = 80


def rounded_bars(symbol: str, seed: int, days: list, spread: float = 0.02) -> pd.DataFrame:
    """`simulated_bars` of `symbol` on `days`, prices rounded to cents, 20,000 traded a day."""
    bars = simulated_bars(spread, len(days), seed=seed).assign(symbol=symbol, date=days)
    for column in ("close", "high", "low"):
        bars[column] = bars[column].round(2)
    return bars.assign(volume=20_000)


def store_bars(engine: Engine, bars: pd.DataFrame, quoted: dict[str, tuple[float, float]] | None = None) -> None:
    """The instruments and their bars as stored rows; a symbol in `quoted` has that (bid, ask)
    on DAY, every other bar has no quotes."""
    quoted = quoted or {}
    rows = [
        {
            "symbol": r.symbol,
            "trading_date": r.date,
            "close": r.close,
            "open": r.close,
            "high": r.high,
            "low": r.low,
            "volume": int(r.volume),
            "bid": quoted.get(r.symbol, (None, None))[0] if r.date == DAY else None,
            "ask": quoted.get(r.symbol, (None, None))[1] if r.date == DAY else None,
            "source": "test",
        }
        for r in bars.itertuples(index=False)
    ]
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
                for s in sorted(set(bars["symbol"]))
            ],
        )
        append_history(conn, tables.eod_prices, rows)


def last_estimates(bars: pd.DataFrame) -> pd.DataFrame:
    """Each symbol's last bar with its estimate from `bars` alone, by symbol."""
    return bars.join(estimate_spreads(bars)).groupby("symbol").tail(1).set_index("symbol")


def store_estimated_and_quoted(engine: Engine) -> pd.DataFrame:
    """EST, never quoted, and QTD, quoted 49/51 on DAY, each SESSIONS days up to DAY; and a
    wild EST bar the day after, which nothing read for DAY may see. Returns the bars up to DAY."""
    days = days_up_to(DAY, SESSIONS)
    bars = pd.concat([rounded_bars("EST", 1, days), rounded_bars("QTD", 2, days)], ignore_index=True)
    future = rounded_bars("EST", 3, [CALENDAR.add_trading_days(DAY, 1)]).assign(close=500.0, high=900.0, low=100.0)
    store_bars(engine, pd.concat([bars, future], ignore_index=True), quoted={"QTD": (49.0, 51.0)})
    return bars
