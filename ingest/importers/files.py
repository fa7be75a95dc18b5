"""Backfill the store from historical files, in batches, with a progress bar.

A bad row is reported with its file and line and the rest still loads (its name gets no
no-trade row that day: `untraded.unread_rows`); of a name's rows
for a day the first (by file path and line) is stored and the others are reported, those
that repeat it apart from those that disagree with it (`formats.second_rows`); a day that copies
the previous one verbatim (`formats.repeated_days`: how a crawler records a holiday) is
left out and listed in `repeated_days`; a source's
missing fields are reported as `lacks` (never filled in: a missing bid/ask stays NULL,
and the liquidity rails apply their documented rule for a missing spread). Re-importing
the same files inserts nothing (rows are compared with what the store holds). Two rows of
a name and day that disagree are never settled unsaid, and which stands goes by delivery:
an import's files are one delivery, in which nothing says which row is the later, so the
first by path and line stands and the others are listed (`second_rows`); an import is a
later delivery than every row the store holds, so its row that differs from the stored one
is a correction: stored as the current version (the store keeps the earlier
one), counted as `rows_changed`, not inserted, and the first CHANGED_SHOWN named with both
values (`Written`, `formats.Correction`). Which close a store holds therefore follows the
order of the imports, and each import says what it changed. A row dated
after today on the exchange's clock is a bad row ("not known yet"): the store is
append-only, and a 2030 row would list the name from 2030 and date the next report by it
(a replay of a market's files serves their own dates through the simulator's clock instead).
A row dated today is read whatever the hour: the files may be another market's, whose close
(Nairobi's 15:00 EAT is 07:00 here) the importer does not know, and a nightly import of its
day would be refused until this exchange's close; an intraday export is the operator's to
hold back. A row dated on a day of the week the files' market does not trade
(`CapitalOptions.weekdays`, `--weekdays`, Monday to Friday by default) refuses the import
before a row is written (`refuse_off_days`): a vendor's dates shifted by a day.

Market indices in the files (`formats.is_index_row`: the NSE's `^NASI`, `^N20I`, FTSE's
`^FNK15`, a generic file's `^`-prefixed symbols, a row whose name says Index or whose type
column says index) are levels, not securities: stored as
instruments they would be listed, priced, counted as untraded names in the breadth and
the liquidity figures, scored and trained on (an "instrument" that moves every day with no
volume). They are left out of the instruments and prices and named in `indices`, as the
replay leaves them out (`ReplayMarket.source.indices`) and the benchmarks' frames do; their
levels (the row's close) are stored in `index_levels`, the market's own benchmark series
for the track record, as T0 stores the levels an exchange page publishes.

Capital changes (`ingest.importers.actions`): a corporate-actions file beside the prices
(`corporate_actions.csv`, or one named) is stored as SPLIT corporate actions (a factor
each, the ex-date their date: what the ledger, the model's panel and the liquidity read
of T0's SPLIT notices) and DELISTING ones (the value per share holders received); with the
market's daily price limit (MARKETINTEL_DAILY_PRICE_LIMIT) every close beyond it that no
action explains is reported as a probable capital change (`capital_changes`), and
`adjust_implied` stores each as a SPLIT of its implied ratio, its detail saying so. The
file's renames (`ingest.importers.renames`) decide which symbol a row is stored under: the
old symbol's rows before a rename's ex-date are stored under the new symbol, so the store
holds one series and one instrument (listed from the old symbol's first row, with the
latest name) where the files hold two; a joined rename is stored as no corporate action
(the joined rows need none). On a running store, one whose old symbol's rows before the
ex-date the store already holds (`renames.on_the_store`), no row moves: the rename is
stored as a RENAME corporate action of the old symbol (the new symbol in its detail),
which the ledger reads to carry a holding on under the new symbol (`store.splits`).

Each instrument is stored with its kind of security (`instruments.instrument_type`): the
type the file states (an OHLCV file's type column; the latest row that states one), else
the stored one, else the market's inference from its code and name (`market.instruments`),
so KPLC-P4 is a PREFERENCE share and the NSE's ETF and REIT are FUNDs. An instrument the
store holds keeps its name and type where the files state none, and where the store's are
dated later (`Held.newer`: the latest by date wins), and its listing date only moves earlier. `not_ordinary` names every
instrument that is not an ordinary share; `types` says where the types came from. A name
whose rows stop is stored as delisted (`_delisted`): on its `delisting` row's ex-date, else
on the session after its last row once the delisting rule's sessions have passed without
one (`delisting_date`, the replay's rule), so T1's pre-flight stops expecting its rows.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
from sqlalchemy import ColumnElement, Connection, Engine, func, select
from tqdm import tqdm

from ingest.books import BooksCheck, append_actions
from ingest.exchange.band import band_text
from ingest.importers.actions import (
    IMPLIED,
    SANITY_BAND,
    CapitalChanges,
    Given,
    actions_beside,
    band_moves,
    capital_changes,
    is_actions_file,
    price_files,
    readable_actions,
)
from ingest.importers.formats import (
    NSE_LACKS,
    OHLCV_OPTIONAL,
    SECOND_ROWS_SHOWN,
    Bad,
    Correction,
    csv_text,
    describe_repeated,
    first_difference,
    is_index_row,
    nse_daily_columns,
    ohlcv_lacks,
    ohlcv_states_types,
    read_nse_company,
    read_nse_daily,
    read_ohlcv,
    repeated_days,
    second_rows,
)
from ingest.importers.renames import RENAME, Reuse, Stored, kept_line
from ingest.importers.untraded import (
    NO_TRADE,
    NOT_IN_FILE,
    THIN_AROUND,
    moved_untraded,
    thin_days,
    unread_rows,
    untraded_rows,
)
from market.clock import MONDAY_TO_FRIDAY, WEEKDAY_NAMES, exchange_date, utc_now, weekdays_text
from market.errors import InvalidInputError
from market.instruments import infer_instrument_type, instrument_type, is_ordinary
from market.settings import DELIST_AFTER_SESSIONS, HOME_CURRENCY
from store import tables
from store.history import append_history, current_frame, current_rows
from store.splits import Split, factor_between, stored_splits
from store.transactions import MARKET_FILES, write_transaction

BATCH_ROWS = 5_000  # price rows written at once: their copies and the stored rows read for them stay this size
CHANGED_SHOWN = SECOND_ROWS_SHOWN  # stored rows an import changed, listed one a line as second rows are
READERS: dict[str, Callable[[Path], Iterator]] = {
    "nse-daily": read_nse_daily,
    "nse-company": read_nse_company,
    "ohlcv": read_ohlcv,
}
OURS = f":{NOT_IN_FILE.lower()}"  # the end of the source of the no-trade rows an import stored (`_store_untraded`)
FORMAT_CURRENCY = {"nse-daily": "KES", "nse-company": "KES"}  # the generic CSV says nothing: the home currency


@dataclass
class ImportReport:
    format: str
    files: int = 0
    rows_read: int = 0
    rows_inserted: int = 0  # price rows of a name and day the store did not hold
    rows_changed: int = 0  # stored price rows this import's replaced (`Written`: a correction, said)
    changed: list[str] = field(default_factory=list)  # the first CHANGED_SHOWN of them (`formats.Correction`)
    untraded_inserted: int = 0  # no-trade rows of listed names a day's file left out (`_store_untraded`)
    untraded_changed: int = 0  # an earlier import's no-trade rows put again on the current count (`_store_untraded`)
    thin_days: list[str] = field(default_factory=list)  # days with rows of too few names to be sessions (`thin_days`)
    untraded_moves: str | None = None  # untraded rows whose close moved (`untraded.moved_untraded`)
    instruments: int = 0
    instruments_inserted: int = 0
    lacks: list[str] = field(default_factory=list)
    bad_rows: list[str] = field(default_factory=list)
    unread_files: list[str] = field(default_factory=list)  # files not a row of which could be read (`FirstPass`)
    second_rows: list[str] = field(default_factory=list)  # a name's rows for a day after its first (`SecondRows`)
    repeated_days: list[str] = field(default_factory=list)  # days left out as copies of the one before
    indices: list[str] = field(default_factory=list)  # market indices left out (levels, not securities)
    index_levels_inserted: int = 0  # their levels, stored in index_levels
    index_moves: list[str] = field(default_factory=list)  # their levels beyond T0's band (`index_moves`)
    types: str = ""  # where the instruments' types came from (`source_types`)
    not_ordinary: dict[str, str] = field(default_factory=dict)  # symbol -> type, for every non-ordinary instrument
    capital_changes: list[str] = field(default_factory=list)  # the report (actions.CapitalChanges.lines)
    corporate_actions_inserted: int = 0  # SPLIT and DELISTING actions stored from it
    # stored actions within the files' span that this import does not have (`unmatched_actions`)
    unmatched_actions: list[str] = field(default_factory=list)
    currency: str = HOME_CURRENCY  # the prices' currency as stored (`import_path`)
    currency_stated: str | None = None  # the one the files' `currency` column states, if any


def source_files(path: Path) -> list[Path]:
    """The price files a file or a folder holds (`actions.price_files`), at least one; else
    InvalidInputError: the path does not exist, is a corporate-actions file, or is a folder
    without a .csv file. With `--format` given, `import --format ohlcv corporate_actions.csv`
    stored its actions with no prices at all, and an empty folder was "0 files", exit 0."""
    path = Path(path)
    if not path.exists():
        raise InvalidInputError(f"{path} does not exist")
    files = price_files(path)
    if files:
        return files
    if path.is_file() and is_actions_file(path):
        raise InvalidInputError(
            f"{path} is a corporate-actions file, not prices: it is read beside them, or named with --actions"
        )
    raise InvalidInputError(f"{path} holds no .csv files")


def detect_format(path: Path) -> str:
    """The format of a file or a folder's first .csv file with a header, by that header (the
    NSE daily summary's columns in any order, `nse_daily_columns`). A path that does not
    exist says so (`source_files`; `marketintel import` detects before it reads: a mistyped
    path was "holds no .csv files"). An empty file is passed over, as the readers make it a
    bad row of its own (`formats.says_when_empty`): first in a folder, it refused the whole
    import as "unrecognised header ''", and the replay with it."""
    files = source_files(path)
    sample, first = next(((f, line) for f in files if (line := csv_text(f).readline()).strip()), (files[0], ""))
    if first.startswith("Code;Name;") or isinstance(nse_daily_columns(first.strip().split(";")), list):
        return "nse-daily"
    if first.startswith("Date;"):
        return "nse-company"
    if "symbol" in first.lower() and "close" in first.lower():
        return "ohlcv"
    raise InvalidInputError(
        f"{sample}: unrecognised header '{first.strip()[:80]}'; expected NSE daily, NSE per-company or OHLCV CSV"
    )


def resolve_source(path: Path, fmt: str = "auto") -> tuple[str, list[Path]]:
    """(format, the .csv files to read) for a file or a folder; InvalidInputError when the
    path does not exist, holds no .csv file or the format is not one we read."""
    path = Path(path)
    if not path.exists():
        raise InvalidInputError(f"{path} does not exist")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt not in READERS:
        raise InvalidInputError(f"unknown format '{fmt}'; use auto, nse-daily, nse-company or ohlcv")
    return fmt, source_files(path)


def source_lacks(fmt: str, files: list[Path]) -> list[str]:
    """The optional fields these files do not carry (stored as missing, never invented)."""
    if fmt.startswith("nse"):
        return list(NSE_LACKS)
    lacking = set().union(*(ohlcv_lacks(f) for f in files))
    return [c for c in OHLCV_OPTIONAL if c in lacking]


def source_types(fmt: str, files: list[Path]) -> str:
    """One line saying where a source's instrument types come from: a type column, or
    (NSE files, an OHLCV file without the column) the market's inference."""
    stated = [f for f in files if fmt == "ohlcv" and ohlcv_states_types(f)]
    inferred = (
        "inferred from code and name (market.instruments: -P<n> preference, ETF/REIT funds, otherwise ordinary shares)"
    )
    if not stated:
        return f"no instrument_type column: types {inferred}"
    if len(stated) < len(files):
        return f"instrument_type column in {len(stated)} of {len(files)} files; elsewhere and in blank cells {inferred}"
    return "instrument_type column; blank cells " + inferred


