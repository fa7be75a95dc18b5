"""Account-statement import: a broker PDF in, the client portfolio synchronised to it.

Reading goes through the sandboxed PDF worker (ingest/pdf_text.py: size, page, time and
memory limits; not a PDF, encrypted and malformed files refused with the reason). Two
layouts are recognised by their title line:

- Valuation statement (holdings table): one row per holding, `SYMBOL description
  quantity avg-cost price value`, then Total Market Value, Cash Balance and Total
  Portfolio Value. Every row must satisfy quantity x price = value (to the cent), the
  values must sum to Total Market Value and that plus cash to Total Portfolio Value.
- Activity statement (transactions ledger): opening holdings, then dated rows with a
  running balance, then the closing cash balance and holdings. Every row's balance must
  be the previous balance plus its amount; a buy's amount must be -quantity x price and a
  sell's +quantity x price; opening holdings plus the trades must equal the closing
  holdings, on the share count of the statement's date (the stored splits in its period
  applied, checked in the sync's transaction: `_on_its_count`); the last balance must
  equal the closing cash balance. Every row is dated a
  day from the OPENING row's to the statement's date (the Period's end), the OPENING row
  not before the Period's start, and a line that opens with a date but is not a row is
  refused naming it, never skipped.

A figure is read by the one printed-number rule (`market.money.printed_number`): a
negative printed "(1,000.00)" or with the minus sign U+2212 is read where a negative is
meaningful (a ledger's amounts and balances, a cash balance) and refused naming it where
it is not (a trade's price). A symbol listed twice in a holdings list, either layout's,
is refused naming both lines (`_by_symbol`).

Reading the text is linear in its length (every pattern is anchored or searched once per
line), and the sandbox's page, time and memory limits bound that length: a hostile line
costs its length, not its square.

Anything else is refused with the reason: no recognisable layout or holdings table,
numbers that do not add up, a negative cash balance, amounts in another currency than the
trading one (a `Currency: USD` line, a table heading's "(USD)": `_in_trading_currency`,
nothing is converted), a symbol the exchange does not list,
a holdings line naming a listed symbol that is not a row of its table (`_unread`).

Figures that add up can still describe holdings no account could have; each line is held
to the name's record as of the statement's date (`portfolio/statement_checks.py`, the one
rule): more shares than the company has outstanding, or a name with no traded session by
then, is refused naming the line; a sync price far outside the range the name traded in
(an average cost of 99,999 for a name that never traded above 60) is booked as the broker
states it, with a warning in the answer's `warnings` (in a preview too) and in the
attempt's `reason`, since a transfer-in, a rights issue or history older than the store's
can explain it and only the cost basis rests on it.

Synchronisation appends reconciling entries and never rewrites history: for each symbol
whose holding differs, a STATEMENT_SYNC trade for the difference (buys priced so that the
book's cost basis is the statement's average cost x quantity, or the price of the ledger's
latest-dated trade of the symbol; sells at the statement's market price or that price), and for a holding
whose cost basis still differs from the statement's average cost a sale at the book's
average cost and a buy back at the statement's (`_rebased`), dated the statement's day,
which move no cash; then one
RECONCILIATION cash entry, effective at that day's close, that brings the cash the ledger
held at the end of that day to the statement's balance, then the dividends going ex after
the statement's day are settled on the holdings it leaves (`dividends.credit_dividends`:
one credited on shares the statement says were sold before its ex-date is taken back, one
on shares it brings in is credited). What the ledger records after the
statement's day (trades, deposits, fees) is kept on top: the book after a sync is the
statement plus what happened since, and a statement whose cash or holdings cannot carry
what happened since is refused with the reason, as is one dated before the last statement
synchronised (`_not_before_the_last`: the later statement stands), one uploaded before its
day's 16:00 close (`_day_ended`: read as the end of its day, a morning statement dated today
undid the trades booked earlier that day; a future one neither) and one of another broker
account than the last synchronised statement that names one (`_same_account`: both layouts
print `Account: <number>`, read into `ParsedStatement.account` and kept in
`statement_imports.parsed`; once a synchronised statement has named one, a statement that
prints none is refused too, as it cannot be shown to be of that account). A preview (`preview=True`, REST
`?preview=true`, CLI `--preview`) runs the same sync, every check included, and rolls it
back: it answers status PREVIEW with the changes and a `confirm_token`, and stores
nothing; the same file sent with that token (`confirm=`, `--confirm`) is applied only
while the book is as the preview saw it (409 otherwise), so what is applied is what was
previewed: the token names the changes the preview showed as well as the book it saw, so a
price the sync books at that moved since (a dropped holding's last close, corrected) is a
409 too. A token no preview of the file issued (malformed, or another file's: it starts
with the file's SHA-256) is bad input saying so (422), not a book that changed. A file
sent without either is synchronised at once. The same file imported again (same SHA-256)
changes nothing and says so; every attempt, refused or not, is kept in
`statement_imports` (a preview is not an attempt).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Required, TypedDict

from sqlalchemy import Connection, Engine

from ingest.pdf_text import PdfExtractor, PdfRejected
from market.clock import SUPPORTED_DATES, exchange_date, exchange_iso, session_close_utc, utc_now
from market.errors import ConflictError, InvalidInputError
from market.money import (
    CENTS,
    MAX_AMOUNT,
    MAX_SHARES,
    PRINTED_NUMBER,
    Money,
    Price,
    money_display,
    printed_number,
    to_cents,
)
from market.settings import Settings
from market.text import PRINTED_TICKER
from portfolio import dividends, ledger
from portfolio.ledger import TradeRequest
from portfolio.market import known_symbols, trading_currency
from portfolio.statement_checks import NameRecord, holding_refusal, name_records, price_warning
from store import tables
from store.history import append_history, current_rows, newest_ids
from store.splits import Split, factor_between, stored_splits
from store.transactions import Respond, answered, write_transaction

# The titles of the two layouts read (a statement names its layout in its title); the sample
# statements the demo and the tests draw (portfolio/statement_pdfs.py) use them too.
HOLDINGS_TITLE = "Portfolio Valuation Statement"
LEDGER_TITLE = "Account Activity Statement"


class StatementRejected(InvalidInputError):
    """A statement, or a line of one, that cannot be booked (the reason in `detail`)."""


NUMBER = r"-?[\d,]+(?:\.\d+)?"  # a holdings table's figure: none is negative but in a hyphen (refused when booked)
HOLDING_ROW = re.compile(rf"^({PRINTED_TICKER}) (.+?) ([\d,]+) ({NUMBER}) ({NUMBER}) ({NUMBER})$")
# A ledger row's columns are words; each figure is read by the printed-number rule (`_number`),
# so a figure that is not one is refused naming it, and a line opening with a date that is
# not such a row is refused naming the line (`_unread`, DATE_FIRST): never skipped.
LEDGER_ROW = re.compile(
    r"^(\d{4}-\d{2}-\d{2}) (BUY|SELL|DEPOSIT|WITHDRAWAL|FEE|DIVIDEND|OPENING) (\S+) (\S+) (\S+) (\S+) (\S+)$"
)
# A holding's symbol is any ticker the service lists, in capitals (market/text.py): the
# reader's own narrower shape skipped KPLC-P4's line, and the sync sold the holding.
QUANTITY_ROW = re.compile(rf"^({PRINTED_TICKER}) ([\d,]+)$")
SYMBOL_FIRST = re.compile(rf"^({PRINTED_TICKER})(?: |$)")  # a line that opens with a symbol-shaped word
DATE_FIRST = re.compile(r"^(\d{4}-\d{2}-\d{2})(?: |$)")  # a line that opens with a date-shaped word
DATE_AT_END = re.compile(r"\d{4}-\d{2}-\d{2}$")
PERIOD_START = re.compile(r"^Period:? (\d{4}-\d{2}-\d{2}) to ")  # "Period: 2026-11-01 to 2026-11-20"
TOKEN_FILE_CHARS = 8  # a confirm token starts with this many hex digits of its file's SHA-256
CONFIRM_TOKEN = re.compile(r"[0-9a-f]{32}")  # those, then 24 of the hash of what the preview showed
TOLERANCE = Decimal("0.01")
# The digits `_lots` works at: a cost basis of 10^12 shares at 10^12 to six places (31), with room
LOT_DIGITS = 40
# A currency a statement names for its amounts: a "Currency: USD" line, or a column header's
# "(USD)" on a table's heading line ("Market Value (USD)", as the exchange's pages name theirs)
CURRENCY_LINE = re.compile(r"^Currency:? *([A-Z]{3})\b")
TABLE_HEADINGS = ("Symbol Description Quantity", "Date Type Symbol")
HEADER_CURRENCY = re.compile(r"\(([A-Z]{3})\)")
ACCOUNT_LINE = re.compile(r"^Account: *(?!Client:)(\S*)")  # "Account: KC-0001    Client: Acme Ltd"
MAX_ACCOUNT = 40  # characters of an account number


class StatementJson(TypedDict):
    """A read statement as the answer and `statement_imports.parsed` hold it."""

    layout: str
    as_of: str
    cash: Money  # decimal text
    holdings: dict[str, int]
    account: str | None  # the broker account it prints (`Account: <number>`); None: it prints none


class HoldingChange(TypedDict):
    symbol: str
    side: str
    quantity: int
    price: Price  # decimal text
    before: int
    after: int


class CashChange(TypedDict):
    cash_before: Money  # decimal text
    cash_after: Money


class Carried(TypedDict):
    detail: str
    trades_after: int
    cash_movements_after: int
    cash_now: Money  # decimal text


class CarriedChange(TypedDict):
    carried: Carried


Change = HoldingChange | CashChange | CarriedChange  # one line of a sync's changes


class StatementResult(TypedDict, total=False):
    """What a statement upload answers: SYNCED (with the statement and the changes),
    PREVIEW (the changes a rolled-back sync made and the token that applies them) or
    ALREADY_IMPORTED (nothing changed)."""

    status: Required[str]
    file_sha256: Required[str]
    statement: StatementJson
    changes: Required[list[Change]]
    warnings: Required[list[str]]  # lines booked as stated that the client should check (statement_checks)
    confirm_token: str
    detail: str


class _CashEntry(TypedDict):
    """A cash entry with the day it belongs to (`_cash_entries`)."""

    amount: Decimal
    effective_at: datetime
    day: date


@dataclass(frozen=True)
class LedgerFlows:
    """What a transactions ledger prints of its holdings: the opening holdings, as of the
    start of the OPENING row's day, each trade row's day, symbol and signed quantity, and
    by symbol the day of the trade whose price `ParsedStatement.prices` holds."""

    opened_on: date
    opening: dict[str, int]
    moves: tuple[tuple[date, str, int], ...]
    priced_on: dict[str, date]


@dataclass
class ParsedStatement:
    layout: str
    as_of: date
    cash: Decimal
    holdings: dict[str, int]
    prices: dict[str, Decimal] = field(default_factory=dict)  # buy price for a sync trade
    sale_prices: dict[str, Decimal] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)  # a holdings line not read, by its first word (`_unread`)
    account: str | None = None  # the broker account the statement is of (`_account`); None: it prints none
    currencies: tuple[str, ...] = ()  # the currencies it names for its amounts (`_currencies`); (): none
    flows: LedgerFlows | None = None  # a transactions ledger's holdings as printed (`_holdings_add_up`)

    @property
    def average_costs(self) -> dict[str, Decimal]:
        """By symbol, the average cost the broker states (the holdings table's Avg Cost
        column); a transactions ledger's prices are its last trades, no cost basis."""
        return self.prices if self.layout == "holdings-table" else {}

    def as_dict(self) -> StatementJson:
        return {
            "layout": self.layout,
            "as_of": self.as_of.isoformat(),
            "cash": money_display(self.cash),
            "holdings": dict(sorted(self.holdings.items())),
            "account": self.account,
        }


