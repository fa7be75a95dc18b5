"""Ticker changes in the corporate-actions file (`ingest.importers.actions`): a `rename`
row joins a name's history under its old symbol to its history under the new one.

The rule, the one every file path applies (the importer, the replay, the benchmarks'
loaders, through `join_renames`): the old symbol's rows before the ex-date and the new
symbol's rows from it are one instrument's history under the NEW symbol, as a data vendor
keeps one series per company, so returns, the model's panel and a held position run
through the rename. The file's other actions follow the rows (`Renames.resolve`): one
listed under the old symbol dated on or before the rename's ex-date is the joined
series', under the new symbol; one listed under the new symbol already applies to it, and
one listed under both is one action (`actions.on_joined_series` finds the repeated rows
after the renames resolve).

Renames apply in ex-date order, so a chain (A -> B, then B -> C) is one series under C,
and said so. The cases the file cannot settle are reported, never applied silently:

- the old symbol has no row before the ex-date: nothing to join, not applied;
- the new symbol already has rows before the ex-date: a reused ticker (another company's,
  or one delisted earlier) or a wrong ex-date. Joining would make two companies' rows one
  series, so the rename is not applied: both symbols keep the rows the file gives them;
- the old symbol still has rows on or after the ex-date (a vendor's lag, a wrong ex-date,
  the old ticker given to another company): they are not joined (on a day both symbols
  have a row there would be two closes) and stay under the old symbol, as the file has
  them; the rows of a later rename that reuses the old symbol are not counted;
- the new symbol has no row on or after the ex-date: applied (the history is the new
  symbol's) and said.

A rename the file does not hold is reported, never guessed (`handovers`): a name whose
rows end the session before another name's rows begin, at a first close within
HANDOVER_BAND of its last, is a probable rename (a ticker change, or a vendor's new
spelling of the code: `SCOM`, then `SCOM.NR`; a code's case and spaces are already one
name, the readers upper-case and strip it). Read apart, the old name is one that stops (a
held position is delisted after MARKETINTEL_DELIST_AFTER_SESSIONS and worth nothing) and
the new one a listing without history; the line names the rename row that joins them.

A ticker another company took is split (`reused_tickers`, applied by `join_renames` after
the renames, so by every path alike): where the rows carry names, a symbol whose rows stop
for the delisting rule's sessions or more (MARKETINTEL_DELIST_AFTER_SESSIONS: a held
position was delisted) and begin again under another name (`name_key`: words in any case,
punctuation and legal form left out) is two companies. The earlier one's rows are under
`Reuse.retired` (SYMBOL~its last day), a name that stops; the symbol from the later one's
first row is a new listing; the file's actions of the symbol dated before that row are the
earlier company's. Each is a line of the report. The importer looks across what the store
holds too (`Stored`: the rows of the files' symbols, named by the stored instrument's name,
and the store's sessions), so the two companies' files imported one after another are
split as one import splits them: the earlier company's file imported after the later's is
stored under the retired symbol; the later's imported after the earlier's would put the
stored rows under it, which an append-only store cannot do (they would stay under the
ticker beside the retired symbol's), so that import is refused, saying so and to import
both companies' files in one import into a fresh store (`files._refuse_two_series`).

A rename on a running store (`on_the_store`): where the store already holds rows of the
old symbol before the ex-date (`Stored` holds the renames' old symbols too), they cannot
move, so the rename is not joined; it is kept (`Renames.kept`) and the importer stores it
as a RENAME corporate action of the old symbol, which the ledger reads (`store.splits`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from market.settings import DELIST_AFTER_SESSIONS
from market.text import retired_symbol
from store.splits import Split

if TYPE_CHECKING:
    from ingest.importers.actions import CorporateAction

RENAME = "RENAME"


@dataclass(frozen=True)
class Rename:
    """A rename applied: the old symbol's `rows` before `ex_date` (from `first` to `last`)
    are the new symbol's history."""

    old: str
    new: str
    ex_date: date
    where: str  # file:line
    rows: int
    first: date
    last: date

    def line(self) -> str:
        return (
            f"{self.old} -> {self.new} from {self.ex_date.isoformat()}: {self.old}'s {self.rows:,} rows "
            f"({self.first.isoformat()} to {self.last.isoformat()}) are {self.new}'s history ({self.where})"
        )


