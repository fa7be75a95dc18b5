"""Stock splits, bonus issues and consolidations as the store holds them.

T0 stores a SPLIT notice as a `corporate_actions` row whose amount is the factor: the
shares after per share before (2 for a 2-for-1 split, 1.2 for a one-for-five bonus
issue, 0.1 for a one-for-ten consolidation; `ingest.exchange.validation.split_factor`
reads it off the notice and T0 refuses a day whose SPLIT notice has none). Its date is
the ex-date, the first session that trades on the new count. A row without a positive
factor adjusts nothing: an import that re-dates a split stored on a day its rows show on
the old count withdraws it so (`ingest.importers.actions.Redated`: a new version without a
factor, its detail's `moved_to` the day the split applies from instead), and every reader
here reads the current version.

Two readers apply them, each from the ex-date on: the ledger multiplies a holding
(`portfolio.ledger.replay`), and the model's price history divides the closes before
it (`store.panels.price_panel`), so neither a position nor a return shows the split
as a loss. Where an earlier day's figures are read for a later day (the morning
suggestions plan D from the scored day before it, a confirmation checks D's trade against
the latest close), `factor_between` puts them on the later day's count, and `on_count`
puts a frame of stored bars on one day's count by the same rule (the market's sessions in
portfolio/market.py, the served returns and indicators in views/market.py, the track
records' benchmarks in views/track_record.py); `shares_on_count` puts a share count
reported before a split (the fundamentals' shares outstanding) on a later day's count (the
capitalisation-weighted index of views/breadth.py and of the benchmarks).

A ticker change on a running store is a RENAME row of the old symbol (its date the ex-date,
the first session under the new symbol; its detail's `new_symbol` the new one), read here
as a capital change of factor 1 that names the symbol the holding trades under from its
ex-date (`Split.new_symbol`): the ledger's replay carries a holding of the old symbol on
under the new one there, and `renamed_on` is the one reading of whether a symbol trades
under another on a day. The stored rows stay under the old symbol (append-only); a price
adjustment reads the factor 1 as no change. `joined` is the one mapping of a company's
history through its renames: read on a day from the ex-date, the old symbol's rows before
it are the new symbol's (the model's panel, the market's sessions, the benchmarks), and
`with_earlier_symbols` names the stored symbols a read of the new symbol's series needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime

import numpy as np
import pandas as pd
from sqlalchemy import Connection, func, select

from market.contract import described
from store import tables
from store.history import current_rows

ON_COUNT_PRICES = ("open", "close", "bid", "ask", "high", "low")  # what `on_count` divides (those a frame has)
RENAME = "RENAME"  # the corporate action of a ticker change, stored under the old symbol


@dataclass(frozen=True)
class Split:
    symbol: str
    ex_date: date
    factor: float  # shares after per share before
    # When the store first learned of it (the first version of the notice's row, so a
    # corrected notice does not move it): a trade of the ex-date entered before then was
    # entered on the old count (portfolio.ledger.replay). None: known before any trade.
    known_at: datetime | None = None
    # A rename (factor 1): the symbol `symbol` trades under from `ex_date` on.
    new_symbol: str | None = None
    # A rename: the day another company's shares first traded or listed under the old
    # symbol after `ex_date` (`relisted_on`); from it the old symbol is that company's.
    until: date | None = None

    def carries(self, day: date) -> bool:
        """Whether a rename holds on `day` for the old symbol: from its ex-date until
        another company took the ticker (a trade or split under it on `day` is the renamed
        company's, to carry on under the new symbol)."""
        return self.ex_date <= day and (self.until is None or day < self.until)


def stored_splits(
    conn: Connection,
    through: date | None = None,
    symbols: Iterable[str] | None = None,
    after: date | None = None,
    through_id: int | None = None,
) -> list[Split]:
    """The splits and renames with an ex-date on or before `through` (all when None) and
    after `after`, in ex-date order (a rename before a split of its ex-date); `symbols`: of
    those symbols and of the symbols their renames gave them (a holding carried on under a
    new symbol is split on it); `through_id`: as the notices stood when the newest row's id
    was that (a read model's watermark)."""
    c = tables.corporate_actions.c
    where = [c.kind.in_(("SPLIT", RENAME))]
    if through is not None:
        where.append(c.action_date <= through)
    if after is not None:
        where.append(c.action_date > after)
    if through_id is not None:
        where.append(c.id <= through_id)
    if symbols is not None:
        where.append(c.symbol.in_(sorted(_renamed_onto(conn, set(symbols), through_id))))
    rows = current_rows(conn, tables.corporate_actions, where=where)
    first_known = _first_known(conn, where, rows)
    found = [
        _rename(r)
        if r["kind"] == RENAME
        else Split(r["symbol"], r["action_date"], float(r["amount"]), first_known.get((r["symbol"], r["action_date"])))
        for r in rows
        if r["kind"] == RENAME or _a_factor(r["amount"])
    ]
    listings = _listings(conn, {s.symbol for s in found if s.new_symbol is not None}, through_id)
    found = [replace(s, until=relisted_on(listings, s)) if s.new_symbol else s for s in found]
    return sorted(found, key=lambda s: (s.ex_date, s.new_symbol is None, s.symbol))


def _first_known(conn: Connection, where: list, rows: list[dict]) -> dict[tuple[str, date], datetime]:
    """When the store first learned of each split, by symbol and ex-date: its row's first
    version, or that of the row a re-dating import withdrew for it (a version without a
    factor whose detail's `moved_to` names the day it applies from instead: the import's
    `Redated`), whichever is earlier. A trade of the new day entered while the store held
    the split on the earlier day was entered on the new count."""
    c = tables.corporate_actions.c
    known = {
        (r.symbol, r.action_date): r.known
        for r in conn.execute(
            select(c.symbol, c.action_date, func.min(c.recorded_at).label("known"))
            .where(*where, c.kind == "SPLIT")
            .group_by(c.symbol, c.action_date)
        )
    }
    for r in rows:
        moved_to = r["detail"].get("moved_to") if r["kind"] == "SPLIT" and not _a_factor(r["amount"]) else None
        if not moved_to:
            continue
        key, withdrawn = (r["symbol"], date.fromisoformat(moved_to)), known.get((r["symbol"], r["action_date"]))
        if key in known and withdrawn is not None:
            known[key] = min(known[key], withdrawn)
    return known


def _listings(conn: Connection, symbols: set[str], through_id: int | None = None) -> dict[str, list[date]]:
    """The listing dates stored for `symbols`: their LISTING notices' dates (those stored
    by the notice `through_id`, when given) and the listing date of each one's current
    instrument version (the exchange's securities list)."""
    if not symbols:
        return {}
    c, i = tables.corporate_actions.c, tables.instruments.c
    found: dict[str, list[date]] = {s: [] for s in symbols}
    notices = select(c.symbol, c.action_date).where(c.symbol.in_(sorted(symbols)), c.kind == "LISTING").distinct()
    if through_id is not None:
        notices = notices.where(c.id <= through_id)
    for symbol, day in conn.execute(notices):
        found[symbol].append(day)
    for row in current_rows(conn, tables.instruments, where=[i.symbol.in_(sorted(symbols))]):
        if row["listed_on"] is not None:
            found[row["symbol"]].append(row["listed_on"])
    return found


def relisted_on(listings: dict[str, list[date]], rename: Split) -> date | None:
    """The day another company took the old ticker of `rename`: the first of its listing
    dates (`_listings`: a LISTING notice, the current instrument version's listing date)
    after the ex-date; None while none is. The renamed company trades under its new symbol
    from the ex-date, so a listing under the old one after it is another company's."""
    return min((d for d in listings.get(rename.symbol, ()) if d > rename.ex_date), default=None)


def _a_factor(amount: float | None) -> bool:
    return amount is not None and math.isfinite(amount) and amount > 0 and amount != 1


def _rename(row: dict) -> Split:
    """A stored RENAME as the capital change the ledger applies: factor 1, known before any
    trade (a trade of the old symbol from its ex-date is the new symbol's, whenever entered)."""
    return Split(row["symbol"], row["action_date"], 1.0, None, str(row["detail"]["new_symbol"]))


def _renamed_onto(conn: Connection, symbols: set[str], through_id: int | None) -> set[str]:
    """`symbols` and every symbol a stored rename gave one of them (a chain followed; read
    by the symbols, on the table's key index)."""
    c = tables.corporate_actions.c
    grown, frontier = set(symbols), set(symbols)
    while frontier:
        where = [c.kind == RENAME, c.symbol.in_(sorted(frontier))]
        where += [c.id <= through_id] if through_id is not None else []
        found = {r["detail"]["new_symbol"] for r in current_rows(conn, tables.corporate_actions, where=where)}
        frontier = found - grown
        grown |= frontier
    return grown


def with_earlier_symbols(conn: Connection, symbols: Iterable[str], through: date) -> list[str]:
    """`symbols` and every symbol renamed into one of them by a stored rename with an
    ex-date on or before `through` (a chain followed back): the symbols whose stored rows a
    read of `symbols`' series through `joined` needs."""
    c = tables.corporate_actions.c
    renames = current_rows(conn, tables.corporate_actions, where=[c.kind == RENAME, c.action_date <= through])
    earlier = {str(r["detail"]["new_symbol"]): set() for r in renames}
    for r in renames:
        earlier[str(r["detail"]["new_symbol"])].add(r["symbol"])
    grown, frontier = set(symbols), set(symbols)
    while frontier:
        frontier = {old for s in frontier for old in earlier.get(s, ())} - grown
        grown |= frontier
    return sorted(grown)


@dataclass(frozen=True)
class TickerChange:
    """A stored ticker change as a read of one of its two symbols names it."""

    symbol: str = described(
        "The other ticker: the one the company trades under from `as_of` (`renamed_to`), or the one it traded under "
        "before `as_of` (`renamed_from`)."
    )
    as_of: date = described("The ex-date: the first session under the new ticker.")
    relisted_on: date | None = described(
        "The day another company listed under the old ticker (its bars from then are that company's, a trade under it "
        "that company's); null while none has.",
        default=None,
    )


@dataclass(frozen=True)
class TickerChanges:
    """A symbol's stored ticker changes: the one that renamed it and those that renamed
    another symbol into it, oldest first."""

    renamed_to: TickerChange | None = None
    renamed_from: tuple[TickerChange, ...] = ()


@dataclass(frozen=True)
class ShareSplit:
    """A split, bonus issue or consolidation of one symbol, as its history names it: the
    bars are served as traded, so a client puts closes on one count by these."""

    ex_date: date = described(
        "The ex-date: the first session on the new share count; the bars before it are on the old."
    )
    factor: float = described(
        "Shares after per share before (2 for a 2-for-1 split, 1.2 for a one-for-five bonus issue, 0.1 for a "
        "one-for-ten consolidation): a price before `ex_date` divided by it (a volume multiplied) is on the count "
        "from `ex_date`."
    )


def share_splits(conn: Connection, symbols: Iterable[str]) -> dict[str, tuple[ShareSplit, ...]]:
    """The stored splits of each of `symbols` that has any, oldest first: those stored under
    the symbol itself (its bars are what traded under it), current versions with a factor
    (a withdrawn notice adjusts nothing, a rename is no split), whatever their ex-date."""
    wanted = set(symbols)
    out: dict[str, tuple[ShareSplit, ...]] = {}
    for split in stored_splits(conn, symbols=wanted):  # in ex-date order
        if split.new_symbol is None and split.symbol in wanted:
            out[split.symbol] = (*out.get(split.symbol, ()), ShareSplit(split.ex_date, split.factor))
    return out


def ticker_changes(conn: Connection, symbols: Iterable[str]) -> dict[str, TickerChanges]:
    """The stored renames of each of `symbols` that has any (from it, into it), every
    one stored, whatever its ex-date: a read of the old symbol names the new one, and one
    of the new symbol the old ones whose rows are its history (`joined`)."""
    wanted = set(symbols)
    out: dict[str, TickerChanges] = {}
    for rename in (s for s in stored_splits(conn) if s.new_symbol is not None):  # in ex-date order
        old, new = rename.symbol, str(rename.new_symbol)
        if old in wanted:
            changed = TickerChange(new, rename.ex_date, rename.until)
            out[old] = replace(out.get(old, TickerChanges()), renamed_to=changed)
        if new in wanted:
            found = out.get(new, TickerChanges())
            earlier = TickerChange(old, rename.ex_date, rename.until)
            out[new] = replace(found, renamed_from=(*found.renamed_from, earlier))
    return out


def renamed_on(splits: Iterable[Split], symbol: str, day: date) -> Split | None:
    """The rename of `symbol` with an ex-date on or before `day` (None when it trades under
    `symbol` on `day`): the one reading of a ticker change. The ledger carries a holding on
    under its new symbol from the ex-date (`portfolio.ledger.replay`), a trade under the old
    symbol from then is refused naming the new one, and the old symbol's reads name it."""
    return next((s for s in splits if s.new_symbol is not None and s.symbol == symbol and s.carries(day)), None)


def renames_by(splits: Iterable[Split], through: date) -> list[Split]:
    """The renames among `splits` with an ex-date on or before `through`, in ex-date order:
    those a read on `through` joins (point in time: before its ex-date a rename is not one)."""
    return sorted((s for s in splits if s.new_symbol is not None and s.ex_date <= through), key=lambda s: s.ex_date)


def joined(
    frame: pd.DataFrame, splits: Iterable[Split], through: date, date_column: str = "trading_date"
) -> pd.DataFrame:
    """`frame` (rows with `symbol` and `date_column`) with each company's rows under the
    symbol it trades under on `through`: a renamed symbol's rows dated before the rename's
    ex-date (one on or before `through`) are the new symbol's history, a chain followed to its
    last symbol, as a data vendor keeps one series per company. A row of the new symbol on
    the same day wins (the old row stays where it was), and the old symbol's rows from the
    ex-date stay under it (a later company that took the ticker). `frame` itself when no row
    moves. The model's panel, the market's sessions (liquidity gates, spreads) and the
    benchmarks read the stored bars through it (`joined_on_count`); what a ticker traded
    (the API's bars) is read without it."""
    renames = renames_by(splits, through)
    if not renames or frame.empty:
        return frame
    symbols = frame["symbol"].to_numpy(dtype=object).copy()
    dated = pd.to_datetime(frame[date_column]).to_numpy()
    moved = False
    for rename in renames:  # in ex-date order: A -> B, then B -> C is one series under C
        moving = (symbols == rename.symbol) & (dated < np.datetime64(rename.ex_date))
        if moving.any():
            moving &= ~np.isin(dated, dated[symbols == rename.new_symbol])
            symbols[moving] = rename.new_symbol
            moved = moved or bool(moving.any())
    return frame.assign(symbol=symbols) if moved else frame


def joined_rows(rows: list[dict], splits: Iterable[Split], through: date, date_key: str = "trading_date") -> list[dict]:
    """`joined` of stored rows as dicts (`symbol`, `date_key`): each under the symbol its
    company's series is read under on `through`."""
    renames = renames_by(splits, through)
    if not renames or not rows:
        return rows
    keys = pd.DataFrame({"symbol": [r["symbol"] for r in rows], date_key: [r[date_key] for r in rows]})
    symbols = joined(keys, renames, through, date_key)["symbol"]
    return [{**r, "symbol": s} for r, s in zip(rows, symbols, strict=True)]


def followed(splits: Iterable[Split], through: date) -> list[Split]:
    """`splits` as `joined` reads the rows: a split of a renamed symbol dated on or before
    the rename's ex-date (one on or before `through`) is the new symbol's (the rows it
    adjusts are the new symbol's history), a chain followed."""
    renames = renames_by(splits, through)
    out = []
    for split in splits:
        for rename in renames if split.new_symbol is None else ():
            if rename.symbol == split.symbol and split.ex_date <= rename.ex_date:
                split = replace(split, symbol=str(rename.new_symbol))
        out.append(split)
    return out


def joined_on_count(frame: pd.DataFrame, splits: Iterable[Split], through: date) -> pd.DataFrame:
    """`on_count` of `frame` with each company's rows under the symbol it trades under on
    `through` (`joined`): one series through a ticker change, on one share count."""
    splits = list(splits)
    return on_count(joined(frame, splits, through), followed(splits, through), through)


def factor_between(splits: Iterable[Split], symbol: str, after: date, through: date) -> float:
    """The shares on `through`'s count per share on `after`'s: the product of the factors of
    `symbol`'s splits with an ex-date after `after` and on or before `through` (1.0 when
    none). A price of `after` divided by it, or a number of its shares multiplied by it, is
    on `through`'s count: the one rule for reading an earlier day on a later day's count."""
    return float(math.prod(s.factor for s in splits if s.symbol == symbol and after < s.ex_date <= through))


def shares_on_count(splits: Iterable[Split], symbol: str, shares: float, reported: date, day: date) -> float:
    """A number of `symbol`'s shares reported on `reported` (shares outstanding) on `day`'s
    count: multiplied by `factor_between(splits, symbol, reported, day)`, so a market
    capitalisation read after a split is the close times the shares on the same count."""
    return float(shares) * factor_between(splits, symbol, reported, day)


def on_count(frame: pd.DataFrame, splits: Iterable[Split], through: date) -> pd.DataFrame:
    """`frame` (stored bars: `symbol`, `trading_date`, prices and `volume`) on `through`'s
    share count: each bar's prices divided by, and its volume multiplied by,
    `factor_between(splits, symbol, the bar's date, through)` (the product over the name's
    splits with an ex-date after the bar and on or before `through`, taken a split at a
    time). A spread or a return within one bar is a ratio and reads the same; a return
    across an ex-date reads the move net of the split. `frame` itself when no bar moves."""
    first = frame["trading_date"].min() if not frame.empty else through
    splits = [s for s in splits if first < s.ex_date <= through]  # those some bar is before
    if not splits:  # most days: read nothing more
        return frame
    symbols = frame["symbol"].to_numpy()
    dated = pd.to_datetime(frame["trading_date"]).to_numpy()
    factors = np.ones(len(frame))
    for split in splits:
        factors[(symbols == split.symbol) & (dated < np.datetime64(split.ex_date))] *= split.factor
    if (factors == 1.0).all():
        return frame
    adjusted = frame.copy()
    for column in ON_COUNT_PRICES:
        if column in adjusted:
            adjusted[column] = pd.to_numeric(adjusted[column], errors="coerce").astype(float) / factors
    adjusted["volume"] = pd.to_numeric(adjusted["volume"], errors="coerce").astype(float) * factors
    return adjusted
