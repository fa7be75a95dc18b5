"""Readers for the historical file formats. Each yields (line number, row) or a bad-row
message naming file and line; none of them invents a value a source does not carry.

- `nse-daily`: the Nairobi daily market summary, one file per day named YYYYMMDD.csv:
  header `Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;
  Previous Day Closing Price;Volume Traded`, `;`-separated, `-` where no shares traded
  (read as volume 0). Lacks open, bid, ask, trades and value traded.
- `nse-company`: the per-company twin, CODE.csv: a `;` header line but `,`-separated
  rows, dates as YYYYMMDD, `-` for no volume. Same fields, no name.
- `ohlcv`: a generic CSV with a header row; required columns `symbol,date,close,volume`
  (date YYYY-MM-DD); optional `open,high,low,prev_close,bid,ask,trades,value_traded,name`.
  Whatever optional column is absent is reported as lacking. An optional
  `instrument_type` column (or `type`) states each row's kind of security
  (`market.instruments.parse_instrument_type`: ORDINARY, PREFERENCE, FUND, DEBT, RIGHTS,
  LOCKED_IN or a synonym; a word outside the vocabulary is UNKNOWN; a blank cell states
  nothing); the row then carries it as `instrument_type`.

Instrument types: a row whose source states none (the NSE formats, an OHLCV file without
the column, a blank cell) gets the market's inference from its code and name
(`row_instrument_type`, `market.instruments.infer_instrument_type`: `-P<n>` preference
shares such as KPLC-P4, ETF/REIT funds, `^` indices, otherwise ORDINARY).

A file of any format with no row at all is a bad row of its own (`says_when_empty`:
`FILE:0: empty file`, `FILE:1: no rows`), never a session silently missing.

A day of any format whose traded rows all repeat the previous date's verbatim is a copy,
not a session (`repeated_days`), and so is a day on which no row traded and every close is
the date before's (a holiday's file): the importer, the replay and the research frames
leave it out and say so.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING

from ingest.exchange.parsers import CellError, number
from market.errors import InvalidInputError
from market.instruments import (
    InstrumentType,
    infer_instrument_type,
    instrument_type,
    is_ordinary,
    parse_instrument_type,
)
from market.money import MAX_PRICE, MAX_SHARES
from market.text import TICKER_PATTERN, asked_symbol

if TYPE_CHECKING:
    import pandas as pd

NSE_DAILY_HEADER = [
    "Code",
    "Name",
    "Lowest Price of the Day",
    "Highest Price of the Day",
    "Closing Price",
    "Previous Day Closing Price",
    "Volume Traded",
]
NSE_LACKS = ["open", "bid", "ask", "trades", "value_traded"]
OHLCV_REQUIRED = ["symbol", "date", "close", "volume"]
OHLCV_OPTIONAL = ["open", "high", "low", "prev_close", "bid", "ask", "trades", "value_traded"]
OHLCV_TYPE_COLUMNS = ("instrument_type", "type")  # the optional type column, by either name
OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "bars"}  # a header's separator, named where not commas


@dataclass
class Bad:
    where: str  # file:line
    reason: str
    symbol: str | None = None  # the name the row is of, where its cell is a ticker (`of_row`)
    day: date | None = None  # the day it is of, where that can be read

    @classmethod
    def of_row(cls, where: str, reason: str, symbol: str | None, day: date | None) -> Bad:
        """The bad row of a name and day, as far as its cells say: the name held a row that
        day, so the day is no absence to fill (`untraded.unread_rows`)."""
        try:
            named = ticker(symbol) if symbol else None
        except ValueError:
            named = None
        return cls(where, reason, named, day)

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def csv_files(folder: Path) -> list[Path]:
    """The .csv files under `folder` (recursively, sorted), by a suffix in any case: a
    Windows export's `20240103.CSV` beside `20240102.csv` was left out of the import
    without a word (only `*.csv` was looked for), and a folder of them "held no .csv files".
    Not a system's leftovers (`BYPRODUCT`): a Mac zip's `__MACOSX/._20240102.csv` and
    Excel's lock file `~$20240102.csv` are not text, and each refused the whole import."""
    root = Path(folder)
    return sorted(
        f for f in root.rglob("*") if f.suffix.lower() == ".csv" and f.is_file() and not _byproduct(f.relative_to(root))
    )


BYPRODUCT = ("._", "~$")  # AppleDouble resource files, Office's owner (lock) files


def _byproduct(relative: Path) -> bool:
    return relative.name.startswith(BYPRODUCT) or "__MACOSX" in relative.parts


