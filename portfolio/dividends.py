"""Cash dividends reach the portfolios that held the name.

The exchange announces a dividend as a DIVIDEND notice (T0 stores it in
`corporate_actions`: symbol, date, amount per share). The notice's date is taken as the
ex-date, the first session that trades without the dividend: the simulator drops the
price that morning, as a real exchange does. A portfolio is entitled to amount x the
shares it held at the close of the session before, that is, the replay of its trades
dated before the ex-date; buying on the ex-date earns nothing, selling on it keeps the
dividend.

`credit_dividends(conn, portfolio, through)` appends one DIVIDEND cash entry per
dividend with an ex-date on or before `through` that the portfolio was entitled to,
effective at the ex-date's close (so the day's valuation sees the cash beside the lower
price) and noted with what it pays for. It runs where a portfolio's cash is about to be
used: the AI executor before it plans a day, T2 before it plans a client's suggestions,
a manual trade, deposit or withdrawal before its balance check; always inside the
portfolio's write lock. It is idempotent (the entry id names portfolio, symbol and
ex-date), and append-only: a notice corrected later (another amount for the same key) is
settled by a further entry for the difference, never by rewriting the first.

The payment date is not in the notice, so the cash counts from the ex-date (a broker's
statement shows it weeks later; the value is the holder's from the ex-date on). A
portfolio synchronised to a broker statement takes its cash from the statement: the
dividends with an ex-date on or before the last synchronisation are in that balance
already, so only later ones are credited. A split before the ex-date counts the shares
on the new count, as the ledger does (`store.splits`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import Connection, select

from market.clock import session_close_utc, utc_now
from market.errors import InvalidInputError
from market.money import to_cents
from portfolio import ledger
from store import tables
from store.history import append_history, current_rows
from store.splits import Split, stored_splits

ENTRY_PREFIX = "DIV"
ZERO = ledger.ZERO
_CORRECTION = re.compile(r"(\d{4}-\d{2}-\d{2}):\d+$")


def entry_id(portfolio_id: str, symbol: str, ex_date: date) -> str:
    return f"{ENTRY_PREFIX}:{portfolio_id}:{symbol}:{ex_date.isoformat()}"


def announced(conn: Connection, symbols: set[str], through: date, after: date | None = None) -> list[dict[str, Any]]:
    """The current DIVIDEND notices of `symbols` with an ex-date in (after, through],
    in ex-date order; a notice without a positive, finite amount counts as 0 (it pays
    nothing, and a notice cancelled after it was credited is reversed)."""
    if not symbols:
        return []
    c = tables.corporate_actions.c
    where = [c.kind == "DIVIDEND", c.action_date <= through, c.symbol.in_(sorted(symbols))]
    if after is not None:
        where.append(c.action_date > after)
    rows = []
    for row in current_rows(conn, tables.corporate_actions, where=where):
        try:
            amount = Decimal(str(row["amount"]))
        except (InvalidOperation, TypeError, ValueError):
            amount = ZERO
        rows.append({**row, "amount": amount if amount.is_finite() and amount > 0 else ZERO})
    return sorted(rows, key=lambda r: (r["action_date"], r["symbol"]))


def last_statement_sync(conn: Connection, portfolio_id: str) -> date | None:
    """The date of the newest broker statement the portfolio was synchronised to (the
    statement's own as-of date, not the day it was uploaded), if any."""
    c = tables.statement_imports.c
    dates = [
        date.fromisoformat(r["parsed"]["as_of"])
        for r in current_rows(
            conn, tables.statement_imports, where=[c.portfolio_id == portfolio_id, c.status == "SYNCED"]
        )
        if isinstance(r["parsed"], dict) and r["parsed"].get("as_of")
    ]
    return max(dates, default=None)


def holdings_before(trades: list[dict[str, Any]], splits: list[Split]) -> Callable[[str, date], int]:
    """A function (symbol, day) -> shares held at the close of the session before `day`:
    the trades dated before it, bought less sold, on the count of the splits before it,
    in the ledger's own order (`ledger.in_replay_order`, so a split and a trade of its
    ex-date fall as the ledger puts them). A book that sells more than it holds raises
    InvalidInputError, as `ledger.replay` does."""
    dates: dict[str, list[date]] = {}
    held: dict[str, list[int]] = {}
    quantity: dict[str, int] = {}
    for kind, item in ledger.in_replay_order(trades, splits):
        symbol = item.symbol if kind == "split" else item["symbol"]
        day = item.ex_date if kind == "split" else item["trading_date"]
        now = quantity.get(symbol, 0)
        if kind == "split":
            now = ledger.split_quantity(now, item.factor)
        else:
            now += int(item["quantity"]) * (1 if item["side"] == "BUY" else -1)
            if now < 0:  # a book that does not replay is refused, as the ledger refuses it, not paid on a guess
                raise InvalidInputError(
                    f"ledger of {item['portfolio_id']} sells {item['quantity']} {symbol} "
                    f"holding {now + int(item['quantity'])}"
                )
        quantity[symbol] = now
        days, totals = dates.setdefault(symbol, []), held.setdefault(symbol, [])
        if days and days[-1] == day:
            totals[-1] = now
        else:
            days.append(day)
            totals.append(now)

    def shares(symbol: str, day: date) -> int:
        position = bisect_left(dates.get(symbol, []), day)
        return held[symbol][position - 1] if position else 0

    return shares


def credit_dividends(conn: Connection, portfolio_id: str, through: date) -> list[dict[str, Any]]:
    """Append what the portfolio is owed for dividends with an ex-date up to `through`;
    returns what was credited (symbol, ex_date, shares, per_share, amount, entry_id; nothing
    on a re-run). Call inside `portfolio_transaction`.

    A downward correction (or a withdrawn notice) takes back what the cash covers now,
    never more (cash never goes below zero); the rest stays due and the next call, which
    finds it so, takes it from the cash there is then, so a pending reversal cannot be
    spent in the meantime by anything that credits dividends first."""
    trades = ledger.ledger_rows(conn, portfolio_id)
    notices = announced(conn, {t["symbol"] for t in trades}, through, last_statement_sync(conn, portfolio_id))
    if not notices:
        return []
    c = tables.cash_entries.c
    paid: dict[str, tuple[Decimal, int]] = {}  # entry id of the first payment -> (sum, entries)
    for row in conn.execute(select(c.entry_id, c.amount).where(c.portfolio_id == portfolio_id, c.kind == "DIVIDEND")):
        base = _CORRECTION.sub(r"\1", row.entry_id)  # DIV:<portfolio>:<symbol>:<ex-date>[:<n>]
        total, count = paid.get(base, (ZERO, 0))
        paid[base] = (total + Decimal(row.amount), count + 1)
    splits = stored_splits(conn, through, {t["symbol"] for t in trades})
    cash, held = ledger.cash_balance(conn, portfolio_id), holdings_before(trades, splits)
    entries, report = [], []
    for notice in notices:
        ex_date, symbol = notice["action_date"], notice["symbol"]
        base = entry_id(portfolio_id, symbol, ex_date)
        settled, count = paid.get(base, (ZERO, 0))
        shares = held(symbol, ex_date)
        due = to_cents(to_cents(notice["amount"] * shares) - settled)  # cents, as every cash entry
        if due < 0:
            due = max(due, -cash)  # take back what the cash covers; the rest stays due
        if due == 0:
            continue
        identifier = f"{base}:{count}" if count else base  # a correction settles the difference
        note = f"dividend {notice['amount']} per share on {shares:,} {symbol}, ex-date {ex_date.isoformat()}"
        moment = session_close_utc(ex_date)
        if count:
            note += f" (notice corrected after it was credited: {due:+,.2f})"
            moment = max(moment, utc_now())  # a correction is dated when it is made, after what it follows
        entries.append(
            {
                "entry_id": identifier,
                "portfolio_id": portfolio_id,
                "amount": due,
                "kind": "DIVIDEND",
                "note": note,
                "effective_at": moment,
            }
        )
        report.append(
            {
                "symbol": symbol,
                "ex_date": ex_date.isoformat(),
                "shares": shares,
                "per_share": str(notice["amount"]),
                "amount": str(due),
                "entry_id": identifier,
            }
        )
        cash += due
    append_history(conn, tables.cash_entries, entries)
    return report