@dataclass(frozen=True)
class Renames:
    """The renames applied, in ex-date order, the reused tickers split (`reused_tickers`,
    by date), and what was reported (file:line: reason)."""

    applied: tuple[Rename, ...] = ()
    warnings: tuple[str, ...] = ()
    reused: tuple[Reuse, ...] = ()
    # renames on a running store (`on_the_store`): stored as RENAME actions, no row moved
    kept: tuple[Rename, ...] = ()

    def symbol_on(self, symbol: str, day: date) -> str:
        """The symbol a row of the files under `symbol` on `day` belongs to: the renames
        first, then a reused ticker's earlier company's symbol."""
        for rename in self.applied:
            if rename.old == symbol and day < rename.ex_date:
                symbol = rename.new
        return next((r.retired for r in self.reused if r.symbol == symbol and day <= r.last_day), symbol)

    def moving(self) -> frozenset[str]:
        """The symbols some of whose rows `symbol_on` puts under another: each rename's old
        symbol and each reused ticker."""
        return frozenset({r.old for r in self.applied} | {r.symbol for r in self.reused})

    def frame(self, prices: pd.DataFrame) -> pd.DataFrame:
        """`prices` (symbol, date, ...) with each row under the symbol it belongs to."""
        if not self.applied and not self.reused:
            return prices
        symbols = prices["symbol"].copy()
        for rename in self.applied:
            symbols[(symbols == rename.old) & (prices["date"] < rename.ex_date)] = rename.new
        ticker = symbols.copy()
        for reuse in reversed(self.reused):  # the latest first: an earlier company's rows end sooner
            symbols[(ticker == reuse.symbol) & (prices["date"] <= reuse.last_day)] = reuse.retired
        return prices.assign(symbol=symbols)

    def resolve(self, actions: Iterable[CorporateAction]) -> list[CorporateAction]:
        """The file's actions on the joined series: one of an old symbol dated on or before
        its rename's ex-date is the new symbol's (the bars it adjusts are the new symbol's),
        `listed` under the file's symbol (a report names the row as the file has it)."""
        out = []
        for action in actions:
            symbol = action.symbol
            for rename in self.applied:
                if rename.old == symbol and action.ex_date <= rename.ex_date and action.kind != RENAME:
                    symbol = rename.new
            # before the later company's first row, an action of a reused ticker is the earlier company's
            symbol = next(
                (r.retired for r in self.reused if r.symbol == symbol and action.ex_date < r.first_day), symbol
            )
            moved = replace(action, symbol=symbol, listed=action.listed or action.symbol)
            out.append(action if symbol == action.symbol else moved)
        return out

    def lines(self) -> list[str]:
        kept = [f"renamed on the store: {kept_line(r)}" for r in self.kept]
        return [f"renamed: {r.line()}" for r in self.applied] + kept + [r.line() for r in self.reused]


def kept_line(rename: Rename) -> str:
    """What a rename on a running store does (`on_the_store`), as the import reports it."""
    return (
        f"{rename.old} -> {rename.new} from {rename.ex_date.isoformat()}: the store's {rename.rows:,} rows of "
        f"{rename.old} ({rename.first.isoformat()} to {rename.last.isoformat()}) stay under {rename.old}; a "
        f"holding of {rename.old} is held as {rename.new} from {rename.ex_date.isoformat()} (a RENAME action; "
        f"{rename.where})"
    )


@dataclass(frozen=True)
class Stored:
    """What a store holds that a reused ticker is looked for across (`reused_tickers`) and
    a follow-up import's first rows are checked against (`actions.previous_closes`): the
    rows of the files' symbols (symbol, date, close, volume, filled, name: the stored instrument's name,
    None where it is only the symbol), the days with any row (its sessions) and the
    symbols' stored splits."""

    rows: pd.DataFrame
    sessions: frozenset[date] = frozenset()
    splits: tuple[Split, ...] = ()