def source_currency(fmt: str, currency: str | None = None) -> str:
    """The prices' currency: the one given, else the format's (KES for the NSE files, the
    home currency for the generic CSV, which does not say). One given is three capitals, as
    MARKETINTEL_REPLAY_CURRENCY is: `import --currency zz` stored the instruments in 'zz',
    and `--currency ''` was the format's."""
    if currency is not None and not re.fullmatch(r"[A-Z]{3}", currency):
        raise InvalidInputError(f"the currency must be a code of three capitals like JMD, not {currency!r}")
    return currency if currency is not None else FORMAT_CURRENCY.get(fmt, HOME_CURRENCY)


@dataclass(frozen=True)
class CapitalOptions:
    """How an import reads capital changes: the corporate-actions file (None: the one beside
    the prices, if any), the market's daily price limit (None: none stated), whether to
    adjust for the moves beyond it that no action explains, and the delisting rule's
    sessions (a ticker whose name changes across a gap that long is split: `renames.Reuse`),
    and the (symbol, ex-date) of the capital changes taken as stated where the closes do not
    show them (`actions.refuse_adjusted`)."""

    actions: Path | None = None
    price_limit: float | None = None
    adjust_implied: bool = False
    delist_after: int = DELIST_AFTER_SESSIONS
    accepted: frozenset[tuple[str, date]] = frozenset()  # capital changes taken as stated (`refuse_adjusted`)
    # the weekdays the files' market trades (`marketintel import --weekdays`): a row dated on
    # another refuses the import (`refuse_off_days`)
    weekdays: frozenset[int] = MONDAY_TO_FRIDAY


