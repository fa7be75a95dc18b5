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
a manual trade, a suggestion's confirmation, a deposit or withdrawal before its balance
check; always inside the portfolio's write lock. It is idempotent (the entry id names portfolio, symbol and
ex-date), and append-only: a notice corrected later (another amount for the same key) is
settled by a further entry for the difference, never by rewriting the first.

The notice's text states the payment date ("ex-date 2026-11-10, payment 2026-12-01";
`ingest.exchange.validation.payment_date` reads it; a notice without one is paid at its
ex-date). The credit still counts from the ex-date: the dividend is the holder's from
then, and every valuation, equity curve and track record counts it. Until the payment
date it is a receivable inside the cash (`unpaid_dividends`, `dividends_receivable`): the
client's summary shows it as `dividends_receivable`, and a withdrawal may take only the
cash beside it (`check_withdrawal`, from `trading.move_cash`; a refusal names the amount
not yet paid and its payment date, and writes nothing). A purchase may spend it: by
policy only money leaving the service is held back, a trade keeps the money inside it.
A
portfolio synchronised to a broker statement takes its cash from the statement: the
dividends gone ex and paid by the last synchronisation's date are in that balance
already (`in_statement`), so only the others are credited (the sync itself settles those
on the holdings it leaves: `synced`); one gone ex by then and paid after it is kept beside
the balance (`unpaid_at`), a receivable until its payment date. A split before the ex-date counts the shares
on the new count, as the ledger does (`store.splits`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from sqlalchemy import Connection, select

from ingest.exchange.validation import payment_date, states_payment
from market.clock import session_close_utc, utc_now
from market.errors import InvalidInputError
from market.money import to_cents
from portfolio import ledger
from portfolio.ledger import CashRejected
from portfolio.rows import CashEntry, CreditedDividend, DividendNotice, LedgerRow
from store import tables
from store.history import append_history, current_rows
from store.splits import Split, factor_between, stored_splits

ENTRY_PREFIX = "DIV"
ZERO = ledger.ZERO
_CORRECTION = re.compile(r"(\d{4}-\d{2}-\d{2}):\d+$")


def entry_id(portfolio_id: str, symbol: str, ex_date: date) -> str:
    return f"{ENTRY_PREFIX}:{portfolio_id}:{symbol}:{ex_date.isoformat()}"


def announced(
    conn: Connection, symbols: set[str], through: date, after: date | None = None, through_id: int | None = None
) -> list[DividendNotice]:
    """The current DIVIDEND notices of `symbols` with an ex-date in (after, through],
    in ex-date order; a notice without a positive, finite amount counts as 0 (it pays
    nothing, and a notice cancelled after it was credited is reversed). `through_id`: as
    the notices stood when the newest row's id was that (a read model's watermark)."""
    if not symbols:
        return []
    c = tables.corporate_actions.c
    where = [c.kind == "DIVIDEND", c.action_date <= through, c.symbol.in_(sorted(symbols))]
    if after is not None:
        where.append(c.action_date > after)
    if through_id is not None:
        where.append(c.id <= through_id)
    rows = []
    for row in current_rows(conn, tables.corporate_actions, where=where):
        try:
            amount = Decimal(str(row["amount"]))
        except (InvalidOperation, TypeError, ValueError):
            amount = ZERO
        rows.append({**row, "amount": amount if amount.is_finite() and amount > 0 else ZERO})
    return sorted(rows, key=lambda r: (r["action_date"], r["symbol"]))


def per_share_on_count(notice: DividendNotice, splits: list[Split], through: date) -> Decimal:
    """The notice's cash per share on `through`'s share count: the amount is paid per share
    held at the close before the ex-date, so a split with an ex-date after that close and
    on or before `through` (the ex-date's own included) divides it
    (`store.splits.factor_between`), as the books are credited on that count
    (`holdings_before`). The one rule for reading a dividend beside a price on a later
    count: the ex-date's reference price (views/valuation.py, `going_ex`: the morning plan,
    the price band, the preview), the benchmarks' total return (views/track_record.py)."""
    factor = factor_between(splits, notice["symbol"], notice["action_date"] - timedelta(days=1), through)
    return notice["amount"] if factor == 1.0 else notice["amount"] / Decimal(str(factor))


def per_share_by_symbol(notices: list[DividendNotice], splits: list[Split], through: date) -> dict[str, Decimal]:
    """By symbol, the cash per share of `notices` on `through`'s count (`per_share_on_count`,
    summed over a name's notices; a name whose notices pay nothing is absent)."""
    paid: dict[str, Decimal] = {}
    for notice in notices:
        amount = per_share_on_count(notice, splits, through)
        if amount:
            paid[notice["symbol"]] = paid.get(notice["symbol"], ZERO) + amount
    return paid


def going_ex(conn: Connection, closed: Mapping[str, date], through: date) -> dict[str, Decimal]:
    """By symbol, the dividend per share the close each symbol is read at still holds
    (`closed`: that close's session) and the exchange's reference price on `through` does
    not: the notices with an ex-date after that session and on or before `through`
    (`since_closes`: a name that did not trade on its ex-date carries the close before it),
    on `through`'s count (`per_share_by_symbol`). What the morning plan and its
    confirmation (portfolio/suggestions.py) and the price band and preview
    (`portfolio.market.reference_close`, `reference_market`) take off an earlier close."""
    notices = since_closes(conn, {s: d for s, d in closed.items() if d < through}, through)
    if not notices:
        return {}
    return per_share_by_symbol(notices, stored_splits(conn, through, {n["symbol"] for n in notices}), through)


def since_closes(
    conn: Connection, closed: Mapping[str, date], through: date, through_id: int | None = None
) -> list[DividendNotice]:
    """The notices of each symbol of `closed` with an ex-date after the session of the close
    it is read at (`closed[symbol]`) and on or before `through`, in ex-date order: the
    dividends that close still holds and the exchange's reference price after their
    ex-dates does not. A name that did not trade on its ex-date carries the close before
    it, as a split's ex-date divides a carried close (`store.splits.on_count`); which of
    these a valuation takes off is the valuation's rule (views/valuation.py `_ex_dividend`,
    portfolio/book_days.py). `through_id`: the notices as they stood at that id."""
    if not closed:
        return []
    notices = announced(conn, set(closed), through, after=min(closed.values()), through_id=through_id)
    return [n for n in notices if n["action_date"] > closed[n["symbol"]]]


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


def _carried(renamed: Mapping[str, Split], symbol: str, day: date) -> str:
    """The ticker `symbol`'s company is held under on `day`: through each rename until
    another company took the ticker (`Split.carries`)."""
    while symbol in renamed and renamed[symbol].carries(day):
        symbol = str(renamed[symbol].new_symbol)
    return symbol


def _after(kind: str, item: Split | LedgerRow, symbol: str, now: int) -> int:
    """The shares of `symbol` after a split (`kind` "split") or a trade of `now` held;
    InvalidInputError for a sale past the holding, as the ledger refuses it (not paid on a guess)."""
    if kind == "split":
        return ledger.split_quantity(now, item.factor)
    after = now + int(item["quantity"]) * (1 if item["side"] == "BUY" else -1)
    if after < 0:
        raise InvalidInputError(f"ledger of {item['portfolio_id']} sells {item['quantity']} {symbol} holding {now}")
    return after


def holdings_before(trades: list[LedgerRow], splits: list[Split]) -> Callable[[str, date], int]:
    """A function (symbol, day) -> shares held at the close of the session before `day`:
    the trades dated before it, bought less sold, on the count of the splits before it,
    in the ledger's own order (`ledger.in_replay_order`, so a split and a trade of its
    ex-date fall as the ledger puts them). A rename carries the holding on under its new
    symbol from its ex-date, and a trade or split under the old symbol after it is the new
    one's until another company took the ticker (`Split.carries`), as the ledger's replay
    has them; so is a dividend notice under either ticker: on the rename's ex-date, under
    the new ticker too, it is owed on the shares held under the old one the night before.
    A book that sells more than it holds raises
    InvalidInputError, as `ledger.replay` does."""
    dates: dict[str, list[date]] = {}
    held: dict[str, list[int]] = {}
    quantity: dict[str, int] = {}
    renamed: dict[str, Split] = {}

    def record(symbol: str, day: date, now: int) -> None:
        quantity[symbol] = now
        days, totals = dates.setdefault(symbol, []), held.setdefault(symbol, [])
        if days and days[-1] == day:
            totals[-1] = now
        else:
            days.append(day)
            totals.append(now)

    for kind, item in ledger.in_replay_order(trades, splits):
        if kind == "split" and item.new_symbol is not None:
            renamed[item.symbol] = item
            moved = quantity.get(item.symbol, 0)
            record(item.symbol, item.ex_date, 0)
            record(item.new_symbol, item.ex_date, quantity.get(item.new_symbol, 0) + moved)
            continue
        symbol = item.symbol if kind == "split" else item["symbol"]
        day = item.ex_date if kind == "split" else item["trading_date"]
        symbol = _carried(renamed, symbol, day)
        record(symbol, day, _after(kind, item, symbol, quantity.get(symbol, 0)))

    def recorded(symbol: str, day: date) -> int:
        position = bisect_left(dates.get(symbol, []), day)
        return held[symbol][position - 1] if position else 0

    def shares(symbol: str, day: date) -> int:
        symbol = _carried(renamed, symbol, day)  # a notice under the old ticker: the company's
        # a rename of `day` itself: at the close before, the company's shares were under the old ticker
        return recorded(symbol, day) + sum(
            recorded(r.symbol, day) for r in renamed.values() if r.new_symbol == symbol and r.ex_date == day
        )

    return shares


@dataclass(frozen=True)
class DividendBook:
    """What a portfolio's dividends are worked out from, read in one step: its ledger rows,
    the notices it may be owed for, what was paid per first entry id (sum, entries) and
    the splits of its names up to the date."""

    trades: list[LedgerRow]
    notices: list[DividendNotice]
    paid: dict[str, tuple[Decimal, int]] = field(default_factory=dict)
    splits: list[Split] = field(default_factory=list)


@dataclass(frozen=True)
class DividendCredit:
    """One DIVIDEND cash entry owed: a payment, or the difference a corrected notice makes."""

    portfolio_id: str
    entry_id: str
    symbol: str
    ex_date: date
    shares: int
    per_share: Decimal
    amount: Decimal  # cents
    note: str
    effective_at: datetime

    def entry(self) -> CashEntry:
        return {
            "entry_id": self.entry_id,
            "portfolio_id": self.portfolio_id,
            "amount": self.amount,
            "kind": "DIVIDEND",
            "note": self.note,
            "effective_at": self.effective_at,
        }

    def report(self) -> CreditedDividend:
        """What `credit_dividends` returns for it."""
        return {
            "symbol": self.symbol,
            "ex_date": self.ex_date.isoformat(),
            "shares": self.shares,
            "per_share": str(self.per_share),
            "amount": str(self.amount),
            "entry_id": self.entry_id,
        }


def credit_dividends(
    conn: Connection, portfolio_id: str, through: date, synced: date | None = None
) -> list[CreditedDividend]:
    """Append what the portfolio is owed for dividends with an ex-date up to `through`;
    returns what was credited (symbol, ex_date, shares, per_share, amount, entry_id; nothing
    on a re-run). `synced`: the date of a statement being synchronised in this transaction,
    not yet recorded (`dividend_book`). Call inside `portfolio_transaction`."""
    book = dividend_book(conn, portfolio_id, through, synced)
    if not book.notices:
        return []
    owed = dividends_due(book, portfolio_id, ledger.cash_balance(conn, portfolio_id), utc_now())
    append_history(conn, tables.cash_entries, [c.entry() for c in owed])
    return [c.report() for c in owed]


@contextmanager
def credited_first(conn: Connection, portfolio_id: str, through: date) -> Iterator[list[CreditedDividend]]:
    """`credit_dividends`, then the caller's use of the cash (a trade, a deposit or
    withdrawal, a confirmation) inside the block. Where a notice corrected down or withdrawn
    after it was credited took cash back first and the use is then refused for the cash
    (`ledger.ShortOfCash`, `CashRejected`), the refusal names what was taken back: the
    balance the client was shown still held it (a read credits nothing), so "would leave
    cash at -100.00" alone did not say why. The refusal writes nothing, the taking back
    included."""
    credited = credit_dividends(conn, portfolio_id, through)
    taken = [c for c in credited if Decimal(c["amount"]) < 0]
    try:
        yield credited
    except (ledger.ShortOfCash, CashRejected) as error:
        if not taken:
            raise
        said = "; ".join(
            f"{-Decimal(c['amount']):,.2f} of the cash first takes back {c['symbol']}'s dividend of ex-date "
            f"{c['ex_date']} (its notice corrected or withdrawn after it was credited)"
            for c in taken
        )
        raise type(error)(f"{error.detail}: {said}", **error.context) from error


def owed(conn: Connection, portfolio_id: str, through: date) -> Decimal:
    """What `credit_dividends` would credit now (its sum, in cents), writing nothing: the
    cash a trade preview counts beside the balance, as its booking credits it first."""
    book = dividend_book(conn, portfolio_id, through)
    if not book.notices:
        return ZERO
    due = dividends_due(book, portfolio_id, ledger.cash_balance(conn, portfolio_id), utc_now())
    return sum((c.amount for c in due), ZERO)


def dividend_book(conn: Connection, portfolio_id: str, through: date, synced: date | None = None) -> DividendBook:
    """The read step of `credit_dividends`: the notices up to `through` of the names the
    portfolio traded and those their renames carried them on under, but those the balance
    of its last statement synchronisation holds (`in_statement`: gone ex and paid by its
    date; `synced`, the date of the statement a sync is recording now: portfolio/statements.py),
    and, when there are any, its dividend entries and splits."""
    trades = ledger.ledger_rows(conn, portfolio_id)
    splits = stored_splits(conn, through, {t["symbol"] for t in trades})
    held = {t["symbol"] for t in trades} | {s.new_symbol for s in splits if s.new_symbol is not None}
    last = max((d for d in (last_statement_sync(conn, portfolio_id), synced) if d is not None), default=None)
    notices = announced(conn, held, through, last - timedelta(days=366) if last is not None else None)
    notices = [n for n in notices if last is None or not in_statement(n, last)]  # not in the statement's balance
    if not notices:
        return DividendBook(trades, notices)
    c = tables.cash_entries.c
    paid: dict[str, tuple[Decimal, int]] = {}  # entry id of the first payment -> (sum, entries)
    for row in conn.execute(select(c.entry_id, c.amount).where(c.portfolio_id == portfolio_id, c.kind == "DIVIDEND")):
        base = _CORRECTION.sub(r"\1", row.entry_id)  # DIV:<portfolio>:<symbol>:<ex-date>[:<n>]
        total, count = paid.get(base, (ZERO, 0))
        paid[base] = (total + Decimal(row.amount), count + 1)
    return DividendBook(trades, notices, paid, splits)


def dividends_due(book: DividendBook, portfolio_id: str, cash: Decimal, now: datetime) -> list[DividendCredit]:
    """The decide step of `credit_dividends`, touching no store: one credit per notice whose
    payment (amount x the shares held at the close before the ex-date, in cents) differs
    from what was paid for it, given the cash balance and the time (`now`) it is made at.

    A downward correction (or a withdrawn notice) takes back what the cash covers now,
    never more (cash never goes below zero); the rest stays due and the next call, which
    finds it so, takes it from the cash there is then, so a pending reversal cannot be
    spent in the meantime by anything that credits dividends first."""
    held, owed = holdings_before(book.trades, book.splits), []
    for notice in book.notices:
        ex_date, symbol = notice["action_date"], notice["symbol"]
        base = entry_id(portfolio_id, symbol, ex_date)
        settled, count = book.paid.get(base, (ZERO, 0))
        shares = held(symbol, ex_date)
        due = to_cents(to_cents(notice["amount"] * shares) - settled)  # cents, as every cash entry
        if due < 0:
            due = max(due, -cash)  # take back what the cash covers; the rest stays due
        if due == 0:
            continue
        owed.append(_credit(portfolio_id, base, count, notice, shares, due, now))
        cash += due
    return owed


def _credit(
    portfolio_id: str, base: str, count: int, notice: DividendNotice, shares: int, due: Decimal, now: datetime
) -> DividendCredit:
    """The entry for `due`: the first payment is effective at the ex-date's close (so the
    day's valuation sees the cash beside the lower price); a correction (`count` entries
    before it) settles the difference under the next id, dated when it is made, after
    what it follows."""
    ex_date, symbol = notice["action_date"], notice["symbol"]
    note = f"dividend {notice['amount']} per share on {shares:,} {symbol}, ex-date {ex_date.isoformat()}"
    moment = session_close_utc(ex_date)
    if count:
        note += f" (notice corrected after it was credited: {due:+,.2f})"
        moment = max(moment, now)
    identifier = f"{base}:{count}" if count else base
    return DividendCredit(portfolio_id, identifier, symbol, ex_date, shares, notice["amount"], due, note, moment)


@dataclass(frozen=True)
class UnpaidDividend:
    """A dividend credited to a book whose payment date is still to come: a receivable."""

    symbol: str
    ex_date: date
    payment_date: date | None  # None: the notice speaks of its payment, and no date can be read
    amount: Decimal  # cents: what the book was credited for it, corrections included

    def said(self) -> str:
        when = (
            f"paid on {self.payment_date}"
            if self.payment_date is not None
            else "whose payment date cannot be read from the exchange's notice (held until it is corrected)"
        )
        return f"{self.amount:,.2f} of {self.symbol} (ex-date {self.ex_date}) {when}"


def unpaid_dividends(conn: Connection, portfolio_id: str, on: date) -> list[UnpaidDividend]:
    """The dividends credited to the portfolio (its DIVIDEND cash entries, a corrected
    notice's entries summed) whose payment date is after `on`, in payment-date order: each
    judged by its payment date alone, whenever it was credited and whatever its ex-date (a
    T2 run ahead of its morning credits an ex-date still to come). A notice without a
    payment date is paid at its ex-date; the dividends the balance of the last statement
    synchronised holds (`in_statement`: paid by its date) are that balance's, not
    receivables; one going ex by it and paid after it is still one."""
    synced = last_statement_sync(conn, portfolio_id)
    credited: dict[tuple[str, date], Decimal] = {}
    for key, amount, _ in _credited(conn, portfolio_id):
        credited[key] = credited.get(key, ZERO) + amount
    unpaid = []
    for key, notice in _notices_of(conn, credited).items():
        if credited[key] <= 0 or (synced is not None and in_statement(notice, synced)):
            continue
        paid_on = paid_on_date(notice)
        if paid_on is None or paid_on > on:
            unpaid.append(UnpaidDividend(key[0], key[1], paid_on, credited[key]))
    return sorted(unpaid, key=lambda u: (u.payment_date or date.max, u.symbol, u.ex_date))


def _credited(conn: Connection, portfolio_id: str) -> list[tuple[tuple[str, date], Decimal, date]]:
    """Each DIVIDEND cash entry of the portfolio: its notice's (symbol, ex-date), its amount
    and the exchange date it took effect (a correction's is when it was made)."""
    c = tables.cash_entries.c
    query = select(c.entry_id, c.amount, c.effective_at).where(c.portfolio_id == portfolio_id, c.kind == "DIVIDEND")
    out = []
    for row in conn.execute(query):
        _, symbol, ex_text = _CORRECTION.sub(r"\1", row.entry_id).rsplit(":", 2)  # DIV:<portfolio>:<symbol>:<ex-date>
        out.append(
            ((symbol, date.fromisoformat(ex_text)), Decimal(row.amount), ledger.cash_day(None, row.effective_at))
        )
    return out


def _notices_of(conn: Connection, keys: Iterable[tuple[str, date]]) -> dict[tuple[str, date], DividendNotice]:
    """The current DIVIDEND notice of each (symbol, ex-date) of `keys` that has one."""
    wanted = set(keys)
    if not wanted:
        return {}
    a = tables.corporate_actions.c
    where = [a.kind == "DIVIDEND", a.symbol.in_(sorted({s for s, _ in wanted}))]
    rows = current_rows(conn, tables.corporate_actions, where=where)
    return {(r["symbol"], r["action_date"]): r for r in rows if (r["symbol"], r["action_date"]) in wanted}


def paid_on_date(notice: Mapping) -> date | None:
    """The day the notice's dividend is paid: the payment date its text states (within a
    year of its ex-date), its ex-date where the text says nothing of a payment, None where
    it speaks of one that cannot be read (held until the notice is corrected)."""
    ex_date = notice["action_date"]
    paid_on = payment_date(notice["detail"])
    if paid_on is not None and not ex_date <= paid_on <= ex_date + timedelta(days=366):
        paid_on = None  # before its ex-date, or a year after it: no date to trust
    if paid_on is None and not states_payment(notice["detail"]):
        paid_on = ex_date  # says nothing of its payment: paid at its ex-date
    return paid_on


def in_statement(notice: Mapping, as_of: date) -> bool:
    """Whether a broker statement of `as_of` holds the notice's dividend in its cash: gone ex
    by then and paid by then (a statement's balance is the money in the account; a dividend
    going ex before it and paid after it reaches the account later). One whose payment date
    cannot be read is taken as the statement's from its ex-date, as before payment dates
    were read: a sync never credits it on top of a balance that may hold it."""
    if notice["action_date"] > as_of:
        return False
    paid_on = paid_on_date(notice)
    return paid_on is None or paid_on <= as_of


def unpaid_at(conn: Connection, portfolio_id: str, day: date) -> Decimal:
    """What the book's cash at the end of `day` holds of dividends a statement of `day` does
    not (`in_statement`: gone ex by then, paid after it): the DIVIDEND entries that took
    effect by then, of those notices. A statement sync reconciles the book's cash less it to
    the statement's balance, so the sync keeps them (portfolio/statements.py `_sync_cash`)."""
    dated = [(key, amount) for key, amount, on in _credited(conn, portfolio_id) if on <= day]
    notices = _notices_of(conn, (key for key, _ in dated))
    return sum(
        (amount for key, amount in dated if key in notices and key[1] <= day and not in_statement(notices[key], day)),
        ZERO,
    )


def dividends_receivable(cash: Decimal, unpaid: list[UnpaidDividend]) -> Decimal:
    """The part of `cash` that is dividends not yet paid: what a withdrawal may not take
    (cash less it is withdrawable). A purchase may have spent some of it, so never more
    than the cash there is."""
    return max(min(sum((u.amount for u in unpaid), ZERO), cash), ZERO)


def check_withdrawal(conn: Connection, portfolio_id: str, amount: Decimal, on: date) -> None:
    """Refuse (CashRejected) a withdrawal of `amount` on the exchange date `on` that would
    take cash credited for dividends paid after it: the money has not reached the broker's
    account. Call inside `portfolio_transaction`, after `credit_dividends`."""
    unpaid = unpaid_dividends(conn, portfolio_id, on)
    if not unpaid:
        return
    cash = ledger.cash_balance(conn, portfolio_id)
    withdrawable = cash - dividends_receivable(cash, unpaid)
    if to_cents(amount) <= withdrawable:
        return
    owed = ", ".join(u.said() for u in unpaid)
    raise CashRejected(
        f"a withdrawal of {to_cents(amount):,.2f} would take dividends not yet paid: {owed}; at most "
        f"{max(withdrawable, ZERO):,.2f} can be withdrawn before then (the cash, {cash:,.2f} with the dividends "
        "credited from their ex-dates, less what is not yet paid)"
    )