def _number(text: str, what: str = "amount", signed: bool = True) -> Decimal:
    """A statement's amount by the one printed-number rule (`market.money.printed_number`:
    "(1,000.00)" and a minus sign U+2212 are negatives, as brokers print them), else
    StatementRejected naming it ("abc", "NaN", "Infinity", "1e5", the decimal comma of
    "12,50" and other scripts' digits, "1,৪00.00", are not amounts a statement prints).
    `signed=False`: a figure that is never negative (a trade's price), refused naming it
    when it is printed so, rather than read into a sum it cannot be part of."""
    value = printed_number(text)
    if value is None:
        raise StatementRejected(f"the statement's {what} '{text[:40]}' is not a number like 1,234.50")
    if not signed and value < 0:
        raise StatementRejected(f"the statement's {what} '{text[:40]}' is negative, which it cannot be")
    return value


def _shares(text: str, what: str) -> int:
    """A statement's share count: digits with thousands commas, else StatementRejected."""
    if not PRINTED_NUMBER.fullmatch(text) or not text[0].isdigit() or "." in text:
        raise StatementRejected(f"the statement's {what} '{text[:40]}' is not a whole number of shares")
    return int(text.replace(",", ""))


def _labelled(lines: list[str], label: str) -> Decimal:
    for line in lines:
        if line.startswith(label + ":"):
            return _number(line.split(":", 1)[1].strip(), f"'{label}'")
    raise StatementRejected(f"the statement has no '{label}' line")


def _date_after(lines: list[str], label: str) -> date:
    """The date that ends the first line holding `label` (then an optional colon and a
    space) before it. Linear in the line: a single `label:? .*?date$` search restarted at
    every occurrence of the label, so a 2 KB PDF whose one line repeats "Period 2026-11-01 "
    72,000 characters long held the API process (and its GIL) for 6 s, 4x that per doubling."""
    head = re.compile(rf"{re.escape(label)}:? ")
    for line in lines:
        found, end = head.search(line), DATE_AT_END.search(line)
        if found and end and found.end() <= end.start():
            try:
                return date.fromisoformat(end.group(0))
            except ValueError:
                raise StatementRejected(f"the statement's '{label}' {end.group(0)} is not a date") from None
    raise StatementRejected(f"the statement has no '{label}' date")


def parse_text(text: str) -> ParsedStatement:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if HOLDINGS_TITLE in lines:
        parsed = _parse_holdings(lines)
    elif LEDGER_TITLE in lines:
        parsed = _parse_ledger(lines)
    else:
        raise StatementRejected(
            "no recognisable statement layout: expected a valuation statement with a holdings "
            "table or an activity statement with a transactions ledger"
        )
    parsed.account, parsed.currencies = _account(lines), _currencies(lines)
    return parsed


def _currencies(lines: list[str]) -> tuple[str, ...]:
    """The currencies the statement names for its amounts (`CURRENCY_LINE`, a table
    heading's `HEADER_CURRENCY`), in the order named; a statement that names none is read
    in the trading currency, as the exchange's columns that name none are."""
    named: list[str] = []
    for line in lines:
        if found := CURRENCY_LINE.match(line):
            named.append(found.group(1))
        elif line.startswith(TABLE_HEADINGS):
            named.extend(HEADER_CURRENCY.findall(line))
    return tuple(dict.fromkeys(named))


