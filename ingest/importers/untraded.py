"""The no-trade rows of files that leave untraded names out: one rule for the importer, the
research frames and the replay.

An exchange's daily file lists every listed name, with volume 0 and its last close where
no shares traded (the NSE files from 2009 on; T0 stores such a bar per listed name per
session). Some files leave an untraded name out instead (the NSE's before 2009, many
per-company exports). Read as they come, every window over a name's rows then counts its
traded days only: twenty rows are twenty *trades*, not twenty sessions, so the 20-day
average volume (the entry gates' ADV_20), the share of no-trade days (0 on every row) and
each windowed input of the model read a name that trades once a month as liquid.

The rule (`untraded_rows`): on every session (a day on which the market has any row) on
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

The replay serves its files as an exchange would and, as its docstring says, reads the
later files for one status alone: a name is listed from its first row to its last, so a
long suspension there is served as no-trade rows. The importer (`ingest.importers.files`
`_store_untraded`, which puts a close carried across a split's ex-date on the new count)
and the research frames (benchmarks/model_quality.py `load_market`,
which the backtest reads) apply this module's rule; on the NSE files it adds 2,249 rows,
all in 2006-2009 (none after: the files list every name from 2009 on, and the one long
gap since, MSC's from October 2019, is longer than the rule's count).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import numpy as np
import pandas as pd

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


def untraded_rows(prices: pd.DataFrame, shorter_than: int, sessions: Iterable[date] | None = None) -> pd.DataFrame:
    """The no-trade rows `prices` (symbol, date, close, any other columns; a name's rows
    after renames are applied) lacks: one per name and session without a row inside a gap
    between two of its rows of fewer than `shorter_than` sessions (the delisting rule's
    count), in the frame's columns, sorted by symbol and date. `sessions`: the market's
    days (default: every date of `prices`). Volume is 0, `prev_close` (where the frame has
    it) the close, the columns of CARRIED the name's previous row's, every other column
    missing."""
    days = np.array(sorted(set(prices["date"]) | set(sessions or ())), dtype=object)
    ordered = prices.sort_values(["symbol", "date"], kind="stable")
    position = np.searchsorted(days, ordered["date"].to_numpy())
    codes, symbols = pd.factorize(ordered["symbol"], sort=False)
    row_of = np.full((len(symbols), len(days)), -1, dtype=np.int64)
    row_of[codes, position] = np.arange(len(ordered))
    columns = np.arange(len(days))
    held = row_of >= 0
    before = np.maximum.accumulate(np.where(held, columns, -1), axis=1)  # the last session with a row, to each
    after = np.minimum.accumulate(np.where(held, columns, len(days))[:, ::-1], axis=1)[:, ::-1]  # the next one
    short = (before >= 0) & (after < len(days)) & (after - before - 1 < shorter_than)
    name_at, day_at = np.nonzero(short & ~held)
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


def with_untraded_rows(prices: pd.DataFrame, shorter_than: int) -> pd.DataFrame:
    """`prices` with its `untraded_rows` (gaps of fewer than `shorter_than` sessions),
    sorted by symbol and date (the panel's order), its `attrs` kept and the count added
    (`attrs["untraded_rows"]`)."""
    added = untraded_rows(prices, shorter_than)
    if added.empty:
        out = prices.sort_values(["symbol", "date"], kind="stable").reset_index(drop=True)
    else:
        out = pd.concat([prices, added], ignore_index=True).sort_values(["symbol", "date"], kind="stable")
        out = out.reset_index(drop=True)
    out.attrs = {**prices.attrs, "untraded_rows": len(added)}
    return out
