"""Real-history replay: real end-of-day files served as the exchange, one trading day at a time.

`ReplayMarket(path)` reads a file or a folder in any format the historical importer reads
(NSE daily, NSE per-company, the generic OHLCV CSV; `ingest.importers`' own readers, so a
row the importer refuses is refused here too) and offers what `SimulatorSite` and
`backfill()` ask of a market: `days`, `calendar`, `day(d)` with bars, notices,
fundamentals, securities and events, `is_simulated(d)` and `seed`. So
`SimulatorSite(ReplayMarket(path))` serves real history through the same exchange pages,
and `backfill(engine, settings, n, end, market=replay)` delivers it through the same T0
code (client, parsers, validation, delivery) that scrapes a live day.

What the replay serves, and the rules it follows:
- Calendar: the dates of the files (`market.clock.DatedCalendar`), less the days that
  copy the one before verbatim (`ingest.importers.formats.repeated_days`, listed in
  `source.repeated_days`: a crawler's record of a holiday is not a session); instruments and names
  from the files, all on the MAIN board, sector unknown; the currency is the one the
  rows state (`stated_currency`, the importer's rule), else the one given, else the
  format's (KES for NSE: `source_currency`).
- Market indices in the files (the NSE's ^NASI, ^N20I, ...) are not securities: they are
  left out of the quotes and listed in `source.indices`; their levels (the file's close)
  are served in the trade-quotes page's index table, as an exchange publishes them, and
  T0 stores them as the market's benchmark (`index_levels`).
- What the files lack is served as missing ('-' on the page, NULL in the store), never
  invented: open, bid, ask, trades, value traded where the format has none;
  fundamentals (the table is served empty); news and disclosures (see below).
- Listing and delisting: an instrument is listed from the first day it appears in the
  files (a LISTING notice when that is after the first replayed day) and delisted on the
  first session after its last appearance (a DELISTING notice), when the files hold the
  delisting rule's sessions after it (`delisting_date`, the importer's rule) or a
  delisting row names it; else it stays listed to the files' end, its absent days no-trade
  rows (the files may end before a thin name's next trade). Telling a delisting from a
  long suspension needs the later files: the one place where a replayed day uses what
  came after it, and only for that status.
- A listed name absent from a day's file is served as a no-trade row: volume 0, the
  close and previous close at its last close (the exchange convention for an untraded
  name, which the NSE files follow themselves from 2009 on, where earlier files simply
  leave untraded names out), no high, low, bid or ask, status `NOT IN FILE`
  (`ingest.importers.untraded.NO_TRADE`; the importer stores the same rows, in gaps
  shorter than the delisting rule's count). A row the importer's reader refuses (e.g. a
  close of '-') is listed in `bad_rows`, and where its cells name the symbol, the name is
  served on neither page that day (`ingest.importers.untraded.unread_rows`, the
  importer's rule: it held a row, so it is not absent, and T0 stores no row of it until
  the file is fixed); of a name's rows for a day the first (by file path and line) is
  served, as the importer stores it, and the others are counted in `second_rows`, those
  that disagree with it listed (`ingest.importers.formats.second_rows`).
- A close beyond the band of `move_band` around the previous close (T0's test,
  `ingest.exchange.band.beyond_band`: a factor either way) is served with the row status
  CONFIRMED MOVE: in a replay the file is the record of what traded (most such moves in
  the NSE files are splits and bonus issues the files do not record), so T0's
  validation accepts the move, with a warning in the delivery manifest, as it accepts
  one a SPLIT notice explains. A live exchange marks no row so: its validation is
  unchanged. The move is measured against the previous served close (the store's
  latest close when days are delivered in order, as backfill and T0 deliver them) and
  against the row's own previous close (what T0 uses on the first day it delivers).
  Those no SPLIT notice explains are listed in `source.confirmed_moves`, which
  `ReplaySource.lines` prints as the importer reports them.
- Capital changes: a corporate-actions file beside the prices (`ingest.importers.actions`,
  the importer's own: `corporate_actions.csv`, or `actions=`) is served as the exchange
  serves them. A split, bonus issue, consolidation or rights issue is a SPLIT notice on
  the first replayed session on or after its ex-date with a row of the name on the new
  count (`_first_print`: not an untraded row at the old close), its amount the factor (shares after
  per share before; a rights issue's by the close before the ex-date), so T0 stores it
  and the panels, the ledger and the AI book read it as a live SPLIT; one whose factor
  does not explain the served close (the files are already on the new count, or the row
  is wrong) is not served and is listed in `source.capital_changes`, as T0 would refuse
  the day. A delisting row's price is the amount of the DELISTING notice the replay
  serves after the name's last day (the value holders received: portfolio/delisting.py).
  A rename row (`ingest.importers.renames`, the importer's rule) joins the old symbol's
  rows before its ex-date to the new symbol's: the replay serves one instrument under the
  new symbol from the old one's first row, with no LISTING notice on the ex-date and no
  DELISTING notice for the old symbol (it is never served), so a position held across the
  rename is the same position and its history runs on; the file's actions of the old
  symbol up to the ex-date are the new symbol's. Each rename applied and each case the
  rule does not apply (a reused ticker, the old symbol's rows after the ex-date, ...) is
  listed in `source.capital_changes`. A file with an unreadable row is refused
  (`actions.readable_actions`): the capital change it carries would be lost.
- Previous close: the file's where it has one, else the previous served close.
- Instrument types (`market.instruments`): the type a file states (a generic OHLCV file's
  `instrument_type` or `type` column; a name's latest row that states one), else the
  market's inference from its code and name (KPLC-P4 and KPLC-P7 PREFERENCE, the NSE's
  ETF and REIT FUND, the rest ORDINARY). `source.types` says where they came from, and a
  source without a type column says so once, in one log line (never per row);
  `instrument_types` holds them (symbol -> type) and `not_ordinary` the names the AI
  mandate leaves out. Each served security carries `instrument_type`; the site's
  securities page does not show it yet, so T0 stores the types only once the page and its
  parser carry the column (until then the store infers them the same way).
- Text and macro stay simulated: the replay carries no news and no disclosures (the
  simulator's news are drawn together with its own prices, whose drift they drive;
  attached to real prices they would be noise, and invented headlines about real, named
  companies would mislead). The site still serves the feed, empty and titled as a
  simulated source, so T1's text step runs unchanged, and serves the simulator's macro
  sources labelled "(simulated)".
"""

