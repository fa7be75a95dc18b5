"""Whose book a caller acts on, and its opening on first use.

An `Account` is the portfolio a caller owns: the house portfolio for the operator, a
client's own (`client:<client_id>`) for a client. Opening one is idempotent (a
portfolios row appended under the portfolio's write lock); portfolios are never closed,
so a process that has seen one open remembers it (a set of ids: `open_on`'s `known`)
and skips the read.

Decisions: this module knows nothing of API keys or requests (api/ maps a key's
principal to its `Account`); it opens a portfolio on the connection it is given when there
is one (an API request's one connection, api/deps.py), so a request never holds two.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

from sqlalchemy import Connection, Engine, select

from market.errors import InvalidInputError
from portfolio.ledger import (
    HOUSE_PORTFOLIO,
    cash_balance,
    client_portfolio_id,
    ensure_portfolio,
    portfolio_transaction,
    record_cash,
)
from portfolio.trading import open_client_portfolio
from store import tables
from store.transactions import write_on

Kind = Literal["HOUSE", "CLIENT"]


@dataclass(frozen=True)
class Account:
    """A caller's portfolio: its id, its kind and, for a client's, the client."""

    portfolio_id: str
    kind: Kind
    client_id: str | None

    @classmethod
    def house(cls) -> Account:
        return cls(HOUSE_PORTFOLIO, "HOUSE", None)

    @classmethod
    def of_client(cls, client_id: str) -> Account:
        """A client's account; a blank client id, or one with spaces around it, is refused: an
        empty one opened the client `admin`'s book (`open_account`), and " acme" a second
        book beside client:acme."""
        if not client_id.strip() or client_id != client_id.strip():
            raise InvalidInputError(f"a client id must not be empty or have spaces around it, not {client_id!r}")
        return cls(client_portfolio_id(client_id), "CLIENT", client_id)


def open_on(conn: Connection, account: Account, known: set[str]) -> str:
    """The account's portfolio id on a connection already held: a read while the portfolio
    exists (none once `known`, the process's memory of open portfolios, has it), its
    opening on the same connection the first time."""
    if account.portfolio_id in known:
        return account.portfolio_id
    if not _exists(conn, account.portfolio_id):
        with write_on(conn, f"portfolio:{account.portfolio_id}"):
            ensure_portfolio(conn, account.portfolio_id, account.kind, account.client_id)
    known.add(account.portfolio_id)
    return account.portfolio_id


def _exists(conn: Connection, portfolio_id: str) -> bool:
    p = tables.portfolios.c
    return conn.execute(select(p.id).where(p.portfolio_id == portfolio_id).limit(1)).first() is not None


def open_account(engine: Engine, account: Account) -> str:
    """The account's portfolio id, opened (idempotently) in a transaction of its own: for
    a caller about to write in its own transaction anyway."""
    return open_client_portfolio(engine, account.client_id or "admin", kind=account.kind)


@dataclass(frozen=True)
class Opened:
    """What `open_with_deposit` did: the portfolio, whether this call created it (and so
    made the opening deposit, if one was asked), and its cash after."""

    portfolio_id: str
    created: bool
    cash: Decimal


def open_with_deposit(engine: Engine, account: Account, deposit: Decimal | None, note: str, now: datetime) -> Opened:
    """The account's portfolio opened (idempotently) and, only when this call creates it,
    `deposit` recorded as its opening cash, in one transaction under the portfolio's lock
    (two concurrent openings deposit once): opening an existing portfolio again deposits
    nothing, whatever its cash (`marketintel portfolio open NAME --cash` run twice).
    `deposit` is checked by the caller (a positive amount within MAX_CASH_MOVEMENT, as
    `trading.move_cash` checks one); a new portfolio has no dividends to credit first."""
    with portfolio_transaction(engine, account.portfolio_id) as conn:
        created = not _exists(conn, account.portfolio_id)
        if created:
            ensure_portfolio(conn, account.portfolio_id, account.kind, account.client_id)
            if deposit is not None:
                entry_id = f"OPENING:{account.portfolio_id}"
                record_cash(conn, account.portfolio_id, entry_id, deposit, "DEPOSIT", now, note)
        return Opened(account.portfolio_id, created, cash_balance(conn, account.portfolio_id))