def _account(lines: list[str]) -> str | None:
    """The account number of the statement's first `Account: <number>    Client: <name>`
    line (both layouts print it under their title: portfolio/statement_pdfs.py `_heading`),
    None when it prints none; StatementRejected for an account line without a number
    (at most MAX_ACCOUNT printable characters)."""
    for line in lines:
        found = ACCOUNT_LINE.match(line)
        if found is None:
            continue
        number = found.group(1)
        if not 0 < len(number) <= MAX_ACCOUNT or not number.isprintable() or not number.isascii():
            raise StatementRejected(f"the statement's account line '{line[:60]}' names no account number")
        return number
    return None


def _unread(section: list[str], row: re.Pattern[str], opener: re.Pattern[str] = SYMBOL_FIRST) -> dict[str, str]:
    """The lines of a section that open as its rows do (`opener`: a symbol-shaped word in a
    holdings section, a date-shaped one in a ledger) but are not rows of it, by that word,
    in the order they come. For a holdings section `_acceptable` refuses the statement when
    the word is a listed symbol, since a holding the reader skipped (a suspended name
    printed "OUT Outer Co 100 20.00 N/A N/A") would otherwise be sold out of the book by
    the sync; a ledger refuses any (`_ledger_rows`): a skipped row breaks the running
    balance on the next, which is not the line to take up with the broker."""
    unread: dict[str, str] = {}
    for line in section:
        first = opener.match(line)
        if first and not row.match(line):
            unread.setdefault(first.group(1), line)
    return unread


def _parse_holdings(lines: list[str]) -> ParsedStatement:
    rows = [m for m in map(HOLDING_ROW.match, lines) if m]
    header = next((i for i, line in enumerate(lines) if line.startswith("Symbol Description Quantity")), None)
    if header is None:
        raise StatementRejected("no recognisable holdings table (no 'Symbol Description Quantity ...' header)")
    table = lines[header + 1 :]
    table = table[: next((i for i, line in enumerate(table) if line.startswith("Total Market Value:")), len(table))]
    holdings, costs, prices, total = {}, {}, {}, Decimal(0)
    for symbol, m in _by_symbol(rows, "holdings table").items():
        quantity = _shares(m.group(3), "quantity")
        cost, price, value = (_number(m.group(n), f"{symbol} figure") for n in (4, 5, 6))
        if abs(price * quantity - value) > TOLERANCE:
            raise StatementRejected(f"numbers do not add up: {symbol} {quantity:,} x {price:,.2f} is not {value:,.2f}")
        holdings[symbol], costs[symbol], prices[symbol] = quantity, cost, price
        total += value
    stated, cash, portfolio = (
        _labelled(lines, "Total Market Value"),
        _labelled(lines, "Cash Balance"),
        _labelled(lines, "Total Portfolio Value"),
    )
    if abs(total - stated) > TOLERANCE:
        raise StatementRejected(
            f"numbers do not add up: the holdings sum to {total:,.2f}, the statement says {stated:,.2f}"
        )
    if abs(stated + cash - portfolio) > TOLERANCE:
        raise StatementRejected(
            f"numbers do not add up: {stated:,.2f} + cash {cash:,.2f} is not the total {portfolio:,.2f}"
        )
    as_of = _date_after(lines, "Statement date")
    return ParsedStatement("holdings-table", as_of, cash, holdings, costs, prices, _unread(table, HOLDING_ROW))


def _by_symbol(rows: list[re.Match[str]], where: str) -> dict[str, re.Match[str]]:
    """The rows of a holdings list (the valuation table, an activity statement's opening or
    closing holdings) by their symbol (group 1), in the order they come; a symbol listed
    twice is StatementRejected naming it and both lines, never one of them silently kept."""
    found: dict[str, re.Match[str]] = {}
    for row in rows:
        first = found.setdefault(row.group(1), row)
        if first is not row:
            raise StatementRejected(
                f"{row.group(1)} appears twice in the {where}: '{first.group(0)[:120]}' and '{row.group(0)[:120]}'"
            )
    return found


def _quantities(section: list[str], where: str) -> dict[str, int]:
    """An activity statement's opening or closing holdings: `SYMBOL quantity` lines, each
    symbol once (`_by_symbol`)."""
    rows = [m for m in map(QUANTITY_ROW.match, section) if m]
    return {symbol: _shares(m.group(2), f"{where[:-1]} {symbol}") for symbol, m in _by_symbol(rows, where).items()}


def _section(lines: list[str], start: str, stop: str | None) -> list[str]:
    if start not in lines:
        return []
    part = lines[lines.index(start) + 1 :]
    return part[: part.index(stop)] if stop and stop in part else part


def _parse_ledger(lines: list[str]) -> ParsedStatement:
    opened, closed = _section(lines, "Opening Holdings", "Transactions"), _section(lines, "Closing Holdings", None)
    opening, closing = _quantities(opened, "opening holdings"), _quantities(closed, "closing holdings")
    rows = _ledger_rows(lines)
    as_of = _date_after(lines, "Period")
    _dated(rows, _period_start(lines), as_of)
    balance, held, last_price = _number(rows[0].group(7), "opening balance"), dict(opening), {}
    for m in rows[1:]:
        balance = _posted(m, balance, held, last_price)
    moves = tuple(
        (
            date.fromisoformat(m.group(1)),
            m.group(3),
            _shares(m.group(4), "quantity") * (1 if m.group(2) == "BUY" else -1),
        )
        for m in rows[1:]
        if m.group(2) in ("BUY", "SELL")
    )
    priced_on = {symbol: date.fromisoformat(day) for symbol, (day, _) in last_price.items()}
    flows = LedgerFlows(date.fromisoformat(rows[0].group(1)), dict(opening), moves, priced_on)
    cash = _labelled(lines, "Closing Cash Balance")
    if abs(cash - balance) > TOLERANCE:
        raise StatementRejected(
            f"numbers do not add up: the last balance is {balance:,.2f}, the closing cash balance {cash:,.2f}"
        )
    unread = _unread(opened + closed, QUANTITY_ROW)
    prices = {symbol: price for symbol, (_, price) in last_price.items()}
    return ParsedStatement("transactions-ledger", as_of, cash, closing, prices, dict(prices), unread, flows=flows)


def _ledger_rows(lines: list[str]) -> list[re.Match[str]]:
    """The transaction rows, the OPENING row first. A line that opens with a date but is not
    a row (a kind the reader does not know, a column missing or split in two) is
    StatementRejected naming it (`_unread`): skipped, it would break the running balance on
    the next row, and the refusal would name that one."""
    unread = _unread(lines, LEDGER_ROW, DATE_FIRST)
    if unread:
        line = next(iter(unread.values()))
        raise StatementRejected(
            f"the statement's line '{line[:120]}' is not a transaction row the statement can be read by "
            "(date, type, symbol, quantity, price, amount, balance)"
        )
    rows = [m for m in map(LEDGER_ROW.match, lines) if m]
    if not rows or rows[0].group(2) != "OPENING":
        raise StatementRejected("no recognisable transactions ledger (no OPENING row with a balance)")
    return rows


def _dated(rows: list[re.Match[str]], start: date, as_of: date) -> None:
    """StatementRejected naming the first row whose date is not a date, or lies outside the
    statement's period: the OPENING row on or after the Period's start (`start`, when the
    Period line prints one), every other row from the OPENING row's date (the balance every
    row runs from) to the statement's date (`as_of`, the Period's end: the day the closing
    holdings and cash are of, and the day the sync books on)."""
    opened = _row_day(rows[0], (start, "the statement's period, which starts"), as_of)
    for row in rows[1:]:
        _row_day(row, (opened, "the OPENING row's"), as_of)