from __future__ import annotations

import bisect
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from ingest.exchange.band import band_text, beyond_band
from ingest.exchange.validation import CONFIRMED_MOVE
from ingest.importers.actions import (
    CorporateAction,
    LimitMove,
    actions_beside,
    band_moves,
    explains,
    file_splits,
    largest_moves,
    on_joined_series,
    on_new_count,
    readable_actions,
)
from ingest.importers.files import (
    delisting_date,
    read_known,
    resolve_source,
    row_currencies,
    source_currency,
    source_lacks,
    source_types,
    stated_currency,
)
from ingest.importers.formats import Bad, describe_repeated, is_index_row, repeated_days, second_rows
from ingest.importers.renames import handovers
from ingest.importers.untraded import NO_TRADE, NOT_IN_FILE, unread_rows
from ingest.simulator.market import SimulatedDay
from market.clock import DatedCalendar, exchange_date, utc_now, write_replay_dates
from market.errors import InvalidInputError
from market.instruments import InstrumentType, instrument_type, is_ordinary
from market.settings import DELIST_AFTER_SESSIONS, Settings
from store.splits import Split

log = logging.getLogger(__name__)

BOARD = "MAIN"  # the files do not say; the page has a MAIN and a JUNIOR board
ABSENT_STATUS = NOT_IN_FILE
RECENT_DAYS = 16
SHOWN_BAD_ROWS = 5  # a replay's unreadable rows listed one a line by `ReplaySource.lines`; the rest counted
_FIELDS = ("close", "low", "high", "prev_close", "volume", "open", "bid", "ask", "trades", "value_traded")
_CLOSES = ["symbol", "date", "close"]  # the frame the renames module reads handovers from
_NAMED = [*_CLOSES, "name"]  # the frame it reads renames and reused tickers from