def import_path(
    engine: Engine,
    path: Path,
    fmt: str = "auto",
    *,
    currency: str | None = None,
    board: str = "OTHER",
    capital: CapitalOptions = CapitalOptions(),
    keep_books: BooksCheck | None = None,
) -> ImportReport:
    """Import a file or a folder of .csv files (the module's docstring says what is kept
    and what is left out). Everything that can refuse the import is checked before a row is
    written (the files, the corporate actions, `_refuse_two_series`); then the prices (the
    rows the first pass read, in batches of BATCH_ROWS), the index levels, the instruments
    and the corporate actions are written in one transaction, so an import that fails part-way
    leaves the store as it was and says nothing was imported (`_one_transaction`): a
    failure after the prices once left them stored without their splits. On SQLite the
    transaction holds the database's write lock for the whole import.

    `currency`: the one the caller gives (`--currency`), None when it gives none; the
    prices' currency is then the one the files state (`stated_currency`), else the
    format's (`source_currency`), and `report.currency` says which. `keep_books`: what
    refuses, before the import commits, splits that would leave a client's ledger
    unreplayable (`ingest.books.BooksCheck`)."""
    fmt, files = resolve_source(path, fmt)
    report = ImportReport(fmt, files=len(files))
    report.lacks = source_lacks(fmt, files)
    report.types = source_types(fmt, files)
    today = exchange_date(utc_now())
    first = _first_pass(engine, fmt, files, today, capital, Path(path), report)
    copies, changes = first.copies, first.changes
    report.currency_stated = stated_currency(first.currencies, currency, first.unstated)
    report.currency = report.currency_stated or source_currency(fmt, currency)
    report.unread_files = [str(f) for f, items in zip(files, first.read, strict=True) if not _any_row(items)]
    rows = _Rows(f"import:{fmt}", copies, changes.symbol_on, _stopped(changes), capital.delist_after)
    if not first.readable:  # not a row could be read: the bad rows are the answer, and nothing is written
        report.bad_rows = [str(item) for items in first.read for item in items if isinstance(item, Bad)]
        return report
    _refuse_two_series(engine, changes)
    actions = _action_rows(fmt, changes)
    # the import's currency replaces a stored one only where the files state it or the caller gives it
    said = {"currency": report.currency} if report.currency_stated or currency else {}
    with _one_transaction(engine, MARKET_FILES) as conn:
        held = Held.read(conn)  # before the prices: the days the stored names are as of
        written = _store_prices(conn, fmt, first.read, rows, report)
        report.rows_inserted, report.rows_changed = written.new, len(written.changed)
        report.changed = [c.line() for c in written.changed[:CHANGED_SHOWN]]
        report.indices = sorted(rows.indices)
        report.index_levels_inserted = _store_levels(conn, rows) if rows.levels else 0
        report.index_moves = index_moves(rows.levels.values(), levels_before(conn, rows.levels.values()))
        _store_instruments(conn, rows, held, ({"board": board, "currency": report.currency}, said), report)
        report.instruments_inserted += _retire_renamed(conn, rows, held)
        report.unmatched_actions = unmatched_actions(conn, rows, actions)
        report.corporate_actions_inserted = append_actions(conn, actions, keep_books)
        if rows.first_day:  # an import of index levels alone stores no price row, and so no no-trade row
            _store_untraded(conn, rows, report, untraded_scope(conn, rows, [a["action_date"] for a in actions]))
    report.capital_changes = changes.lines()
    return report


def _any_row(items: Iterable[dict | Bad]) -> bool:
    """Whether a file's items hold a row that could be read (a price or an index level)."""
    return any(not isinstance(item, Bad) for item in items)


def _stopped(changes: CapitalChanges) -> dict[str, date]:
    """By symbol, the latest day its capital changes stop it: a settlement's ex-date, and a
    rename's for the old symbol (on a running store it stops trading at the ex-date)."""
    stops = [(a.symbol, a.ex_date) for a in changes.settlements] + [(r.old, r.ex_date) for r in changes.renames.kept]
    delistings: dict[str, date] = {}
    for symbol, ex_date in stops:
        delistings[symbol] = max(ex_date, delistings.get(symbol, ex_date))
    return delistings


@dataclass(frozen=True)
class FirstPass:
    """What an import reads before it writes a row (`_first_pass`): the files are read
    once, and `read` holds each file's rows (a Bad for each bad row, in file order) for
    the writes (`_store_prices`), which empty it as they go."""

    read: list[deque[dict | Bad]]  # each file's rows as its reader gave them (`read_known`)
    copies: dict[date, date]  # the days that copy the one before, left out
    changes: CapitalChanges  # the capital changes of the rows kept
    currencies: dict[str, set[str]]  # currency -> the symbols whose rows state it
    unstated: set[str]  # the symbols with a row that states no currency
    readable: int  # the rows read (a price or an index level)


def _first_pass(
    engine: Engine, fmt: str, files: list[Path], today: date, capital: CapitalOptions, path: Path, report: ImportReport
) -> FirstPass:
    """The copied days (a day's rows may come from many files: per-company, OHLCV), the
    capital changes of the rows the import keeps (a reused ticker looked for across the
    store's rows too: `stored_history`) and the currencies the rows state, read before a
    row is written."""
    read = [deque(read_known(fmt, file, today)) for file in files]
    first = [item for items in read for item in items if not isinstance(item, Bad)]
    copies = repeated_days([*session_before(engine, first), *first])
    refuse_off_days(first, copies, capital.weekdays)
    report.repeated_days = describe_repeated(copies)
    # an index's second rows too, kept as a name's are (`_Rows.take`): a level that disagrees is said
    kept, seconds = second_rows(i for i in first if i["trading_date"] not in copies)
    kept = [i for i in kept if not is_index_row(i)]
    report.second_rows = seconds.lines()
    report.untraded_moves = moved_untraded(kept)
    currencies, unstated = row_currencies(i for i in first if not is_index_row(i))
    stored = stored_history(engine, {i["symbol"] for i in kept} | _renamed_symbols(capital, path))
    return FirstPass(read, copies, _capital(kept, capital, path, stored), currencies, unstated, len(first))


def refuse_off_days(rows: list[dict], copies: dict[date, date], weekdays: frozenset[int]) -> None:
    """InvalidInputError, before a row is written, where a row the import would keep (a
    price or an index level; a copied day is left out anyway) is dated on a weekday the
    market does not trade: a vendor's file shifted by a day puts one session a week on a
    weekend and every other on the wrong day, and was stored unseen (the store keeps every
    row it is given). The first such row is named, with the two ways out."""
    off = [r for r in rows if r["trading_date"].weekday() not in weekdays and r["trading_date"] not in copies]
    if not off:
        return
    first = off[0]
    day = first["trading_date"]
    days = sorted({r["trading_date"] for r in off})
    raise InvalidInputError(
        f"{len(off)} row{'s' if len(off) > 1 else ''} on {len(days)} day{'s' if len(days) > 1 else ''} the market "
        f"does not trade (it trades {weekdays_text(weekdays)}), the first {first.get('_line', '?')} "
        f"({first['symbol']} {day.isoformat()}, a {WEEKDAY_NAMES[day.weekday()]}): a vendor's dates shifted by a day "
        "put a session on a weekend and every other on the wrong day. Correct the file's dates (or remove the "
        "row), or give the days the market trades with --weekdays (e.g. Sun-Thu); nothing was imported"
    )


def session_before(engine: Engine, rows: list[dict]) -> list[dict]:
    """The store's price rows of its latest session before the first day of `rows`: the
    day a follow-up import's first day is checked against for a copy (`repeated_days`), as
    T0 checks a page against the stored session before it. A day's file imported on its
    own was never a copy: the vendor's file for a holiday, the previous session's again,
    was stored as a session."""
    if not rows:
        return []
    c = tables.eod_prices.c
    with engine.connect() as conn:
        day = conn.execute(
            select(func.max(c.trading_date)).where(c.trading_date < min(r["trading_date"] for r in rows))
        )
        before = day.scalar()
        if before is None:
            return []
        columns = ["symbol", "trading_date", "low", "high", "close", "prev_close", "volume"]
        return current_rows(conn, tables.eod_prices, where=[c.trading_date == before], columns=columns)