def join_renames(
    prices: pd.DataFrame,
    actions: Iterable[CorporateAction],
    after_sessions: int = DELIST_AFTER_SESSIONS,
    stored: Stored | None = None,
) -> tuple[pd.DataFrame, Renames]:
    """`prices` (symbol, date, ..., and a `name` where the files carry names) with the
    file's renames applied (the module's rule), then each reused ticker split at its gap
    (`reused_tickers`: a name that changes across `after_sessions` sessions without a
    row or more, the `stored` rows and sessions counted), and what was applied and reported."""
    joined, renames = _renamed(prices, actions, stored)
    if "name" not in prices:
        return joined, renames
    split = replace(renames, reused=reused_tickers(joined, after_sessions, stored))
    return (split.frame(joined) if split.reused else joined), split


def _renamed(
    prices: pd.DataFrame, actions: Iterable[CorporateAction], stored: Stored | None = None
) -> tuple[pd.DataFrame, Renames]:
    """`prices` with the file's renames applied, and what was applied, kept as an action
    on a running store (`on_the_store`) and reported."""
    renames = sorted((a for a in actions if a.kind == RENAME), key=lambda a: a.ex_date)
    if not renames:
        return prices, Renames()
    days = {s: sorted(part) for s, part in prices.groupby("symbol")["date"]}
    applied: list[Rename] = []
    kept: list[Rename] = []
    warnings: list[str] = []
    for k, action in enumerate(renames):
        old, new, ex = action.symbol, action.new_symbol or "", action.ex_date
        said = f"{action.where}: {action.text()}"
        on_store = on_the_store(action, stored, days)
        if on_store is not None:
            kept.extend([on_store] if isinstance(on_store, Rename) else [])
            warnings.extend([on_store] if isinstance(on_store, str) else [])
            continue
        before = [d for d in days.get(old, []) if d < ex]
        taken = [d for d in days.get(new, []) if d < ex]
        if not before:
            warnings.append(f"{said}: {old} has no row before the ex-date: nothing to join; not applied")
            continue
        if taken:
            warnings.append(
                f"{said}: not applied: {new} already has {len(taken):,} rows before the ex-date ({taken[0]} to "
                f"{taken[-1]}): a reused ticker or a wrong ex-date; joined, two companies' rows would be one "
                f"series, so {old} and {new} keep the rows the file gives them"
            )
            continue
        reused = min((a.ex_date for a in renames[k + 1 :] if a.new_symbol == old), default=None)
        after = [d for d in days.get(old, []) if d >= ex and (reused is None or d < reused)]
        if after:
            warnings.append(
                f"{said}: {old} still has {len(after):,} rows on or after the ex-date ({after[0]} to {after[-1]}): not "
                f"joined (a vendor's lag, a wrong ex-date or a reused ticker); kept under {old} as the file has them"
            )
        if not any(d >= ex for d in days.get(new, [])):
            warnings.append(f"{said}: {new} has no row on or after the ex-date; {old}'s history is {new}'s")
        chain = next((r for r in reversed(applied) if r.new == old), None)
        if chain is not None:
            warnings.append(
                f"{said}: a chain: {chain.old} -> {old} on {chain.ex_date} ({chain.where}), then {old} -> {new}: "
                f"one series under {new}"
            )
        days[new] = before + days.get(new, [])
        days[old] = [d for d in days[old] if d >= ex]
        applied.append(Rename(old, new, ex, action.where, len(before), before[0], before[-1]))
    joined = Renames(tuple(applied), tuple(warnings), kept=tuple(kept))
    return joined.frame(prices), joined