@dataclass
class ReplaySource:
    path: Path
    format: str
    files: int
    currency: str
    lacks: list[str]
    bad_rows: list[str] = field(default_factory=list)
    second_rows: list[str] = field(default_factory=list)  # a name's rows for a day after its first (`SecondRows`)
    indices: set[str] = field(default_factory=set)  # market indices in the files, not served as securities
    repeated_days: list[str] = field(default_factory=list)  # days left out as copies of the one before
    types: str = ""  # where the instrument types came from: a type column, or the market's inference
    actions_file: str | None = None  # the corporate-actions file served beside the prices
    capital_changes: list[str] = field(default_factory=list)  # what of it was served, and what not and why
    band: float = 0.5  # the move band its CONFIRMED MOVEs are beyond (`ReplayMarket(move_band=)`)
    confirmed_moves: list[LimitMove] = field(default_factory=list)  # served as CONFIRMED MOVE, no notice explaining

    def lines(self) -> list[str]:
        """What of the files a person should check, one line each, as `exchange serve
        --replay`, `backfill` and `demo --market` print it: the unreadable rows (the first
        SHOWN_BAD_ROWS, then how many more), a name's second rows for a day, the corporate
        actions and, as the importer reports them (`largest_moves`), the closes beyond the
        band that no notice explains, served as CONFIRMED MOVEs and so stored and booked as
        they are (an unadjusted split is a loss for a holder). The demo and backfill said
        nothing of them, nor of the rows they could not read."""
        out = [f"bad row (not served): {bad}" for bad in self.bad_rows[:SHOWN_BAD_ROWS]]
        if len(self.bad_rows) > SHOWN_BAD_ROWS:
            out.append(f"... and {len(self.bad_rows) - SHOWN_BAD_ROWS} more bad rows")
        out += self.second_rows
        named = f" ({self.actions_file})" if self.actions_file else ""
        out += [f"corporate actions{named}: {line}" for line in self.capital_changes]
        if not self.confirmed_moves:
            return out
        out.append(
            f"moves beyond T0's band ({band_text(self.band)}) that no corporate action explains: "
            f"{len(self.confirmed_moves)}, served as CONFIRMED MOVE as the files have them (not adjusted: "
            "misprints or capital changes to check; a corporate_actions.csv beside the files adjusts them)"
        )
        return out + largest_moves(self.confirmed_moves)


@dataclass(frozen=True)
class _Read:
    """The files' rows (`ReplayMarket._read`), copied days still in."""

    items: list[dict]  # the rows read, indices left out
    names: dict[str, tuple[date, str]]  # symbol -> (date, name) of its latest row that names it
    stated: dict[str, tuple[date, str]]  # symbol -> (date, type) of its latest row that states one
    levels: dict[date, dict[str, float]]  # day -> index -> level (the file's close)