def _period_start(lines: list[str]) -> date:
    """The date the Period line opens with ("Period: 2026-11-01 to 2026-11-20"), or the
    earliest date when it prints only its end; StatementRejected when it is no date."""
    for line in lines:
        found = PERIOD_START.match(line)
        if found:
            try:
                return date.fromisoformat(found.group(1))
            except ValueError:
                raise StatementRejected(
                    f"the statement's Period starts {found.group(1)}, which is not a date"
                ) from None
    return date.min


def _row_day(row: re.Match[str], first: tuple[date, str], last: date) -> date:
    """The date a ledger row opens with, from `first` (the day and how the refusal names
    it) to `last`, else StatementRejected naming the line."""
    line, text = row.group(0)[:120], row.group(1)
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise StatementRejected(f"the statement's line '{line}' is dated {text}, which is not a date") from None
    if day > last:
        raise StatementRejected(
            f"the statement's line '{line}' is dated {text}, after the statement's date {last.isoformat()}"
        )
    if day < first[0]:
        raise StatementRejected(
            f"the statement's line '{line}' is dated {text}, before {first[1]} {first[0].isoformat()}"
        )
    return day


def _posted(
    row: re.Match[str], balance: Decimal, held: dict[str, int], last_price: dict[str, tuple[str, Decimal]]
) -> Decimal:
    """The balance after a ledger row, which must be `balance` plus its amount; a trade is
    held to its quantity x price and moves `held` and `last_price` (by symbol, the day and
    price of its latest-dated trade, the later row of a day: a row printed after one of a
    later day does not replace its price, as the last row in print order did)."""
    day, kind, symbol = row.group(1), row.group(2), row.group(3)
    amount, stated = _number(row.group(6), f"{day} {kind} amount"), _number(row.group(7), f"{day} {kind} balance")
    if abs(balance + amount - stated) > TOLERANCE:
        raise StatementRejected(
            f"numbers do not add up: on {day} {balance:,.2f} + {amount:,.2f} is not the balance {stated:,.2f}"
        )
    if kind in ("BUY", "SELL"):
        quantity = _shares(row.group(4), f"{day} {kind} quantity")
        price = _number(row.group(5), f"{day} {kind} price", signed=False)
        expected = -quantity * price if kind == "BUY" else quantity * price
        if abs(expected - amount) > TOLERANCE:
            raise StatementRejected(
                f"numbers do not add up: {day} {kind} {quantity:,} {symbol} at {price:,.2f} is not {amount:,.2f}"
            )
        held[symbol] = held.get(symbol, 0) + (quantity if kind == "BUY" else -quantity)
        if day >= last_price.get(symbol, ("", price))[0]:
            last_price[symbol] = (day, price)
    return stated


@dataclass(frozen=True)
class StatementRead:
    """A statement as read, before anything is stored: its digest, and what it says or why
    it was refused."""

    digest: str
    parsed: ParsedStatement | None = None
    refusal: StatementRejected | PdfRejected | None = None


def read_statement(settings: Settings, data: bytes, filename: str = "statement.pdf") -> StatementRead:
    """The PDF read in the sandbox and parsed; touches no database (the API reads uploads
    holding no database slot: api/routers/portfolio.py)."""
    digest = hashlib.sha256(data).hexdigest()
    try:
        with PdfExtractor.from_settings(settings) as extractor:
            text = extractor.extract(data, filename).text
    except PdfRejected as exc:
        return StatementRead(digest, refusal=exc)
    try:
        return StatementRead(digest, parsed=parse_text(text))
    except StatementRejected as exc:
        return StatementRead(digest, refusal=exc)
    except (ValueError, ArithmeticError) as exc:  # a figure the parser's own checks let through: refused, kept
        return StatementRead(digest, refusal=StatementRejected(f"the statement could not be read: {exc}"[:300]))


class _Previewed(Exception):
    """Raised inside the sync's transaction to roll it back: a preview is the sync itself,
    every check included, undone."""

    def __init__(self, changes: list[Change], warnings: list[str], token: str) -> None:
        super().__init__("preview")
        self.changes, self.warnings, self.token = changes, warnings, token


def file_statement(
    engine: Engine,
    portfolio_id: str,
    read: StatementRead,
    now: datetime | None = None,
    preview: bool = False,
    confirm: str | None = None,
    respond: Respond = None,
) -> StatementResult:
    """The portfolio synchronised to a statement read by `read_statement`, in one
    transaction under the portfolio's lock; a refusal is recorded and raised. The same file
    synchronised before changes nothing (ALREADY_IMPORTED), a concurrent upload of it
    included. `preview`: the same sync, rolled back: status PREVIEW with the changes it
    would make and a `confirm_token`; nothing is stored, a refusal neither. `confirm`: that
    token; the sync is applied only while the book is as the preview saw it (no trade or
    cash movement recorded since) and it makes the changes the preview showed, else
    ConflictError: what is applied is what was previewed. `respond` renders the answer
    inside the transaction (store.transactions `answered`): an answer that cannot be
    rendered synchronises nothing."""
    try:
        return _file(engine, portfolio_id, read, now or utc_now(), (preview, confirm), respond)
    except _Previewed as done:
        return answered(_preview(read, done), respond)  # rolled back: nothing was written
    except (StatementRejected, PdfRejected) as exc:
        if not preview:  # the refused sync was rolled back; the attempt is kept apart
            with write_transaction(engine, f"statement-imports:{portfolio_id}") as conn:
                refused = {"file_sha256": read.digest, "status": "REJECTED", "reason": str(exc)}
                append_history(conn, tables.statement_imports, [{"portfolio_id": portfolio_id, **refused}])
        raise


def _preview(read: StatementRead, done: _Previewed) -> StatementResult:
    """The answer to a preview: the changes the rolled-back sync made and its token."""
    assert read.parsed is not None
    return {
        "status": "PREVIEW",
        "file_sha256": read.digest,
        "statement": read.parsed.as_dict(),
        "changes": done.changes,
        "warnings": done.warnings,
        "confirm_token": done.token,
        "detail": "nothing was changed; upload the same file with confirm=<confirm_token> to apply exactly "
        "these changes (refused if the book changes first)",
    }


def _file(
    engine: Engine, portfolio_id: str, read: StatementRead, moment: datetime, asked: tuple, respond: Respond
) -> StatementResult:
    """`file_statement`'s transaction: ALREADY_IMPORTED for a file synchronised before; else
    the refusal the read carries, a ConflictError for a token the book no longer matches, or
    the sync, recorded (SYNCED) or, for a preview, raised as `_Previewed` to roll it back."""
    digest, parsed = read.digest, read.parsed
    preview, confirm = asked
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.writable_portfolio(conn, portfolio_id)
        if _already_synced(conn, portfolio_id, digest):
            return answered(_already(digest), respond)
        if read.refusal is not None:
            raise read.refusal
        assert parsed is not None
        book = _book_version(conn, portfolio_id)
        changes, warnings = _synchronise(conn, portfolio_id, parsed, digest, moment)
        token = _confirm_token(digest, book, changes, warnings)
        _confirmed(confirm, token)  # raised in the transaction: the sync is rolled back
        if preview:
            raise _Previewed(changes, warnings, token)
        row = {"file_sha256": digest, "layout": parsed.layout, "status": "SYNCED", "parsed": parsed.as_dict()}
        kept = {"changes": changes, "reason": "; ".join(warnings) or None}
        append_history(conn, tables.statement_imports, [{"portfolio_id": portfolio_id, **row, **kept}])
        synced: StatementResult = {
            "status": "SYNCED",
            "file_sha256": digest,
            "statement": parsed.as_dict(),
            "changes": changes,
            "warnings": warnings,
        }
        return answered(synced, respond)


