"""The simulated exchange website's pages, in the shapes a small exchange publishes:
HTML tables per board (with a row count the scraper checks), a fundamentals table, a
securities list, corporate notices and an RSS news feed.

Numbers are formatted as exchanges print them: thousands separators, two decimals for
prices, '-' where there is no value (an unknown sector too). Money columns name their
currency in the header, e.g. `Value (JMD)`; the parser reads the instruments' currency
from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, time
from email.utils import format_datetime
from html import escape
from xml.sax.saxutils import escape as xml_escape

from ingest.simulator.market import NewsEvent, SimulatedDay
from market.clock import EXCHANGE_TZ
from market.settings import HOME_CURRENCY

QUOTE_COLUMNS = [
    ("symbol", "Symbol"),
    ("name", "Security"),
    ("volume", "Volume"),
    ("trades", "Trades"),
    ("open", "Open"),
    ("high", "High"),
    ("low", "Low"),
    ("close", "Close"),
    ("prev_close", "Prev Close"),
    ("change", "Change"),
    ("bid", "Closing Bid"),
    ("ask", "Closing Ask"),
    ("value_traded", "Value ({currency})"),
    ("status", "Status"),
]
BOARDS = {"MAIN": "Main Market", "JUNIOR": "Junior Market"}


def money(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def count(value: int | None) -> str:
    return "-" if value is None else f"{value:,d}"


def trade_quotes_page(day: SimulatedDay, boards: list[str] | None = None, currency: str = HOME_CURRENCY) -> str:
    """The day's quotes per board; money columns name the `currency` (the parser reads it)."""
    boards = boards or list(BOARDS)
    sections = []
    for board in boards:
        rows = [b for b in day.bars if b["board"] == board]
        body = "\n".join(_quote_row(r) for r in rows)
        header = "".join(f"<th>{escape(title.format(currency=currency))}</th>" for _, title in QUOTE_COLUMNS)
        sections.append(
            f'<section class="board" data-board="{board}">\n<h2>{BOARDS[board]}</h2>\n'
            f'<table class="quotes" data-board="{board}" data-rows="{len(rows)}">\n'
            f"<thead><tr>{header}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n</section>"
        )
    indices = ""
    if day.indices:  # the market's own index levels, as the exchange publishes them (a replay's files carry them)
        body = "\n".join(f"<tr><td>{escape(x['symbol'])}</td><td>{x['level']:,.4f}</td></tr>" for x in day.indices)
        indices = (
            '\n<section class="indices"><h2>Market Indices</h2>\n'
            f'<table class="indices" data-rows="{len(day.indices)}">'
            f"<thead><tr><th>Index</th><th>Level</th></tr></thead>\n<tbody>\n{body}\n</tbody></table></section>"
        )
    notices = "\n".join(
        f"<tr><td>{escape(n['symbol'])}</td><td>{n['kind']}</td><td>{money(n['amount'])}</td>"
        f"<td>{escape(n['detail'])}</td></tr>"
        for n in day.notices
    )
    return html_page(
        f"Daily Trade Quotes {day.day.isoformat()}",
        f'<p class="trading-date" data-date="{day.day.isoformat()}">Trading date: {day.day:%A %d %B %Y}</p>\n'
        + "\n".join(sections)
        + indices
        + f'\n<section class="notices"><h2>Market Notices</h2>\n<table class="notices" data-rows="{len(day.notices)}">'
        "<thead><tr><th>Symbol</th><th>Notice</th><th>Amount</th><th>Detail</th></tr></thead>\n"
        f"<tbody>\n{notices}\n</tbody></table></section>\n"
        f'<p class="report-end" data-boards="{",".join(boards)}">End of report</p>',
    )


def _quote_row(bar: dict) -> str:
    change = None if bar["volume"] == 0 or bar["prev_close"] is None else round(bar["close"] - bar["prev_close"], 2)
    cells = {
        **bar,
        "volume": count(bar["volume"]),
        "trades": count(bar["trades"]),
        "open": money(bar["open"]),
        "high": money(bar["high"]),
        "low": money(bar["low"]),
        "close": money(bar["close"]),
        "prev_close": money(bar["prev_close"]),
        "change": "-" if change is None else f"{change:+,.2f}",
        "bid": money(bar["bid"]),
        "ask": money(bar["ask"]),
        "value_traded": money(bar["value_traded"]),
    }
    return "<tr>" + "".join(f"<td>{escape(str(cells[key]))}</td>" for key, _ in QUOTE_COLUMNS) + "</tr>"


