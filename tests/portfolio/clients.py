"""A client's portfolio for the tests of manual trades and corporate actions: opened and
funded over a small two-name market, traded through the service's own path, and the
exchange's corporate-action notices appended as T0 stores them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from sqlalchemy import Engine

from market.settings import Settings
from portfolio.trading import ManualTrade, PlacedTrade, move_cash, open_client_portfolio, place_manual_trade
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, DAY, seed_market

EX_DATE = CALENDAR.add_trading_days(DAY, 1)  # Monday 2026-11-23
FRIDAY = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)  # 13:00 exchange time
MONDAY = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
TWO_NAMES = {"AAA": {"close": 100.0, "volume": 20_000}, "BBB": {"close": 10.0, "volume": 50_000}}

Client = tuple[Engine, Settings, str]  # the service's engine, its settings, the portfolio's id


def open_funded_client(settings: Settings, cash: str, now: datetime) -> Client:
    """The `acme` client's portfolio over the TWO_NAMES market, holding `cash` from `now`."""
    engine = service_engine(settings)
    seed_market(engine, TWO_NAMES)
    portfolio_id = open_client_portfolio(engine, "acme")
    move_cash(engine, portfolio_id, cash, now=now)
    return engine, settings, portfolio_id


def trade(
    client: Client,
    side: str,
    symbol: str,
    quantity: int,
    price: Decimal | str | float,
    now: datetime,
    fees: Decimal | str | float = 0,
    key: str | None = None,
) -> PlacedTrade:
    """A manual trade placed for the client at `now`, with an Idempotency-Key if `key`;
    the arguments go to the service as they are, wrong types included."""
    engine, settings, portfolio_id = client
    return place_manual_trade(
        engine,
        settings,
        CALENDAR,
        portfolio_id,
        ManualTrade(side, symbol, quantity, price, fees),
        idempotency_key=key,
        now=now,
    )


def announce_action(engine: Engine, symbol: str, kind: str, amount: float | None, day: date, text: str) -> None:
    """A corporate-action notice (DIVIDEND, SPLIT, ...) of `symbol` for `day`, appended as
    T0 appends the exchange's notices: a new version where one for the day exists."""
    row = {
        "symbol": symbol,
        "action_date": day,
        "kind": kind,
        "amount": amount,
        "detail": {"text": text},
        "source": "test",
    }
    with engine.begin() as conn:
        append_history(conn, tables.corporate_actions, [row])