def import_statement(
    engine: Engine,
    settings: Settings,
    portfolio_id: str,
    data: bytes,
    filename: str = "statement.pdf",
    now: datetime | None = None,
    preview: bool = False,
    confirm: str | None = None,
    respond: Respond = None,
) -> StatementResult:
    """`read_statement` then `file_statement`; a file synchronised before is not read again."""
    with engine.connect() as conn:
        ledger.writable_portfolio(conn, portfolio_id)
        digest = hashlib.sha256(data).hexdigest()
        if _already_synced(conn, portfolio_id, digest):
            return answered(_already(digest), respond)
    read = read_statement(settings, data, filename)
    return file_statement(engine, portfolio_id, read, now, preview, confirm, respond)


def _already(digest: str) -> StatementResult:
    return {
        "status": "ALREADY_IMPORTED",
        "file_sha256": digest,
        "changes": [],
        "warnings": [],
        "detail": "this statement was imported before; nothing changed",
    }


def _book_version(conn: Connection, portfolio_id: str) -> tuple:
    """The portfolio's newest trade and cash entry (its writers hold its lock, so these ids
    move exactly when its book does)."""
    return newest_ids(
        conn, (tables.trades, "portfolio_id", portfolio_id), (tables.cash_entries, "portfolio_id", portfolio_id)
    )


def _confirm_token(digest: str, book: tuple, changes: list[Change], warnings: list[str]) -> str:
    """What a preview showed: the file (its SHA-256's first `TOKEN_FILE_CHARS` hex digits,
    read back by `_confirmed`), then a hash of the file, the book it was applied to
    (`_book_version`) and the changes and warnings it answered. A confirmation applies the
    sync only when it makes the same token, so what is booked is what was shown: a price the
    sync books at (a dropped holding's last close) corrected since the preview changes the
    token as a trade does."""
    shown = json.dumps([changes, warnings], sort_keys=True, default=str)
    return digest[:TOKEN_FILE_CHARS] + hashlib.sha256(f"{digest}:{book}:{shown}".encode()).hexdigest()[:24]


def _confirmed(confirm: str | None, token: str) -> None:
    """A confirmation (`confirm`) that is not the token this sync makes: one no preview of
    this file issued (malformed, or naming another file: InvalidInputError, 422), else one
    of its preview that the book no longer matches (ConflictError, 409)."""
    if confirm is None or confirm == token:
        return
    if not CONFIRM_TOKEN.fullmatch(confirm) or confirm[:TOKEN_FILE_CHARS] != token[:TOKEN_FILE_CHARS]:
        raise InvalidInputError(
            f"the confirm token {confirm!r} is not one a preview of this file issued; preview the file "
            "(CLI --preview, REST ?preview=true) and confirm with the confirm_token it answers"
        )
    raise ConflictError(
        "the book changed since the preview (a trade or cash movement was recorded, or a price the sync "
        "books at moved); preview it again and confirm that"
    )


def _cash_through(conn: Connection, portfolio_id: str, day: date) -> Decimal:
    """The portfolio's cash at the end of `day`: the entries of that day or before."""
    return sum((e["amount"] for e in _cash_entries(conn, portfolio_id) if e["day"] <= day), Decimal(0))


def _cash_after(conn: Connection, portfolio_id: str, day: date) -> list[_CashEntry]:
    """The cash entries of the days after `day`, oldest first."""
    return sorted((e for e in _cash_entries(conn, portfolio_id) if e["day"] > day), key=lambda e: e["effective_at"])


def _cash_entries(conn: Connection, portfolio_id: str) -> list[_CashEntry]:
    """Each cash entry with the day it belongs to in the account a statement states
    (`ledger.cash_day`): a trade's gross and fee on its trading date, a deposit, withdrawal,
    dividend or reconciliation on the exchange date it took effect. Not `ledger.cash_days`,
    the track record's rule, which moves the money entered before a trade to the trade's
    earlier session: a Saturday deposit entered before a buy dated Friday is not in Friday's
    statement, and read as Friday's the statement's balance replaced it."""
    c = tables.cash_entries.c
    rows = conn.execute(ledger.dated_cash(c.amount, c.effective_at).where(c.portfolio_id == portfolio_id)).all()
    return [
        {
            "amount": r.amount,
            "effective_at": r.effective_at if r.effective_at.tzinfo else r.effective_at.replace(tzinfo=UTC),
            "day": ledger.cash_day(r.trade_date, r.effective_at),
        }
        for r in rows
    ]


def _already_synced(conn: Connection, portfolio_id: str, digest: str) -> bool:
    c = tables.statement_imports.c
    rows = current_rows(conn, tables.statement_imports, where=[c.portfolio_id == portfolio_id, c.file_sha256 == digest])
    return bool(rows) and rows[0]["status"] == "SYNCED"


def _in_range(parsed: ParsedStatement) -> None:
    """The ranges a trade and a deposit are held to: a statement is refused past them, as
    a number the store cannot hold answered 500 and a date outside the service's range
    stored trades nowhere a read reaches."""
    low, high = SUPPORTED_DATES
    if not low <= parsed.as_of <= high:
        raise StatementRejected(
            f"the statement is dated {parsed.as_of.isoformat()}, outside the supported dates "
            f"{low.isoformat()} to {high.isoformat()}"
        )
    if parsed.cash > MAX_AMOUNT:
        raise StatementRejected(f"the statement's cash balance {parsed.cash:,.2f} is over the limit of {MAX_AMOUNT:,}")
    for symbol, quantity in parsed.holdings.items():
        if quantity > MAX_SHARES:
            raise StatementRejected(
                f"the statement holds {quantity:,} {symbol}, over the limit of {MAX_SHARES:,} shares"
            )
    # each figure by itself: merged by symbol, a holding's market price hid its average cost
    for symbol, cost in parsed.average_costs.items():
        if cost > MAX_AMOUNT:
            raise StatementRejected(
                f"the statement's average cost of {symbol} {cost:,.2f} is over the limit of {MAX_AMOUNT:,}"
            )
    for symbol, price in [*parsed.prices.items(), *parsed.sale_prices.items()]:
        if price > MAX_AMOUNT:
            raise StatementRejected(f"the statement prices {symbol} at {price:,.2f}, over the limit of {MAX_AMOUNT:,}")


def _synchronise(
    conn: Connection, portfolio_id: str, parsed: ParsedStatement, digest: str, moment: datetime
) -> tuple[list[Change], list[str]]:
    """The sync of a checked statement (`_acceptable`): a STATEMENT_SYNC trade per holding
    that differs (on the statement date's share count), then the RECONCILIATION of the
    cash, the dividends going ex after the statement on its holdings, then what the ledger
    carries on top of the statement (its cash now with them); returns the changes and
    the warnings of the prices booked (statement_checks)."""
    _acceptable(conn, parsed, moment)
    parsed = _on_its_count(conn, parsed)
    synced = _synced(conn, portfolio_id)
    _same_account(synced, parsed)
    _not_before_the_last(synced, parsed)
    current = ledger.holdings(conn, portfolio_id, parsed.as_of)
    records = name_records(conn, set(current) | set(parsed.holdings), parsed.as_of)
    _plausible(parsed, records)
    changes: list[Change] = []
    warnings: list[str] = []
    for symbol in sorted(set(current) | set(parsed.holdings)):
        synced = _sync_holding(_Sync(conn, portfolio_id, parsed, digest, moment), records[symbol], current.get(symbol))
        changes.extend(x.as_dict() for x in synced)
        warnings.extend(_price_warnings(parsed, records[symbol], synced))
    later = _cash_after(conn, portfolio_id, parsed.as_of)
    reconciled = _sync_cash(conn, portfolio_id, parsed, digest, later)
    if reconciled is not None:
        before, after = reconciled
        changes.append({"cash_before": money_display(before), "cash_after": money_display(after)})
    # the dividends going ex after the statement, settled on the holdings it gives the book
    dividends.credit_dividends(conn, portfolio_id, exchange_date(moment), synced=parsed.as_of)
    later = _cash_after(conn, portfolio_id, parsed.as_of)
    since = [t for t in ledger.ledger_rows(conn, portfolio_id) if t["trading_date"] > parsed.as_of]
    if since or later:
        changes.append(
            {
                "carried": {
                    "detail": f"what the ledger records after {parsed.as_of.isoformat()} is kept on top of the "
                    "statement",
                    "trades_after": len(since),
                    "cash_movements_after": len(later),
                    "cash_now": money_display(ledger.cash_balance(conn, portfolio_id)),
                }
            }
        )
    return changes, warnings


