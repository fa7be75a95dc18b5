"""Capital changes in the generic format: an optional corporate-actions file beside the
prices, and the closes a market's own daily price limit forbids.

**The file** (`ACTIONS_FILE`, `corporate_actions.csv`, in the prices' folder or beside a
prices file, or `<prices>.actions.csv` beside `<prices>.csv`; the importer and the
benchmarks' `--actions` name another): a CSV with a header, columns
`symbol,ex_date,kind,ratio` and optionally `price`, `new_symbol` and `note`, one action a
row:

- `kind`: `split`, `bonus`, `rights`, `consolidation`, `delisting` or `rename` (case,
  spaces, `-` and `_` do not matter; `stock split`, `bonus issue`, `rights issue`,
  `reverse split`, `delisted`, `symbol change`, `ticker change` and `name change` too).
- `ratio` means what the exchange's SPLIT notices mean (ingest.exchange.validation
  `split_factor`, store/splits.py): a number is the shares after per share before; "N for
  M" is N / M for a split or a consolidation ("1 for 10" is 0.1) and (M + N) / M for a
  bonus issue, N new shares for every M held ("1 for 1" doubles the count); "N into M"
  is M / N. The result must lie within 1/1,000 and 1,000 and not be 1, and on the side
  of 1 the kind says: below for a consolidation, above for the others. "N for M" and "N:M"
  are written both ways round ("10:1" for a ten-into-one consolidation), so one the
  other way round is read in the kind's direction; a number or "N into M" that
  contradicts the kind is a bad row (`_directed`).
- `price`: a rights issue's subscription price, or a delisting's value per share; a split,
  bonus issue, consolidation or rename with a price above 0 is a bad row (`_unpriced`: a
  bonus issue at a price is a rights issue).
- `rights`: N new shares for every M held ("N for M") at `price`, the subscription price.
  A holder who sells the rights at their theoretical value keeps the value of the
  position, so positions and prices are adjusted as a split by the last close before the
  ex-date, P, over the theoretical ex-rights price (M P + N S) / (M + N). Without a price
  it is read as a bonus issue (the new shares free: the largest adjustment it can be),
  and a warning says so. One priced at or above P is not applied (no holder takes up a
  right to pay more than the market asks: the count does not change) and a warning says
  so; a rights issue is never stored as a factor below 1.
- `delisting`: `price` is the value per share holders received (a cash offer, or what the
  shares a merger gave were worth), the corporate action that gives a delisted position a
  value (portfolio/delisting.py `Settlement`); a delisting with a ratio is a bad row
  (`_unratioed`, the rename's rule).
- `rename`: the company's ticker changed from `symbol` to `new_symbol` on the ex-date (the
  first session under the new symbol); a rename with a ratio or a price above 0 is a bad
  row (`_unratioed`, `_unpriced`), and a file with a rename needs the `new_symbol` column
  (blank on the other rows). The old symbol's rows before the ex-date
  and the new symbol's from it are one series under the new symbol, the file's other
  actions of the old symbol up to the ex-date apply to it, and a chain, a reused ticker
  and the old symbol's rows after the ex-date are reported (`ingest.importers.renames`,
  applied first, by `capital_changes`, the importer's rows and the replay alike).

The ex-date is the first session on the new count: the bars before it are divided by the
factor and their volumes multiplied (store.panels.split_adjusted, the same adjustment the
model's panel makes for stored splits), so neither a label nor a held position reads a
capital change as a return; the importer stores them as SPLIT corporate actions, which the
ledger, the panels and the liquidity read as T0's SPLIT notices. Several actions of one
name on one ex-date apply as one split, their factors multiplied; a row that repeats
another of the same name, ex-date and kind is counted once and reported, and two such rows
that disagree are refused (`distinct_actions`). The name is the joined series' (the rows
are compared after the renames resolve, `on_joined_series`), so an action listed under
both the old and the new symbol of a rename is one action. A row that cannot be
read refuses the file, named with its file and line (`readable_actions`); a split, bonus
issue, consolidation or rights issue whose factor (a rights issue's P / TERP) does not
explain the name's close by T0's rule (`explains`: prices already adjusted for it) refuses
the import unless accepted as stated (`refuse_adjusted`); an action whose name has no row
on or after the ex-date, or no close before it, is applied and reported.

**Moves beyond the limit** (`MARKETINTEL_DAILY_PRICE_LIMIT`, the benchmarks'
`--price-limit`; off by default): every close further from the name's previous row's
close than the limit plus one tick (market.liquidity's tick schedule: the limit price is
rounded to a tick) is a move the market's own limit forbids. Those the file's actions do
not explain are reported as probable capital changes, each with its implied ratio
(previous close over close), the sessions since the previous row (a name absent for a
while moved from a close some sessions old) and, with `adjust_implied`, adjusted as a
split of that ratio, said so in the report (which lists the largest SHOWN, the largest
moves first; the benchmarks' JSON every one). The implied ratio takes the day's whole
move away, the part within the limit too. Without a stated limit nothing is adjusted, and
the moves past SANITY_BAND (T0's 50% price band, a factor either way: `band_moves`, by
`ingest.exchange.band`'s test) that no action explains are reported the same way
(`CapitalChanges.unexplained`): a misprint or an unadjusted capital change to check.

**A split stored on the wrong day** (`Redated`): a split the store holds of a name dated
from the file's split's ex-date to before its first row on the new count is that split
stored where the rows show the old count (an actions file imported ahead of the rows, an
import before the first-row rule); the importer withdraws it and stores the file's.

**A follow-up import** (`previous_closes`, the importer's `stored`): each name's first row is read against
its last stored row before it, on that row's count, as its previous close (the limit, the
band, `explains` and a rights issue's price), as one import of all the files reads it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path

import pandas as pd

from ingest.exchange.band import band_text, beyond_band, split_explains
from ingest.importers.formats import (
    calendar_day,
    csv_files,
    csv_rows,
    named_rows,
    price_cell,
    repeated_columns,
    ticker,
)
from ingest.importers.renames import RENAME, Handover, Renames, Stored, handovers, join_renames
from market.errors import InvalidInputError
from market.liquidity import tick_size
from market.settings import DELIST_AFTER_SESSIONS
from store.panels import split_adjusted
from store.splits import Split, factor_between

ACTIONS_FILE = "corporate_actions.csv"
ACTIONS_SUFFIX = ".actions.csv"
ACTION_COLUMNS = ("symbol", "ex_date", "kind", "ratio")
HEADER = "symbol,ex_date,kind,ratio[,price,new_symbol,note]"
KINDS = {
    "split": "SPLIT",
    "stocksplit": "SPLIT",
    "bonus": "BONUS",
    "bonusissue": "BONUS",
    "rights": "RIGHTS",
    "rightsissue": "RIGHTS",
    "consolidation": "CONSOLIDATION",
    "reversesplit": "CONSOLIDATION",
    "delisting": "DELISTING",
    "delisted": "DELISTING",
    "rename": RENAME,
    "renamed": RENAME,
    "symbolchange": RENAME,
    "tickerchange": RENAME,
    "namechange": RENAME,
}
# checked against the closes (`refuse_adjusted`): a rights issue by its own adjustment, P / TERP
CHECKED_KINDS = ("SPLIT", "BONUS", "CONSOLIDATION", "RIGHTS")
SHOWN = 25  # probable capital changes listed one a line, the largest moves first; the rest are counted
UNREAD_SHOWN = 3  # unreadable rows of a corporate-actions file named in its refusal (`readable_actions`)
SANITY_BAND = 0.5  # T0's price band (MARKETINTEL_PRICE_BAND's default): a session's move past it is reported
STORED = "_stored"  # the column that marks the store's rows beside the prices (`previous_closes`)
IMPLIED = "implied by a close beyond the daily price limit (previous close over close: the day's whole move)"


def is_actions_file(path: Path) -> bool:
    """A corporate-actions file by its name (never read as prices)."""
    return path.name.lower() == ACTIONS_FILE or path.name.lower().endswith(ACTIONS_SUFFIX)


def price_files(path: Path) -> list[Path]:
    """The .csv files of prices a file or folder holds: every one but a corporate-actions file."""
    path = Path(path)
    files = [path] if path.is_file() else csv_files(path)
    return [f for f in files if not is_actions_file(f)]


def actions_beside(path: Path) -> Path | None:
    """The corporate-actions file beside prices at `path`, where there is one: a folder's
    is its own `corporate_actions.csv`. A folder that holds another actions file (one in a
    year's subfolder, a `prices_2019.actions.csv`, a `Corporate_Actions.csv`) is refused
    (InvalidInputError): such a file is never read as prices, and it was not read as
    actions either, so its splits were not applied and the report said "none beside the
    prices". The importer, the replay and the benchmarks find the file here."""
    path = Path(path)
    if path.is_dir():
        found = path / ACTIONS_FILE
        unread = [str(f) for f in csv_files(path) if is_actions_file(f) and f != found]
        if unread:
            raise InvalidInputError(
                f"{', '.join(unread)}: corporate-actions files that are not read (a folder's actions are its own "
                f"{ACTIONS_FILE}, or the file --actions names): put their rows in one; nothing was imported"
            )
    else:
        own = path.with_name(path.stem + ACTIONS_SUFFIX)  # PRICES.CSV's as prices.csv's
        found = own if own.is_file() else path.with_name(ACTIONS_FILE)
    return found if found.is_file() else None


@dataclass(frozen=True)
class CorporateAction:
    """One row of the file: `factor` is the shares after per share before where the ratio
    says it alone; a rights issue with a price needs the close before its ex-date
    (`split_factor`); a delisting has none and `price` is its value per share; a rename
    has none and `new_symbol` is the symbol from its ex-date on. `listed`: the symbol the
    file's row names, where `Renames.resolve` put the action on another symbol's series (a
    rename's new symbol, a reused ticker's earlier company)."""

    symbol: str
    ex_date: date
    kind: str  # SPLIT, BONUS, RIGHTS, CONSOLIDATION, DELISTING or RENAME
    ratio: str
    factor: float | None
    price: float | None
    where: str  # file:line
    new_symbol: str | None = None  # a rename's
    listed: str | None = None  # the file's symbol, where the action is on another's series
    # a split's first row on the new count, where its ex-date's rows are untraded at the old close
    applied_from: date | None = None

    @property
    def effective(self) -> date:
        """The day the action is applied from: `applied_from` (`on_new_count_actions`), or its ex-date."""
        return self.applied_from or self.ex_date

    def split_factor(self, last_close: float | None) -> float | None:
        """The factor applied: a rights issue's by the last close before the ex-date (None
        without one; 1, no adjustment, where its price is at or above that close: `above_market`),
        every other kind's own."""
        if self.kind != "RIGHTS" or self.price is None or self.factor is None:
            return self.factor
        if last_close is None or last_close <= 0:
            return None
        if self.above_market(last_close):
            return 1.0
        new_per_old = self.factor - 1  # N / M
        return last_close * (1 + new_per_old) / (last_close + new_per_old * self.price)

    def above_market(self, last_close: float) -> bool:
        """A rights issue priced at or above the last close before its ex-date: no holder
        takes up a right to pay more than the market asks, so the rights are worth nothing
        and the count does not change. Its theoretical ex-rights price was above the close,
        a factor below 1 stored as a consolidation (101 shares became 84, a realised loss)."""
        return self.kind == "RIGHTS" and self.price is not None and self.price >= last_close

    def text(self) -> str:
        if self.kind == RENAME:
            return f"{self.symbol} {self.ex_date.isoformat()} rename to {self.new_symbol}"
        priced = f" at {self.price:g}" if self.price is not None else ""
        return f"{self.symbol} {self.ex_date.isoformat()} {self.kind.lower()} {self.ratio}{priced}".replace("  ", " ")

    def row(self) -> str:
        """The file's row as a person finds it: file:line, what it says, and the series it
        applies to where that is another symbol's."""
        if self.listed is None:
            return f"{self.where} ({self.text()})"
        return f"{self.where} ({replace(self, symbol=self.listed).text()}, on {self.symbol}'s series)"


def read_actions(path: Path) -> tuple[list[CorporateAction], list[str]]:
    """The file's actions and its unreadable rows (file:line: reason); InvalidInputError for
    a file whose header lacks a required column (a binary file, the prices named by mistake):
    the prices would be stored or replayed unadjusted."""
    rows = csv_rows(Path(path))
    header = [h.strip().lower() for h in next(rows, (1, []))[1]]
    missing = [c for c in ACTION_COLUMNS if c not in header]
    if missing:  # not a corporate-actions file: nothing of it can adjust the prices
        raise InvalidInputError(
            f"{path}:1: not a corporate-actions file: its header lacks the columns {missing} ({HEADER})"
        )
    if repeated_columns(header):
        raise InvalidInputError(f"{path}:1: the header names the columns {repeated_columns(header)} more than once")
    actions, bad = [], []
    for line, row in named_rows(rows, header):
        try:
            if isinstance(row, str):
                raise ValueError(row)
            actions.append(_action(row, f"{path}:{line}"))
        except ValueError as exc:
            bad.append(f"{path}:{line}: {exc}")
    return actions, bad


def readable_actions(path: Path) -> list[CorporateAction]:
    """The file's actions (`read_actions`); InvalidInputError where a row cannot be read,
    naming the first UNREAD_SHOWN with file and line: the capital change such a row
    carries cannot be applied, so the prices would be stored, replayed or measured on the
    old count before its ex-date (a 2-for-1 bonus issue read as a 50% loss, a holder valued
    at half). Reported as a bad row beside an import that went on, it was lost all the
    same and the command exited 0."""
    actions, bad = read_actions(path)
    if bad:
        shown = "; ".join(bad[:UNREAD_SHOWN]) + (
            f"; ... and {len(bad) - UNREAD_SHOWN} more" if len(bad) > UNREAD_SHOWN else ""
        )
        raise InvalidInputError(
            f"{len(bad)} row{'s' if len(bad) > 1 else ''} of the corporate-actions file cannot be read: {shown}. "
            "The capital change a row carries would be lost (the closes before it read on the old count): correct "
            "or remove the row and run again; nothing was read or stored"
        )
    return actions


def distinct_actions(actions: list[CorporateAction]) -> tuple[list[CorporateAction], list[str]]:
    """The file's actions with each symbol, ex-date and kind once, and a line for each row
    that repeats an earlier one (the same factor, price and new symbol: `2:1` and `2 for 1`
    alike), counted once: applied twice, a repeated `split 2:1` was a 4-for-1 split. Two
    such rows that disagree are refused (InvalidInputError naming both), as nothing in the
    file says which is right; several actions of one kind on one day are one row. The
    symbol is the series' (`on_joined_series` calls it after the renames resolve)."""
    first: dict[tuple, CorporateAction] = {}
    kept, repeated, disagree = [], [], []
    for action in actions:
        seen = first.setdefault((action.symbol, action.ex_date, action.kind), action)
        if seen is action:
            kept.append(action)
        elif (seen.factor, seen.price, seen.new_symbol) == (action.factor, action.price, action.new_symbol):
            repeated.append(f"{action.where} repeats {seen.row()}: counted once")
        else:
            disagree.append(f"{seen.row()} and {action.row()}")
    if disagree:
        raise InvalidInputError(
            "two corporate actions of one kind for one symbol and ex-date that disagree: "
            + "; ".join(disagree)
            + ": keep the row that is right (one row per symbol, ex-date and kind); nothing was imported"
        )
    return kept, repeated


@dataclass(frozen=True)
class JoinedSeries:
    """Prices with the file's renames joined, and the file's actions on the joined series,
    each once (`on_joined_series`)."""

    prices: pd.DataFrame
    renames: Renames
    actions: tuple[CorporateAction, ...]
    repeated: tuple[str, ...]  # the rows counted once (`distinct_actions`)


def on_joined_series(
    prices: pd.DataFrame,
    actions: list[CorporateAction],
    after_sessions: int = DELIST_AFTER_SESSIONS,
    stored: Stored | None = None,
) -> JoinedSeries:
    """`prices` with the file's renames applied (`join_renames`) and the file's actions on
    the joined series (`Renames.resolve`), each once (`distinct_actions`), the importer's,
    the replay's and the benchmarks' rule. The repeats are found after the renames resolve:
    an action listed under both the old and the new symbol of a rename is one action of the
    joined series, counted once (applied twice, a 2-for-1 split was a SPLIT of 4, and a
    delisting stored twice failed the import after its prices), or refused where the two
    rows disagree. The join reads the rename rows, so they are made distinct first.
    `stored`: what the store holds that a reused ticker is looked for across (`join_renames`)."""
    renames, _ = distinct_actions([a for a in actions if a.kind == RENAME])
    joined, applied = join_renames(prices, renames, after_sessions, stored)
    distinct, repeated = distinct_actions(applied.resolve(actions))
    return JoinedSeries(joined, applied, tuple(distinct), tuple(repeated))


def _action(row: dict[str, str], where: str) -> CorporateAction:
    symbol = ticker(row["symbol"])
    ex_date = calendar_day(row["ex_date"], "ex_date")
    kind = KINDS.get(re.sub(r"[\s_-]", "", row["kind"].lower()))
    if kind is None:
        raise ValueError(f"kind '{row['kind']}' is not one of split, bonus, rights, consolidation, delisting, rename")
    new_symbol = row.get("new_symbol", "").strip().upper()
    if kind == RENAME:
        renamed_to = _new_symbol(symbol, new_symbol, row)
        _unratioed(kind, row)
        _unpriced(kind, _price(row.get("price", "")), row)
        return CorporateAction(symbol, ex_date, kind, "", None, None, where, renamed_to)
    if new_symbol:
        raise ValueError(f"new_symbol '{new_symbol}' is a rename's; this row is a {kind.lower()}")
    price = _price(row.get("price", ""))
    if kind == "DELISTING":
        _unratioed(kind, row)
        return CorporateAction(symbol, ex_date, kind, "", None, price if price is not None else 0.0, where)
    factor = _factor(kind, row["ratio"])
    return CorporateAction(symbol, ex_date, kind, row["ratio"], factor, _unpriced(kind, price, row), where)


def _unpriced(kind: str, price: float | None, row: dict[str, str]) -> float | None:
    """A rights issue's price; a split, bonus issue, consolidation or rename at a price above
    0 is a bad row: only a rights issue's new shares are paid for (a bonus issue at a price
    is a rights issue), and stored as free shares its price was lost without a word; a
    rename moves a holding to the new symbol and pays nothing (a value paid per share is a
    delisting's), and applied as a rename its price was lost the same way."""
    if kind == "RIGHTS" or not price:
        return price if kind == "RIGHTS" else None
    cell = row["price"].strip()
    if kind == RENAME:
        raise ValueError(
            f"price '{cell}' on a rename: a rename has no price (the shares carry on under the new symbol; a value "
            "paid per share is a delisting, kind delisting); leave the price blank"
        )
    if kind == "BONUS":
        raise ValueError(
            f"price '{cell}' on a bonus issue: a bonus issue at a price is a rights issue (kind rights, the price "
            "its subscription price); a bonus issue's shares are free: leave the price blank"
        )
    raise ValueError(
        f"price '{cell}' on a {kind.lower()}: a {kind.lower()} has no price (new shares sold at a price are a "
        "rights issue, kind rights); leave the price blank"
    )


def _new_symbol(symbol: str, new_symbol: str, row: dict[str, str]) -> str:
    """A rename's new symbol: its `new_symbol` cell, neither blank nor the old symbol, on a
    row whose ratio is blank (`_unratioed`)."""
    if "new_symbol" not in row:
        hint = f"; ratio '{row['ratio']}' is not read for a rename" if row["ratio"] else ""
        raise ValueError(f"a rename needs a new_symbol column ({HEADER}){hint}")
    if not new_symbol:
        raise ValueError("a rename without a new_symbol")
    if new_symbol == symbol:
        raise ValueError(f"a rename of {symbol} to {new_symbol}: the same symbol, nothing changes")
    return ticker(new_symbol, "new_symbol")


UNRATIOED = {  # the kinds without a ratio, and what their row says instead
    RENAME: "",
    "DELISTING": "its price is the value per share holders received; ",
}


def _unratioed(kind: str, row: dict[str, str]) -> None:
    """A rename or a delisting with a ratio is a bad row: neither changes a share count (a
    capital change on its ex-date is a row of its own), and read as a plain rename or a
    delisting at its price, the ratio written on its row was lost without a word."""
    if kind in UNRATIOED and row["ratio"].strip():
        name = "a rename" if kind == RENAME else "a delisting"
        raise ValueError(
            f"ratio '{row['ratio'].strip()}' on {name}: {name} has no ratio ({UNRATIOED[kind]}a capital change on "
            "its ex-date is a row of its own, kind split, bonus or consolidation); leave the ratio blank"
        )


def _price(text: str) -> float | None:
    """An action's price: a price file's rule (`formats.price_cell`)."""
    return price_cell(text, "price") if text else None


def _factor(kind: str, ratio: str) -> float:
    """Shares after per share before, as a SPLIT notice's ratio reads (split_factor)."""
    # imported here: the exchange's validation imports the importers' formats, whose package imports this module
    from ingest.exchange.validation import MAX_SPLIT, MIN_SPLIT, split_factor

    number = None
    try:
        number = float(ratio)
    except ValueError:
        pass
    if number is not None and kind == "RIGHTS":
        raise ValueError(f"a rights issue's ratio is 'N for M' (N new shares for every M held), not '{ratio}'")
    detail = f"bonus {ratio}" if kind in ("BONUS", "RIGHTS") else ratio
    factor = number if number is not None else split_factor({"amount": None, "detail": detail})
    if factor is None or not math.isfinite(factor):
        raise ValueError(f"ratio '{ratio}' is not a number, 'N for M' or 'N into M'")
    if not MIN_SPLIT <= factor <= MAX_SPLIT or factor == 1:
        raise ValueError(f"ratio '{ratio}' gives {factor:g} shares per share: not a capital change")
    return _directed(kind, ratio, factor, turnable=number is None and not re.search(r"\binto\b", ratio, re.I))


def _directed(kind: str, ratio: str, factor: float, *, turnable: bool) -> float:
    """`factor` on the side of 1 its kind says: a consolidation leaves fewer shares (below
    1), a split, a bonus or a rights issue more (above 1). A ratio "N for M" or "N:M" is
    written both ways round (a consolidation's "10:1", ten old shares into one new, is its
    "1 for 10"), so one the other way round is read in the kind's direction; a number and
    "N into M" say their direction themselves, so one that contradicts the kind is refused
    (a `reverse split 10:1` was stored as a 10-for-1 split, a `bonus 0.5` as a halving)."""
    fewer = kind == "CONSOLIDATION"
    if (factor < 1) == fewer:
        return factor
    if turnable:
        return 1 / factor
    side = "below 1, fewer shares" if fewer else "above 1, more shares"
    raise ValueError(
        f"ratio '{ratio}' gives {factor:g} shares per share, but a {kind.lower()}'s is {side}: "
        "correct the ratio or the kind"
    )


@dataclass(frozen=True)
class LimitMove:
    """A close beyond the daily price limit from the name's previous row's close."""

    symbol: str
    day: date
    previous_day: date
    previous_close: float
    close: float
    sessions: int  # since the previous row (1: the session after it)

    @property
    def move(self) -> float:
        return self.close / self.previous_close - 1

    @property
    def implied_factor(self) -> float:
        """Shares after per share before that would leave the close where the previous was."""
        return self.previous_close / self.close

    def line(self) -> str:
        gap = f", {self.sessions} sessions after its previous row" if self.sessions > 1 else ""
        return (
            f"{self.symbol} {self.day.isoformat()}: {self.previous_close:g} -> {self.close:g} ({self.move:+.1%}{gap}); "
            f"implied ratio {self.implied_factor:.4g} shares per share"
        )


LIMIT_SETTING = "MARKETINTEL_DAILY_PRICE_LIMIT"  # the setting the import reads the limit from


@dataclass(frozen=True)
class CapitalChanges:
    """What a source's capital changes were and what was done about them (module docstring):
    the actions read (on the joined series: `Renames.resolve`), the renames and the splits
    applied, the unreadable rows and the warnings, and the moves beyond the daily price
    limit: `explained` by an action, `beyond` none explains."""

    actions_file: str | None
    actions: tuple[CorporateAction, ...] = ()
    renames: Renames = Renames()  # applied, in ex-date order (`symbol_on`), and reported
    applied: tuple[Split, ...] = ()  # every split applied, the file's and the implied ones, by ex-date
    implied: tuple[Split, ...] = ()  # of them, those adjusted for a move beyond the limit
    repeated: tuple[str, ...] = ()  # rows that repeat an earlier one on the joined series, counted once
    warnings: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()  # splits applied from a later row than their ex-date (`on_new_count_actions`)
    redated: tuple[Redated, ...] = ()  # stored splits on a day the rows show on the old count, withdrawn
    limit: float | None = None
    limit_from: str = LIMIT_SETTING  # how the caller's user states the limit, named when none is
    explained: int = 0
    beyond: tuple[LimitMove, ...] = ()
    # Without a stated limit: the moves beyond SANITY_BAND no action explains, reported and
    # never adjusted (a 100x misprint or an unadjusted split would otherwise pass unsaid)
    unexplained: tuple[LimitMove, ...] = ()
    # Names whose rows end the session before another's begin at a like close: a ticker
    # change without a rename row, or a vendor's new spelling (reported, never joined)
    handovers: tuple[Handover, ...] = ()
    # Jumps beyond T0's band where the rows read meet the stored ones after them
    # (`seam_moves`), each on a warning line: counted beside the moves above, not in them
    seams: int = 0

    @property
    def settlements(self) -> list[CorporateAction]:
        """The file's delistings: the value per share holders received."""
        return [a for a in self.actions if a.kind == "DELISTING"]

    def symbol_on(self, symbol: str, day: date) -> str:
        """The symbol a row of the files under `symbol` on `day` is stored and read under."""
        return self.renames.symbol_on(symbol, day)

    def lines(self) -> list[str]:
        """The report, one line each, as the importer and the benchmarks print it."""
        named = self.actions_file or "none beside the prices"
        renamed = any(a.kind == RENAME for a in self.actions)
        out = [
            f"corporate actions: {named}; {len(self.actions)} read, "
            f"{len(self.applied) - len(self.implied)} splits applied"
            + (f", {len(self.renames.applied)} renames applied" if renamed else "")
            + (f", {len(self.renames.kept)} stored as RENAME actions (no row moved)" if self.renames.kept else "")
        ]
        out += self.renames.lines()
        out += [f"applied later: {m}" for m in self.moved]
        out += [f"re-dated: {r.line()}" for r in self.redated]
        out += [h.line() for h in self.handovers]
        out += [f"repeated row: {r}" for r in self.repeated]
        out += [f"warning: {w}" for w in self.warnings]
        if self.limit is None:
            out.append(
                f"moves beyond the daily price limit: no limit stated ({self.limit_from}); "
                f"moves beyond T0's band ({band_text(SANITY_BAND)}) in a session that no action explains: "
                f"{len(self.unexplained)} "
                "(not adjusted: misprints or capital changes to check)" + self._seams_counted()
            )
            return out + largest_moves(self.unexplained)
        out.append(
            f"moves beyond the daily price limit of {self.limit:.1%} (and a tick): "
            f"{self.explained + len(self.beyond)}; "
            f"explained by the corporate actions {self.explained}; probable capital changes {len(self.beyond)} "
            + ("(each adjusted as a split with its implied ratio)" if self.implied else "(not adjusted)")
            + self._seams_counted()
        )
        return out + largest_moves(self.beyond)

    def _seams_counted(self) -> str:
        """The count line's note of the seam jumps, which the warnings above name: a count of
        0 under a warning naming a +100% jump read as a contradiction."""
        if not self.seams:
            return ""
        return (
            f"; and {self.seams} beyond T0's band where this import's rows meet the stored ones after them "
            "(not adjusted: the warnings above name them)"
        )


def largest_moves(moves: Sequence[LimitMove]) -> list[str]:
    """The SHOWN largest moves, one line each, and how many more there are (the importer's
    report and the replay's, `ReplaySource.lines`)."""
    largest = sorted(moves, key=lambda m: -abs(math.log(m.close / m.previous_close)))
    out = [f"  {m.line()}" for m in largest[:SHOWN]]
    if len(moves) > SHOWN:
        out.append(f"  ... and {len(moves) - SHOWN} more, smaller")
    return out


def previous_closes(stored: Stored, prices: pd.DataFrame, filed: set[tuple[str, date]]) -> pd.DataFrame:
    """Each name of `prices`'s last `stored` row before its first row there (symbol, date,
    close), its close on the count of that first row: divided by `factor_between` the
    stored splits between the two days, but those the file's actions state (`filed`, which
    the file applies). The previous close of a follow-up import's first row, as one import
    of both files reads it: checked against its own rows only, a nightly file's unadjusted
    split on its first day passed the limit and the band unsaid, and a rights issue on it
    had "no close before the ex-date"."""
    rows = stored.rows[stored.rows["close"].notna() & (stored.rows["close"] > 0)]
    first = prices.groupby("symbol")["date"].min()
    rows = rows[rows["symbol"].isin(first.index)]
    last = rows[rows["date"] < rows["symbol"].map(first)].sort_values("date").groupby("symbol").tail(1)
    splits = [s for s in stored.splits if (s.symbol, s.ex_date) not in filed]
    factors = [factor_between(splits, r.symbol, r.date, first[r.symbol]) for r in last.itertuples()]
    return last[["symbol", "date"]].assign(close=last["close"].to_numpy(dtype=float) / factors)


def seam_moves(prices: pd.DataFrame, stored: Stored | None, actions: list[CorporateAction]) -> list[str]:
    """A line for each name whose last row in `prices` and the first `stored` row the
    files gave after it (its close on that row's count: times `factor_between` the stored
    splits between the two days) lie beyond T0's band (`beyond_band`): a follow-up whose
    rows sit before stored ones (a history resent on another count, a correction misprinted)
    was read against the stored close before it only, and the jump to the one after was
    stored unsaid. A name with an action of the file between the two days is not read (the
    file's split explains it). Stored as given: either side may be the one in error."""
    if stored is None or stored.rows.empty or prices.empty:
        return []
    given = stored.rows[~stored.rows["filled"].astype(bool)] if "filled" in stored.rows else stored.rows
    last = prices.sort_values("date").groupby("symbol").tail(1).set_index("symbol")
    after = given[given["symbol"].isin(last.index) & (given["date"] > given["symbol"].map(last["date"]))]
    lines = []
    for row in after.sort_values("date").groupby("symbol").head(1).itertuples():
        day, close = last.at[row.symbol, "date"], float(last.at[row.symbol, "close"])
        if any(a.symbol == row.symbol and day < a.effective <= row.date for a in actions):
            continue
        then = float(row.close) * factor_between(stored.splits, row.symbol, day, row.date)
        if close > 0 and then > 0 and beyond_band(close, then, SANITY_BAND):
            lines.append(
                f"{row.symbol} {row.date}: {close:g} on {day} (this import's last row) -> {then:g} stored "
                f"({then / close - 1:+.1%}), beyond T0's band ({band_text(SANITY_BAND)}): this import's rows and the "
                "stored ones after them read a move the market may not have made (a history resent on another "
                "count, or a misprint either side): stored as given, check the file against the stored close after it"
            )
    return lines


def _with_previous(prices: pd.DataFrame, stored: Stored | None, actions: list[CorporateAction]) -> pd.DataFrame:
    """`prices` with each name's previous stored close before its first row (`previous_closes`),
    those rows marked in the STORED column."""
    filed = {(a.symbol, a.effective) for a in actions if a.kind not in ("DELISTING", RENAME)}
    parts = [prices.assign(**{STORED: False})]
    if stored is not None and not prices.empty and not stored.rows.empty:
        parts.insert(0, previous_closes(stored, prices, filed).assign(**{STORED: True}))
    return pd.concat([p for p in parts if not p.empty] or parts, ignore_index=True)


def _with_stored(prices: pd.DataFrame, stored: Stored | None) -> pd.DataFrame:
    """`prices` (symbol, date, close, volume) and the `stored` rows the files gave (not the
    importer's no-trade rows of a gap, `filled`, which are the ex-date's count) of days they
    lack: the series a split's first row on the new count is looked for in
    (`on_new_count_actions`), so a follow-up import finds the one the first import found."""
    if stored is None or stored.rows.empty or "volume" not in prices.columns:
        return prices
    given = stored.rows[~stored.rows["filled"].astype(bool)] if "filled" in stored.rows else stored.rows
    rows = given.reindex(columns=["symbol", "date", "close", "volume"])
    kept = ~pd.MultiIndex.from_frame(rows[["symbol", "date"]]).isin(
        pd.MultiIndex.from_frame(prices[["symbol", "date"]])
    )
    return pd.concat([rows[kept], prices[["symbol", "date", "close", "volume"]]], ignore_index=True)


@dataclass(frozen=True)
class Given:
    """What an import brings beside its files (`capital_changes`): the store's rows
    (`renames.Stored`; None: none) and the (symbol, ex-date) of the capital changes taken as
    stated though the closes do not show them (`refuse_adjusted`)."""

    stored: Stored | None = None
    accepted: frozenset[tuple[str, date]] = frozenset()


def capital_changes(
    prices: pd.DataFrame,
    actions_path: Path | None,
    limit: float | None = None,
    adjust_implied: bool = False,
    after_sessions: int = DELIST_AFTER_SESSIONS,
    limit_from: str = LIMIT_SETTING,
    given: Given | None = None,
) -> tuple[pd.DataFrame, CapitalChanges]:
    """`prices` (symbol, date, close, and any of volume, high, low, bid, ask and name) on
    the count of their latest rows: adjusted for the actions of `actions_path` and, with
    `adjust_implied`, for the moves beyond `limit` they do not explain; and the report. The
    file's renames come first, then the reused tickers (a name that changes across
    `after_sessions` sessions without a row, the delisting rule's) are split: every row
    under the symbol it belongs to (`join_renames`). The `name` column is read, not kept.
    `limit_from`: how the caller's user states the limit (the setting; the benchmarks' flag
    too), named where none is. `given` (`Given`): `stored`, what the store holds that a reused ticker is
    looked for across (the importer's; `renames.Stored`), and whose last row before each
    name's first row is that row's previous close (`previous_closes`: a follow-up import
    is checked as one import of both files is; the stored rows are never returned), and
    `accepted`, the (symbol, ex-date) of the capital changes taken as stated though the
    closes do not show them (`refuse_adjusted`)."""
    given = given or Given()
    stored = given.stored
    if adjust_implied and limit is None:
        raise InvalidInputError(f"adjusting for moves beyond the daily price limit needs the limit ({limit_from})")
    read = readable_actions(actions_path) if actions_path is not None else []
    joined = on_joined_series(prices, read, after_sessions, stored)
    prices, renames, actions = joined.prices.drop(columns="name", errors="ignore"), joined.renames, list(joined.actions)
    counted = on_new_count_actions(_with_stored(prices, stored), actions, stored.splits if stored else ())
    actions, stored = counted.actions, _withdrawn(stored, counted.redated)
    refuse_readjusted(prices, stored, counted.applicable, given.accepted)
    checked = _with_previous(prices, stored, counted.applicable)
    unchecked = refuse_adjusted(checked, counted.applicable, given.accepted)
    splits, warnings = file_splits(checked, counted.applicable)
    sessions = stored.sessions if stored is not None else frozenset()
    moves = adjusted_moves(checked, splits, limit, adjust_implied, sessions)
    seams = seam_moves(prices, stored, counted.applicable)
    report = CapitalChanges(
        actions_file=str(actions_path) if actions_path is not None else None,
        actions=tuple(actions),
        renames=renames,
        applied=tuple(sorted([*splits, *moves.implied], key=lambda s: (s.ex_date, s.symbol))),
        implied=moves.implied,
        repeated=joined.repeated,
        warnings=(*renames.warnings, *counted.waiting(), *unchecked, *warnings, *moves.overlaid, *seams),
        moved=tuple(counted.moved),
        redated=tuple(counted.redated),
        limit=limit,
        limit_from=limit_from,
        explained=moves.explained,
        beyond=moves.beyond,
        unexplained=moves.unexplained,
        handovers=tuple(h for h in handovers(prices) if (h.old, h.new) not in {(r.old, r.new) for r in renames.kept}),
        seams=len(seams),
    )
    return moves.adjusted, report


@dataclass(frozen=True)
class Moves:
    """The prices adjusted for the file's splits and, where asked, the implied ones
    (`adjusted`, the store's rows beside them dropped), and the moves read on them
    (`adjusted_moves`): `explained` by the file's actions, `beyond` the limit, `unexplained`
    past T0's band without a limit, `implied` splits and the warnings they leave (`overlaid`)."""

    adjusted: pd.DataFrame
    implied: tuple[Split, ...] = ()
    overlaid: tuple[str, ...] = ()
    explained: int = 0
    beyond: tuple[LimitMove, ...] = ()
    unexplained: tuple[LimitMove, ...] = ()


def adjusted_moves(
    checked: pd.DataFrame, splits: list[Split], limit: float | None, adjust_implied: bool, sessions: frozenset[date]
) -> Moves:
    """`checked` (the prices with the store's previous closes, `_with_previous`) adjusted for
    `splits`, the moves beyond `limit` (or, without one, past T0's band) that they leave and,
    with `adjust_implied`, those moves adjusted as splits of their implied ratios."""
    adjusted = split_adjusted(checked, splits)
    raw = limit_moves(checked, limit, sessions) if limit is not None else []
    beyond = limit_moves(adjusted, limit, sessions) if limit is not None else []
    unexplained = tuple(band_moves(adjusted, SANITY_BAND, sessions)) if limit is None else ()
    implied, overlaid = _implied(beyond, splits) if adjust_implied else ((), [])
    if implied:
        adjusted = split_adjusted(adjusted, list(implied))
    adjusted = adjusted[~adjusted[STORED].astype(bool)].drop(columns=STORED).reset_index(drop=True)
    still = {(m.symbol, m.day) for m in beyond}
    explained = sum(1 for m in raw if (m.symbol, m.day) not in still)
    return Moves(adjusted, implied, tuple(overlaid), explained, tuple(beyond), unexplained)


def _withdrawn(stored: Stored | None, redated: list[Redated]) -> Stored | None:
    """`stored` less the splits this import withdraws (`Redated`): a follow-up import's
    previous close is read on the count the store will hold."""
    if stored is None or not redated:
        return stored
    gone = {r.split for r in redated}
    return replace(stored, splits=tuple(s for s in stored.splits if s not in gone))


def _implied(beyond: list[LimitMove], splits: list[Split]) -> tuple[tuple[Split, ...], list[str]]:
    """The moves beyond the limit as splits of their implied ratios, but for those on a
    name's ex-date in the file: the file's row wins, and a warning says the move it leaves
    (stored beside it, the implied split was a second SPLIT of one name and day, and the
    import failed after its prices were written)."""
    filed = {(s.symbol, s.ex_date) for s in splits}
    implied = tuple(Split(m.symbol, m.day, m.implied_factor) for m in beyond if (m.symbol, m.day) not in filed)
    overlaid = [
        f"{m.symbol} {m.day.isoformat()}: the file's action leaves a move beyond the limit on its ex-date "
        f"({m.previous_close:g} -> {m.close:g} on the new count); the file's is applied, not the implied ratio "
        f"{m.implied_factor:.4g} (correct the file's row if it is wrong)"
        for m in beyond
        if (m.symbol, m.day) in filed
    ]
    return implied, overlaid


def file_splits(prices: pd.DataFrame, actions: list[CorporateAction]) -> tuple[list[Split], list[str]]:
    """The file's actions as splits (one per name and ex-date), with a warning for each one
    that has no row on or after its ex-date, cannot be priced (rights) or does not explain
    the name's close (its delistings and renames are no splits), and for each delisting
    whose name trades on after its ex-date (`traded_on`)."""
    closes = _by_symbol(prices)
    factors: dict[tuple[str, date], float] = {}
    warnings = []
    for action in actions:
        if action.kind in ("DELISTING", RENAME):
            continue
        bars = closes.get(action.symbol)
        after = bars[bars["date"] >= action.effective] if bars is not None else None
        last = _around(bars, action).last
        factor = action.split_factor(last)
        if factor is None:
            warnings.append(
                f"{action.where}: {action.text()}: no close before the ex-date to price the rights; not applied"
            )
            continue
        if last is not None and action.above_market(last):
            warnings.append(
                f"{action.where}: {action.text()}: the subscription price is at or above the last close before the "
                f"ex-date ({last:g}): no holder takes the rights up; not applied (no adjustment)"
            )
            continue
        if action.kind == "RIGHTS" and action.price is None:
            warnings.append(f"{action.where}: {action.text()}: no subscription price; adjusted as a bonus issue")
        if after is None or after.empty:
            warnings.append(f"{action.where}: {action.text()}: {action.symbol} has no row on or after the ex-date")
        elif last is not None and not explains(last, float(after["close"].iloc[0]), factor):
            close = float(after["close"].iloc[0])
            warnings.append(
                f"{action.where}: {action.text()}: does not explain the close ({last:g} -> {close:g}; "
                f"{close * factor / last - 1:+.1%} on the new count)"
            )
        key = (action.symbol, action.effective)
        factors[key] = factors.get(key, 1.0) * factor
    splits = [Split(symbol, day, factor) for (symbol, day), factor in factors.items() if factor != 1.0]
    return splits, warnings + traded_on(prices, actions)


def traded_on(prices: pd.DataFrame, actions: list[CorporateAction]) -> list[str]:
    """A warning for each delisting whose name has rows in the files on or after its
    ex-date (a wrong ex-date, or another name's rows): the name stays listed while it has
    rows and is delisted from the day after its last (`files._delisted`), and the import
    stored both unsaid, the notice's date and price beside the sessions it traded."""
    closes, out = _by_symbol(prices), []
    for action in (a for a in actions if a.kind == "DELISTING"):
        bars = closes.get(action.symbol)
        after = bars[bars["date"] >= action.ex_date]["date"] if bars is not None else pd.Series(dtype=object)
        if len(after):
            first, last = after.iloc[0], after.iloc[-1]
            out.append(
                f"{action.where}: {action.text()}: {action.symbol} has {len(after)} row{'s' if len(after) > 1 else ''} "
                f"on or after the ex-date ({first.isoformat()} to {last.isoformat()}): it stays listed while it has "
                f"rows and is delisted from the day after its last ({(last + timedelta(days=1)).isoformat()}); "
                "correct the ex-date, or the rows, if they are wrong"
            )
    return out


def explains(previous: float, close: float, factor: float) -> bool:
    """T0's test of a SPLIT notice (`ingest.exchange.band.split_explains`) at T0's band."""
    return split_explains(previous, close, factor, SANITY_BAND)


@dataclass(frozen=True)
class Around:
    """A name's closes either side of a capital change's day (`effective`): the last
    before it and the first on or after it, each with its day; None where there is none."""

    last: float | None = None
    last_day: date | None = None
    first: float | None = None
    first_day: date | None = None

    def text(self) -> str:
        return f"{self.last:g} on {self.last_day} and {self.first:g} on {self.first_day}"


def _by_symbol(prices: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {s: part.sort_values("date") for s, part in prices[["symbol", "date", "close"]].groupby("symbol")}


def _around(bars: pd.DataFrame | None, action: CorporateAction | Split) -> Around:
    """`bars`' closes either side of `action`'s day: a file's action's `effective` day, a
    stored split's ex-date."""
    if bars is None:
        return Around()
    day = action.effective if isinstance(action, CorporateAction) else action.ex_date
    before, after = bars[bars["date"] < day], bars[bars["date"] >= day]
    last = (float(before["close"].iloc[-1]), before["date"].iloc[-1]) if len(before) else (None, None)
    first = (float(after["close"].iloc[0]), after["date"].iloc[0]) if len(after) else (None, None)
    return Around(*last, *first)


def accepted_actions(given: Sequence[str]) -> frozenset[tuple[str, date]]:
    """The `SYMBOL:EX_DATE` of the actions taken as stated (`refuse_adjusted`);
    InvalidInputError for one that is not a symbol and an ISO date."""
    accepted = set()
    for text in given:
        symbol, _, day = text.partition(":")
        try:
            accepted.add((ticker(symbol), date.fromisoformat(day.strip())))
        except ValueError:
            raise InvalidInputError(f"--accept-action {text!r}: expected SYMBOL:EX_DATE, e.g. ABC:2024-03-06") from None
    return frozenset(accepted)


def refuse_adjusted(
    prices: pd.DataFrame, actions: list[CorporateAction], accepted: frozenset[tuple[str, date]] = frozenset()
) -> list[str]:
    """InvalidInputError, before anything is stored, for each split, bonus issue,
    consolidation or rights issue whose ex-date shows no move of its ratio in the closes
    (T0's rule, `explains`; a rights issue's ratio is its adjustment, P / TERP by the last
    close before the ex-date, `CorporateAction.split_factor`): prices a vendor has already
    adjusted, on which the change would multiply every holder's shares and show a move the
    market never made; the (symbol, ex-date) `accepted` are taken as stated. A rights issue
    that is not applied (priced at or above that close, or without one) is not judged.
    Returns a line for each one that cannot be checked,
    its name without a close before its day (applied as stated, as before)."""
    closes, refused, unchecked = _by_symbol(prices), [], []
    for action in (a for a in actions if a.kind in CHECKED_KINDS and a.factor):
        around = _around(closes.get(action.symbol), action)
        factor = action.split_factor(around.last)
        if factor is None or factor == 1.0:
            continue  # a priced rights issue without a close before it, or above it: not applied (`file_splits`)
        if around.last is None:
            unchecked.append(
                f"{action.where}: {action.text()}: {action.symbol} has no close before the ex-date: its ratio "
                "cannot be checked against the closes; applied as stated"
            )
        elif around.first is not None and (action.symbol, action.ex_date) not in accepted:
            if not explains(around.last, around.first, factor):
                refused.append(f"{action.row()}: the closes either side of its ex-date, {around.text()}")
    if refused:
        raise InvalidInputError(
            f"{len(refused)} capital change{'s' if len(refused) > 1 else ''} of the corporate-actions file the "
            f"closes do not show: {'; '.join(refused)}: no move of the ratio (T0's rule): the prices look already "
            "adjusted for it, and applied again it would multiply every holder's shares and show a move that never "
            "happened. Remove the row if the prices are adjusted, or take it as stated with --accept-action "
            "SYMBOL:EX_DATE; nothing was imported"
        )
    return unchecked


def refuse_readjusted(
    prices: pd.DataFrame, stored: Stored | None, filed: list[CorporateAction], accepted: frozenset[tuple[str, date]]
) -> None:
    """InvalidInputError, before anything is stored, for each split the store holds of the
    imported names whose ex-date the stored closes show (T0's rule, `explains`) and the
    closes would no longer show with this import's rows in place of the stored ones
    (`_with_stored`): a vendor's history resent already adjusted for it. Stored as
    corrections, the split still applying to them, they read as a move of its ratio the
    market never made (a +100% day at a 2-for-1 split's ex-date) in the returns, the
    model's labels and a holder's past values. A split the file states (`refuse_adjusted`
    judges it) and the (symbol, ex-date) `accepted` are not judged here."""
    if stored is None or stored.rows.empty or prices.empty:
        return
    judged = {(a.symbol, a.effective) for a in filed} | accepted
    given = stored.rows[~stored.rows["filled"].astype(bool)] if "filled" in stored.rows else stored.rows
    was = _by_symbol(given)
    now = _by_symbol(_with_stored(prices, stored))
    refused = []
    for split in (s for s in stored.splits if s.factor != 1 and (s.symbol, s.ex_date) not in judged):
        before, after = _around(was.get(split.symbol), split), _around(now.get(split.symbol), split)
        if None in (before.last, before.first, after.last, after.first) or before == after:
            continue
        if explains(before.last, before.first, split.factor) and not explains(after.last, after.first, split.factor):
            refused.append(
                f"{split.symbol} {split.ex_date} SPLIT {split.factor:g}: the closes either side of its ex-date would "
                f"be {after.text()} (stored: {before.last:g} and {before.first:g})"
            )
    if refused:
        raise InvalidInputError(
            f"{len(refused)} stored split{'s' if len(refused) > 1 else ''} this import's closes no longer show: "
            f"{'; '.join(refused)}: the files' prices look already adjusted for it, and stored over the unadjusted "
            "ones the split would adjust them again (a move of its ratio the market never made). Import prices on "
            "the count of their day, or keep the split over these closes with --accept-action SYMBOL:EX_DATE; "
            "nothing was imported"
        )


def on_new_count(previous: float | None, close: float, volume: float, factor: float) -> bool:
    """Whether a name's row on or after a split's ex-date is on the new count: a trade, or an
    untraded row (volume 0) whose close the factor explains. An untraded row at the old
    count's close (a file that lists an untraded name at its last close, unadjusted until
    its next trade) is not: the split takes effect on the name's first row on the new count."""
    return volume > 0 or previous is None or explains(previous, close, factor)


@dataclass(frozen=True)
class Redated:
    """A split the store holds on a day this import's rows show its name still on the old
    count: dated from the ex-date of the file's split of the name to before that split's
    first row on the new count (all its rows from the ex-date, where it is not applied
    yet). It is the file's split stored on the wrong day by an earlier import (the actions
    file imported ahead of the name's rows from the ex-date, an import before the first-row
    rule): withdrawn by a new version of its row without a factor (the store keeps the one
    it replaces), so every reader of the splits reads the file's split from the day it
    applies from instead (`store.splits.stored_splits`)."""

    split: Split  # as stored
    action: CorporateAction  # the file's split, on its `effective` day (`on_new_count_actions`)
    pending: bool  # the file's split is not applied yet: no row of the name on the new count

    @property
    def now(self) -> str:
        return "not applied yet" if self.pending else f"applied from {self.action.effective.isoformat()}"

    def line(self) -> str:
        return (
            f"{self.split.symbol} {self.split.ex_date.isoformat()} SPLIT {self.split.factor:g} as stored: withdrawn, "
            f"{self.split.symbol}'s rows are on the old count that day; {self.action.row()}: {self.now}"
        )

    def withdrawal(self) -> dict[str, str]:
        """The detail of the version that withdraws the stored split: what it says, and the
        day the split applies from instead (`moved_to`: `store.splits.stored_splits` dates
        when the store first knew of it by the withdrawn row)."""
        text = f"withdrawn: {self.split.symbol}'s rows are on the old count that day; {self.action.text()}: {self.now}"
        return {"text": text} if self.pending else {"text": text, "moved_to": self.action.effective.isoformat()}


@dataclass(frozen=True)
class NewCount:
    """The file's actions with each split on its name's first row on the new count
    (`on_new_count_actions`): `moved`, a line for each one applied after its ex-date;
    `pending`, those whose name has rows from the ex-date on but none on the new count yet
    (not applied: the rows are untraded at the old close); `redated`, the stored splits
    those rows show on the wrong day (`Redated`)."""

    actions: list[CorporateAction]
    moved: list[str]
    pending: list[CorporateAction]
    redated: list[Redated] = field(default_factory=list)

    @property
    def applicable(self) -> list[CorporateAction]:
        return [a for a in self.actions if a not in self.pending]

    def waiting(self) -> list[str]:
        return [
            f"{a.where}: {a.text()}: not applied yet: {a.symbol}'s rows from the ex-date are untraded at the old "
            "close; import the actions file again with the name's first trade (its first row on the new count)"
            for a in self.pending
        ]


def on_new_count_actions(
    prices: pd.DataFrame, actions: list[CorporateAction], held: tuple[Split, ...] = ()
) -> NewCount:
    """`actions` with each split (bonus, rights, consolidation) applied from its name's first
    row on or after its ex-date on the new count (`on_new_count`: `applied_from`). A file
    that lists an untraded name at its last close carries the old count's close on the
    ex-date until the name's next trade: applied on that row, a holder's doubled count was
    valued at the old close and the history read +100% then -50%. Without a volume column
    the ex-date stands. A split the store `held` on a day the rows show on the old count
    is the file's split stored on the wrong day (`Redated`): stored beside the file's, it
    applied twice; left standing, it valued a holder at twice the old close."""
    if "volume" not in prices.columns:
        return NewCount(actions, [], [])
    bars = {s: part.sort_values("date") for s, part in prices[["symbol", "date", "close", "volume"]].groupby("symbol")}
    out, lines, pending, redated = [], [], [], []
    for action in actions:
        day = _first_on_new_count(bars.get(action.symbol), action)
        moved = action if day == action.ex_date else replace(action, applied_from=day)
        redated += stored_on_old_count(held, moved, day, bars.get(action.symbol))
        out.append(moved)
        if day is None:
            pending.append(moved)
        elif day != action.ex_date:
            lines.append(
                f"{action.where}: {action.text()}: applied from {day.isoformat()}, {action.symbol}'s first row on "
                "the new count (its rows from the ex-date are untraded at the old close)"
            )
    return NewCount(out, lines, pending, redated)


def stored_on_old_count(
    held: tuple[Split, ...], action: CorporateAction, day: date | None, bars: pd.DataFrame | None
) -> list[Redated]:
    """The splits of `held` (the store's) of the action's name dated from its ex-date to
    before `day`, its first row on the new count (None: through the name's last row, every
    one on the old count): days the rows show the count unchanged, so a split stored on one
    is the file's split on the wrong day (`Redated`)."""
    if day == action.ex_date or bars is None or action.kind in ("DELISTING", RENAME):
        return []
    last = max(bars["date"]) if day is None else None
    return [
        Redated(s, action, day is None)
        for s in held
        if s.new_symbol is None
        and s.symbol == action.symbol
        and action.ex_date <= s.ex_date
        and (s.ex_date < day if day is not None else s.ex_date <= last)
    ]


def _first_on_new_count(bars: pd.DataFrame | None, action: CorporateAction) -> date | None:
    """The first day of `bars` (a name's rows by date) on or after the action's ex-date on
    its new count (`on_new_count`): the ex-date where that is the first row from it on, or
    for no split or no row from it on; None where every row from it on is on the old count."""
    after = bars[bars["date"] >= action.ex_date] if bars is not None else None
    if after is None or after.empty or action.kind in ("DELISTING", RENAME):
        return action.ex_date
    before = bars[bars["date"] < action.ex_date]
    previous = float(before["close"].iloc[-1]) if len(before) else None
    factor = action.split_factor(previous)
    if factor is None or factor == 1.0:
        return action.ex_date
    for k, row in enumerate(after.itertuples(index=False)):
        volume = float(row.volume) if pd.notna(row.volume) else math.inf  # unknown: read as a trade
        if on_new_count(previous, float(row.close), volume, factor):
            return row.date if k else action.ex_date  # a gap's days are the ex-date's (`untraded`)
        previous = float(row.close)
    return None


def limit_moves(prices: pd.DataFrame, limit: float, sessions: frozenset[date] = frozenset()) -> list[LimitMove]:
    """Every close further from its name's previous row's close than `limit` of it plus one
    tick, in date order."""
    return _moves(
        prices, lambda prev, close: (close - prev).abs() > limit * prev + tick_size(prev.to_numpy()), sessions
    )


def band_moves(prices: pd.DataFrame, band: float, sessions: frozenset[date] = frozenset()) -> list[LimitMove]:
    """Every close beyond T0's price band around its name's previous row's close
    (`validation.beyond_band`: a factor either way, so a halving as a doubling), in date order."""
    return _moves(prices, lambda prev, close: beyond_band(prev, close, band), sessions)


def _moves(
    prices: pd.DataFrame, far: Callable[[pd.Series, pd.Series], pd.Series], sessions: frozenset[date]
) -> list[LimitMove]:
    """Every close `far` from its name's previous row's close (previous, close), in date
    order; the sessions between them counted over the rows' days and `sessions` (the store's)."""
    frame = prices[["symbol", "date", "close"]].sort_values(["symbol", "date"], kind="stable").reset_index(drop=True)
    grouped = frame.groupby("symbol", sort=False)
    previous, previous_day = grouped["close"].shift(), grouped["date"].shift()
    close = frame["close"].astype(float)
    known = previous.notna() & (previous > 0)
    prev = previous.where(known, 1.0).astype(float)
    beyond = known & far(prev, close)
    days = {d: i for i, d in enumerate(sorted(set(frame["date"].unique()) | sessions))}
    found = [
        LimitMove(r.symbol, r.date, p_day, float(p), float(r.close), days[r.date] - days[p_day])
        for r, p, p_day in zip(
            frame[beyond.to_numpy()].itertuples(index=False),
            previous[beyond],
            previous_day[beyond],
            strict=True,
        )
    ]
    return sorted(found, key=lambda m: (m.day, m.symbol))
