"""Realistic broker account statements drawn with reportlab, in the two layouts the
importer reads: a valuation statement with a holdings table (Kingston Capital Securities)
and an activity statement with a transactions ledger (Island Trust Brokers). Used by the
tests and the demo; `totals` overrides let tests make statements that do not add up."""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import StyleSheet1, getSampleStyleSheet
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from portfolio.statements import HOLDINGS_TITLE, LEDGER_TITLE


@dataclass(frozen=True)
class Holding:
    symbol: str
    description: str
    quantity: int
    average_cost: Decimal
    price: Decimal

    @property
    def value(self) -> Decimal:
        return (self.price * self.quantity).quantize(Decimal("0.01"))


@dataclass(frozen=True)
class Activity:
    day: date
    kind: str  # BUY, SELL, DEPOSIT, WITHDRAWAL, FEE, DIVIDEND
    symbol: str | None
    quantity: int | None
    price: Decimal | None
    amount: Decimal


def _money(value: Decimal) -> str:
    return f"{value:,.2f}"


def _style() -> TableStyle:
    return TableStyle(
        [
            ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
            ("FONTSIZE", (0, 0), (-1, -1), 9),
            ("LINEBELOW", (0, 0), (-1, 0), 0.6, colors.black),
            ("ALIGN", (2, 1), (-1, -1), "RIGHT"),
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8edf3")),
        ]
    )


def _heading(styles: StyleSheet1, broker: str, title: str, account: str, client: str) -> list[Paragraph]:
    """The lines both layouts open with: the broker, the statement's title, then the account
    and its client (the statement's date or period follows)."""
    return [
        Paragraph(broker, styles["Title"]),
        Paragraph(title, styles["Heading2"]),
        Paragraph(f"Account: {account}    Client: {client}", styles["Normal"]),
    ]


def _document(story: list) -> bytes:
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4, title="Account statement", author="statement generator").build(story)
    return buffer.getvalue()


def holdings_statement(
    account: str, client: str, as_of: date, holdings: list[Holding], cash: Decimal, total_value: Decimal | None = None
) -> bytes:
    styles = getSampleStyleSheet()
    market_value = sum((h.value for h in holdings), Decimal(0))
    rows = [["Symbol", "Description", "Quantity", "Avg Cost", "Market Price", "Market Value"]]
    rows += [
        [h.symbol, h.description, f"{h.quantity:,}", _money(h.average_cost), _money(h.price), _money(h.value)]
        for h in holdings
    ]
    story = [
        *_heading(styles, "KINGSTON CAPITAL SECURITIES LIMITED", HOLDINGS_TITLE, account, client),
        Paragraph(f"Statement date: {as_of.isoformat()}", styles["Normal"]),
        Spacer(1, 12),
        Table(rows, style=_style(), repeatRows=1),
        Spacer(1, 12),
        Paragraph(f"Total Market Value: {_money(market_value)}", styles["Normal"]),
        Paragraph(f"Cash Balance: {_money(cash)}", styles["Normal"]),
        Paragraph(
            f"Total Portfolio Value: {_money(total_value if total_value is not None else market_value + cash)}",
            styles["Normal"],
        ),
    ]
    return _document(story)


@dataclass(frozen=True)
class Ledger:
    """An activity statement's content: the account and its client, the period, the cash and
    holdings it opens with, its transactions, and the closing cash it states (None: what the
    transactions leave; a test sets another to make a statement that does not add up)."""

    account: str
    client: str
    start: date
    end: date
    opening_cash: Decimal
    opening: dict[str, int]
    activity: list[Activity]
    closing_cash: Decimal | None = None


def ledger_statement(ledger: Ledger) -> bytes:
    styles = getSampleStyleSheet()
    start, end, opening, closing_cash = ledger.start, ledger.end, ledger.opening, ledger.closing_cash
    balance = ledger.opening_cash
    rows = [
        ["Date", "Type", "Symbol", "Quantity", "Price", "Amount", "Balance"],
        [start.isoformat(), "OPENING", "-", "-", "-", "-", _money(balance)],
    ]
    held = dict(opening)
    for item in ledger.activity:
        balance += item.amount
        if item.kind in ("BUY", "SELL"):
            held[item.symbol] = held.get(item.symbol, 0) + (item.quantity if item.kind == "BUY" else -item.quantity)
        rows.append(
            [
                item.day.isoformat(),
                item.kind,
                item.symbol or "-",
                f"{item.quantity:,}" if item.quantity else "-",
                _money(item.price) if item.price is not None else "-",
                _money(item.amount),
                _money(balance),
            ]
        )
    opening_rows = [["Symbol", "Quantity"]] + [[s, f"{q:,}"] for s, q in sorted(opening.items())]
    closing_rows = [["Symbol", "Quantity"]] + [[s, f"{q:,}"] for s, q in sorted(held.items()) if q]
    story = [
        *_heading(styles, "ISLAND TRUST BROKERS", LEDGER_TITLE, ledger.account, ledger.client),
        Paragraph(f"Period: {start.isoformat()} to {end.isoformat()}", styles["Normal"]),
        Spacer(1, 8),
        Paragraph("Opening Holdings", styles["Heading3"]),
        Table(opening_rows, style=_style()) if opening else Paragraph("None", styles["Normal"]),
        Spacer(1, 8),
        Paragraph("Transactions", styles["Heading3"]),
        Table(rows, style=_style(), repeatRows=1),
        Spacer(1, 8),
        Paragraph(
            f"Closing Cash Balance: {_money(closing_cash if closing_cash is not None else balance)}", styles["Normal"]
        ),
        Paragraph("Closing Holdings", styles["Heading3"]),
        Table(closing_rows, style=_style()) if len(closing_rows) > 1 else Paragraph("None", styles["Normal"]),
    ]
    return _document(story)


def sample_holdings_statement(market: dict, as_of: date, client: str = "House account", count: int = 3) -> bytes:
    """A valuation statement over the `count` most traded instruments of a `market_days`
    map, for the demo: 1,000 shares of each at 95% of today's close, and 250,000 cash."""
    liquid = sorted(market.values(), key=lambda d: (-(d.adv_20 or 0), d.symbol))[:count]
    holdings = [
        Holding(
            d.symbol,
            f"{d.symbol} ordinary shares",
            1_000,
            Decimal(str(round(d.close * 0.95, 2))),
            Decimal(str(round(d.close, 2))),
        )
        for d in liquid
    ]
    return holdings_statement("KC-DEMO-0001", client, as_of, holdings, Decimal("250000"))