def _synced(conn: Connection, portfolio_id: str) -> list[StatementJson]:
    """The statements the portfolio was synchronised to (`statement_imports.parsed` of its
    SYNCED imports), oldest first: by their date, then in the order they were synced."""
    c = tables.statement_imports.c
    rows = current_rows(conn, tables.statement_imports, where=[c.portfolio_id == portfolio_id, c.status == "SYNCED"])
    return [r["parsed"] for r in sorted(rows, key=lambda r: r["id"]) if r["parsed"]]


def _same_account(synced: list[StatementJson], parsed: ParsedStatement) -> None:
    """StatementRejected for a statement that is not shown to be of the account of the
    portfolio's last synchronised statement that names one: of another account (synced,
    KC-7777's statement sold every holding of a portfolio kept to KC-0001's), or printing
    no account line at all (a spouse's or a company's statement with its header cut off
    would replace the book just the same). A portfolio none of whose statements named an
    account takes a statement that prints none, as before."""
    named = [s for s in synced if s.get("account")]
    if not named or parsed.account == named[-1]["account"]:
        return
    last = named[-1]  # the last synced (a statement dated before the last is refused: also the latest dated)
    shown = f"of account {parsed.account}, not" if parsed.account else "of no account: it prints no account line, not"
    raise StatementRejected(
        f"the statement is {shown} {last['account']}, the account of the statement "
        f"this portfolio was last synchronised to ({last['as_of']}): synchronised, another account's holdings "
        f"and cash would replace this portfolio's; upload a statement of account {last['account']} that shows "
        "its account line"
    )


def _not_before_the_last(synced: list[StatementJson], parsed: ParsedStatement) -> None:
    """StatementRejected for a statement dated before the last one the portfolio was
    synchronised to (`synced`). A sync books the difference from the book as it stood on the
    statement's day; the later statement's differences, booked against the book it saw,
    would then be replayed on top, so the holdings and the cash would match neither
    statement (a 2,000-share holding of 11-20 under a 1,000 of 11-27 read 3,000). The later
    statement stands; one of the same day is a correction and is synchronised."""
    last = max((date.fromisoformat(s["as_of"]) for s in synced), default=None)
    if last is not None and parsed.as_of < last:
        raise StatementRejected(
            f"the statement is dated {parsed.as_of.isoformat()}, before {last.isoformat()}, the day of the last "
            "statement this portfolio was synchronised to: that statement stands, and an older one cannot be "
            "applied under it (its holdings and cash would match neither); upload a statement dated "
            f"{last.isoformat()} or later"
        )


def _plausible(parsed: ParsedStatement, records: dict[str, NameRecord]) -> None:
    """StatementRejected naming the first line no account could hold (statement_checks)."""
    for symbol, quantity in sorted(parsed.holdings.items()):
        refusal = holding_refusal(symbol, quantity, records[symbol], parsed.as_of)
        if refusal:
            raise StatementRejected(refusal)


def _acceptable(conn: Connection, parsed: ParsedStatement, moment: datetime) -> None:
    """StatementRejected for a statement out of range (`_in_range`), whose day has not
    ended at the upload's `moment` (`_day_ended`), with a negative cash
    balance (margin accounts are not supported), a symbol the exchange does not list, or
    a holdings line naming a listed symbol that could not be read (`_unread`: synced
    without it, the book would sell that holding), or amounts in another currency
    (`_in_trading_currency`)."""
    _in_range(parsed)
    _in_trading_currency(conn, parsed)
    _day_ended(parsed, moment)
    if parsed.cash < 0:
        raise StatementRejected(
            f"the statement's cash balance is negative ({parsed.cash:,.2f}); margin accounts are not supported"
        )
    listed = known_symbols(conn)
    unknown = sorted(set(parsed.holdings) - listed)
    if unknown:
        raise StatementRejected(f"the statement holds symbols the exchange does not list: {', '.join(unknown)}")
    skipped = sorted(set(parsed.unread) & listed)
    if skipped:
        raise StatementRejected(
            f"the statement's line '{parsed.unread[skipped[0]][:120]}' names {skipped[0]} but is not a holding line "
            "the statement can be read by; synced without it, the book would drop that holding"
        )


def _on_its_count(conn: Connection, parsed: ParsedStatement) -> ParsedStatement:
    """A transactions ledger checked and priced on the share count of its date: its opening
    holdings and trades must give its closing holdings with each stored split whose ex-date
    falls in its period (from the OPENING row's day, whose opening holdings are printed
    before it, to the statement's date) applied before the rows of its ex-date, to the whole
    shares the ledger keeps (`ledger.split_quantity`), else StatementRejected. A 2-for-1
    split on 11-16 of the 1,000 LIQ a ledger opens with, closing with 2,000, adds up (it was
    refused as "numbers do not add up"). The price of a trade before such a split, what the
    shares the statement brings in are booked at, is put on the statement date's count
    (`factor_between`), as the holdings are. A valuation statement is returned as it is."""
    flows = parsed.flows
    if flows is None:
        return parsed
    symbols = set(flows.opening) | {m[1] for m in flows.moves}
    splits = [x for x in stored_splits(conn, parsed.as_of, symbols) if x.ex_date >= flows.opened_on]
    held = _held_through(flows, [x for x in splits if x.new_symbol is None])
    if held != parsed.holdings:
        said = " on the count of the splits in its period" if splits else ""
        raise StatementRejected(
            f"numbers do not add up: opening holdings and trades give {held}{said}, the closing holdings say "
            f"{parsed.holdings}"
        )
    prices = {
        symbol: (price / Decimal(str(factor_between(splits, symbol, flows.priced_on[symbol], parsed.as_of)))).quantize(
            ledger.CENT
        )
        for symbol, price in parsed.prices.items()
    }
    return replace(parsed, prices=prices, sale_prices=dict(prices))


def _held_through(flows: LedgerFlows, splits: list[Split]) -> dict[str, int]:
    """The holdings a ledger's opening holdings and trades give at its end, the `splits`
    (in ex-date order) applied before the trades of their ex-date."""
    held, pending = dict(flows.opening), list(splits)
    for day, symbol, quantity in sorted(flows.moves, key=lambda m: m[0]):
        while pending and pending[0].ex_date <= day:
            split = pending.pop(0)
            held[split.symbol] = ledger.split_quantity(held.get(split.symbol, 0), split.factor)
        held[symbol] = held.get(symbol, 0) + quantity
    for split in pending:
        held[split.symbol] = ledger.split_quantity(held.get(split.symbol, 0), split.factor)
    return {symbol: quantity for symbol, quantity in held.items() if quantity}