def csv_text(path: Path) -> io.StringIO:
    """A price or corporate-actions file's text, read as UTF-8 (a byte-order mark dropped),
    lines as in the file (`newline=""`, for the csv module). A file in another encoding (a
    Latin-1 or Windows-1252 export, Excel's UTF-16 "Unicode text") is refused whole,
    naming the file and the line of its first byte that is not UTF-8: read with
    replacement characters, a Windows-1252 "Société Générale" was stored as the
    instrument name "Soci�t� G�n�rale" (and a name decides a row's type), and a UTF-16
    file's error quoted its bytes. So is a file with a NUL byte (UTF-16 without its mark
    reads as UTF-8 with a NUL after each letter; a damaged download): its error line
    printed the NULs, and a row's NUL was a bad row's message. The readers read every file before a row is stored, so
    nothing of the import is stored."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8 "
            "(a Latin-1, Windows-1252 or UTF-16 export is not read): nothing was imported"
        ) from None
    if "\x00" in text:  # UTF-16 without its mark decodes as UTF-8, a NUL after each letter; or not text at all
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InvalidInputError(
            f"{path}:{line}: a NUL byte is not text (a UTF-16 export, or a damaged file); save the file as UTF-8: "
            "nothing was imported"
        )
    return io.StringIO(text, newline="")


class Unaligned(str):
    """The reason a record of another width is a bad row (`named_rows`), with its cells
    named by the header's columns in order (`cells`): those before the cell that gained or
    lost a separator are where the header says, so a row whose symbol and date cells read
    as a ticker and a day names them (`_bad_ohlcv`)."""

    cells: dict[str, str]

    def __new__(cls, reason: str, cells: dict[str, str]) -> Unaligned:
        made = super().__new__(cls, reason)
        made.cells = cells
        return made


def named_rows(rows: Iterable[tuple[int, list[str]]], header: list[str]) -> Iterator[tuple[int, dict[str, str] | str]]:
    """The records after a header (`csv_rows`), each with its line: {column: trimmed cell},
    or, for a record of another width, the reason it is a bad row (`Unaligned`); blank
    records are skipped. The price files' reader and the corporate-actions file's read rows
    by it."""
    for line, fields in rows:
        if not fields or not "".join(fields).strip():
            continue
        if len(fields) != len(header):
            cells = dict(zip(header, (f.strip() for f in fields), strict=False))
            yield line, Unaligned(f"{len(fields)} fields, expected {len(header)}", cells)
        else:
            yield line, dict(zip(header, (f.strip() for f in fields)))


def csv_rows(path: Path, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """A CSV file's records (`csv_text`), each with its line (1: the header). A record
    that runs over more than one line is refused (InvalidInputError: nothing is imported):
    no cell of these files holds a line break, so it is a quote left open (`"AAA Ltd`),
    which made the csv module read the rest of the file into that cell. The rows after it
    were lost without a bad row (an instrument's name held them; in the NSE format one bad
    row of "2 fields"), and past 131,072 characters the import stopped with a traceback."""
    reader = csv.reader(csv_text(path), delimiter=delimiter)
    line = 0
    try:
        for fields in reader:
            line += 1
            if reader.line_num != line:
                raise InvalidInputError(
                    f"{path}:{line}: a quote opened on this line is not closed on it (the cell ran to line "
                    f"{reader.line_num}); nothing was imported"
                )
            yield line, fields
    except csv.Error as exc:
        raise InvalidInputError(
            f"{path}:{line + 1}: not read as CSV ({exc}: a quote left open?); nothing was imported"
        ) from None


INDEX_PREFIX = "^"  # market indices in the NSE files (^NASI, ^N20I, ...), published beside the equities


def is_index(symbol: str) -> bool:
    """A market index by its code alone (the `^` prefix): for a frame that no longer has
    the rows' names; a row read from a file is judged by `is_index_row`."""
    return infer_instrument_type(symbol) is InstrumentType.INDEX


def is_index_row(row: dict) -> bool:
    """A market index's row, not a security's: it has a level but never trades, so the
    replayed exchange does not list it, the importer does not store it (it names it) and
    the stylised facts and the benchmarks leave it out. The row's type decides
    (`row_instrument_type`): a type column's `index`, else the inference, a `^` code
    (^NASI) or the word Index in the name ("GSE-CI" "GSE Composite Index")."""
    return row_instrument_type(row) is InstrumentType.INDEX


# market.text's ticker, the API's symbol, first a letter or a digit ("-" is a file's empty cell), after an index's ^
TICKER = re.compile(rf"\^?{TICKER_PATTERN}")


def ticker(text: str, name: str = "symbol", *, index: bool = False) -> str:
    """A symbol cell (or an NSE per-company file's name), trimmed and upper case in ASCII
    letters only (`market.text.asked_symbol`, the API's rule: `str.upper()` made "lıq"
    LIQ): a letter or digit, then letters, digits, `.` and `-`, at most 20 (the symbols the
    API serves: KCB, KPLC-P4, JMMBGL7.25), after an index's `^`. Anything else is no ticker,
    and was stored as an instrument the API could not serve: a spreadsheet's `#N/A`, a name
    ("KCB Group", "Grand Total"), or `SCOM (1)` from a per-company file a browser saved
    twice, which stored SCOM's whole series again as a second company. An index's row
    (`index`: its name or type says so, "JSE INDEX" "JSE Main Index") keeps its code as
    written: it is a level, never a security the API serves."""
    symbol = asked_symbol(text.strip())
    if not symbol:
        raise ValueError(f"empty {name}")
    if not index and not TICKER.fullmatch(symbol):
        raise ValueError(f"{name} '{symbol[:40]}' is not a ticker (letters, digits, '.' and '-', at most 20)")
    return symbol