def fundamentals_page(
    day: SimulatedDay, currency: str = HOME_CURRENCY, extra_rows: Sequence[Sequence[str]] = ()
) -> str:
    """The day's fundamentals table; `extra_rows` (cells as printed) follow the day's rows
    (a fault: `Faults.fundamentals_rows`)."""
    header = (
        "<tr><th>Symbol</th><th>Report Date</th><th>Period End</th><th>EPS</th><th>Book Value per Share</th>"
        f"<th>Dividend Yield %</th><th>Shares Outstanding</th><th>Market Cap ({currency})</th></tr>"
    )
    rows = [
        f"<tr><td>{escape(f['symbol'])}</td><td>{f['report_date'].isoformat()}</td><td>{f['period_end'].isoformat()}</td>"
        f"<td>{f['eps']:,.3f}</td><td>{money(f['book_value_per_share'])}</td><td>{f['dividend_yield']:.2f}</td>"
        f"<td>{count(f['shares_outstanding'])}</td><td>{money(f['market_cap'])}</td></tr>"
        for f in day.fundamentals
    ]
    rows += ["<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in cells) + "</tr>" for cells in extra_rows]
    body = "\n".join(rows)
    return html_page(
        f"Fundamentals {day.day.isoformat()}",
        f'<table class="fundamentals" data-rows="{len(rows)}"><thead>{header}</thead>'
        f'<tbody>\n{body}\n</tbody></table>\n<p class="report-end">End of report</p>',
    )


def securities_page(day: SimulatedDay) -> str:
    header = (
        "<tr><th>Symbol</th><th>Security</th><th>Board</th><th>Sector</th><th>Listed</th>"
        "<th>Delisted</th><th>Status</th></tr>"
    )
    rows = "\n".join(
        f"<tr><td>{escape(s['symbol'])}</td><td>{escape(s['name'])}</td><td>{s['board']}</td>"
        f"<td>{escape(s['sector'] or '-')}</td><td>{s['listed_on'].isoformat()}</td>"
        f"<td>{s['delisted_on'].isoformat() if s['delisted_on'] else '-'}</td><td>{s['status']}</td></tr>"
        for s in day.securities
    )
    return html_page(
        f"Listed Securities {day.day.isoformat()}",
        f'<table class="securities" data-rows="{len(day.securities)}"><thead>{header}</thead>'
        f'<tbody>\n{rows}\n</tbody></table>\n<p class="report-end">End of report</p>',
    )


def news_feed(events: list[NewsEvent], base_url: str, title: str = "Exchange News") -> str:
    items = []
    for event in sorted(events, key=lambda e: (e.day, e.event_id), reverse=True):
        published = datetime.combine(event.day, time(14, 0), tzinfo=EXCHANGE_TZ)  # before the close: T1 sees it
        link = f"{base_url}/news/{event.event_id}"
        enclosure = ""
        if event.kind != "NEWS":
            enclosure = (
                f'<enclosure url="{base_url}/disclosures/{event.event_id}.pdf" type="application/pdf" length="0"/>'
            )
        items.append(
            f"<item><title>{xml_escape(event.title)}</title><link>{link}</link>"
            f'<guid isPermaLink="true">{link}</guid><pubDate>{format_datetime(published)}</pubDate>'
            f"<category>{event.kind}</category><description>{xml_escape(event.body)}</description>{enclosure}</item>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
        f"<title>{xml_escape(title)}</title><link>{base_url}/news</link>"
        "<description>Company news and disclosures</description>\n" + "\n".join(items) + "\n</channel></rss>"
    )


def not_published_page(day: date) -> str:
    return html_page(
        "Not yet published",
        f'<p class="not-published" data-date="{day.isoformat()}">'
        f"Trade quotes for {day.isoformat()} have not been published yet.</p>",
    )


def no_session_page(day: date, first: date) -> str:
    """A day the site will never publish: before its first session, or not a trading day."""
    why = (
        f"Trade quotes start on {first.isoformat()}."
        if day < first
        else f"{day.isoformat()} was not a trading day of the exchange."
    )
    return html_page("No trading session", f'<p class="no-session" data-date="{day.isoformat()}">{escape(why)}</p>')


def html_page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(title)}</title></head>\n'
        f"<body>\n<h1>{escape(title)}</h1>\n{body}\n</body></html>\n"
    )