def _day_ended(parsed: ParsedStatement, moment: datetime) -> None:
    """StatementRejected for a statement uploaded before its day's close (16:00 exchange
    time, `session_close_utc`): a statement is read as the end of its day, so a broker's
    morning statement dated today undid the trades the client booked earlier that day, and
    a future one would book cash before the holdings it reconciles. From the close on, one
    dated today is accepted as today's."""
    close = session_close_utc(parsed.as_of)
    if moment >= close:
        return
    today = exchange_date(moment)
    when = "today, before the exchange's close" if parsed.as_of == today else f"after today's exchange date {today}"
    raise StatementRejected(
        f"the statement is dated {parsed.as_of.isoformat()}, {when}: a statement is read as the end of its day, "
        f"so it can be synced from {exchange_iso(close)} (exchange time), the close of {parsed.as_of.isoformat()}"
    )


def _in_trading_currency(conn: Connection, parsed: ParsedStatement) -> None:
    """StatementRejected for a statement that names another currency for its amounts than
    the one the exchange's prices and the book's cash are in (`trading_currency`): nothing
    is converted and no rate is guessed; read as that currency, a USD account's 250,000 of
    cash was booked as 250,000 JMD, and its prices as JMD prices."""
    trading = trading_currency(conn)
    foreign = [c for c in parsed.currencies if c != trading]
    if foreign:
        raise StatementRejected(
            f"the statement's amounts are in {', '.join(foreign)}, not {trading}, the currency the exchange's prices "
            f"and this portfolio's cash are in; nothing is converted: upload the statement of the account held in "
            f"{trading}"
        )


@dataclass(frozen=True)
class HoldingSynced:
    """A holding brought to the statement's by a STATEMENT_SYNC trade."""

    symbol: str
    side: str
    quantity: int
    price: Decimal
    before: int
    after: int

    def as_dict(self) -> HoldingChange:
        """The change as the answer and `statement_imports.changes` list it."""
        return {**asdict(self), "price": str(self.price)}


@dataclass(frozen=True)
class _Sync:
    """A statement being synchronised: the connection, the book, the statement, its
    SHA-256 and the upload's moment (each sync trade's executed_at)."""

    conn: Connection
    portfolio_id: str
    parsed: ParsedStatement
    digest: str
    moment: datetime


def _sync_holding(sync: _Sync, record: NameRecord, held: ledger.Position | None) -> list[HoldingSynced]:
    """The STATEMENT_SYNC trades, dated the statement's day and moving no cash, that bring
    the record's symbol from `held` (the ledger's position that day) to the statement's
    holding and, where the statement states an average cost, to its cost basis (quantity
    x average cost): a buy of the difference priced so that the cost basis is the
    statement's ((stated cost - the ledger's cost basis) / difference, in lots at the
    ledger's scale: `_book_lots`); a sale at the
    statement's market price, else the symbol's last close on or before the statement's
    day (StatementRejected naming it when it has none). Where that leaves the cost basis
    other than the statement's (the difference's price would not be positive, a sale, or
    the quantity agrees and the cost does not), `_rebased` books the adjustment."""
    parsed, symbol = sync.parsed, record.symbol
    before, cost = (held.quantity, held.cost_basis) if held else (0, Decimal(0))
    after = parsed.holdings.get(symbol, 0)
    stated = _stated_cost(parsed, symbol)
    target = after * stated if stated is not None and after else None
    synced: list[HoldingSynced] = []
    if after > before and target is not None and target > cost:
        synced.extend(_book_lots(sync, symbol, before, after, target - cost))
    elif after != before:
        side = "BUY" if after > before else "SELL"
        price = (parsed.prices if side == "BUY" else parsed.sale_prices).get(symbol) or _drop_price(side, record)
        if price is None:
            raise StatementRejected(
                f"the statement's {symbol} line has no price and {symbol} has no close on or before "
                f"{parsed.as_of.isoformat()} to book its {side.lower()} of {abs(after - before):,} shares at"
            )
        synced.append(_book_sync(sync, symbol, side, before, after, price))
    if target is not None:
        synced.extend(_rebased(sync, symbol, target))
    return synced


def _drop_price(side: str, record: NameRecord) -> Decimal | None:
    """The price a sync trade the statement prices nowhere is booked at: for the sale of a
    name the exchange settled (a delisting that pays holders a value per share,
    `NameRecord.settlement`), that value, what the shares the statement no longer holds
    were paid out at, so the realised PnL is the settlement less their cost (booked at the
    last close, the realised PnL of a cash offer of 7.50 on a last close of 6.00 was 1.50 a
    share short and the statement's cash put it in a RECONCILIATION); for the sale of a
    name the exchange delisted paying nothing (its notice after the last bar and no
    settlement, `NameRecord.delisted`), 0: the shares leave the book at nothing, their
    whole cost basis a realised loss (`ledger.written_off`; booked at the last close, DEAD
    costing 5,000 showed a realised gain of 1,000 never received); else the name's last
    close on or before the statement's day."""
    if side == "SELL" and record.settlement is not None:
        return record.settlement
    if side == "SELL" and record.delisted is not None:
        return Decimal(0).quantize(ledger.CENT)
    return record.last_close


def _price_warnings(parsed: ParsedStatement, record: NameRecord, synced: list[HoldingSynced]) -> list[str]:
    """The warnings of the prices a holding's sync booked from the statement: a sale's price
    (the sale that brings the holding to the statement's quantity, not the sale at the
    book's own average cost of a cost-basis adjustment, nor one the statement prices
    nowhere: its last close lies in its range, a delisting's value is the exchange's, not
    the broker's) and the stated average cost (else a buy's booked price). A stated average
    cost of 0 or less was no cost basis: said."""
    symbol, held = record.symbol, parsed.holdings.get(record.symbol, 0)
    stated = _stated_cost(parsed, symbol)
    said = [
        price_warning(symbol, "SELL", x.price, record, parsed.as_of)
        for x in synced
        if x.side == "SELL" and x.after == held and parsed.sale_prices.get(symbol)
    ]
    buys = [x for x in synced if x.side == "BUY"]
    if buys:
        said.append(
            price_warning(symbol, "BUY", stated if stated is not None else buys[-1].price, record, parsed.as_of)
        )
    if symbol in parsed.average_costs and stated is None:
        kept = (
            "the shares bought in were booked at its market price or last close instead"
            if buys
            else "the cost basis the book holds was kept"
        )
        said.append(
            f"{symbol}: the statement's average cost {parsed.average_costs[symbol]:,.2f} is no cost basis; {kept}: "
            "check the cost basis with your broker"
        )
    return [w for w in said if w]


def _stated_cost(parsed: ParsedStatement, symbol: str) -> Decimal | None:
    """The statement's average cost of `symbol`, None where it states none or one of 0 or
    less (bonus shares: no cost basis the ledger can hold, which books positive prices)."""
    stated = parsed.average_costs.get(symbol)
    return stated if stated is not None and stated > 0 else None


def _rebased(sync: _Sync, symbol: str, target: Decimal) -> list[HoldingSynced]:
    """The cost-basis adjustment of a holding already of the statement's quantity whose
    cost basis is not the statement's `target` (to the cent): the ledger holds a cost
    basis only through trades, so the holding is sold at its own cost basis (no gain or
    loss) and bought back at the statement's, each in lots at the ledger's scale
    (`_lots_of`), both moving no cash and booked as one (`_book`: a later sale of the name
    needs the shares bought back, not the holding of none between them, which refused the
    statement); the statement's day becomes its purchase date."""
    position = ledger.holdings(sync.conn, sync.portfolio_id, sync.parsed.as_of)[symbol]
    if abs(position.cost_basis - target) < CENTS:
        return []
    quantity = position.quantity
    sold = _lots_of(sync, symbol, quantity, 0, position.cost_basis)
    return _book(sync, [*sold, *_lots_of(sync, symbol, 0, quantity, target)])