def price_cell(text: str, name: str = "price") -> float | None:
    """A price cell: the exchange page's number rule (`ingest.exchange.parsers.number`:
    digits, thousands commas in threes, an optional point; so "12,50", "1e5", "inf" and
    "nan" are refused, never read as 1250 or as no number), at most MAX_PRICE; "" or "-"
    is no price."""
    value = _cell(text, name)
    if value is not None and not 0 <= value <= MAX_PRICE:
        raise ValueError(f"{name} '{text.strip()}' is not a price (0 to {MAX_PRICE:,})")
    return value


THOUSANDS_POINT = re.compile(r"[1-9][0-9]{0,2}\.[0-9]{3}")  # "5.000": 5 shares, or 5,000 written the European way


def _volume(text: str, name: str = "volume") -> int:
    """A volume (or trades) cell: the same number rule, a whole number, at most MAX_SHARES.
    A count of one to three digits, a point and three more ("5.000", "12.000") is refused:
    a file that writes thousands with a point (1.234,50 for 1,234.50) means 5,000, and it
    was stored as 5 shares, a thousandth of the volume, while its "12.345" was a bad row.
    A whole count with one or two zero decimals ("1200.0", a spreadsheet's) is read."""
    if THOUSANDS_POINT.fullmatch(text.strip()):
        raise ValueError(
            f"{name} '{text.strip()}' is ambiguous: {text.strip().replace('.', ',')} with a point between thousands, "
            "or a decimal point"
        )
    value = _cell(text, name)
    if value is None:
        return 0
    if value != int(value) or not 0 <= value <= MAX_SHARES:
        raise ValueError(f"{name} '{text.strip()}' is not a share count (0 to {MAX_SHARES:,})")
    return int(value)


CALENDAR_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{8}")  # YYYY-MM-DD or YYYYMMDD, nothing else


def calendar_day(text: str, name: str = "date") -> date:
    """A file's date cell, YYYY-MM-DD or YYYYMMDD (the price files' `date`, the actions'
    `ex_date`). Python's `date.fromisoformat` also reads ISO week dates, so a weekly
    vendor's "2012-W01" or "2012W011" was stored as Monday 2012-01-02; they are refused, as
    "03/01/2012" (day or month first?) and "12-01-03" (which century?) are."""
    try:
        if not CALENDAR_DATE.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} '{text[:40]}' is not a date as YYYY-MM-DD (or YYYYMMDD)") from None


def _cell(text: str, name: str) -> float | None:
    try:
        return number(text)
    except CellError:
        raise ValueError(f"{name} '{text.strip()[:40]}' is not a number like 1,234.50") from None


EARLIEST_DAY = date(1900, 1, 1)  # no end-of-day file holds a session before; a spreadsheet's day 0 is 1899-12-30


def _bar(symbol: str, day: date, low: str, high: str, close: str, prev: str, volume: str) -> dict:
    """A row of any format, read and checked; `symbol` is the caller's `ticker` (an index's
    row keeps its code as written). A day before EARLIEST_DAY is refused: a spreadsheet's
    empty date cell exported as its day 0 (1899-12-30) or a year cut to 0024 was stored, and
    listed the name from that day."""
    if day < EARLIEST_DAY:
        raise ValueError(f"dated {day.isoformat()}, before {EARLIEST_DAY.isoformat()}: not a session")
    bar = {
        "symbol": symbol,
        "trading_date": day,
        "low": price_cell(low, "low"),
        "high": price_cell(high, "high"),
        "close": price_cell(close, "close"),
        "prev_close": price_cell(prev, "prev_close"),
        "volume": _volume(volume),
    }
    if bar["close"] is None or bar["close"] <= 0:
        raise ValueError(f"close '{close.strip()}' is not a positive price")
    if bar["low"] is not None and bar["high"] is not None and bar["low"] > bar["high"]:
        raise ValueError(f"low {bar['low']} is above high {bar['high']}")
    return bar


def says_when_empty(reader: Callable[[Path], Iterator[dict | Bad]]) -> Callable[[Path], Iterator[dict | Bad]]:
    """`reader`, but a file it yields nothing of (no row, no bad row) is a bad row of its
    own: `FILE:0: empty file` (no text at all) or `FILE:1: no rows` (a header, or a header
    and blank lines). A 0-byte or header-only NSE daily file was skipped without a word:
    the import exited 0 with its session missing, and the replay dropped the day too."""

    @wraps(reader)
    def read(path: Path) -> Iterator[dict | Bad]:
        said = False
        for item in reader(path):
            said = True
            yield item
        if not said:
            empty = not csv_text(path).getvalue().strip()
            yield Bad(f"{path}:0", "empty file") if empty else Bad(f"{path}:1", "no rows")

    return read