def _renamed_symbols(capital: CapitalOptions, path: Path) -> set[str]:
    """The old symbols of the corporate-actions file's renames: the store's rows of them say
    whether a rename is on a running store (`renames.on_the_store`), whether or not the
    files hold rows of the old symbol."""
    actions = capital.actions or actions_beside(path)
    if actions is None:
        return set()
    return {a.symbol for a in readable_actions(actions) if a.kind == RENAME}


def stored_history(engine: Engine, symbols: set[str]) -> Stored:
    """The store's price rows of `symbols` (symbol, date, close, volume, and `filled`: a
    no-trade row the importer stored for a day the files left out), each named by its stored
    instrument's name (None where that is the bare symbol, what the importer gives a name
    no file named: `Held.newer`), the store's sessions and the symbols' stored splits: what
    a reused ticker is looked for across (`renames.reused_tickers`), so files imported one
    after another split a ticker as one import of them does (a file's row without a name
    says nothing), and what each name's first imported row is checked against
    (`actions.previous_closes`: its last stored close, on its count)."""
    c = tables.eod_prices.c
    with engine.connect() as conn:
        rows = current_frame(
            conn,
            tables.eod_prices,
            ["symbol", "trading_date", "close", "volume", "source"],
            where=[c.symbol.in_(symbols)],
        )
        named = current_rows(
            conn, tables.instruments, where=[tables.instruments.c.symbol.in_(symbols)], columns=["symbol", "name"]
        )
        sessions = frozenset(conn.execute(select(c.trading_date).distinct()).scalars())
        splits = tuple(stored_splits(conn, symbols=symbols))
    names = {r["symbol"]: r["name"] for r in named if r["name"] and r["name"] != r["symbol"]}
    frame = rows.rename(columns={"trading_date": "date"})
    filled = frame.pop("source").str.endswith(OURS)  # `_store_untraded`'s own rows
    return Stored(frame.assign(name=frame["symbol"].map(names), filled=filled), sessions, splits)


def row_currencies(items: Iterable[dict]) -> tuple[dict[str, set[str]], set[str]]:
    """The currencies the rows state ({code: the symbols whose rows state it}) and the
    symbols with a row that states none: what `stated_currency` judges, for the importer
    and the replay alike."""
    currencies: dict[str, set[str]] = {}
    unstated: set[str] = set()
    for item in items:
        if item.get("currency"):
            currencies.setdefault(item["currency"], set()).add(item["symbol"])
        else:
            unstated.add(item["symbol"])
    return currencies, unstated


def stated_currency(stated: dict[str, set[str]], given: str | None, unstated: set[str] = frozenset()) -> str | None:
    """The one currency the files' rows state (a `currency` column), None where they state
    none; InvalidInputError where they state several (the service values every holding and
    figure in one trading currency: a USD name read as JMD would be bought with JMD at its
    USD price), one other than `given` (`--currency`), or one while other rows state none
    and no currency is given (a blank beside USD is not USD: it would store every name in
    USD)."""
    if stated and unstated and given is None:
        (code, *_) = sorted(stated)
        names = ", ".join(sorted(unstated)[:5])
        raise InvalidInputError(
            f"rows of {len(unstated)} name{'s' if len(unstated) > 1 else ''} ({names}) state no currency while "
            f"others state {', '.join(sorted(stated))}: give each row its currency, or --currency {code} for the "
            "blank ones; nothing was imported"
        )
    if len(stated) > 1:
        parts = "; ".join(
            f"{code}: {len(names)} name{'s' if len(names) > 1 else ''} ({', '.join(sorted(names)[:5])})"
            for code, names in sorted(stated.items(), key=lambda kv: -len(kv[1]))
        )
        raise InvalidInputError(
            f"the files state prices in {len(stated)} currencies ({parts}); the service values one trading "
            "currency: import the names of one (leave the others out, or convert their prices first); nothing "
            "was imported"
        )
    if not stated:
        return None
    (code,) = stated
    if given is not None and given != code:
        raise InvalidInputError(
            f"--currency {given}, but the files state their prices in {code}; give --currency {code} or leave it "
            "out: nothing was imported"
        )
    return code


@contextmanager
def _one_transaction(engine: Engine, lock_name: str) -> Iterator[Connection]:
    """`write_transaction`, whose refusal (`InvalidInputError`) says the import was rolled back."""
    try:
        with write_transaction(engine, lock_name) as conn:
            yield conn
    except InvalidInputError as exc:
        raise InvalidInputError(f"{exc}: nothing was imported (the import is one transaction)") from exc


def _store_prices(
    conn: Connection, fmt: str, read: list[deque[dict | Bad]], rows: _Rows, report: ImportReport
) -> Written:
    """The second pass, over the rows the first read (`FirstPass.read`, emptied as it
    goes, so a written batch's rows are let go): each file's price rows (`_Rows.take`),
    written in batches."""
    written, batch = Written(), []
    for items in tqdm(read, desc=f"import {fmt}", unit="file", disable=None):
        while items:
            price = rows.take(items.popleft(), report)
            if price is not None:
                batch.append(price)
            if len(batch) >= BATCH_ROWS:
                written, batch = written + _flush(conn, batch), []
    return written + _flush(conn, batch)


def _store_untraded(conn: Connection, rows: _Rows, report: ImportReport, scope: UntradedScope) -> None:
    """The no-trade rows (`ingest.importers.untraded`) of the imported names, over their
    stored rows, this import's included, and the store's days (its rows, less the no-trade
    rows the importer stored, decide the thin days, which are no sessions): a file that
    leaves an untraded name out is stored as the exchange lists it (volume 0 at its last
    close), so the 20-day windows of the gates and the model count sessions, not trades.
    Their source says so (`...:not in file`, the replay's status for the same row); a gap
    the delisting rule's sessions long stays a gap. The gaps found are those the import can
    change (`untraded_scope`), an earlier import's gap of these names beside or across its
    rows included, and every other stored name's gaps between two of its rows within the
    days read: per-company files imported one by one fill what one import of them fills.
    The thin days within the import's span are named in the report.
    Called once the import's capital changes are stored: a carried close is on its day's
    count (`_carried_on_count`). The rows are found over the files' rows alone (an
    importer's own no-trade rows are no trades), so an earlier import's no-trade row whose
    carried close is no longer its last close on the day's count (a split stored since, by
    an actions file imported after the prices; the last close corrected) is put again, a
    new version (the store is append-only), and counted apart (`untraded_changed`): left
    on the old count, a holder was valued at the old close and the panel read the factor
    as a move and back, where one import of the same files stores the new count."""
    market = current_frame(conn, tables.eod_prices, ["symbol", "trading_date", "close", "source"], where=scope.where())
    market = market.rename(columns={"trading_date": "date"})
    filed = market[~market["source"].str.endswith(OURS)]
    stored = scope.stretches(filed.drop(columns="source"))
    names = sorted(set(stored["symbol"]))
    found = _carried_on_count(
        untraded_rows(stored, rows.delist_after, filed, _unread(conn, rows, names)),
        stored,
        stored_splits(conn, symbols=names),
    )
    records = [
        {**NO_TRADE, "symbol": r.symbol, "trading_date": r.date, "close": float(r.close), "prev_close": float(r.close)}
        for r in _not_stored(found, market[market["source"].str.endswith(OURS)]).itertuples(index=False)
    ]
    batches = range(0, len(records), BATCH_ROWS)
    written = sum(
        (_flush(conn, [{**r, "source": rows.source + OURS} for r in records[i : i + BATCH_ROWS]]) for i in batches),
        Written(),
    )
    report.untraded_inserted, report.untraded_changed = written.new, len(written.changed)
    first, last = min(rows.first_day.values()), max(rows.last_day.values())
    report.thin_days = [str(t) for t in thin_days(filed) if first <= t.day <= last]