class ReplayMarket:
    """Real end-of-day history, offered as a market the exchange site can serve.

    `path`: a file or a folder of .csv files; `fmt`: auto (detected from the header, as
    the importer does), nse-daily, nse-company or ohlcv; `currency`: overrides the
    format's; `seed`: of the simulated macro economy served beside it; `move_band`: a
    close beyond this band around the previous one (`beyond_band`) is served as a
    CONFIRMED MOVE (give T0's price band); `delist_after`: the delisting rule's sessions, a ticker whose name
    changes across a gap that long is two instruments (`renames.Reuse`). Unreadable rows
    are skipped and listed in `source.bad_rows`; a path without any readable row is an
    InvalidInputError.
    """

    replayed = True  # the site labels the simulated parts (news feed, macro sources)

    def __init__(
        self,
        path: Path | str,
        *,
        fmt: str = "auto",
        currency: str | None = None,
        seed: int = 7,
        move_band: float = 0.5,
        actions: Path | None = None,
        delist_after: int = DELIST_AFTER_SESSIONS,
    ) -> None:
        fmt, files = resolve_source(Path(path), fmt)
        self.seed = seed  # of the simulated macro economy served beside the replay
        self.move_band = move_band
        self.delist_after = delist_after  # a ticker whose name changes across a gap this long is split
        self.source = ReplaySource(
            Path(path), fmt, len(files), source_currency(fmt, currency), source_lacks(fmt, files)
        )
        self.source.types = source_types(fmt, files)
        if self.source.types.startswith("no instrument_type column"):
            log.info("replay of %s: %s", self.source.path, self.source.types)
        actions_path = actions if actions is not None else actions_beside(Path(path))
        on_series = self._load(files, self._actions(actions_path))
        # the one currency the rows state (the importer's rule), else the given one or the format's
        stated, unstated = self._currencies
        self.source.currency = stated_currency(stated, currency, unstated) or self.source.currency
        self.currency = self.source.currency
        self.calendar = DatedCalendar(self.days)
        self._index = {d: i for i, d in enumerate(self.days)}
        self._capital = self._capital_notices(actions_path, on_series)
        self.source.band, self.source.confirmed_moves = move_band, self._confirmed_moves()
        self._recent: OrderedDict[date, SimulatedDay] = OrderedDict()

    # ---- what the site and backfill ask of a market ---------------------------------
    def is_simulated(self, day: date) -> bool:
        """Whether this market has `day` (the site's name for it: a day it can serve)."""
        return day in self._index

    def day(self, day: date) -> SimulatedDay:
        """The day as the site serves it (read-only: the same object is handed out again).
        The last few are kept: one delivery reads a day three times (quotes, fundamentals,
        securities) and the news feed ten days at once."""
        if day not in self._index:
            raise KeyError(f"{day.isoformat()} is not a day in the replayed files")
        if day not in self._recent:
            i = self._index[day]
            self._recent[day] = SimulatedDay(
                day=day,
                index=i,
                bars=self._bars(i),
                notices=self._notices(i),
                fundamentals=[],
                securities=self._securities(i),
                events=[],
                indices=[{"symbol": k, "level": v} for k, v in sorted(self._index_levels.get(day, {}).items())],
            )
            while len(self._recent) > RECENT_DAYS:
                self._recent.popitem(last=False)
        return self._recent[day]

    @property
    def symbols(self) -> list[str]:
        return list(self._symbols)

    @property
    def not_ordinary(self) -> dict[str, InstrumentType]:
        """The replayed names that are not ordinary shares, with their types."""
        return {s: k for s, k in self.instrument_types.items() if not is_ordinary(k)}

    # ---- loading ----------------------------------------------------------------------
    def _actions(self, path: Path | None) -> list[CorporateAction]:
        """The corporate-actions file's actions; one with an unreadable row is refused
        (`actions.readable_actions`)."""
        if path is None:
            return []
        actions = readable_actions(path)
        self.source.actions_file = str(path)
        return actions

    def _load(self, files: list[Path], actions: list[CorporateAction]) -> list[CorporateAction]:
        """Read the files (`_read`), leave out the copied days, put each row under the
        symbol the file's renames give it, and set the days, the symbols with their names
        and types, and the arrays the days are served from; the file's actions on the joined
        series, each once (`on_joined_series`, the importer's rule)."""
        read = self._read(files)
        self._currencies = row_currencies(read.items)  # the currencies the rows state (`stated_currency`)
        copies = repeated_days(read.items)
        self.source.repeated_days = describe_repeated(copies)
        items, seconds = second_rows(item for item in read.items if item["trading_date"] not in copies)
        self.source.second_rows = seconds.lines()
        rows = pd.DataFrame(
            [(i["symbol"], i["trading_date"], i["close"], i.get("name")) for i in items], columns=_NAMED
        )
        joined = on_joined_series(rows, actions, self.delist_after)
        renames = joined.renames
        if renames.applied or renames.reused:
            items = [{**i, "symbol": renames.symbol_on(i["symbol"], i["trading_date"])} for i in items]
        self.source.capital_changes += [f"repeated row: {r}" for r in joined.repeated]
        self.source.capital_changes += renames.lines() + list(renames.warnings)
        read = _latest(items, read.levels)  # the names and types of the rows served
        closes = pd.DataFrame([(i["symbol"], i["trading_date"], i["close"]) for i in items], columns=_CLOSES)
        self.source.capital_changes += [h.line() for h in handovers(closes)]
        self._index_levels: dict[date, dict[str, float]] = {
            d: levels for d, levels in read.levels.items() if d not in copies
        }
        if not items:
            problem = f" (first problem: {self.source.bad_rows[0]})" if self.source.bad_rows else ""
            raise InvalidInputError(f"{self.source.path} holds no readable {self.source.format} rows{problem}")
        self.days: list[date] = sorted({item["trading_date"] for item in items})
        self._symbols: list[str] = sorted({item["symbol"] for item in items})
        self._names = {s: read.names.get(s, (None, s))[1] for s in self._symbols}
        self.instrument_types: dict[str, InstrumentType] = {
            s: instrument_type(s, read.names.get(s, (None, None))[1], read.stated.get(s, (None, None))[1])
            for s in self._symbols
        }
        self._column = {s: k for k, s in enumerate(self._symbols)}
        self._fill(items, unread_rows(self._bad, renames.symbol_on))
        self._list_to_the_end(joined.actions)
        return list(joined.actions)

    def _list_to_the_end(self, actions: Sequence[CorporateAction]) -> None:
        """A name whose rows end fewer than the delisting rule's sessions before the files'
        last day (`delisting_date`, the importer's rule) is listed to that day, its absent
        days no-trade rows, unless a delisting row says it left: the files do not show it
        gone, they may end before its next trade. A thin name the files leave out when it
        does not trade was DELISTED on the session after its last row, so `make demo
        MARKET=` delisted every junior name without a trade on the files' last days."""
        delisted = {a.symbol for a in actions if a.kind == "DELISTING"}
        end = len(self.days) - 1
        for symbol, k in self._column.items():
            if symbol not in delisted and delisting_date(self.days, int(self._last[k]), self.delist_after) is None:
                self._last[k] = end

    def _capital_notices(self, path: Path | None, actions: list[CorporateAction]) -> dict[int, list[dict]]:
        """The corporate-actions file's SPLIT notices (`actions`: on the joined series) by
        the replayed session they are served on, and its delisting values
        (`_delisting_value`); see the module's docstring."""
        self._delisting_value: dict[str, float] = {}
        if path is None:
            return {}
        self._delisting_value = {a.symbol: a.price for a in actions if a.kind == "DELISTING" and a.price}
        splits, warnings = file_splits(self._file_closes(), actions)
        self.source.capital_changes.extend(w for w in warnings if "does not explain" not in w)
        served: dict[int, list[dict]] = {}
        for split in splits:
            k = self._column.get(split.symbol)
            i = self._first_print(split, k) if k is not None else None
            previous = self._previous_close(i, k) if i is not None else None
            what = f"{split.symbol} {split.ex_date.isoformat()} x{split.factor:g}"
            if previous is None or not explains(previous, float(self._served_close[i, k]), split.factor):
                self.source.capital_changes.append(f"{what}: not served, it does not explain the close on its session")
                continue
            detail = f"{split.factor:g} shares for each one held (corporate actions of {Path(path).name})"
            served.setdefault(i, []).append(
                {"symbol": split.symbol, "kind": "SPLIT", "amount": split.factor, "detail": detail}
            )
            self.source.capital_changes.append(f"{what}: served as a SPLIT notice on {self.days[i].isoformat()}")
        return served

    def _file_closes(self) -> pd.DataFrame:
        """The files' closes served (symbol, date, close), a no-trade row's carried close left out."""
        k, i = np.nonzero(self._present.T)  # by symbol, then day
        days, symbols = np.array(self.days, dtype=object), np.array(self._symbols, dtype=object)
        return pd.DataFrame({"symbol": symbols[k], "date": days[i], "close": self._served_close[i, k].astype(float)})

    def _confirmed_moves(self) -> list[LimitMove]:
        """The closes beyond the move band from the name's previous close (`band_moves`, the
        importer's report of them) but those a SPLIT notice served on that day explains."""
        noticed = {(n["symbol"], self.days[i]) for i, notices in self._capital.items() for n in notices}
        return [m for m in band_moves(self._file_closes(), self.move_band) if (m.symbol, m.day) not in noticed]

    def _first_print(self, split: Split, k: int) -> int | None:
        """The first replayed session on or after the split's ex-date with a row of symbol
        `k` on the new count (`on_new_count`): the first close on the new count (an
        untraded name's served close is its last one, on the old count, until then; so is
        the close of a file's untraded row that carries it unadjusted, and served on that
        day the split was refused and the next trade's fall was a loss)."""
        start = bisect.bisect_left(self.days, split.ex_date)
        for i in start + np.flatnonzero(self._present[start:, k]):
            previous, close = self._previous_close(int(i), k), float(self._served_close[i, k])
            if on_new_count(previous, close, float(self._values["volume"][i, k]), split.factor):
                return int(i)
        return None

    def _read(self, files: list[Path]) -> _Read:
        """Every readable row of the files (an unreadable one is listed in
        `source.bad_rows`); an index (listed in `source.indices`) gives its levels (a
        positive close; the first row of a day stands), not rows."""
        today = exchange_date(utc_now())  # a row dated after it is a bad row, as the importer reads it
        self._bad: list[Bad] = []  # the price files' bad rows (`unread_rows`)
        items: list[dict] = []
        levels: dict[date, dict[str, float]] = {}
        for item in (item for file in files for item in read_known(self.source.format, file, today)):
            if isinstance(item, Bad):
                self.source.bad_rows.append(str(item))
                self._bad.append(item)
                continue
            symbol, day = item["symbol"], item["trading_date"]
            if is_index_row(item):
                self.source.indices.add(symbol)
                if item.get("close") is not None and item["close"] > 0:
                    levels.setdefault(day, {}).setdefault(symbol, float(item["close"]))
                continue
            items.append(item)
        return _latest(items, levels)

    def _fill(self, items: list[dict], unread: frozenset[tuple[str, date]]) -> None:
        """The arrays a day is served from, a row per day and a column per symbol: whether
        the symbol is in the day's file, whether its row there could not be read (`unread`,
        `unread_rows`), its figures (NaN where the file has none), its first and last day in
        the files (the last listed one: `_list_to_the_end`), and the close served (the last
        one in a file)."""
        row = {d: i for i, d in enumerate(self.days)}
        shape = (len(self.days), len(self._symbols))
        self._present = np.zeros(shape, dtype=bool)
        self._unread = np.zeros(shape, dtype=bool)
        for symbol, day in unread:
            if day in row and symbol in self._column:
                self._unread[row[day], self._column[symbol]] = True
        self._values = {name: np.full(shape, np.nan) for name in _FIELDS}
        for item in items:
            i, k = row[item["trading_date"]], self._column[item["symbol"]]
            self._present[i, k] = True
            for name in _FIELDS:
                value = item.get(name)
                if value is not None:
                    self._values[name][i, k] = value
        self._first = self._present.argmax(axis=0)
        self._last = len(self.days) - 1 - self._present[::-1].argmax(axis=0)
        served = np.full(shape, np.nan)
        carried = np.full(shape[1], np.nan)
        for i in range(shape[0]):
            carried = np.where(self._present[i], self._values["close"][i], carried)
            served[i] = carried
        self._served_close = served

    # ---- one day's views ----------------------------------------------------------------
    def _listed(self, i: int) -> np.ndarray:
        """The names listed on day `i` and served on it: not one whose row in the day's file
        could not be read (`unread_rows`: served as a no-trade row, it was stored as a day
        without trades at its last close), which is on neither page that day, so T0 stores
        no row of it and expects none."""
        return np.flatnonzero((self._first <= i) & (self._last >= i) & ~self._unread_on(i))

    def _unread_on(self, i: int) -> np.ndarray:
        """By symbol, whether day `i`'s file holds a row of it that could not be read, and none that could."""
        return self._unread[i] & ~self._present[i]

    def _previous_close(self, i: int, k: int) -> float | None:
        return None if i == 0 or np.isnan(self._served_close[i - 1, k]) else float(self._served_close[i - 1, k])

    def _bars(self, i: int) -> list[dict]:
        v = self._values
        bars = []
        for k in self._listed(i):
            symbol = self._symbols[k]
            previous = self._previous_close(i, k)
            bar = {"symbol": symbol, "name": self._names[symbol], "board": BOARD, "sector": None}
            if self._present[i, k]:
                file_prev = _num(v["prev_close"][i, k])
                trades = _num(v["trades"][i, k])
                close = float(v["close"][i, k])
                # T0 compares with the store's latest close, or with the row's own previous
                # close on the first day it delivers: a move beyond the band from either is
                # confirmed (the file is the record).
                far = any(p and beyond_band(p, close, self.move_band) for p in (previous, file_prev))
                bar.update(
                    {
                        "open": _num(v["open"][i, k]),
                        "high": _num(v["high"][i, k]),
                        "low": _num(v["low"][i, k]),
                        "close": close,
                        "prev_close": file_prev if file_prev is not None else previous,
                        "volume": int(v["volume"][i, k]),
                        "trades": None if trades is None else int(trades),
                        "value_traded": _num(v["value_traded"][i, k]),
                        "bid": _num(v["bid"][i, k]),
                        "ask": _num(v["ask"][i, k]),
                        "status": CONFIRMED_MOVE if far else "NEW LISTING" if self._first[k] == i and i > 0 else "",
                    }
                )
            else:
                close = float(self._served_close[i, k])
                bar.update({**NO_TRADE, "close": close, "prev_close": close, "status": ABSENT_STATUS})
            bars.append(bar)
        return bars

    def _notices(self, i: int) -> list[dict]:
        notices = []
        for k in np.flatnonzero(self._first == i) if i > 0 else []:
            notices.append(
                {
                    "symbol": self._symbols[k],
                    "kind": "LISTING",
                    "amount": None,
                    "detail": f"{BOARD} board; first day in the replayed files",
                }
            )
        for k in np.flatnonzero(self._last == i - 1) if i > 0 else []:
            symbol = self._symbols[k]
            value = self._delisting_value.get(symbol)
            notices.append(
                {
                    "symbol": symbol,
                    "kind": "DELISTING",
                    "amount": value,
                    "detail": "last day in the replayed files was the previous session"
                    + (f"; holders received {value:g} a share (corporate actions)" if value else ""),
                }
            )
        return notices + self._capital.get(i, [])

    def _securities(self, i: int) -> list[dict]:
        rows = []
        known = self.days[: i + 1]
        for k in np.flatnonzero((self._first <= i) & ~self._unread_on(i)):
            symbol = self._symbols[k]
            delisted = delisting_date(known, int(self._last[k]))
            rows.append(
                {
                    "symbol": symbol,
                    "name": self._names[symbol],
                    "board": BOARD,
                    "sector": None,
                    "listed_on": self.days[self._first[k]],
                    "delisted_on": delisted,
                    "status": "DELISTED" if delisted else "ACTIVE",
                    "instrument_type": str(self.instrument_types[symbol]),
                }
            )
        return rows