def nse_daily_columns(fields: list[str]) -> list[str] | str:
    """An NSE daily-summary header's columns, each as NSE_DAILY_HEADER names it, in the
    file's order: the NSE's seven columns in any order and any case (an export that moves a
    column keeps its rows readable by name), else why the header is refused, naming the
    columns it lacks and those it has besides. Read by position, a file whose columns moved
    was refused whole with a line that named neither, and its session was missing. A
    trailing `;` names nothing (`header_names`, the per-company reader's rule)."""
    known = {column.lower(): column for column in NSE_DAILY_HEADER}
    columns = [known.get(field.lower(), field) for field in header_names(fields)]
    if sorted(columns) == sorted(NSE_DAILY_HEADER):
        return columns
    parts = (
        _listed("it lacks", [column for column in NSE_DAILY_HEADER if column not in columns]),
        _listed("it has", [column for column in columns if column not in NSE_DAILY_HEADER]),
        _listed("it names twice", repeated_columns(columns)),
    )
    expected = ";".join(NSE_DAILY_HEADER)
    return f"header is not the NSE daily-summary header ({expected}, in any order): " + "; ".join(p for p in parts if p)


def header_names(fields: list[str]) -> list[str]:
    """A `;` header's column names, trimmed, the empty ones after the
    last name dropped: a header that ends in `;` (an export that closes a line with the
    separator) names nothing after it. The NSE readers' rule for both headers: the daily
    file's was refused whole while the per-company file's was read."""
    names = [field.strip() for field in fields]
    while names and not names[-1]:
        names.pop()
    return names


def _closed(rows: Iterable[tuple[int, list[str]]], width: int) -> Iterator[tuple[int, list[str]]]:
    """`rows` with the empty cell a closing `;` leaves after the last of `width` columns
    dropped (a record one cell wider than its header, the extra one blank)."""
    for line, fields in rows:
        yield line, fields[:width] if len(fields) == width + 1 and not fields[-1].strip() else fields


def _listed(what: str, columns: list[str]) -> str:
    return f"{what} {', '.join(repr(column[:40]) for column in dict.fromkeys(columns))}" if columns else ""


@says_when_empty
def read_nse_daily(path: Path) -> Iterator[dict | Bad]:
    """An NSE daily-summary file's rows, dated by its name (YYYYMMDD.csv): a name that is
    not a day (`20240230.csv`) is the file's bad row, as a cell that is not one is a row's
    (`calendar_day`), not a traceback that stopped the import. Its rows are read by the
    header's column names (`nse_daily_columns`)."""
    if not re.fullmatch(r"\d{8}\.csv", path.name, re.IGNORECASE):
        yield Bad(f"{path}:0", "file name is not YYYYMMDD.csv")
        return
    try:
        day = calendar_day(path.name[:8], "file name")
    except ValueError as exc:
        yield Bad(f"{path}:0", str(exc))
        return
    rows = csv_rows(path, ";")
    if (first := next(rows, None)) is None:
        return  # no text at all: `says_when_empty`'s empty file
    header = nse_daily_columns(first[1])
    if isinstance(header, str):
        yield Bad(f"{path}:1", header)
        return
    for line, row in named_rows(_closed(rows, len(header)), header):
        try:
            if isinstance(row, str):
                raise ValueError(row)
            code, name, low, high, close, prev, volume = (row[column] for column in NSE_DAILY_HEADER)
            yield {**_bar(ticker(code), day, low, high, close, prev, volume), "name": name, "_line": f"{path}:{line}"}
        except ValueError as exc:
            yield Bad.of_row(f"{path}:{line}", str(exc), row.get("Code") if isinstance(row, dict) else None, day)


# what each column of the per-company header names, in its order (the NSE's words: Lowest
# Price of the Day, Highest ..., Closing Price, Previous Day Closing Price, Volume Traded)
NSE_COMPANY_WORDS = ("date", "low", "high", "clos", "prev", "vol")