def _unread(conn: Connection, rows: _Rows, names: list[str]) -> frozenset[tuple[str, date]]:
    """The names and days of `names` with a row no import could read: this
    import's (`_Rows.unread`), stored (`tables.unread_rows`), and every earlier import's.
    Without the stored ones a later import (a follow-up file, the next month's) gave the
    day an earlier import refused a row of a no-trade row at the last close, the typo its
    file still holds stored as a day without trades."""
    append_history(
        conn, tables.unread_rows, [{"symbol": s, "trading_date": d, "source": rows.source} for s, d in rows.unread]
    )
    c = tables.unread_rows.c
    stored = current_rows(conn, tables.unread_rows, where=[c.symbol.in_(names)], columns=["symbol", "trading_date"])
    return frozenset((r["symbol"], r["trading_date"]) for r in stored)


@dataclass(frozen=True)
class UntradedScope:
    """The stored rows an import's no-trade rows are found over (`untraded_scope`): the
    market's rows from `read_from` to `read_to` (None: no bound), and of each imported name
    its rows from `since` (its last row from the files before the days the import can
    change) to `until` (its first after them; a name absent from either: its first, or its
    last, row). The default is the whole store."""

    read_from: date | None = None
    read_to: date | None = None
    since: dict[str, date] = field(default_factory=dict)
    until: dict[str, date] = field(default_factory=dict)

    def where(self) -> list[ColumnElement[bool]]:
        c = tables.eod_prices.c
        bounds = [c.trading_date >= self.read_from] if self.read_from else []
        return bounds + ([c.trading_date <= self.read_to] if self.read_to else [])

    def stretches(self, stored: pd.DataFrame) -> pd.DataFrame:
        """`stored` (symbol, date, ...) within each name's stretch, `since` to `until`."""
        since = stored["symbol"].map(lambda s: self.since.get(s, date.min))
        until = stored["symbol"].map(lambda s: self.until.get(s, date.max))
        return stored[((stored["date"] >= since) & (stored["date"] <= until)).to_numpy(dtype=bool)]


def untraded_scope(conn: Connection, rows: _Rows, changed: list[date]) -> UntradedScope:
    """What an import can change of the no-trade rows (`_store_untraded`), read instead of
    the whole store, whose size set an import's cost: the days from the THIN_AROUND-th day
    with rows before its first row or `changed` day (the ex-dates of the corporate actions
    it stores) to the THIN_AROUND-th after its last (whose thin days its rows can change:
    `untraded.thin_days` reads THIN_AROUND days each side), each imported name's gaps that
    meet them (from its last row from the files before them to its first after), and the
    THIN_AROUND days with rows beyond those, which judge their days thin as the whole
    market does. Outside, every gap and carried close is as an earlier import left it: the
    same rows are stored as the rule over the whole store stores, where each earlier import
    applied it."""
    days = [*rows.first_day.values(), *rows.last_day.values(), *changed]
    low, high = _nth_day(conn, min(days), later=False), _nth_day(conn, max(days), later=True)
    symbols = sorted(rows.first_day)
    since = _edge_rows(conn, symbols, low, later=False) if low else {}
    until = _edge_rows(conn, symbols, high, later=True) if high else {}
    read_from = _nth_day(conn, min([low, *since.values()]), later=False) if low else None
    read_to = _nth_day(conn, max([high, *until.values()]), later=True) if high else None
    return UntradedScope(read_from, read_to, since, until)


def _nth_day(conn: Connection, day: date, *, later: bool) -> date | None:
    """The THIN_AROUND-th day with a stored price row before `day` (after it, `later`); None
    where there are fewer."""
    c = tables.eod_prices.c
    query = select(c.trading_date).distinct().where(c.trading_date > day if later else c.trading_date < day)
    found = conn.execute(query.order_by(c.trading_date if later else c.trading_date.desc()).limit(THIN_AROUND))
    days = found.scalars().all()
    return days[-1] if len(days) == THIN_AROUND else None


def _edge_rows(conn: Connection, symbols: list[str], day: date, *, later: bool) -> dict[str, date]:
    """Each of `symbols`' last day with a row from the files before `day` (first after it,
    `later`), where it has one. A day's row from the files is its current version in any
    version (the importer's no-trade row is only stored on a day without one)."""
    c = tables.eod_prices.c
    edge = func.min(c.trading_date) if later else func.max(c.trading_date)
    beyond = c.trading_date > day if later else c.trading_date < day
    query = select(c.symbol, edge).where(c.symbol.in_(symbols), beyond, ~c.source.endswith(OURS)).group_by(c.symbol)
    return {symbol: found for symbol, found in conn.execute(query).all()}


