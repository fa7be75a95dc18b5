"""Market breadth of one trading day the way the Jamaica Stock Exchange's daily summary
states it: how many stocks advanced, declined or traded firm (traded, price unchanged),
how many did not trade, and the change of a capitalisation-weighted index.

The index is the service's own, not the exchange's published one: the day's change in the
total market capitalisation of every listed instrument with known shares outstanding
(point in time: the latest fundamentals reported on or before the day, put on the day's
share count when a split came after the report: `store.splits.shares_on_count`), shares
held fixed over the day, so it moves like a capitalisation-weighted price index: a price
index, dividends left out (the track records' `index` benchmark built from the same
definition is a total-return one: views/track_record.py). An instrument that
did not trade contributes no change; one trading for the first time (no previous close)
counts as traded but neither advancing, declining nor unchanged. Instruments without shares outstanding are left out
of the index (and counted in `index_excluded`) but still counted in breadth.

Every count comes from the same per-ticker day that GET /api/market/latest serves
(`latest_market`), so the breadth and the latest quotes cannot disagree.

Computing it reads every instrument's bars of the last 270 calendar days and their RSI
(0.3-1.4 s a call on the demo store), so the API serves it as a read model like its other
reads: built once per `data_version` (the newest price, corporate action, instrument and
fundamentals ids, all it depends on) and the latest closed trading day, per process (api/services.py `cached`).
"""

from __future__ import annotations

from datetime import date
from typing import TypedDict

from sqlalchemy import Connection

from market.clock import TradingCalendar
from market.contract import PERCENT_PLACES
from store import tables
from store.history import current_rows, newest_ids
from store.splits import followed, joined_rows, shares_on_count, stored_splits
from views.market import Quote, latest_market


class Breadth(TypedDict):
    """How many names advanced, declined, traded unchanged or did not trade, and the change
    of the service's capitalisation-weighted index (its constituents and the names left out)."""

    trading_date: date | None
    instruments: int
    traded: int
    advancers: int
    decliners: int
    unchanged: int
    not_traded: int
    index_change_pct: float | None
    index_market_cap: float | None
    index_constituents: int
    index_excluded: list[str]


def data_version(conn: Connection) -> tuple:
    """What a day's breadth depends on: the newest price id (the bars `latest_market` reads),
    the newest corporate action id (a split puts the close before it on the day's count),
    the newest instruments id (the names listed on the day) and the newest fundamentals id
    (shares outstanding). Append-only ids only grow, so this moves exactly when an answer
    could change; the caller adds the latest closed trading day (which dates are served,
    and their errors, move with the clock)."""
    return newest_ids(conn, tables.eod_prices, tables.corporate_actions, tables.instruments, tables.fundamentals)


def market_breadth(
    conn: Connection, calendar: TradingCalendar, closed_through: date, requested: date | None = None
) -> Breadth:
    """Breadth of the latest delivered day (or `requested`), with the same errors as
    `latest_market` for dates not delivered or not trading days."""
    return breadth_of(conn, latest_market(conn, calendar, closed_through, requested))


def breadth_of(conn: Connection, quotes: dict[str, Quote]) -> Breadth:
    """Breadth of a `latest_market` answer already read."""
    day = max((q["trading_date"] for q in quotes.values()), default=None)
    traded = {s: q for s, q in quotes.items() if q["trading_date"] == day and q["volume"] > 0}
    changes = {s: q["change_pct"] for s, q in traded.items() if q["change_pct"] is not None}
    # counted as served, to two places: a -0.001% move is shown 0.00 and is unchanged
    served = [round(c, PERCENT_PLACES) for c in changes.values()]
    shares = _shares_outstanding(conn, day) if day else {}
    weights: dict[str, float] = {}
    for symbol, quote in quotes.items():
        if shares.get(symbol):
            change = changes.get(symbol, 0.0)
            weights[symbol] = quote["close"] / (1 + change / 100) * shares[symbol]
    total = sum(weights.values())
    index_change = sum(w * changes.get(s, 0.0) for s, w in weights.items()) / total if total else None
    return {
        "trading_date": day,
        "instruments": len(quotes),
        "traded": len(traded),
        "advancers": sum(1 for c in served if c > 0),
        "decliners": sum(1 for c in served if c < 0),
        "unchanged": sum(1 for c in served if c == 0),
        "not_traded": len(quotes) - len(traded),
        "index_change_pct": round(index_change, 4) if index_change is not None else None,
        "index_market_cap": round(sum(quotes[s]["close"] * shares[s] for s in weights), 2) if weights else None,
        "index_constituents": len(weights),
        "index_excluded": sorted(set(quotes) - set(weights)),
    }


def _shares_outstanding(conn: Connection, day: date) -> dict[str, float]:
    """Each symbol's latest shares outstanding reported on or before `day`, on `day`'s count
    (`store.splits.shares_on_count`: a report before a split is multiplied by its factor); a
    renamed company's report under its old symbol is its new symbol's (`store.splits.joined`)."""
    c = tables.fundamentals.c
    latest: dict[str, tuple[date, int | None]] = {}
    splits = stored_splits(conn, day)
    for row in joined_rows(
        current_rows(conn, tables.fundamentals, where=[c.report_date <= day]), splits, day, "report_date"
    ):
        held = latest.get(row["symbol"])
        if held is None or row["report_date"] > held[0]:
            latest[row["symbol"]] = (row["report_date"], row["shares_outstanding"])
    splits = followed(splits, day)  # the old symbol's splits are the joined series'
    return {
        symbol: shares_on_count(splits, symbol, shares, reported, day)
        for symbol, (reported, shares) in latest.items()
        if shares
    }