def _lots(total: Decimal, quantity: int) -> list[tuple[int, Decimal]]:
    """`quantity` shares priced at the ledger's six decimals so that they add up to `total`
    to that scale: one lot at total / quantity where that has six decimals, else the shares
    split between that price rounded down and one millionth above it. A stated average cost
    of 50.1234567 on 2,000,000 shares is 600,000 at 50.123456 and 1,400,000 at 50.123457,
    100,246,913.40 as the statement says, where one lot at 50.123457 is 0.60 more. Worked
    at enough digits for any total the statement's bounds allow (10^12 shares at 10^12,
    past the default 28); a price past the ledger's bound is left to its refusal."""
    step = ledger.CENT
    with localcontext(prec=LOT_DIGITS):
        total = total.quantize(step)
        low = (total / quantity).quantize(step, rounding=ROUND_FLOOR)
        above = int((total - low * quantity) / step)
        return [(q, p) for q, p in ((quantity - above, low), (above, low + step)) if q > 0]


def _book_lots(sync: _Sync, symbol: str, before: int, after: int, total: Decimal) -> list[HoldingSynced]:
    """The STATEMENT_SYNC trades of `_lots_of`, booked."""
    return _book(sync, _lots_of(sync, symbol, before, after, total))


def _lots_of(sync: _Sync, symbol: str, before: int, after: int, total: Decimal) -> list[_SyncTrade]:
    """The STATEMENT_SYNC trades from `before` to `after` shares whose value is `total` to
    the ledger's scale (`_lots`): a buy adds exactly that cost basis, a sale of the whole
    holding at its cost basis realises nothing."""
    side, sign, synced = ("BUY", 1, []) if after > before else ("SELL", -1, [])
    for quantity, price in _lots(total, abs(after - before)):
        synced.append(_sync_trade(sync, symbol, side, before, before + sign * quantity, price))
        before += sign * quantity
    return synced


def _book_sync(sync: _Sync, symbol: str, side: str, before: int, after: int, price: Decimal) -> HoldingSynced:
    """One STATEMENT_SYNC trade from `before` to `after` shares at `price`, booked."""
    return _book(sync, [_sync_trade(sync, symbol, side, before, after, price)])[0]


def _book(sync: _Sync, trades: list[_SyncTrade]) -> list[HoldingSynced]:
    """STATEMENT_SYNC trades booked as one (`ledger.record_trades`), moving no cash
    (StatementRejected naming the line when the ledger cannot hold them)."""
    symbol = trades[0].synced.symbol
    try:
        ledger.record_trades(sync.conn, [t.request for t in trades], moves_cash=False)
    except ledger.UnreplayableTrade as error:  # a later sale the statement's holding cannot carry
        raise _not_carried(sync, symbol) or _line_refused(sync, symbol, error) from None
    except ledger.TradeRejected as error:  # a figure the ledger cannot hold: the line refused, the attempt kept
        raise _line_refused(sync, symbol, error) from None
    return [t.synced for t in trades]


def _line_refused(sync: _Sync, symbol: str, error: ledger.TradeRejected) -> StatementRejected:
    line = f"{symbol} line" if symbol in sync.parsed.holdings else f"holding of no {symbol} (it lists none)"
    return StatementRejected(f"the statement's {line} cannot be booked: {error.detail}")


def _not_carried(sync: _Sync, symbol: str) -> StatementRejected | None:
    """The refusal of a statement whose holding of `symbol` cannot carry the sales of it the
    ledger records after the statement's day, naming the first and the day a statement
    that could carry them is of; None where the ledger records none."""
    parsed = sync.parsed
    rows = ledger.ledger_rows(sync.conn, sync.portfolio_id)
    sold = (t for t in rows if t["symbol"] == symbol and t["side"] == "SELL" and t["trading_date"] > parsed.as_of)
    later = sorted(sold, key=lambda t: t["trading_date"])
    if not later:
        return None
    first, last = later[0], later[-1]["trading_date"].isoformat()
    return StatementRejected(
        f"the statement holds {parsed.holdings.get(symbol, 0):,} {symbol} on {parsed.as_of.isoformat()}, too few for "
        f"the sale of {int(first['quantity']):,} {symbol} the ledger records on {first['trading_date'].isoformat()} "
        f"after it: a statement's holdings must carry what happened since; upload a statement dated {last} or later"
    )


@dataclass(frozen=True)
class _SyncTrade:
    """A STATEMENT_SYNC trade to book, and the change it makes."""

    request: TradeRequest
    synced: HoldingSynced


def _sync_trade(sync: _Sync, symbol: str, side: str, before: int, after: int, price: Decimal) -> _SyncTrade:
    """The STATEMENT_SYNC trade from `before` to `after` shares at `price`."""
    parsed = sync.parsed
    request = TradeRequest(
        portfolio_id=sync.portfolio_id,
        trading_date=parsed.as_of,
        executed_at=sync.moment,
        symbol=symbol,
        side=side,
        quantity=abs(after - before),
        price=price,
        origin="STATEMENT_SYNC",
        rationale={
            "statement_sha256": sync.digest,
            "layout": parsed.layout,
            "statement_quantity": parsed.holdings.get(symbol, 0),
        },
        trade_id=f"SYNC-{uuid.uuid4().hex}",
    )
    return _SyncTrade(request, HoldingSynced(symbol, side, abs(after - before), price, before, after))


def _sync_cash(
    conn: Connection, portfolio_id: str, parsed: ParsedStatement, digest: str, later: list[_CashEntry]
) -> tuple[Decimal, Decimal] | None:
    """The RECONCILIATION entry, effective at the statement day's close, that brings the
    cash the ledger held at the end of that day to the statement's balance; returns that
    cash and the balance it was brought to, or None when they agree (no entry). The
    statement's cash must pay for everything the ledger records since (`later`), else
    StatementRejected.

    A balance finer than the cent (a broker's "1,000.125") is taken, rounded to the cent
    half up (market.money.to_cents), as the ledger stores every cash entry: a broker's
    statement is a record of the account, not money a client asks to move (which is
    refused unless in whole cents), and refusing it would leave the book out of step
    with the account. The comparison, the entry and the changes (what the answer and
    `statement_imports.changes` record) all use that rounded balance, so the audit record
    says what the ledger holds: cash_before and cash_after in cents as money is shown
    everywhere (market.money.money_display), cash_after - cash_before being the entry.

    The dividends the book credited that went ex by the statement's date and are paid after
    it (`dividends.unpaid_at`) are not in the statement's balance, which is the money in the
    account: the book's cash is brought to the balance with them, so they stay credited
    (receivables until their payment date, as before the sync) and the statement that
    follows the payment holds them."""
    cash = _cash_through(conn, portfolio_id, parsed.as_of)
    stated = to_cents(parsed.cash) + dividends.unpaid_at(conn, portfolio_id, parsed.as_of)
    running = stated
    for entry in later:
        running += entry["amount"]
        if running < 0:
            raise StatementRejected(
                f"the statement's cash of {parsed.cash:,.2f} on {parsed.as_of.isoformat()} cannot pay for what the "
                f"ledger records since: the balance would reach {running:,.2f} at "
                f"{exchange_iso(entry['effective_at'])} (exchange time)"
            )
    if cash == stated:
        return None
    ledger.record_cash(
        conn,
        portfolio_id,
        f"SYNC-{uuid.uuid4().hex}",
        stated - cash,
        "RECONCILIATION",
        session_close_utc(parsed.as_of),
        f"statement {digest[:12]} of {parsed.as_of.isoformat()}",
    )
    return cash, stated