def on_the_store(action: CorporateAction, stored: Stored | None, days: dict[str, list[date]]) -> Rename | str | None:
    """A rename on a running store: where the store already holds rows of the old symbol
    before the ex-date, the rows stay where they are (append-only) and the rename is stored
    as a RENAME action of the old symbol (`store.splits`: the ledger carries a holding on
    under the new symbol from the ex-date); the Rename kept, with the stored rows. A warning
    (not applied) where the new symbol has rows before the ex-date, in the file or the
    store: a reused ticker or a wrong ex-date. None where the store holds no such row: the
    file's rows are joined (`_renamed`)."""
    if stored is None or stored.rows.empty:
        return None
    rows = stored.rows
    held = sorted(rows.loc[(rows["symbol"] == action.symbol) & (rows["date"] < action.ex_date), "date"])
    if not held:
        return None
    new = action.new_symbol or ""
    taken = sorted(
        {d for d in days.get(new, []) if d < action.ex_date}
        | set(rows.loc[(rows["symbol"] == new) & (rows["date"] < action.ex_date), "date"])
    )
    if taken:
        return (
            f"{action.where}: {action.text()}: not applied: {new} already has {len(taken):,} rows before the "
            f"ex-date ({taken[0]} to {taken[-1]}): a reused ticker or a wrong ex-date"
        )
    return Rename(action.symbol, new, action.ex_date, action.where, len(held), held[0], held[-1])


HANDOVER_BAND = 0.5  # the most a handover's first close may differ from the last (T0's price band, SANITY_BAND)


@dataclass(frozen=True)
class Handover:
    """A name whose rows end the session before another name's rows begin, at a close
    within HANDOVER_BAND of its last: a ticker change the file holds no `rename` row for,
    or the same company under a vendor's new spelling (`SCOM`, then `SCOM.NR`). Reported,
    never joined: a new listing the day after a delisting at a like price looks the same."""

    old: str
    new: str
    last_day: date
    first_day: date
    last_close: float
    first_close: float

    def line(self) -> str:
        return (
            f"probable rename (not joined): {self.old}'s rows end on {self.last_day.isoformat()} "
            f"({self.last_close:g}) and {self.new}'s begin on "
            f"the next session, {self.first_day.isoformat()} ({self.first_close:g}): the same company? Read apart, "
            f"{self.old} is a name that stops (a held position is delisted); a rename row "
            f"({self.old},{self.first_day.isoformat()},rename,,,{self.new}) joins them"
        )


def handovers(prices: pd.DataFrame) -> tuple[Handover, ...]:
    """Every Handover in `prices` (symbol, date, close; the renames already joined), by date."""
    days = sorted(prices["date"].unique())
    if len(days) < 3:
        return ()
    prices = prices.reset_index(drop=True)
    span = prices.groupby("symbol")["date"].agg(["idxmin", "idxmax"])
    first = prices.loc[span["idxmin"], ["symbol", "date", "close"]].set_index("symbol")
    last = prices.loc[span["idxmax"], ["symbol", "date", "close"]].set_index("symbol")
    ended = last[last["date"] < days[-1]]
    session_before = dict(zip(days[1:], days[:-1], strict=True))
    found = []
    for new, row in first[first["date"] > days[0]].iterrows():
        before = session_before[row["date"]]
        for old, gone in ended[(ended["date"] == before) & (ended.index != new)].iterrows():
            if abs(row["close"] / gone["close"] - 1) <= HANDOVER_BAND:
                found.append(Handover(old, new, before, row["date"], float(gone["close"]), float(row["close"])))
    return tuple(sorted(found, key=lambda h: (h.first_day, h.old)))


# A company's legal form and the words that join a name are not the name: "Old Co Ltd" and
# "OLD CO LIMITED" are one name, "Old Co" and "New Co" two
LEGAL_FORMS = frozenset(
    {"ltd", "limited", "plc", "inc", "incorporated", "corp", "corporation", "co", "company", "llc", "the", "and"}
)


def name_key(name: str) -> tuple[str, ...]:
    """A company name as compared for a reused ticker: its words (letters and digits) in
    any case, `&` read as "and", punctuation and LEGAL_FORMS left out."""
    words = re.findall(r"[0-9a-z]+", name.casefold().replace("&", " and "))
    return tuple(w for w in words if w not in LEGAL_FORMS)


