"""The no-trade rows of files that leave untraded names out: one rule for the importer, the
research frames and the replay.

An exchange's daily file lists every listed name, with volume 0 and its last close where
no shares traded (the NSE files from 2009 on; T0 stores such a bar per listed name per
session). Some files leave an untraded name out instead (the NSE's before 2009, many
per-company exports). Read as they come, every window over a name's rows then counts its
traded days only: twenty rows are twenty *trades*, not twenty sessions, so the 20-day
average volume (the entry gates' ADV_20), the share of no-trade days (0 on every row) and
each windowed input of the model read a name that trades once a month as liquid.

The rule (`untraded_rows`): on every session (`thin_days`: a day with rows of at least
half the names the market has rows of around it) on
which a name has no row, inside a gap between two of its rows shorter than the delisting
rule's count (portfolio/delisting.py, 60 sessions by default), the name gets a no-trade
row: volume 0, the close and the previous close at its last close, no open, high, low,
bid, ask, trades or value traded (`NO_TRADE`: what `ingest.replay` serves for a listed
name absent from a day's file, status `NOT IN FILE`, and what the exchange shows for an
untraded name). Read on a day inside such a gap, the delisting rule still calls the name
listed, so the row is what a reader on that day would take it for: nothing in it depends
on the later row but that the name is still there to fill. A gap the rule's count long
stays a gap (the rule delisted the name during it, and a name that returns is listed
again), and after a name's last row nothing is added: whether its rows stopped for good
is the rule's to say. A file that lists every name every session gets nothing.

A name with a row in a day's file is not absent from it, even where the row cannot be read
(`unread_rows`: a bad row whose cells name the symbol and the day): it gets no no-trade row
that day, in the importer's store, the research frames or the replay's pages. The day stays without a row of it
and the bad row is reported, for the file to be fixed and imported again.

A thin day (`thin_days`) is no session for the fill: a day with rows of fewer than
THIN_SHARE (half) of the names the market has rows of on the days around it (the median
count of the THIN_AROUND days with rows before it, and of those after it, the smaller of
the two). Its own rows are kept as the files give them (a name's last close may be one),
no other name gets a no-trade row on it, and the importer and the research frames name it
for a person to check. Taken as a session, one misdated row (a Sunday's, in a market that
trades Monday to Friday) gave every other name a no-trade row that day: a fake session in
each of their 20-day windows. The rule reads the market's own rows, not a calendar (some
markets trade Sunday to Thursday), and against the days on both sides, so a market that
grows or shrinks (a file that adds a board) does not make its smaller side thin. Half
because a day on which most of the market has no row cannot be told apart from a partial
or misdated file, and the fill would invent a row for every absent name: where untraded
names are left out, a normal day has rows of most names that trade (the NSE's before
2009: 31 to 42 names a day, of about 50, never below 0.6 of the days around), so half
leaves normal and quiet days sessions; with three names one row is thin, with two names
one row is not (a day of one of two names cannot be told from a session). The price is
a day that was a session cut short: the NSE's 2008-01-03 (7 names, against 37.5 around
it, in the post-election unrest) is thin, and 34 names absent on it get no no-trade row; a
day's rows say nothing of which names were listed and untraded, so none is invented. A
day without days with rows on both sides is not judged: no name has rows on both sides of
it to fill.

The replay serves its files as an exchange would and, as its docstring says, reads the
later files for one status alone: a name is listed from its first row to its last, so a
long suspension there is served as no-trade rows. The importer (`ingest.importers.files`
`_store_untraded`, which puts a close carried across a split's ex-date on the new count)
and the research frames (benchmarks/model_quality.py `load_market`,
which the backtest reads) apply this module's rule; on the NSE files it adds 2,215 rows,
all in 2006-2009 (none after: the files list every name from 2009 on, and the one long
gap since, MSC's from October 2019, is longer than the rule's count).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ingest.importers.formats import Bad

NOT_IN_FILE = "NOT IN FILE"  # the replay's status for such a row; the importer's source for it ends so
# what a no-trade row holds besides its symbol, date and close (its previous close is that close)
NO_TRADE = {
    "open": None,
    "high": None,
    "low": None,
    "volume": 0,
    "trades": None,
    "value_traded": None,
    "bid": None,
    "ask": None,
}
CARRIED = ("ordinary", "name")  # a frame's columns that hold for the name, not the day: carried into its no-trade rows
THIN_SHARE = 0.5  # a day with rows of fewer than this share of the names around it is thin (`thin_days`)
THIN_AROUND = 10  # the days with rows on each side of a day whose median count is "the names around it"
NAMED = 5  # the names a thin day's line lists


@dataclass(frozen=True)
class ThinDay:
    """A day with rows of too few names to be a session for the fill (`thin_days`)."""

    day: date
    names: tuple[str, ...]  # the names with a row on it
    around: float  # the names with rows on the days around it (the smaller side's median)

    def __str__(self) -> str:
        more = len(self.names) - NAMED
        shown = ", ".join(self.names[:NAMED]) + (f" and {more} more" if more > 0 else "")
        return (
            f"{self.day.isoformat()}: rows of {len(self.names)} name{'s' if len(self.names) > 1 else ''} ({shown}) "
            f"against {self.around:g} on the days around it: not taken as a session, no other name was given a "
            "no-trade row on it; check the day's rows"
        )


def thin_days(market: pd.DataFrame) -> list[ThinDay]:
    """The thin days of `market` (the market's rows: symbol, date; any other columns), in
    order: a day with rows of fewer than THIN_SHARE of the median count of the THIN_AROUND
    days with rows before it and of those after it, whichever is smaller (the module's
    docstring says why). A day without days on both sides is not judged."""
    rows = market[["symbol", "date"]].drop_duplicates()
    counts = rows.groupby("date").size().sort_index()
    before = counts.rolling(THIN_AROUND, min_periods=1).median().shift(1)
    after = counts[::-1].rolling(THIN_AROUND, min_periods=1).median().shift(1)[::-1]
    around = np.fmin(before, after).where(before.notna() & after.notna())
    thin = counts.index[counts < THIN_SHARE * around]
    names = rows[rows["date"].isin(thin)].groupby("date")["symbol"].agg(lambda s: tuple(sorted(s)))
    return [ThinDay(day, names[day], float(around[day])) for day in thin]


def unread_rows(bad: Iterable[Bad], symbol_on: Callable[[str, date], str] | None = None) -> frozenset[tuple[str, date]]:
    """(symbol, day) of each bad row whose cells name both (`formats.Bad.of_row`), under
    the symbol the files' renames give it (`symbol_on`): a name with a row in a day's file,
    even one that cannot be read, is not absent from it, so the fill makes no no-trade row
    of it that day (`untraded_rows`, the replay's `NOT IN FILE` rows). The day stays without
    a row of the name, and the bad row is reported for the row to be fixed and imported
    again: filled, a typo in a close was stored as a day without trades at the last close."""
    named = ((b.symbol, b.day) for b in bad if b.symbol is not None and b.day is not None)
    return frozenset((symbol_on(s, d) if symbol_on else s, d) for s, d in named)


def untraded_rows(
    prices: pd.DataFrame, shorter_than: int, market: pd.DataFrame | None = None, unread: frozenset = frozenset()
) -> pd.DataFrame:
    """The no-trade rows `prices` (symbol, date, close, any other columns; a name's rows
    after renames are applied) lacks: one per name and session without a row inside a gap
    between two of its rows of fewer than `shorter_than` sessions (the delisting rule's
    count), in the frame's columns, sorted by symbol and date. `market`: the market's rows
    (symbol, date), whose days with rows less its `thin_days` are the sessions (default:
    `prices`); a row of `prices` on a thin day is a row of its name (its close may be the
    one carried) but no session of the others. Volume is 0, `prev_close` (where the frame
    has it) the close, the columns of CARRIED the name's previous row's, every other column
    missing. `unread` (`unread_rows`): the names and days with a row the files could not
    read, which get none."""
    market = prices if market is None else market
    days = np.array(sorted(set(prices["date"]) | set(market["date"])), dtype=object)
    session = ~np.isin(days, [t.day for t in thin_days(market)])
    ordered = prices.sort_values(["symbol", "date"], kind="stable")
    position = np.searchsorted(days, ordered["date"].to_numpy())
    codes, symbols = pd.factorize(ordered["symbol"], sort=False)
    row_of = np.full((len(symbols), len(days)), -1, dtype=np.int64)
    row_of[codes, position] = np.arange(len(ordered))
    columns = np.arange(len(days))
    held = row_of >= 0
    before = np.maximum.accumulate(np.where(held, columns, -1), axis=1)  # the last day with a row, to each
    after = np.minimum.accumulate(np.where(held, columns, len(days))[:, ::-1], axis=1)[:, ::-1]  # the next one
    through = np.concatenate([[0], np.cumsum(session)])  # through[i]: the sessions before day i
    between = through[after] - through[before + 1]  # the sessions strictly between the two rows
    short = (before >= 0) & (after < len(days)) & (between < shorter_than)
    name_at, day_at = np.nonzero(short & ~held & session & ~_marked(unread, symbols, days))
    if len(name_at) == 0:
        return prices.iloc[0:0].copy()
    source = ordered.iloc[row_of[name_at, before[name_at, day_at]]]
    out = pd.DataFrame(index=range(len(name_at)), columns=prices.columns)
    out["symbol"] = np.asarray(symbols)[name_at]
    out["date"] = days[day_at]
    out["close"] = source["close"].to_numpy()
    out["volume"] = 0
    if "prev_close" in out:
        out["prev_close"] = out["close"]
    for column in (c for c in CARRIED if c in out):
        out[column] = source[column].to_numpy()
    kept = [c for c in prices.columns if prices[c].dtype.kind == "f" or c in ("volume", *CARRIED)]
    return out.astype({c: prices[c].dtype for c in kept})


def _marked(pairs: frozenset[tuple[str, date]], symbols: pd.Index, days: np.ndarray) -> np.ndarray:
    """A symbol by day array, True at each (symbol, day) of `pairs` among them."""
    marked = np.zeros((len(symbols), len(days)), dtype=bool)
    column = {day: k for k, day in enumerate(days)}
    for symbol, day in pairs:
        if day in column and (n := symbols.get_indexer([symbol])[0]) >= 0:
            marked[n, column[day]] = True
    return marked


def with_untraded_rows(prices: pd.DataFrame, shorter_than: int, unread: frozenset = frozenset()) -> pd.DataFrame:
    """`prices` with its `untraded_rows` (gaps of fewer than `shorter_than` sessions, none
    on the days of `unread`: `unread_rows`), sorted by symbol and date (the panel's order),
    its `attrs` kept, the count added (`attrs["untraded_rows"]`) and its `thin_days`
    (`attrs["thin_days"]`), for the reader to name."""
    added = untraded_rows(prices, shorter_than, unread=unread)
    if added.empty:
        out = prices.sort_values(["symbol", "date"], kind="stable").reset_index(drop=True)
    else:
        out = pd.concat([prices, added], ignore_index=True).sort_values(["symbol", "date"], kind="stable")
        out = out.reset_index(drop=True)
    out.attrs = {**prices.attrs, "untraded_rows": len(added), "thin_days": thin_days(prices)}
    return out


MOVED_SHOWN = 3  # untraded rows whose close moved, named on the import's line; the rest are counted


def moved_untraded(rows: Iterable[dict]) -> str | None:
    """The rows without a trade (volume 0) whose close is not the same name's previous row's
    in the files, counted and the first MOVED_SHOWN named (by file and line): a close that
    moves on a day nothing traded is a quote, a reference price or a close restated on a
    new count, and the returns, the model's labels and the backtest read it as a move. T0
    warns of each such row (`ingest.exchange.validation`); stored as given. None: none."""
    last: dict[str, float] = {}
    moved = []
    for row in sorted(rows, key=lambda r: (r["symbol"], r["trading_date"])):
        before = last.get(row["symbol"])
        if not row["volume"] and before is not None and row["close"] != before:
            moved.append(f"{row['symbol']} {row['trading_date']}: {before:g} -> {row['close']:g} ({row.get('_line')})")
        last[row["symbol"]] = row["close"]
    if not moved:
        return None
    return (
        f"{len(moved):,} untraded row{'s' if len(moved) > 1 else ''} whose close moved from the name's previous close "
        "in the files (a close on a day without a trade is a quote, a reference price or a restated one, read as a "
        f"return: stored as given), the first: {'; '.join(moved[:MOVED_SHOWN])}"
    )
