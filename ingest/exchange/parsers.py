"""Parsers for the exchange's pages. They read what is there and say precisely what is
not: a cell that is not a number, a table shorter than its declared row count, a board
that is missing. They never guess a value."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

import lxml.html

from market.errors import IncompletePageError
from market.money import printed_number

_MONEY_HEADER = re.compile(r"^(?P<title>.+) \((?P<currency>[A-Z]{3})\)$")  # 'Value (JMD)': the column and its currency
BOARDS = ("MAIN", "JUNIOR")


class CellError(ValueError):
    pass


_PLAIN_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")  # what most cells hold: no sign, no thousands commas


def number(text: str) -> float | None:
    """'1,234.50' -> 1234.5; '(0.44)' -> -0.44 (market.money.printed_number, the rule a
    statement is read by too); '-' or '' -> None; anything else raises CellError. A
    negative figure where none is meaningful (a close, a volume) is validation's to refuse.
    A plain figure ('39.14', '4747') is one `printed_number` reads too, and `float` of its
    text is the float of its exact value, so it is read directly: an import reads millions
    of cells, and the full rule took a third of the time to read a file."""
    text = text.strip()
    if _PLAIN_NUMBER.fullmatch(text):
        return float(text)
    if text in {"-", ""}:
        return None
    value = printed_number(text)
    if value is None:
        raise CellError(f"'{text}' is not a number")
    return float(value)


def integer(text: str) -> int | None:
    value = number(text)
    if value is None:
        return None
    if value != int(value):
        raise CellError(f"'{text.strip()}' is not a whole number")
    return int(value)


@dataclass
class ParsedPage:
    rows: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # cells that could not be read: the day is refused
    page_date: date | None = None
    currency: str | None = None  # named by the page's money column headers, e.g. 'Value (JMD)'


_QUOTE_FIELDS = {
    "Symbol": ("symbol", str),
    "Security": ("name", str),
    "Volume": ("volume", integer),
    "Trades": ("trades", integer),
    "Open": ("open", number),
    "High": ("high", number),
    "Low": ("low", number),
    "Close": ("close", number),
    "Prev Close": ("prev_close", number),
    "Change": ("change", number),
    "Closing Bid": ("bid", number),
    "Closing Ask": ("ask", number),
    "Value": ("value_traded", number),
    "Status": ("status", str),
}


def parse_trade_quotes(html: str) -> tuple[ParsedPage, ParsedPage, ParsedPage]:
    """(quotes of every board, market notices, the market's index levels: symbol, level;
    a page without an index table has none). Each notice carries `currency`, the one its
    Amount column names (None where it names none): validation refuses a money notice in
    another currency than the quotes'. Raises IncompletePageError when the page is
    cut short, a board is missing or a table holds fewer rows than it declares."""
    if 'class="report-end"' not in html:
        raise IncompletePageError("trade-quotes page is truncated (no end-of-report marker)")
    root = lxml.html.fromstring(html)
    quotes = ParsedPage(page_date=_page_date(root))
    for board in BOARDS:
        table = _find_table(root, f'@class="quotes" and @data-board="{board}"')
        if table is None:
            raise IncompletePageError(f"trade-quotes page has no {board} board table")
        rows = _table_rows(table, _QUOTE_FIELDS, quotes.errors, f"{board} board", quotes)
        for row in rows:
            row["board"] = board
        quotes.rows.extend(rows)
    notices_table = _find_table(root, '@class="notices"')
    notices = ParsedPage(page_date=quotes.page_date)
    if notices_table is not None:
        fields = {
            "Symbol": ("symbol", str),
            "Notice": ("kind", str),
            "Amount": ("amount", number),
            "Detail": ("detail", str),
        }
        notices.rows = _table_rows(notices_table, fields, notices.errors, "notices", notices)
        for row in notices.rows:  # the currency the Amount column names ('Amount (USD)'), None where it names none
            row["currency"] = notices.currency
    indices_table = _find_table(root, '@class="indices"')
    indices = ParsedPage(page_date=quotes.page_date)
    if indices_table is not None:
        indices.rows = _table_rows(
            indices_table, {"Index": ("symbol", str), "Level": ("level", number)}, indices.errors, "indices", indices
        )
    return quotes, notices, indices


def parse_fundamentals(html: str) -> ParsedPage:
    return _single_table(
        html,
        "fundamentals",
        {
            "Symbol": ("symbol", str),
            "Report Date": ("report_date", _iso_date),
            "Period End": ("period_end", _iso_date),
            "EPS": ("eps", number),
            "Book Value per Share": ("book_value_per_share", number),
            "Dividend Yield %": ("dividend_yield", number),
            "Shares Outstanding": ("shares_outstanding", integer),
            "Market Cap": ("market_cap", number),
        },
    )


def parse_securities(html: str) -> ParsedPage:
    return _single_table(
        html,
        "securities",
        {
            "Symbol": ("symbol", str),
            "Security": ("name", str),
            "Board": ("board", str),
            "Sector": ("sector", _text),
            "Listed": ("listed_on", _iso_date),
            "Delisted": ("delisted_on", _iso_date),
            "Status": ("status", str),
        },
    )


def _single_table(html: str, name: str, fields: dict) -> ParsedPage:
    if 'class="report-end"' not in html:
        raise IncompletePageError(f"{name} page is truncated (no end-of-report marker)")
    table = _find_table(lxml.html.fromstring(html), f'@class="{name}"')
    if table is None:
        raise IncompletePageError(f"{name} page has no {name} table")
    page = ParsedPage()
    page.rows = _table_rows(table, fields, page.errors, name, page)
    return page


def _find_table(root, condition: str):  # noqa: ANN001, ANN202
    found = root.xpath(f"//table[{condition}]")
    return found[0] if found else None


def _table_rows(table, fields: dict, errors: list[str], label: str, page: ParsedPage) -> list[dict]:  # noqa: ANN001
    headers = [_column(th.text_content().strip(), page) for th in table.xpath("./thead//th")]
    missing = [h for h in fields if h not in headers]
    if missing:
        raise IncompletePageError(f"{label} table lacks columns {missing}")
    trs = table.xpath("./tbody/tr")
    declared = table.get("data-rows")
    if declared is not None and int(declared) != len(trs):
        raise IncompletePageError(f"{label} table declares {declared} rows but holds {len(trs)}")
    rows = []
    for line, tr in enumerate(trs, start=1):
        cells = [td.text_content().strip() for td in tr.xpath("./td")]
        if len(cells) != len(headers):
            errors.append(f"{label} row {line}: {len(cells)} cells, expected {len(headers)}")
            continue
        row, ok = {}, True
        for header, text in zip(headers, cells):
            if header not in fields:
                continue
            key, convert = fields[header]
            try:
                row[key] = convert(text) if convert is not str else text
            except (CellError, ValueError) as exc:
                errors.append(f"{label} row {line} ({cells[0]}), column '{header}': {exc}")
                ok = False
        if ok:
            rows.append(row)
    return rows


def _column(header: str, page: ParsedPage) -> str:
    """A header without its currency ('Value (JMD)' -> 'Value'), noting the currency on the page."""
    money = _MONEY_HEADER.match(header)
    if money is None:
        return header
    page.currency = page.currency or money["currency"]
    return money["title"]


def _text(text: str) -> str | None:
    """A text cell; '-' means the page has no value for it."""
    return None if text.strip() in {"", "-"} else text.strip()


def _iso_date(text: str) -> date | None:
    text = text.strip()
    if text in {"", "-"}:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CellError(f"'{text}' is not a date") from None


def _page_date(root) -> date | None:  # noqa: ANN001
    found = root.xpath('//*[@class="trading-date"]/@data-date')
    return _iso_date(found[0]) if found else None