@says_when_empty
def read_nse_company(path: Path) -> Iterator[dict | Bad]:
    """An NSE per-company file's rows. Its rows are read by position, so its header must
    name the NSE's columns in the NSE's order (`NSE_COMPANY_WORDS`): any `Date;` header was
    taken, and a per-company file headed `Date;Open;High;Low;Close;Volume` stored its open
    as the low, its low as the close and its close as the previous close. Its rows are CSV
    records (`csv_rows`): a spreadsheet that saves a count with thousands separators quotes
    it (`"125,400"`), which was split at its commas, so every such row was a bad row of
    7 fields and the name's traded days were lost."""
    symbol = path.stem.upper()
    for line, fields in csv_rows(path, ","):
        if line == 1:
            raw = ",".join(fields).strip()  # the `;` header is one record of one cell
            names = [name.lower() for name in header_names(raw.split(";"))]
            if len(names) != 6 or not all(word in name for word, name in zip(NSE_COMPANY_WORDS, names)):
                yield Bad(
                    f"{path}:1",
                    f"header '{raw[:120]}' is not the NSE per-company header (Date;Lowest ...;Highest ...;"
                    "Closing ...;Previous ...;Volume ...)",
                )
                return
            continue
        if not fields or not "".join(fields).strip():
            continue
        day = None
        try:
            if len(fields) != 6:
                raise ValueError(f"{len(fields)} fields, expected 6")
            stamp, low, high, close, prev, volume = (field.strip() for field in fields)
            if not re.fullmatch(r"\d{8}", stamp):
                raise ValueError(f"date '{stamp}' is not YYYYMMDD")
            day = date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:]))
            yield {**_bar(ticker(symbol), day, low, high, close, prev, volume), "_line": f"{path}:{line}"}
        except ValueError as exc:
            yield Bad.of_row(f"{path}:{line}", str(exc), symbol, day)


def ohlcv_lacks(path: Path) -> list[str]:
    """The optional columns a generic OHLCV file does not carry: not in its header, or
    blank on every row (`ohlcv_blank`), stored as missing either way."""
    header = _ohlcv_header(path)
    return [c for c in OHLCV_OPTIONAL if c not in header or c in ohlcv_blank(path, OHLCV_OPTIONAL)]


def ohlcv_blank(path: Path, columns: Iterable[str]) -> list[str]:
    """The `columns` a generic OHLCV file's header names that are blank on every row it has
    (none for a file without a row of its header's width). Read until each has a value, so
    a file whose first row fills them is read no further."""
    rows = csv_rows(path)
    header = [h.strip().lower() for h in next(rows, (1, []))[1]]
    named = [c for c in columns if c in header]
    blank, read = set(named), False
    for _, row in named_rows(rows, header):
        if isinstance(row, dict):
            read = True
            blank -= {c for c in blank if row[c]}
        if read and not blank:
            break
    return [c for c in named if c in blank] if read else []


def ohlcv_states_types(path: Path) -> bool:
    """Whether a generic OHLCV file has a type column (`OHLCV_TYPE_COLUMNS`)."""
    return any(c in _ohlcv_header(path) for c in OHLCV_TYPE_COLUMNS)


def _ohlcv_header(path: Path) -> list[str]:
    return [h.strip().lower() for h in next(csv_rows(path), (1, []))[1]]


def repeated_columns(header: list[str]) -> list[str]:
    """The columns a header (trimmed, lower case) names more than once. A row is read by
    column name, so of `close` and `Close` the last one was read, silently: a file whose
    header names a column twice is refused (a price file as a bad row at line 1, an
    actions file as an error), never read by a guess of which one is meant."""
    return sorted({c for c in header if c and header.count(c) > 1})


def row_instrument_type(row: dict) -> InstrumentType:
    """A read row's kind of security: the type its source states, else the inference
    from its code and name (`market.instruments.instrument_type`)."""
    return instrument_type(row["symbol"], row.get("name"), row.get("instrument_type"))


@says_when_empty
def read_ohlcv(path: Path) -> Iterator[dict | Bad]:
    rows = csv_rows(path)
    header = [h.strip().lower() for h in next(rows, (1, []))[1]]
    missing = [c for c in OHLCV_REQUIRED if c not in header]
    if missing:
        yield Bad(f"{path}:1", _lacking(header, missing))
        return
    if repeated_columns(header):
        yield Bad(f"{path}:1", f"header names the columns {repeated_columns(header)} more than once")
        return
    if blank := ohlcv_blank(path, OHLCV_REQUIRED):
        yield Bad(f"{path}:1", _blank_required(blank))
        return
    type_column = next((c for c in OHLCV_TYPE_COLUMNS if c in header), None)
    for line, row in named_rows(rows, header):
        try:
            if isinstance(row, str):
                raise ValueError(row)
            day = calendar_day(row["date"])
            stated = parse_instrument_type(row[type_column]) if type_column else None
            index = instrument_type(row["symbol"], row.get("name"), stated) is InstrumentType.INDEX
            bar = _bar(
                ticker(row["symbol"], index=index),
                day,
                row.get("low", ""),
                row.get("high", ""),
                row["close"],
                row.get("prev_close", ""),
                row["volume"],
            )
            bar["open"] = price_cell(row.get("open", ""), "open")
            bar["bid"], bar["ask"] = price_cell(row.get("bid", ""), "bid"), price_cell(row.get("ask", ""), "ask")
            if bar["bid"] is not None and bar["ask"] is not None and bar["bid"] > bar["ask"]:
                raise ValueError(f"bid {bar['bid']} is above ask {bar['ask']}")
            bar["trades"] = _volume(row["trades"], "trades") if row.get("trades") else None
            bar["value_traded"] = price_cell(row.get("value_traded", ""), "value_traded")
            if row.get("name"):
                bar["name"] = row["name"]
            if stated is not None:
                bar["instrument_type"] = stated
            if row.get("currency", "").strip():
                bar["currency"] = currency_code(row["currency"])
            yield {**bar, "_line": f"{path}:{line}"}
        except ValueError as exc:
            yield _bad_ohlcv(f"{path}:{line}", str(exc), row)