@dataclass(frozen=True)
class Reuse:
    """A ticker another company took: `symbol`'s rows end on `last_day` under `old_name` and
    begin again `sessions` sessions later, on `first_day`, under another name (`name_key`).
    The rows to `last_day` are the earlier company's, under `retired`: it is delisted after
    them, and `symbol` from `first_day` is a new listing."""

    symbol: str
    old_name: str
    new_name: str
    last_day: date
    first_day: date
    sessions: int  # sessions without a row between the two
    last_close: float
    first_close: float

    @property
    def retired(self) -> str:
        """The earlier company's symbol: the ticker and its last day (`ABC~2019-04-30`,
        market.text's one rule, which the API's symbol parameter reads back)."""
        return retired_symbol(self.symbol, self.last_day)

    def line(self) -> str:
        return (
            f"reused ticker (split): {self.symbol}'s rows end on {self.last_day.isoformat()} ({self.last_close:g}, "
            f"{self.old_name!r}) and begin again {self.sessions} sessions later, on {self.first_day.isoformat()} "
            f"({self.first_close:g}, {self.new_name!r}): another company; the rows to {self.last_day.isoformat()} "
            f"are {self.retired}'s (delisted after them), {self.symbol} from {self.first_day.isoformat()} is a new "
            "listing (a rename row joins them if they are one company)"
        )


def reused_tickers(
    prices: pd.DataFrame, after_sessions: int = DELIST_AFTER_SESSIONS, stored: Stored | None = None
) -> tuple[Reuse, ...]:
    """Every Reuse in `prices` (symbol, date, close, name; the renames already joined) and
    the `stored` rows beside them (a file's row of a name and day stands for the stored
    one): a gap of `after_sessions` sessions without a row or more (the delisting rule's,
    so the earlier company was delisted) across which the name changes (`name_key`); a row
    without a name says nothing. A session is a day with any row, the store's included. By date."""
    columns = ["symbol", "date", "close", "name"]
    rows = prices[columns]
    if stored is not None and not stored.rows.empty:
        rows = pd.concat([rows, stored.rows[columns]]).drop_duplicates(["symbol", "date"], keep="first")
    held = stored.sessions if stored is not None else frozenset()
    days = {d: i for i, d in enumerate(sorted(set(rows["date"].unique()) | held))}
    ordered = rows.sort_values(["symbol", "date"], kind="stable")
    symbol, day, close, name = (ordered[c].tolist() for c in columns)
    found = [
        Reuse(str(symbol[i]), name[i], name[i + 1], day[i], day[i + 1], gap, float(close[i]), float(close[i + 1]))
        for i, gap in _long_gaps(ordered, days, after_sessions)
        if _renamed_company(name[i], name[i + 1])
    ]
    return tuple(sorted(found, key=lambda r: (r.first_day, r.symbol)))


def _long_gaps(ordered: pd.DataFrame, days: dict[date, int], after_sessions: int) -> list[tuple[int, int]]:
    """(i, gap) for each row i of `ordered` (sorted by symbol and date) followed by a row
    of its symbol `gap` sessions later, `gap` at least `after_sessions` (`days`: each
    day's session number): the gaps a reused ticker is looked for across, found over
    every row at once (a store's years of rows are read by every import)."""
    symbol = ordered["symbol"].to_numpy()
    position = ordered["date"].map(days).to_numpy(dtype=np.int64)
    gaps = position[1:] - position[:-1] - 1
    at = np.flatnonzero((symbol[1:] == symbol[:-1]) & (gaps >= after_sessions))
    return [(int(i), int(gaps[i])) for i in at]


def _renamed_company(old: object, new: object) -> bool:
    """Whether two names of a ticker are two companies' (both given, `name_key` unlike)."""
    if not isinstance(old, str) or not isinstance(new, str) or not old.strip() or not new.strip():
        return False
    return name_key(old) != name_key(new)
