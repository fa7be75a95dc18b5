"""Daily bars with their indicators, stored when prices change and read by the market
endpoints and GraphQL (issue 23): the read model in `daily_bars` (sql/*/0011).

Built by `refresh_bars`, which the writers call, never a request: the stage runner after
any stage that appended prices or corporate actions (T0), `t1_features` (the stage that
computes the day's indicators), backfill and the import. It rebuilds each instrument whose
prices changed since the last build (eod_prices ids newer than the newest `price_id`
stored), or that has a split notice recorded after its bars from the ex-date on were
built (`_UNBUILT_SPLITS`), over the instrument's whole history, every instrument in one
pass, with the feature registry's own functions (`views.market.INDICATORS`), and appends
only the rows whose content changed, comparing each instrument's rows from its first new
price (or ex-date) on (a bar before it reads no new price, and no bar on a new count), so
a day's refresh compares and inserts that day's bars and a corrected price re-versions
the bars it moves.
Indicators are therefore warmed up from the first bar: a page of 5 bars has no nulls once
the instrument has the indicator's window of history (RSI's 14 changes, 20 days for the
others). The prices are stored as traded; each day's indicators read the bars before it on
that day's share count (`views.market.with_indicators`: the splits with an ex-date on or
before the day), so a split's ex-date reads the move net of the split.

A reader first asks `is_current`: when prices or a split notice were appended and no
refresh has run yet (a writer outside the stage runner, or a read between T0's commit and
the refresh), the same rows are built in memory for the symbols asked (`built_rows`, no
write), so a read right after a write sees it either way and both ways give the same
numbers. (A split notice that changes no bar, the ex-date too early in a listing for any
indicator to reach back over it, keeps reads in memory until the name's next price.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import pandas as pd
from sqlalchemy import ColumnElement, Connection, Exists, Select, and_, exists, func, or_, select

from market.errors import InvalidInputError, NotReadyError
from store import tables
from store.history import append_history, current_frame, current_query
from store.panels import PRICE_ROW_COLUMNS
from store.splits import stored_splits
from views import market as market_views
from views.market import (
    EARLIEST,
    INDICATORS,
    PRICE_COLUMNS,
    Bar,
    BarMark,
    History,
    SymbolStatistics,
    known_symbol,
    with_indicators,
)

LATEST = date(9999, 12, 31)
BAR_FIELDS = PRICE_COLUMNS + list(INDICATORS)  # what a history item holds, in order


class BarRow(Bar):
    """A `daily_bars` row: a history item's fields (indicators at full precision) with its
    symbol and the price row it was built from."""

    symbol: str
    price_id: int


Page = tuple[list[Bar], bool]  # a page's items, oldest first, and whether more lie beyond it


def watermarks(conn: Connection) -> tuple[int | None, int | None, int | None, int | None, bool]:
    """The version of everything a bars read depends on, in one statement: (newest
    eod_prices id, newest price id the bars were built from, newest daily_bars id, newest
    instruments id, whether a split was recorded after its symbol's bars from its ex-date
    on were built: `_UNBUILT_SPLITS`). It moves whenever a price, a bar, a listing or a
    split notice is appended."""
    *ids, unbuilt = conn.execute(_WATERMARKS).one()
    return (*ids, bool(unbuilt))


def _unbuilt_splits() -> Select:
    """The SPLIT notices (any version) recorded after every stored bar of their symbol
    dated on or after their ex-date, where the symbol has a bar before the ex-date too:
    the bars from the ex-date on were built without the notice as it now stands (a split
    recorded after the prices: `refresh_bars` builds them again). A notice whose ex-date is
    after the symbol's last bar needs nothing yet (the bars of the ex-date are built with
    it when its prices come), nor one before the symbol's first bar (no bar is before it).
    A version that keeps its amount (the notice written again, "2 for 1" for "2:1") changes
    no bar and is not counted: the refresh would write nothing, and the reads would build
    the bars in memory for good. Each bar read checks this (`watermarks`): a few index
    probes per stored split. (Known
    limit, by timestamps: on Postgres a notice whose transaction commits after a concurrent
    refresh that re-versioned its symbol's bars from the ex-date on at a later stamp reads
    as built, and only the bars built after it read it.)"""
    a, b = tables.corporate_actions.c, tables.daily_bars.c
    of_symbol = b.symbol == a.symbol
    prior = tables.corporate_actions.alias("prior").c
    before = (  # the amount of the version before this one: a version that changed only its text changes no bar
        select(prior.amount)
        .where(prior.symbol == a.symbol, prior.action_date == a.action_date, prior.kind == a.kind, prior.id < a.id)
        .order_by(prior.id.desc())
        .limit(1)
        .scalar_subquery()
    )

    def bars(*where: ColumnElement[bool]) -> Exists:
        return exists().where(of_symbol, *where)

    return select(a.symbol, a.action_date).where(
        a.kind == "SPLIT",
        before.is_distinct_from(a.amount),
        bars(b.trading_date < a.action_date),
        bars(b.trading_date >= a.action_date),
        ~bars(b.trading_date >= a.action_date, b.recorded_at >= a.recorded_at),
    )


_UNBUILT_SPLITS = _unbuilt_splits()
_WATERMARKS = select(
    select(func.max(tables.eod_prices.c.id)).scalar_subquery(),  # built once: it runs on every read
    select(func.max(tables.daily_bars.c.price_id)).scalar_subquery(),
    select(func.max(tables.daily_bars.c.id)).scalar_subquery(),
    select(func.max(tables.instruments.c.id)).scalar_subquery(),
    exists(_UNBUILT_SPLITS),
)


def is_current(marks: tuple) -> bool:
    """Whether the stored bars were built from the newest prices and split notices
    (`watermarks`)."""
    newest_price, built_from, unbuilt = marks[0], marks[1], marks[4]
    prices_built = newest_price is None or (built_from is not None and built_from >= newest_price)
    return prices_built and not unbuilt


def _prices(conn: Connection, symbols: list[str] | None) -> pd.DataFrame:
    c = tables.eod_prices.c
    where = [c.symbol.in_(symbols)] if symbols is not None else []
    frame = current_frame(conn, tables.eod_prices, PRICE_ROW_COLUMNS, where=where)
    return frame.sort_values(["symbol", "trading_date"], kind="stable").reset_index(drop=True)


def built_rows(
    conn: Connection, symbols: list[str] | None = None, since: dict[str, date] | None = None
) -> list[BarRow]:
    """The `daily_bars` rows of `symbols` (all when None) as the prices now stand: every
    current price row with its indicators over the symbol's whole history, every symbol in
    one pass (`with_indicators`). `since`: per symbol, the first date whose rows are wanted
    (the indicators still read the history before it)."""
    enriched = _prices(conn, symbols)
    if enriched.empty:
        return []
    enriched = with_indicators(enriched, stored_splits(conn, symbols=symbols))
    if since is not None:
        enriched = enriched[(enriched["trading_date"] >= enriched["symbol"].map(since)).to_numpy(bool)]
    numeric = [c for c in BAR_FIELDS if c not in ("trading_date", "volume")]
    values = enriched[numeric].to_numpy(dtype=float)
    return [
        {
            "symbol": symbol,
            "trading_date": day,
            "price_id": int(price_id),
            "volume": int(volume),
            **{name: None if np.isnan(v) else float(v) for name, v in zip(numeric, row)},
        }
        for symbol, day, price_id, volume, row in zip(
            enriched["symbol"], enriched["trading_date"], enriched["id"], enriched["volume"], values
        )
    ]


def refresh_bars(conn: Connection, every: bool = False) -> int:
    """Bring `daily_bars` up to date with `eod_prices` and the split notices; the number of
    bar rows inserted. Idempotent: with nothing new it reads its watermarks and returns 0.
    Each symbol with a price newer than the last build, or a split notice recorded after
    its bars from the ex-date on were built (`_UNBUILT_SPLITS`), has its indicators
    computed over its whole history and its rows compared from the first date of a new
    price or ex-date on: an earlier bar reads no new price and no bar on a split's new
    count, so it is as stored (a day's refresh compares that day's rows only).
    `every`: every symbol's rows compared from its first bar (`marketintel db
    rebuild-bars`, after an indicator's definition changed): a new version of each bar
    whose figures the definition moved, nothing for the others."""
    marks = watermarks(conn)
    built_from = marks[1]
    if is_current(marks) and not every:
        return 0
    p = tables.eod_prices.c
    newer = [] if every else [p.id > (built_from or 0)]
    firsts = dict(conn.execute(select(p.symbol, func.min(p.trading_date)).where(*newer).group_by(p.symbol)).all())
    for symbol, ex_date in conn.execute(_UNBUILT_SPLITS).all() if marks[4] else ():
        firsts[symbol] = min(firsts.get(symbol, ex_date), ex_date)
    if not firsts:
        return 0
    changed = sorted(firsts)
    rows = built_rows(conn, changed, since=firsts)
    b = tables.daily_bars.c
    scope = [b.symbol.in_(changed), b.trading_date >= min(firsts.values())]
    return append_history(conn, tables.daily_bars, rows, scope=scope).inserted


def stored_pages(
    conn: Connection, ranges: dict[str, tuple[date, date]], limit: int, newest_first: bool
) -> dict[str, Page]:
    """Per symbol: at most `limit` bars within its [first, last] range, oldest first in the
    list, and whether more bars lie beyond the page (after it when reading forward, before
    it when `newest_first`). One SQL statement whatever the number of symbols."""
    if not ranges:
        return {}
    b = tables.daily_bars.c
    spans = {(first, last) for first, last in ranges.values()}
    if len(spans) == 1:
        first, last = next(iter(spans))
        where = [b.symbol.in_(list(ranges)), b.trading_date >= first, b.trading_date <= last]
    else:
        where = [
            or_(
                *[
                    and_(b.symbol == s, b.trading_date >= first, b.trading_date <= last)
                    for s, (first, last) in ranges.items()
                ]
            )
        ]
    current = current_query(tables.daily_bars, where=where, dialect=conn.dialect.name).subquery()
    order = current.c.trading_date.desc() if newest_first else current.c.trading_date
    ranked = select(
        current, func.row_number().over(partition_by=current.c.symbol, order_by=order).label("n")
    ).subquery()
    query = select(*[ranked.c[name] for name in ("symbol", *BAR_FIELDS)]).where(ranked.c.n <= limit + 1)
    found: dict[str, list[Mapping]] = {s: [] for s in ranges}
    for row in conn.execute(query):
        found[row.symbol].append(row._mapping)
    return {s: _page(rows, limit, newest_first) for s, rows in found.items()}


def memory_pages(
    rows: list[BarRow], ranges: dict[str, tuple[date, date]], limit: int, newest_first: bool
) -> dict[str, Page]:
    """`stored_pages` over rows built in memory (`built_rows`): the same pages."""
    by_symbol: dict[str, list[BarRow]] = {s: [] for s in ranges}
    for row in rows:
        span = ranges.get(row["symbol"])
        if span and span[0] <= row["trading_date"] <= span[1]:
            by_symbol[row["symbol"]].append(row)
    result = {}
    for symbol, found in by_symbol.items():
        found.sort(key=lambda r: r["trading_date"], reverse=newest_first)
        result[symbol] = _page(found[: limit + 1], limit, newest_first)
    return result


def _page(rows: list, limit: int, newest_first: bool) -> Page:
    more = len(rows) > limit
    rows = rows[:limit]
    if newest_first:
        rows = rows[::-1]
    return [_item(r) for r in rows], more


def _item(row: Mapping) -> Bar:  # a BarRow, or a stored row's mapping
    """A history item as the API serves it: numbers rounded to 6 places, as the computed
    path (`views.market._items`) rounds them."""
    return {
        "trading_date": row["trading_date"],
        "volume": int(row["volume"]),
        **{
            name: None if row[name] is None else round(float(row[name]), 6)
            for name in BAR_FIELDS
            if name not in ("trading_date", "volume")
        },
    }


def stored_series(conn: Connection, symbol: str) -> pd.DataFrame:
    """Every stored bar of `symbol`, oldest first, as a frame (what `symbol_statistics` reads)."""
    b = tables.daily_bars.c
    query = current_query(tables.daily_bars, where=[b.symbol == symbol], dialect=conn.dialect.name)
    rows = conn.execute(query).mappings().all()
    frame = pd.DataFrame([dict(r) for r in rows], columns=[c.name for c in tables.daily_bars.c])
    return frame.sort_values("trading_date", kind="stable").reset_index(drop=True)


def _pages(
    conn: Connection, ranges: dict[str, tuple[date, date]], limit: int, newest_first: bool, marks: tuple | None
) -> dict[str, Page]:
    """Stored pages, or the same pages built in memory while the store has prices that no
    refresh has built into bars yet (`marks`: the `watermarks` the caller read, if any)."""
    if is_current(marks or watermarks(conn)):
        return stored_pages(conn, ranges, limit, newest_first)
    return memory_pages(built_rows(conn, list(ranges)), ranges, limit, newest_first)


@dataclass(frozen=True)
class BarPage:
    """Which page of a symbol's bars `history` answers: `limit` bars within `start`..`end`
    (either open), forward after the cursor date `after` or backward before `before`."""

    limit: int
    start: date | None = None
    end: date | None = None
    after: date | None = None
    before: date | None = None


def history(conn: Connection, symbol: str, page: BarPage, marks: tuple | None = None) -> History:
    """One page of a symbol's bars, oldest first inside the page (`marks`: the `watermarks`
    the caller read, if any).

    Without `start` and `after` the page is the newest `limit` bars up to `end` (and before
    `before`, the cursor of the page after it), and `next_cursor` (a `BarMark`, `older`)
    leads to the older ones. With `start` or `after` pages run forward from there:
    `next_cursor` (a `BarMark` forward) leads to the newer ones, as GraphQL's `history` does."""
    start, end, limit, after, before = page.start, page.end, page.limit, page.after, page.before
    symbol = known_symbol(conn, symbol)
    _check_range(start, end)
    last = min(end or LATEST, before - timedelta(days=1) if before else LATEST)
    if before is not None or (start is None and after is None):
        items, more = _pages(conn, {symbol: (start or EARLIEST, last)}, limit, True, marks)[symbol]
        return {
            "symbol": symbol,
            "items": items,
            "next_cursor": BarMark(items[0]["trading_date"], older=True) if more and items else None,
        }
    first = max(start or EARLIEST, after + timedelta(days=1) if after else EARLIEST)
    items, more = _pages(conn, {symbol: (first, last)}, limit, False, marks)[symbol]
    return {
        "symbol": symbol,
        "items": items,
        "next_cursor": BarMark(items[-1]["trading_date"]) if more and items else None,
    }


def histories(
    conn: Connection,
    symbols: list[str],
    start: date | None,
    end: date | None,
    limit: int,
    after: date | None = None,
    marks: tuple | None = None,
) -> dict[str, History]:
    """GraphQL's `history` of many symbols, forward from `start` (after the cursor date):
    the stored twin of `views.market.histories`, one statement for every symbol."""
    _check_range(start, end)
    first = max(start or EARLIEST, after + timedelta(days=1) if after else EARLIEST)
    pages = _pages(conn, {s: (first, end or LATEST) for s in symbols}, limit, False, marks)
    return {
        s: {"symbol": s, "items": items, "next_cursor": items[-1]["trading_date"] if more and items else None}
        for s, (items, more) in pages.items()
    }


def recent_histories(
    conn: Connection, symbols: list[str], count: int, end: date | None = None, marks: tuple | None = None
) -> dict[str, History]:
    """The last `count` bars of each symbol up to `end`, oldest first (GraphQL's
    `recentBars`; nothing follows them, so no cursor): one statement for every symbol."""
    pages = _pages(conn, {s: (EARLIEST, end or LATEST) for s in symbols}, count, True, marks)
    return {s: {"symbol": s, "items": items, "next_cursor": None} for s, (items, _) in pages.items()}


def symbol_statistics(conn: Connection, symbol: str, marks: tuple | None = None) -> SymbolStatistics:
    """`views.market.symbol_statistics` over the stored bars and indicators."""
    if not is_current(marks or watermarks(conn)):
        return market_views.symbol_statistics(conn, symbol)
    symbol = known_symbol(conn, symbol)
    bars = stored_series(conn, symbol)
    if bars.empty:
        raise NotReadyError(f"{symbol} has no prices yet")
    splits = stored_splits(conn, symbols=[symbol])
    return {**market_views.statistics(symbol, bars, bars, splits), **market_views.latest_reasons(conn, symbol)}


def _check_range(start: date | None, end: date | None) -> None:
    if start and end and start > end:
        raise InvalidInputError(f"start {start.isoformat()} is after end {end.isoformat()}")


__all__ = [
    "BAR_FIELDS",
    "EARLIEST",
    "LATEST",
    "built_rows",
    "histories",
    "history",
    "is_current",
    "memory_pages",
    "recent_histories",
    "refresh_bars",
    "stored_pages",
    "stored_series",
    "symbol_statistics",
    "watermarks",
]