def _not_stored(found: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """The no-trade rows of `found` that the importer's stored ones (`ours`) do not hold
    as they are: a day without one, or one whose carried close differs."""
    stored = found[["symbol", "date", "close"]].merge(
        ours[["symbol", "date", "close"]], on=["symbol", "date"], how="left", suffixes=("", "_stored")
    )
    close, held = stored["close"].astype(float), stored["close_stored"].astype(float)
    return found[~((close - held).abs() <= 1e-9 * close.abs()).to_numpy()]


def _carried_on_count(found: pd.DataFrame, stored: pd.DataFrame, splits: list[Split]) -> pd.DataFrame:
    """`found` (no-trade rows carrying a name's last stored close) with each close on its
    own day's count: divided by `factor_between` the name's last row before it and its day,
    as the exchange quotes an untraded name after a split or bonus issue's ex-date. Carried
    as stored, a gap across an ex-date held the old count's close after it: an adjusted
    reader saw the price jump by the factor and back on the next trade."""
    if found.empty or not splits:
        return found
    last = stored[["symbol", "date"]].assign(last=stored["date"], on=pd.to_datetime(stored["date"]))
    keyed = found.assign(on=pd.to_datetime(found["date"]), order=range(len(found)))
    paired = pd.merge_asof(
        keyed.sort_values("on"), last.drop(columns="date").sort_values("on"), on="on", by="symbol"
    ).sort_values("order")
    factors = [factor_between(splits, r.symbol, r.last, r.date) for r in paired.itertuples(index=False)]
    return found.assign(close=found["close"].to_numpy(dtype=float) / factors)


def read_known(fmt: str, file: Path, today: date) -> Iterator[dict | Bad]:
    """The file's rows as its format's reader gives them, a row dated after `today` a Bad
    (the importer's and the replay's: a typo's year, 2062 for 2026, was a replayed session,
    and the replay's calendar closed every weekday up to it in every process)."""
    for item in READERS[fmt](file):
        if not isinstance(item, Bad) and item["trading_date"] > today:
            day = item["trading_date"].isoformat()
            yield Bad(
                item["_line"],
                f"dated {day}, after today ({today.isoformat()}) on the exchange's clock: not known yet",
                item["symbol"],
                item["trading_date"],
            )
        else:
            yield item


@dataclass(frozen=True)
class Moved:
    """Rows the store holds under `symbol` (`rows` of them, `first` to `last`) that this
    import's capital changes put under `to`: a rename's new symbol, or a reused ticker's
    earlier company (`renames.Reuse.retired`)."""

    symbol: str
    to: str
    rows: int
    first: date
    last: date
    reuse: Reuse | None = None  # the reused ticker that moves them, where one does

    def line(self) -> str:
        line = (
            f"the store holds {self.rows:,} rows of {self.symbol} ({self.first.isoformat()} to "
            f"{self.last.isoformat()}) that this file's capital changes put under {self.to}"
        )
        if self.reuse is None:
            return line
        r = self.reuse
        return (
            f"{line}: {r.symbol} is a reused ticker, {r.old_name!r} to {r.last_day.isoformat()} and {r.new_name!r} "
            f"from {r.first_day.isoformat()}, {r.sessions} sessions later"
        )

    def remedy(self) -> str:
        """How to import what was refused: the rows both series hold in one import, into a
        fresh store (it splits a reused ticker, joins a rename), or the rename row left out."""
        if self.reuse is not None:
            return (
                "import both companies' files in one import into a fresh store (MARKETINTEL_DATABASE_URL), which "
                "splits the ticker"
            )
        return (
            "import into a fresh store (MARKETINTEL_DATABASE_URL), or leave the rename row out to keep the stored "
            "symbol"
        )


def stored_elsewhere(engine: Engine, changes: CapitalChanges) -> list[Moved]:
    """The stored price rows whose symbol this import's renames and reused tickers would
    change (`CapitalChanges.symbol_on`), by symbol and the symbol they move to."""
    moving = changes.renames.moving()
    if not moving:
        return []
    c = tables.eod_prices.c
    with engine.connect() as conn:
        stored = conn.execute(select(c.symbol, c.trading_date).where(c.symbol.in_(sorted(moving))).distinct()).all()
    found: dict[tuple[str, str], list[date]] = {}
    for symbol, day in stored:
        to = changes.symbol_on(symbol, day)
        if to != symbol:
            found.setdefault((symbol, to), []).append(day)
    reuses = {r.retired: r for r in changes.renames.reused}
    return [Moved(s, to, len(days), min(days), max(days), reuses.get(to)) for (s, to), days in sorted(found.items())]


def _refuse_two_series(engine: Engine, changes: CapitalChanges) -> None:
    """Refuse, before a row is written, an import whose renames or reused tickers would put
    rows the store already holds under another symbol: the store keeps every row it was
    given (append-only), so the old symbol's series would stay beside the joined one, one
    company counted twice by the model's universe and the benchmark. A store built from
    the same files with the same actions holds none (its rows are under the new symbols).
    A reused ticker found across the store's rows (`stored_history`: the later company's
    file imported after the earlier's) is refused so too: the stored rows cannot move under
    the retired symbol, and one import of both companies' files into a fresh store splits it."""
    moved = stored_elsewhere(engine, changes)
    if moved:
        remedies = "; or ".join(dict.fromkeys(m.remedy() for m in moved))
        raise InvalidInputError(
            "; ".join(m.line() for m in moved)
            + f": the store keeps every row it was given, so both series would stay; {remedies}; nothing was imported"
        )


def _capital(kept: list[dict], options: CapitalOptions, path: Path, stored: Stored) -> CapitalChanges:
    """The capital changes of the rows the import keeps (indices and copied days left out,
    the first row of a symbol and day: `second_rows`), a reused ticker looked for across
    the `stored` rows too and each name's first row checked against its last stored close."""
    closes = pd.DataFrame(
        [(i["symbol"], i["trading_date"], i["close"], i["volume"], i.get("name")) for i in kept],
        columns=["symbol", "date", "close", "volume", "name"],
    )
    actions = options.actions or actions_beside(path)
    limit, delist_after = options.price_limit, options.delist_after
    return capital_changes(
        closes, actions, limit, options.adjust_implied, delist_after, given=Given(stored, options.accepted)
    )[1]


def _action_rows(fmt: str, changes: CapitalChanges) -> list[dict]:
    """The corporate_actions rows to store, built before a row is written: the splits
    applied as SPLIT corporate actions (the factor as the amount; the file's actions named
    in the detail, an implied one said so) and the file's delistings as DELISTING ones (the
    value per share as the amount)."""
    named: dict[tuple[str, date], list[str]] = {}
    for action in (a for a in changes.actions if a.kind != RENAME):
        named.setdefault((action.symbol, action.effective), []).append(action.text())
    implied = {(s.symbol, s.ex_date) for s in changes.implied}
    rows = [
        {
            "symbol": s.symbol,
            "action_date": s.ex_date,
            "kind": "SPLIT",
            "amount": s.factor,
            "detail": {
                "text": IMPLIED if (s.symbol, s.ex_date) in implied else "; ".join(named[(s.symbol, s.ex_date)])
            },
            "source": f"import:{fmt}",
        }
        for s in changes.applied
    ]
    rows += [
        {
            "symbol": a.symbol,
            "action_date": a.ex_date,
            "kind": "DELISTING",
            "amount": a.price,
            "detail": {"text": a.text()},
            "source": f"import:{fmt}",
        }
        for a in changes.settlements
    ]
    rows += [
        {
            "symbol": r.old,
            "action_date": r.ex_date,
            "kind": RENAME,
            "amount": None,
            "detail": {"new_symbol": r.new, "text": kept_line(r)},
            "source": f"import:{fmt}",
        }
        for r in changes.renames.kept
    ]
    return rows + _withdrawals(fmt, changes, {(r["symbol"], r["action_date"]) for r in rows if r["kind"] == "SPLIT"})


def _withdrawals(fmt: str, changes: CapitalChanges, storing: set[tuple[str, date]]) -> list[dict]:
    """A new version without a factor of each stored SPLIT the import re-dates
    (`actions.Redated`: dated on a day the rows show on the old count), but of a name and
    day the import stores a split on (that version replaces it): it adjusts nothing
    (`store.splits.stored_splits`), and the row it replaces stays stored."""
    withdrawn = {(r.split.symbol, r.split.ex_date): r for r in changes.redated}
    return [
        {
            "symbol": symbol,
            "action_date": day,
            "kind": "SPLIT",
            "amount": None,
            "detail": r.withdrawal(),
            "source": f"import:{fmt}",
        }
        for (symbol, day), r in withdrawn.items()
        if (symbol, day) not in storing
    ]


def unmatched_actions(conn: Connection, rows: _Rows, actions: list[dict]) -> list[str]:
    """The SPLIT and DELISTING actions the store holds of the imported symbols, dated
    within the span of their rows (after the first, on or before the last), that this
    import does not store: a corrected actions file (the split moved from the 28th to the
    29th) leaves the old row applied beside the new one, the history divided twice. Only
    a split the import's rows show on the old count is withdrawn (`actions.Redated`, and
    then not named here); the others are named (the CLI warns), never removed."""
    spans: dict[str, tuple[date, date]] = {}
    for symbol, day in rows.seen:
        first, last = spans.get(symbol, (day, day))
        spans[symbol] = (min(first, day), max(last, day))
    if not spans:
        return []
    c = tables.corporate_actions.c
    where = [c.kind.in_(("SPLIT", "DELISTING")), c.symbol.in_(sorted(spans))]
    ours = {(a["symbol"], a["action_date"], a["kind"]) for a in actions}
    return [
        f"{r['symbol']} {r['action_date'].isoformat()} {r['kind']} {r['amount']:g} ({r['source']})"
        for r in sorted(current_rows(conn, tables.corporate_actions, where=where), key=lambda r: r["action_date"])
        if r["amount"] is not None
        and spans[r["symbol"]][0] < r["action_date"] <= spans[r["symbol"]][1]
        and (r["symbol"], r["action_date"], r["kind"]) not in ours
    ]


@dataclass
class _Rows:
    """What the pass over a source's rows gathers beside the price rows themselves."""

    source: str  # the rows' `source` column
    copies: dict[date, date]  # the days left out as copies of the one before (`repeated_days`)
    symbol_on: Callable[[str, date], str]  # the symbol a row is stored under (the file's renames)
    delistings: dict[str, date] = field(default_factory=dict)  # symbol -> its delisting row's ex-date (the latest)
    delist_after: int = DELIST_AFTER_SESSIONS  # the delisting rule's sessions (`delisting_date`)
    names: dict[str, tuple] = field(default_factory=dict)  # symbol -> (date, name) of its latest row that states one
    stated: dict[str, tuple] = field(default_factory=dict)  # symbol -> (date, type) of its latest row that states one
    first_day: dict[str, date] = field(default_factory=dict)  # symbol -> its first priced day
    last_day: dict[str, date] = field(default_factory=dict)  # symbol -> its last priced day
    seen: set[tuple] = field(default_factory=set)  # (symbol, date) of each price row taken
    unread: frozenset[tuple] = frozenset()  # (symbol, date) of each bad row that names both (`unread_rows`)
    indices: set[str] = field(default_factory=set)  # the market indices met
    levels: dict[tuple, dict] = field(default_factory=dict)  # (index, date) -> its index_levels row

    def take(self, item: dict | Bad, report: ImportReport) -> dict | None:
        """The price row to store for a row read, or None: a bad row (listed in the report),
        a second row for a symbol and day (`second_rows`: counted in the report, the
        disagreeing ones listed), an index (its level is kept) or a row of a copied day. The
        row keeps its `_line` (file:line) for `_flush` to name it where it changes a stored row."""
        if isinstance(item, Bad):
            report.bad_rows.append(str(item))
            self.unread |= unread_rows([item], self.symbol_on)
            return None
        item.pop("currency", None)  # read in the first pass: the import's one currency (`stated_currency`)
        if is_index_row(item):
            item.pop("_line")
            self._keep_level(item)
            return None
        if item["trading_date"] in self.copies:
            return None
        symbol, day = self.symbol_on(item["symbol"], item["trading_date"]), item["trading_date"]
        item["symbol"] = symbol
        if (symbol, day) in self.seen:
            return None
        self.seen.add((symbol, day))
        report.rows_read += 1
        self.first_day[symbol] = min(day, self.first_day.get(symbol, day))
        self.last_day[symbol] = max(day, self.last_day.get(symbol, day))
        _latest(self.names, symbol, day, item.pop("name", None) or None)
        _latest(self.stated, symbol, day, item.pop("instrument_type", None))
        item["source"] = self.source  # the row read becomes the row to store: no copy of it is kept
        return item

    def _keep_level(self, item: dict) -> None:
        """An index's level: its row's close when that is positive, on a day that is not a
        copy; the first row for an index and day stands."""
        self.indices.add(item["symbol"])
        key = (item["symbol"], item["trading_date"])
        if (
            item["trading_date"] not in self.copies
            and item.get("close") is not None
            and item["close"] > 0
            and key not in self.levels
        ):
            self.levels[key] = {
                "symbol": item["symbol"],
                "trading_date": item["trading_date"],
                "level": float(item["close"]),
                "source": self.source,
            }


def _store_levels(conn: Connection, rows: _Rows) -> int:
    c = tables.index_levels.c
    days = [d for _, d in rows.levels]
    return append_history(
        conn,
        tables.index_levels,
        list(rows.levels.values()),
        scope=[c.trading_date.between(min(days), max(days)), c.symbol.in_(sorted(rows.indices))],
    ).inserted


def index_moves(levels: Iterable[dict], stored: Iterable[dict] = ()) -> list[str]:
    """The import's index levels beyond T0's price band (SANITY_BAND, `actions.band_moves`)
    from the index's previous level, one line each: a misprinted level (a point or a digit
    lost: 101.5 then 1015) was stored as the track record's benchmark without a word, where
    a name's close past the band is reported. Stored as given. `stored`: each index's
    stored level before its first imported one (`levels_before`), the previous level of
    that one (a nightly one-day file's level was compared with nothing), never a move itself."""
    rows = [*stored, *levels]
    frame = pd.DataFrame([{"symbol": r["symbol"], "date": r["trading_date"], "close": r["level"]} for r in rows])
    moves = band_moves(frame, SANITY_BAND) if len(frame) else []
    return [
        f"{m.symbol} {m.day.isoformat()}: {m.previous_close:g} -> {m.close:g} ({m.move:+.1%}), beyond T0's band "
        f"({band_text(SANITY_BAND)}) from its previous level ({m.previous_day.isoformat()}): stored as given, "
        "check the file"
        for m in moves
    ]


def levels_before(conn: Connection, levels: Iterable[dict]) -> list[dict]:
    """Each index's latest stored level (its current version) before its first day in
    `levels`: what a follow-up import's first level is compared with (`index_moves`), as a
    name's first close is with its last stored one (`actions.previous_closes`)."""
    first: dict[str, date] = {}
    for row in levels:
        first[row["symbol"]] = min(row["trading_date"], first.get(row["symbol"], row["trading_date"]))
    c, found = tables.index_levels.c, []
    for symbol, day in sorted(first.items()):
        last = conn.execute(select(func.max(c.trading_date)).where(c.symbol == symbol, c.trading_date < day))
        if (before := last.scalar()) is not None:
            found += current_rows(conn, tables.index_levels, where=[c.symbol == symbol, c.trading_date == before])
    return found


def _latest(found: dict[str, tuple], symbol: str, day: date, value: object) -> None:
    """Keep `value` as `symbol`'s (day, value) when it states one and is the latest so far."""
    if value is not None and (symbol not in found or day >= found[symbol][0]):
        found[symbol] = (day, value)


@dataclass(frozen=True)
class Held:
    """What the store held of the instruments before an import wrote a row: each one's
    current version, its last priced day (the day its stored name and type are as of) and
    the sessions (the days with any price row)."""

    versions: dict[str, dict] = field(default_factory=dict)  # symbol -> current instruments row
    last_priced: dict[str, date] = field(default_factory=dict)  # symbol -> its latest eod_prices day
    sessions: frozenset[date] = frozenset()  # the days the store holds prices of

    @classmethod
    def read(cls, conn: Connection) -> Held:
        c = tables.eod_prices.c
        versions = {r["symbol"]: r for r in current_rows(conn, tables.instruments)}
        last = conn.execute(select(c.symbol, func.max(c.trading_date)).group_by(c.symbol)).all()
        sessions = frozenset(conn.execute(select(c.trading_date).distinct()).scalars())
        return cls(versions, dict(last), sessions)

    def newer(self, symbol: str, found: tuple | None, column: str, made_up: str) -> object:
        """The file's value (`found`: its latest row that states one, (day, value)), unless
        the file states none, or the store's was stated and is dated later (the store holds
        prices of the symbol after that row: an older file imported after a newer one): then
        the stored one. A stored value equal to `made_up`, what the importer gives a symbol
        no file named or typed (the symbol as its name, the inferred type), states nothing."""
        stored = self.versions.get(symbol, {}).get(column)
        if found is None:
            return stored
        as_of = self.last_priced.get(symbol)
        stated_later = stored is not None and stored != made_up and as_of is not None and found[0] < as_of
        return stored if stated_later else found[1]


def delisting_date(sessions: Sequence[date], last: int, after_sessions: int = 1) -> date | None:
    """The delisting date of a name whose rows end on `sessions[last]` and do not resume
    (`sessions`: the days with any row, in order): the session after its last row, once
    `after_sessions` sessions have passed without a row; None before (a shorter gap may be
    a suspension). The one rule of the replay (`ReplayMarket`, which serves its files' days
    in turn: from the first session without a row) and the importer (`_delisted`: after
    the delisting rule's sessions, as its files may end before a name's next row)."""
    return sessions[last + 1] if len(sessions) - 1 - last >= after_sessions else None


def _delisted(rows: _Rows, held: Held) -> dict[str, date | None]:
    """Each priced symbol's delisting date, its last row the files' or the store's, whichever
    is later: its delisting row's ex-date (at the earliest the day after that last row: a
    name is listed while it trades), else `delisting_date` over the files' and the store's
    sessions, else the stored date where it is after that last row (a T0 delivery's); a
    name whose rows resume after a stored date is listed again."""
    sessions = sorted(held.sessions | {day for _, day in rows.seen})
    found: dict[str, date | None] = {}
    for symbol, day in rows.last_day.items():
        last = max(day, held.last_priced.get(symbol, day))
        stored = held.versions.get(symbol, {}).get("delisted_on")
        if symbol in rows.delistings:
            found[symbol] = max(rows.delistings[symbol], last + timedelta(days=1))
        else:
            ruled = delisting_date(sessions, bisect_left(sessions, last), rows.delist_after)
            found[symbol] = ruled or (stored if stored is not None and stored > last else None)
    return found


def _instrument(symbol: str, rows: _Rows, held: Held, given: tuple[dict, dict]) -> dict:
    """`symbol`'s instruments row: its current version (a column the files do not know, a
    sector, kept) under `given`'s second part (what the import states: the currency the
    files state or the caller gives, the source), its first part the defaults of a new
    symbol (board, the assumed currency), the latest name and type by date
    (`Held.newer`; a new symbol with no name is named by its symbol, a type nobody stated is
    inferred from code and name) and the earliest listing date, the stored one or the first
    priced day of the files."""
    stored = {k: v for k, v in held.versions.get(symbol, {}).items() if k not in ("id", "recorded_at")}
    name = held.newer(symbol, rows.names.get(symbol), "name", symbol) or symbol
    inferred = str(infer_instrument_type(symbol, stored.get("name")))  # the stored type, if nobody stated it
    kind = instrument_type(symbol, name, held.newer(symbol, rows.stated.get(symbol), "instrument_type", inferred))
    listed = min(d for d in (rows.first_day[symbol], stored.get("listed_on")) if d is not None)
    defaults, stated = given
    merged = {**defaults, **stored, **stated}
    return {**merged, "symbol": symbol, "name": name, "listed_on": listed, "instrument_type": str(kind)}


def _store_instruments(
    conn: Connection, rows: _Rows, held: Held, given: tuple[dict, dict], report: ImportReport
) -> None:
    """Each priced symbol once (`_instrument`): a follow-up import of files without names,
    types or currency keeps the stored ones (and the stored board: the importer's is a
    default), an older file's name does not replace a newer one's, and the listing date
    only moves earlier; the delisting date is `_delisted`'s."""
    defaults, stated = given
    delisted = _delisted(rows, held)
    found = [
        {**_instrument(s, rows, held, (defaults, {**stated, "source": rows.source})), "delisted_on": delisted[s]}
        for s in sorted(rows.first_day)
    ]
    report.not_ordinary = {r["symbol"]: r["instrument_type"] for r in found if not is_ordinary(r["instrument_type"])}
    report.instruments_inserted = append_history(conn, tables.instruments, found).inserted
    report.instruments = len(found)


def _retire_renamed(conn: Connection, rows: _Rows, held: Held) -> int:
    """A new version of each stored instrument a delisting row or a rename on a running
    store stops that the files hold no row of, delisted from the row's ex-date (at the
    earliest the day after its last stored row): T1's pre-flight stops expecting its rows,
    and the market's lists leave it out. The instruments stored."""
    retired = []
    for symbol, day in sorted(rows.delistings.items()):
        stored = held.versions.get(symbol)
        if symbol in rows.first_day or stored is None:
            continue  # priced by the files: `_delisted` dates it
        last = held.last_priced.get(symbol)
        on = max(day, last + timedelta(days=1)) if last is not None else day
        if stored.get("delisted_on") != on:
            kept = {k: v for k, v in stored.items() if k not in ("id", "recorded_at")}
            retired.append({**kept, "delisted_on": on, "source": rows.source})
    return append_history(conn, tables.instruments, retired).inserted if retired else 0


@dataclass(frozen=True)
class Written:
    """What an import's price rows did to the store (`_flush`): `new` rows of a name and day
    it did not hold, and the stored rows `changed` (a correction each: the current version
    now, the stored one kept as an earlier version)."""

    new: int = 0
    changed: tuple[Correction, ...] = ()

    def __add__(self, other: Written) -> Written:
        return Written(self.new + other.new, self.changed + other.changed)


def _flush(conn: Connection, batch: list[dict]) -> Written:
    """Write a batch of price rows (each with its file:line as `_line`, a no-trade row
    without): a row that differs from the stored one of its name and day replaces it, a
    correction (`Correction`, the first field that differs); one that repeats it is not
    written. The rule of an import against the store, the module's docstring says it."""
    if not batch:
        return Written()
    where = {(row["symbol"], row["trading_date"]): row.pop("_line", row["source"]) for row in batch}
    days = [row["trading_date"] for row in batch]
    scope = [
        tables.eod_prices.c.trading_date.between(min(days), max(days)),
        tables.eod_prices.c.symbol.in_({row["symbol"] for row in batch}),
    ]
    result = append_history(conn, tables.eod_prices, batch, scope=scope)
    changed = tuple(_correction(old, new, where) for old, new in result.replaced)
    return Written(result.inserted - len(changed), changed)


def _correction(stored: dict, new: dict, where: dict[tuple, str]) -> Correction:
    """`new` replacing the stored row of its name and day, named by the first field that
    differs (a column outside the compared fields, `halted`, where none of them does)."""
    content = (k for k in new if not tables.eod_prices.c[k].info.get("provenance"))
    field = first_difference(stored, new) or next(k for k in content if stored.get(k) != new[k])
    key = (new["symbol"], new["trading_date"])
    return Correction(*key, field, stored.get(field), new.get(field), stored["source"], where[key])