def _bad_ohlcv(where: str, reason: str, row: dict[str, str] | str) -> Bad:
    """A generic file's bad row, of the name and day its cells read as (a record of another
    width too, where its symbol and date cells read as a ticker and a day: an unquoted
    decimal comma, `AAA,2024-02-08,19,35,100`, was no row of AAA that day, and the day was
    filled as one without trades)."""
    if isinstance(row, Unaligned):
        row = row.cells
    if isinstance(row, str) or not {"symbol", "date"} <= row.keys():
        return Bad(where, reason)
    try:
        day = calendar_day(row["date"])
    except ValueError:
        day = None
    return Bad.of_row(where, reason, row["symbol"], day)


def _lacking(header: list[str], missing: list[str]) -> str:
    """Why a header is refused for `missing` columns: the separator it uses where that names
    them all (`symbol;date;close;volume` read as one column lacked the four it names), else
    the columns. Such a file is refused, not read: a ';' export writes decimals with
    commas as often as not (`10,5`), which a comma-separated reader cannot tell from two
    cells or from a thousands comma."""
    line = ",".join(header)
    for separator, called in OTHER_SEPARATORS.items():
        if all(c in [h.strip() for h in line.split(separator)] for c in OHLCV_REQUIRED):
            return (
                f"the header separates its columns with {called} ({separator!r}): the importer reads comma-separated "
                "files (',' between columns, '.' as the decimal point); save the file so"
            )
    return f"header lacks required columns {missing}"


def _blank_required(blank: list[str]) -> str:
    """Why a file whose required columns are blank on every row is not read, and what to
    fix: read, a blank volume is no trade (every row stored as untraded, a liquid name read
    as one that never trades) and a blank close a bad row on every line."""
    columns = ", ".join(blank)
    fill = "; a volume is a number of shares, 0 for a day without trades" if "volume" in blank else ""
    return (
        f"the required column{'s' if len(blank) > 1 else ''} {columns} {'are' if len(blank) > 1 else 'is'} blank "
        f"on every row: fill in each row's {columns}{fill}; the file was not read"
    )


def currency_code(text: str) -> str:
    """A row's currency: three letters (`jmd` reads JMD), else ValueError naming it."""
    code = text.strip().upper()
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise ValueError(f"currency {text.strip()[:20]!r} is not a code of three letters like JMD")
    return code


REPEAT_MINIMUM_TRADED = 5  # traded rows a day needs before "all of them repeat" says it is a copy
_REPEATED_FIELDS = ("low", "high", "close", "prev_close", "volume")


class Copies(dict[date, date]):
    """`repeated_days`' answer, {copy: the session it repeats}, with the copies on which no
    row traded (`idle`), which `describe_repeated` words apart."""

    def __init__(self) -> None:
        super().__init__()
        self.idle: set[date] = set()


def repeated_days(rows: Iterable[dict], *, untraded: bool = True) -> Copies:
    """The days that are copies of an earlier one: {copy: the session it repeats}.

    A day is a copy when it has at least REPEAT_MINIMUM_TRADED traded rows (volume > 0;
    market indices, which never trade, do not count) and every one of them repeats the
    same symbol's row of the previous date in the source (`_repeats`: low, high, close
    and volume, and a previous close that is the day before's or the close it repeats).
    That is how a crawler records a day the exchange did not publish: it saves the page it
    still finds, the previous session's. The NSE files hold 56 such days (2007-2021; many
    of them Kenyan public holidays: Moi Day, Eid, the 2010 referendum, the election days),
    each a copy of the day before whose previous-close column is the day before's too, but
    2019-12-10's, which holds the close it repeats, as a vendor that writes each row's
    previous close from its own series fills a copy's: read field for field, that day was
    stored as a session, every name's volume counted twice. Read as a session, a copy is
    a day on which nothing moved, and it takes the next session's move away from the day
    that really preceded it. Two sessions in a row on which five or more
    names traded the same volume between the same low and high to the same close do not
    happen in real trading; one instrument's repeated bar can, and is kept. A run of
    copies (a long holiday) maps every copy to the session before the run.

    With `untraded`, a day of REPEAT_MINIMUM_TRADED rows or more on which no row traded and
    every close is the same name's of the date before (`_stands`) is a copy too (`idle`):
    a vendor's file for a holiday that lists every name untraded at its last close. Read as
    a session it was a zero-volume day for every name in the 20-day windows, and the
    holiday's stale close the next session's for a label or a fill. A whole market without
    a trade is no session in the NSE files (7 traded names on the thinnest day); a day
    whose closes moved is one. T0 passes `untraded=False`: it reads a live exchange on its
    own calendar, which has no holiday sessions, and a page of a session on which nothing
    traded is not stale.
    """
    bars: dict[date, dict[str, tuple]] = {}
    for row in (r for r in rows if not is_index_row(r)):
        bars.setdefault(row["trading_date"], {})[row["symbol"]] = tuple(row.get(f) for f in _REPEATED_FIELDS)
    copies = Copies()
    days = sorted(bars)
    for before, day in zip(days, days[1:]):
        previous = bars[before]
        traded = [(symbol, bar) for symbol, bar in bars[day].items() if bar[-1]]
        if len(traded) >= REPEAT_MINIMUM_TRADED and all(_repeats(previous.get(symbol), bar) for symbol, bar in traded):
            copies[day] = copies.get(before, before)
        elif untraded and not traded and len(bars[day]) >= REPEAT_MINIMUM_TRADED:
            if all(_stands(previous.get(symbol), bar) for symbol, bar in bars[day].items()):
                copies[day] = copies.get(before, before)
                copies.idle.add(day)
    return copies