def _latest(items: list[dict], levels: dict[date, dict[str, float]]) -> _Read:
    """The rows with each symbol's name and type: those of its latest row that gives one."""
    names: dict[str, tuple[date, str]] = {}
    stated: dict[str, tuple[date, str]] = {}
    for item in items:
        symbol, day = item["symbol"], item["trading_date"]
        name, kind = item.get("name"), item.get("instrument_type")
        if name and (symbol not in names or day >= names[symbol][0]):
            names[symbol] = (day, name)
        if kind is not None and (symbol not in stated or day >= stated[symbol][0]):
            stated[symbol] = (day, kind)
    return _Read(items, names, stated, levels)


def _num(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def replay_for(settings: Settings, path: Path | str | None = None, fmt: str = "auto") -> ReplayMarket:
    """The replay of `path` (default: MARKETINTEL_REPLAY_PATH) with the settings' currency,
    seed and price band; records its trading dates so that every process started with
    MARKETINTEL_REPLAY_PATH set to the same path gets them from `default_calendar()`."""
    path = Path(path or settings.replay_path or "")
    if not str(path) or str(path) == ".":
        raise InvalidInputError("no replay path given (set MARKETINTEL_REPLAY_PATH or pass one)")
    market = ReplayMarket(
        path,
        fmt=fmt,
        currency=settings.replay_currency,
        seed=settings.simulator_seed,
        move_band=settings.price_band,
        delist_after=settings.delist_after_sessions,
    )
    write_replay_dates(settings.data_dir, path, market.days)
    return market
