"""The ledger's stored rows, typed: what `portfolio.ledger` reads from and appends to the
`portfolios`, `trades` and `cash_entries` tables (store/tables.py), and the AI portfolio's
executed days (`portfolio_days`). They are TypedDicts,
not dataclasses, because they are the store's rows: a read hands back plain dicts and an
append takes them, and the replay reads them as they come. Money is `Decimal`."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Literal, TypedDict

from market.plain import JsonValue
from store.splits import Split


class PortfolioRow(TypedDict):
    id: int
    recorded_at: datetime
    portfolio_id: str
    kind: str
    client_id: str | None
    base_currency: str


class _TradeTerms(TypedDict):
    """What every form of a trade row carries: the columns the replay reads, less the
    store's own (id and recorded_at)."""

    trade_id: str
    portfolio_id: str
    trading_date: date
    executed_at: datetime
    symbol: str
    side: str
    quantity: int
    price: Decimal
    fees: Decimal
    origin: str


class LedgerRow(_TradeTerms):
    """A trade as `ledger.ledger_rows` reads it (LEDGER_COLUMNS: no rationale). id and
    recorded_at are None for a trade checked but not stored yet (`CheckedTrade.replayed`):
    it comes after its peers and was entered knowing every stored split."""

    id: int | None
    recorded_at: datetime | None


class NewTradeRow(_TradeTerms):
    """A trade as it is appended: every column but the store's own."""

    rationale: dict[str, JsonValue]
    idempotency_key: str | None
    spread_cost: Decimal
    impact_cost: Decimal


class TradeRow(LedgerRow, NewTradeRow):
    """A stored trade, every column (`ledger.trade_rows`)."""


class RecordedTrade(NewTradeRow):
    """`ledger.record_trade`'s answer: the row appended, its gross amount, and the position
    and cash that followed."""

    gross: Decimal
    position_after: int
    cash_after: Decimal


class _CashTerms(TypedDict):
    entry_id: str
    portfolio_id: str
    amount: Decimal
    kind: str
    effective_at: datetime


class TradeCashEntry(_CashTerms):
    """A trade's cash entry as appended (its gross amount or its fee)."""

    trade_id: str


class CashEntry(_CashTerms):
    """A cash movement that is not a trade, as appended (`ledger.cash_entry`)."""

    note: str | None


class PortfolioDayRow(TypedDict):
    """An executed day of the AI portfolio as it is appended to `portfolio_days`: the cash,
    the valuation and the day's record (`portfolio.ai.ExecutedDay.summary`, JSON)."""

    portfolio_id: str
    trading_date: date
    model_id: str | None
    cash: Decimal
    market_value: Decimal
    liquid_equity: Decimal
    summary: dict[str, JsonValue]


class StoredPortfolioDay(PortfolioDayRow):
    """A stored `portfolio_days` row."""

    id: int
    recorded_at: datetime


class DividendNotice(TypedDict):
    """A DIVIDEND row of `corporate_actions` as `dividends.announced` hands it on: the
    stored row with `amount` read as a Decimal (0 for one not positive and finite)."""

    id: int
    recorded_at: datetime
    symbol: str
    action_date: date
    kind: str
    amount: Decimal
    detail: dict[str, JsonValue]
    source: str


class CreditedDividend(TypedDict):
    """What `dividends.credit_dividends` returns of one entry, as the AI day's record
    stores it (JSON: money as strings, the ex-date in ISO form)."""

    symbol: str
    ex_date: str
    shares: int
    per_share: str
    amount: str
    entry_id: str


ReplayEvent = tuple[Literal["trade"], LedgerRow] | tuple[Literal["split"], Split]
"""One step of the ledger's replay (`ledger.in_replay_order`)."""