def _stands(earlier: tuple | None, bar: tuple) -> bool:
    """Whether an untraded `bar` (`_REPEATED_FIELDS`) lists the close of `earlier`, the same
    name's bar of the day before."""
    return earlier is not None and bar[2] == earlier[2]


def _repeats(earlier: tuple | None, bar: tuple) -> bool:
    """Whether `bar` (`_REPEATED_FIELDS`) repeats `earlier`, the same name's bar of the day
    before: low, high, close and volume the same, and its previous close either `earlier`'s
    (a verbatim copy) or `earlier`'s close (a series that writes each row's previous close)."""
    if earlier is None:
        return False
    (low, high, close, prev_close, volume), before = bar, earlier
    return (low, high, close, volume) == (before[0], before[1], before[2], before[4]) and prev_close in (
        before[3],
        before[2],
    )


def describe_repeated(copies: dict[date, date]) -> list[str]:
    """One line per copied day, as the importer and the replay report them."""
    idle = getattr(copies, "idle", set())
    return [
        (
            f"{day.isoformat()}: no row traded and every close is {source.isoformat()}'s"
            if day in idle
            else f"{day.isoformat()}: every traded row repeats {source.isoformat()}'s verbatim"
        )
        + "; left out as a copy, not a session"
        for day, source in sorted(copies.items())
    ]


SECOND_ROWS_SHOWN = 10  # second rows that disagree with the kept one, listed one a line; the rest are counted
_COMPARED_FIELDS = ("close", "open", "high", "low", "prev_close", "volume", "bid", "ask", "trades", "value_traded")


def first_difference(kept: Mapping, other: Mapping) -> str | None:
    """The first field of a price row (close first: `_COMPARED_FIELDS`) in which two rows of
    a name and day differ, None where they agree: how a second row of a name and day
    (`second_rows`) and an import's row that changes a stored one (`Correction`) are named."""
    return next((f for f in _COMPARED_FIELDS if kept.get(f) != other.get(f)), None)


@dataclass(frozen=True)
class Disagreement:
    """A second row of a name and day that disagrees with the kept one: the first field
    that differs (close first), its value in each and where each row is (file:line)."""

    symbol: str
    day: date
    field: str
    kept: float | None
    other: float | None
    kept_where: str
    other_where: str

    def line(self) -> str:
        return (
            f"{self.symbol} {self.day.isoformat()}: {self.field} {_shown(self.kept)} kept ({self.kept_where}) vs "
            f"{_shown(self.other)} left out ({self.other_where})"
        )


@dataclass(frozen=True)
class Correction(Disagreement):
    """A stored price row an import replaced (`import_path`: a later import's row of a name
    and day is a correction, stored as the current version, the stored one kept as an
    earlier version): a disagreement whose `kept` is the stored value and `kept_where` its
    source, `other` the import's value and `other_where` its file:line."""

    def line(self) -> str:
        return (
            f"{self.symbol} {self.day.isoformat()}: {self.field} {_shown(self.kept)} stored ({self.kept_where}) -> "
            f"{_shown(self.other)} ({self.other_where})"
        )


@dataclass(frozen=True)
class SecondRows:
    """The rows of a name and day after its first, as every reader keeps them (`second_rows`):
    `identical` (file:line of each) repeat the kept row field for field; `disagree` do not."""

    identical: tuple[str, ...] = ()
    disagree: tuple[Disagreement, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.identical or self.disagree)

    def lines(self) -> list[str]:
        """The report: a line of counts, then the first SECOND_ROWS_SHOWN disagreements."""
        if not self:
            return []
        first = f" (first: {self.identical[0]})" if self.identical else ""
        out = [
            f"second rows of a name and day: {len(self.identical):,} repeat the kept row exactly{first}; "
            f"{len(self.disagree):,} disagree with it (the first row by file path and line kept, the other "
            "left out)"
        ]
        out += [f"  {d.line()}" for d in self.disagree[:SECOND_ROWS_SHOWN]]
        if len(self.disagree) > SECOND_ROWS_SHOWN:
            out.append(f"  ... and {len(self.disagree) - SECOND_ROWS_SHOWN:,} more that disagree")
        return out


def second_rows(rows: Iterable[dict]) -> tuple[list[dict], SecondRows]:
    """`rows` (read in file order: the files by sorted path, each by line; `_line` says
    where) with only the first row of each symbol and day, and what the others were.

    The first row stands: the files' sorted order is the one order every reader shares
    (the importer, the replay and the benchmarks keep the same row) and re-importing the
    same files keeps the stored rows; no row of two can be shown right from the files
    alone, so one that disagrees is reported, never resolved by a guess."""
    kept: dict[tuple[str, date], dict] = {}
    out: list[dict] = []
    identical: list[str] = []
    disagree: list[Disagreement] = []
    for row in rows:
        key = (row["symbol"], row["trading_date"])
        first = kept.get(key)
        if first is None:
            kept[key] = row
            out.append(row)
            continue
        field = first_difference(first, row)
        if field is None:
            identical.append(row.get("_line", "?"))
        else:
            disagree.append(
                Disagreement(
                    *key, field, first.get(field), row.get(field), first.get("_line", "?"), row.get("_line", "?")
                )
            )
    return out, SecondRows(tuple(identical), tuple(disagree))


def _shown(value: float | None) -> str:
    return "blank" if value is None else f"{value:g}"


def readable(path: Path, read: list[dict | Bad]) -> list[dict]:
    """The rows of `read` (what a reader gave for the files of `path`) that could be read;
    none is an InvalidInputError naming the first bad row: a research frame of no row
    (another market's `;` export, a folder in another format) was a KeyError traceback."""
    rows = [r for r in read if not isinstance(r, Bad)]
    if not rows:
        first = next((str(r) for r in read if isinstance(r, Bad)), "no .csv file")
        raise InvalidInputError(f"no row of {path} could be read (first: {first})")
    return rows


def securities(path: Path, rows: list[dict]) -> list[dict]:
    """`rows` (`readable`'s) less the market indices' (`is_index_row`), for a research frame
    of securities; none left is an InvalidInputError naming the indices: an index's file
    given as the prices, or prices whose every row is bad beside readable index levels,
    was a KeyError traceback."""
    kept = [r for r in rows if not is_index_row(r)]
    if not kept:
        indices = sorted({r["symbol"] for r in rows})
        raise InvalidInputError(
            f"no security's row in {path}: its {len(rows):,} readable rows are market index levels "
            f"({', '.join(indices[:5])}{', ...' if len(indices) > 5 else ''}); give the prices' files too"
        )
    return kept


def nse_daily_frame(
    folder: Path, *, indices: bool = False, ordinary: bool = False, names: bool = False
) -> pd.DataFrame:
    """Every readable row of the NSE daily files under `folder` (recursively) as one frame
    (symbol, date, close, volume, high, low), one row per symbol and date; bad rows and
    the days that copy an earlier one (`repeated_days`) are left out (the importer reports
    them, a research frame does not need them; the copies are listed in the frame's
    `attrs["repeated_days"]`, as the importer words them). Market indices (`is_index`) are
    left out as the importer leaves them out, and named in `attrs["indices"]`, unless
    `indices` asks for their rows too (the screening tool reads their levels). Of a name's
    rows for a day the first is kept (`second_rows`, reported in `attrs["second_rows"]`;
    the NSE files hold none); the bad rows are in `attrs["bad_rows"]` (`untraded.unread_rows`). With
    `ordinary`, a boolean `ordinary` column says per row whether it is an ordinary share
    (`row_instrument_type`: KPLC-P4 and KPLC-P7, GLD and FAHR, and the indices are not);
    with `names`, each row's `name` (the file's Name column)."""
    import pandas as pd

    read = [r for path in csv_files(folder) for r in read_nse_daily(path)]
    rows = readable(folder, read)
    if not indices:
        securities(folder, rows)
    copies = repeated_days(rows)
    index_symbols = sorted({r["symbol"] for r in rows if is_index_row(r)})
    kept, seconds = second_rows(r for r in rows if r["trading_date"] not in copies and (indices or not is_index_row(r)))
    frame = pd.DataFrame(kept).rename(columns={"trading_date": "date"})
    columns = ["symbol", "date", "close", "volume", "high", "low"]
    if ordinary:
        frame["ordinary"] = [is_ordinary(row_instrument_type(r)) for r in kept]
        columns.append("ordinary")
    if names:
        columns.append("name")
    frame = frame[columns]
    frame.attrs["repeated_days"] = describe_repeated(copies)
    frame.attrs["second_rows"] = seconds.lines()
    frame.attrs["indices"] = index_symbols
    frame.attrs["bad_rows"] = [r for r in read if isinstance(r, Bad)]
    return frame
