"""The track record's read model (views/book_record.py, portfolio/book_days.py) kept up to
date step by step equals a valuation from scratch after every kind of change a book and
its market see, and a change costs what it touches: a write dated after the last close
revalues no day, a new close values one."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

import views.book_record as book_record
from market.settings import Settings
from portfolio import ledger
from portfolio.book_days import BookDays
from portfolio.trading import open_client_portfolio
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR
from views.book_record import BookState, TrackRecords, book_version, catch_up
from views.track_record import LedgerTotals

SYMBOLS = ("AAA", "BBB", "CCC", "DDD")
FIRST = date(2026, 6, 1)  # a Monday
MARKET = [CALENDAR.add_trading_days(FIRST, i) for i in range(45)]


def _closes(engine: Engine, days: list[date], rng: random.Random, scale: float = 1.0) -> None:
    rows = [
        {
            "symbol": s,
            "trading_date": d,
            "close": round(10 * (1 + n) * scale * (1 + rng.uniform(-0.05, 0.05)), 2),
            "volume": 10_000,
            "source": "test",
        }
        for d in days
        for n, s in enumerate(SYMBOLS)
        if rng.random() > 0.15 or d == days[0]  # some names do not trade some days
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, rows)


def _at(day: date, hour: int = 20) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)  # 15:00 exchange time (16:00 in summer)


def _cash(engine: Engine, pid: str, amount: str, when: datetime, kind: str = "DEPOSIT") -> None:
    with ledger.portfolio_transaction(engine, pid) as conn:
        ledger.record_cash(conn, pid, f"c-{random.random()}", Decimal(amount), kind, when)


def _trade(engine: Engine, pid: str, day: date, symbol: str, side: str, quantity: int, origin: str = "MANUAL") -> None:
    request = ledger.TradeRequest(
        pid, day, _at(day), symbol, side, quantity, Decimal("12.50"), Decimal("3.10"), origin=origin,
        trade_id=f"t-{random.random()}",
    )  # fmt: skip
    with ledger.portfolio_transaction(engine, pid) as conn:
        ledger.record_trade(conn, request, moves_cash=origin != "STATEMENT_SYNC")


def _split(engine: Engine, symbol: str, ex_date: date, factor: float) -> None:
    with engine.begin() as conn:
        row = {"symbol": symbol, "action_date": ex_date, "kind": "SPLIT", "amount": factor, "source": "test"}
        append_history(conn, tables.corporate_actions, [row])


def _same(kept: BookDays, fresh: BookDays) -> None:
    assert kept.start == fresh.start and kept.dates == fresh.dates
    for name in ("equity", "deposits", "withdrawals", "exposure"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name), err_msg=name)


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_the_kept_record_equals_a_valuation_from_scratch_after_every_change(settings: Settings) -> None:
    rng = random.Random(7)
    engine = service_engine(settings)
    _closes(engine, MARKET[:30], rng)
    pid = open_client_portfolio(engine, "acme")
    records = TrackRecords()
    steps = [
        ("a deposit", lambda: _cash(engine, pid, "10000", _at(MARKET[3]))),
        ("buys", lambda: [_trade(engine, pid, MARKET[4], s, "BUY", 100) for s in SYMBOLS[:3]]),
        ("a Saturday deposit", lambda: _cash(engine, pid, "500", _at(MARKET[9] + timedelta(days=1)))),
        ("a sell", lambda: _trade(engine, pid, MARKET[12], "AAA", "SELL", 40)),
        ("a trade after the last close", lambda: _trade(engine, pid, MARKET[31], "DDD", "BUY", 10)),
        ("new closes", lambda: _closes(engine, MARKET[30:33], rng)),
        (
            "a statement's shares, back-dated",
            lambda: _trade(engine, pid, MARKET[8], "DDD", "BUY", 30, "STATEMENT_SYNC"),
        ),
        ("a corrected close", lambda: _closes(engine, [MARKET[15]], rng, scale=1.3)),
        ("a split", lambda: _split(engine, "BBB", MARKET[20], 2.0)),
        ("a withdrawal after the close", lambda: _cash(engine, pid, "-700", _at(MARKET[32], 23), "WITHDRAWAL")),
        ("a deposit before the first day", lambda: _cash(engine, pid, "100", _at(MARKET[1]))),
        ("forty more days", lambda: _closes(engine, MARKET[33:], rng)),
        ("a late split notice of an old ex-date", lambda: _split(engine, "CCC", MARKET[6], 0.5)),
    ]
    with engine.connect() as conn:
        assert records.client(conn, pid).reason  # no history yet
    for name, step in steps:
        step()
        with engine.connect() as conn:
            kept = records.client(conn, pid)
            fresh_state = BookState()
            catch_up(conn, pid, fresh_state, book_version(conn, pid))
            fresh = book_record.portfolio_track_record(conn, pid)
        _same(records._books[pid].days, fresh_state.days)
        assert kept == fresh, name
    assert kept.days == len(MARKET) - 1 and kept.fill_count == 5 and kept.trades == 6  # from MARKET[1], its first day


def test_a_change_revalues_only_the_days_it_touches(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    engine = service_engine(settings)
    _closes(engine, MARKET[:44], rng)
    pid = open_client_portfolio(engine, "acme")
    _cash(engine, pid, "10000", _at(MARKET[0]))
    _trade(engine, pid, MARKET[1], "AAA", "BUY", 100)
    records = TrackRecords()
    valued: list[int] = []
    real = BookDays.extend

    def counting(self, resume, market, trades, cash, splits, dividends=(), delisting=None):
        valued.append(len(market))
        return real(self, resume, market, trades, cash, splits, dividends, delisting)

    monkeypatch.setattr(BookDays, "extend", counting)

    def read() -> int:
        valued.clear()
        with engine.connect() as conn:
            records.client(conn, pid)
        return sum(valued)

    assert read() == 44  # from nothing: every day
    _trade(engine, pid, MARKET[44], "BBB", "BUY", 10)  # dated after the last close
    assert read() == 0
    _closes(engine, [MARKET[44]], rng)
    assert read() == 1
    _cash(engine, pid, "5", _at(MARKET[44], 23))  # after the close, on the newest day
    assert read() == 1
    _closes(engine, [MARKET[35]], rng, scale=1.1)  # a correction 10 days back: from the checkpoint before it
    assert 10 <= read() < 10 + 16
    assert read() == 0  # nothing new


def test_money_and_shares_from_outside_are_flows_whichever_day_they_arrive(settings: Settings) -> None:
    """Flat closes: a deposit on a Saturday and a statement's shares bring equity, not
    return, so the book's return stays 0 (counted on the next market day's close)."""
    engine = service_engine(settings)
    with engine.begin() as conn:
        rows = [{"symbol": "AAA", "trading_date": d, "close": 10.0, "volume": 1, "source": "test"} for d in MARKET[:10]]
        append_history(conn, tables.eod_prices, rows)
    pid = open_client_portfolio(engine, "acme")
    _cash(engine, pid, "1000", _at(MARKET[0]))
    _cash(engine, pid, "1000", _at(MARKET[4] + timedelta(days=1)))  # MARKET[4] is a Friday
    _trade(engine, pid, MARKET[6], "AAA", "BUY", 100, origin="STATEMENT_SYNC")
    with engine.connect() as conn:
        record = book_record.portfolio_track_record(conn, pid)
    assert (
        record.total_return == 0 and record.max_drawdown == 0 and record.days == 10
    )  # every market day, the first from nothing before it
    # the shares a statement brought in are not traded: no fill, and no value traded (turnover's numerator;
    # ten days are under a year, so no turnover a year is served: portfolio/track_record.py `under_a_year`)
    totals = LedgerTotals()
    with engine.connect() as conn:
        totals.catch_up(conn, pid, conn.scalar(select(func.max(tables.trades.c.id))))
    assert (totals.through(MARKET[9]).fills, totals.through(MARKET[9]).traded_value) == (0, 0)
    assert record.fill_count == 0 and record.annual_turnover is None


def test_a_fill_after_the_last_close_joins_the_record_with_its_days_close(settings: Settings) -> None:
    """The record covers the valued closes: a trade dated after the last (placed before its
    day's prices are delivered) was counted in its fills, trades, turnover and fees while no
    close had valued it; it joins with its day's close, kept and from scratch alike."""
    engine = service_engine(settings)
    _closes(engine, MARKET[:10], random.Random(3))
    pid = open_client_portfolio(engine, "acme")
    _cash(engine, pid, "10000", _at(MARKET[0]))
    _trade(engine, pid, MARKET[2], "AAA", "BUY", 10)
    kept = TrackRecords()
    with engine.connect() as conn:
        before = kept.client(conn, pid)
    _trade(engine, pid, MARKET[10], "BBB", "BUY", 10)  # the day after the last close
    with engine.connect() as conn:
        pending = [kept.client(conn, pid), book_record.portfolio_track_record(conn, pid)]
    for record in pending:
        assert (record.fill_count, record.trades, record.costs, record.annual_turnover) == (
            1, 1, before.costs, before.annual_turnover
        )  # fmt: skip
    _closes(engine, MARKET[10:11], random.Random(4))
    with engine.connect() as conn:
        joined = [kept.client(conn, pid), book_record.portfolio_track_record(conn, pid)]
    assert [(r.fill_count, r.trades) for r in joined] == [(2, 2), (2, 2)]


def test_a_book_appended_in_one_batch_is_stored_as_record_trade_stores_it(settings: Settings) -> None:
    """ledger.append_book (the load test's and the benchmark's thousands of trades) writes
    the rows and cash entries record_trade writes, and refuses another book's trade."""
    engine = service_engine(settings)
    one, batch = open_client_portfolio(engine, "one"), open_client_portfolio(engine, "batch")
    when = _at(MARKET[0])
    request = ledger.TradeRequest(one, MARKET[0], when, "AAA", "BUY", 10, Decimal("12.5"), Decimal("3.1"), trade_id="x")
    _cash(engine, one, "1000", when)
    with ledger.portfolio_transaction(engine, one) as conn:
        ledger.record_trade(conn, request)
    deposit = ledger.cash_entry(batch, "d", Decimal(1000), "DEPOSIT", when, None, Decimal(0))
    with engine.begin() as conn:
        assert ledger.append_book(conn, batch, [replace(request, portfolio_id=batch, trade_id="y")], [deposit]) == 1
        with pytest.raises(ledger.TradeRejected, match="in the book of"):
            ledger.append_book(conn, batch, [request])
        stored = {pid: (ledger.ledger_rows(conn, pid), ledger.cash_balance(conn, pid)) for pid in (one, batch)}
    (mine, cash), (theirs, their_cash) = stored[one], stored[batch]
    assert cash == their_cash == Decimal("871.90")
    ignore = ("id", "trade_id", "portfolio_id", "recorded_at")
    assert [{k: v for k, v in r.items() if k not in ignore} for r in mine] == [
        {k: v for k, v in r.items() if k not in ignore} for r in theirs
    ]


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_closes_committed_late_with_lower_ids_are_found_at_the_next_market_change(settings: Settings) -> None:
    """Postgres: a delivery that took lower ids than another's but committed after it (two
    days' deliveries hold different locks) is not "above the stamp"; the kept record still
    comes to equal one from scratch at the next change of the market."""
    rng = random.Random(5)
    engine = service_engine(settings)
    _closes(engine, MARKET[:10], rng)
    with engine.connect() as conn:
        gap = conn.execute(select(func.max(tables.eod_prices.c.id))).scalar_one() + 1

    def bars(day: date, close: float, first_id: int) -> None:  # with ids of their own, as a sequence hands out
        rows = [
            {"id": first_id + n, "symbol": s, "trading_date": day, "close": close, "volume": 1, "source": "test"}
            for n, s in enumerate(SYMBOLS)
        ]
        with engine.begin() as conn:
            conn.execute(tables.eod_prices.insert(), [{**r, "recorded_at": datetime.now(UTC)} for r in rows])

    bars(MARKET[10], 12.0, gap + 50)  # committed first, above the ids the late transaction holds
    pid = open_client_portfolio(engine, "acme")
    _cash(engine, pid, "10000", _at(MARKET[0]))
    _trade(engine, pid, MARKET[1], "AAA", "BUY", 100)
    records = TrackRecords()
    with engine.connect() as conn:
        records.client(conn, pid)
    bars(MARKET[5], 99.0, gap)  # the late transaction commits now: day 5's closes corrected, below the stamp
    bars(MARKET[11], 12.0, gap + 100)  # the market's next change
    with engine.connect() as conn:
        kept, fresh = records.client(conn, pid), book_record.portfolio_track_record(conn, pid)
    assert kept == fresh and kept.max_drawdown > 0.4  # AAA at 99 on day 5, about 10 around it: the late close is in


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_split_on_a_day_the_name_did_not_trade_is_no_return(settings: Settings) -> None:
    """A 2-for-1 split whose ex-date passes without a trade (a thin market's usual day): the
    holding doubles, and the close carried from before the ex-date is read on the new count,
    so the record shows no +100% day and no -50% day when the name trades again."""
    engine = service_engine(settings)
    flat = [
        {"symbol": s, "trading_date": d, "close": 10.0 if d < MARKET[3] or s == "BBB" else 5.0, "volume": 10_000}
        | {"source": "t"}
        for d in MARKET[:6]
        for s in ("AAA", "BBB")
        if s == "BBB" or d != MARKET[3]  # AAA does not trade on its ex-date; the market does
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, flat)
    pid = open_client_portfolio(engine, "acme")
    _cash(engine, pid, "10000", _at(MARKET[0]))
    _trade(engine, pid, MARKET[1], "AAA", "BUY", 100)
    _split(engine, "AAA", MARKET[3], 2.0)
    with engine.connect() as conn:
        state = BookState()
        catch_up(conn, pid, state, book_version(conn, pid))
    equity = dict(zip(state.days.dates, state.days.equity, strict=True))
    assert equity[MARKET[2]] == equity[MARKET[3]] == equity[MARKET[4]] == equity[MARKET[5]]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("notice_on, worthless_from", [(14, 14), (10, 11)], ids=["after-last-row", "on-last-row"])
def test_a_delisting_notice_stored_later_revalues_the_days_from_its_date(
    settings: Settings, notice_on: int, worthless_from: int
) -> None:
    """EEE's closes stop after MARKET[10]; the exchange's DELISTING notice arrives after the
    record was read, with no close beside it: the kept record revalues the days from the
    notice (EEE worth nothing from it, as its position reads) and equals one valued from
    scratch. A notice dated MARKET[14] delists from its date; one dated on EEE's last
    session, MARKET[10] (T0 stores a notice under the session it came with), from the next
    session: the record carried EEE at its last close, as if no notice had come."""
    engine = service_engine(settings)
    rows = [
        {"symbol": s, "trading_date": d, "close": 10.0, "volume": 10_000, "source": "test"}
        for d in MARKET[:30]
        for s in ("AAA", "EEE")
        if s == "AAA" or d <= MARKET[10]
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, rows)
    pid = open_client_portfolio(engine, "acme")
    _cash(engine, pid, "10000", _at(MARKET[0]))
    _trade(engine, pid, MARKET[2], "EEE", "BUY", 100)
    records = TrackRecords()
    with engine.connect() as conn:
        records.client(conn, pid)
    notice = {"symbol": "EEE", "action_date": MARKET[notice_on], "kind": "DELISTING", "amount": None, "source": "test"}
    with engine.begin() as conn:
        append_history(conn, tables.corporate_actions, [notice])
    with engine.connect() as conn:
        kept = records.client(conn, pid)
        fresh_state = BookState()
        catch_up(conn, pid, fresh_state, book_version(conn, pid))
        fresh = book_record.portfolio_track_record(conn, pid)
    _same(records._books[pid].days, fresh_state.days)
    assert kept == fresh
    equity = dict(zip(fresh_state.days.dates, fresh_state.days.equity, strict=True))
    cash = 10_000 - 1_250 - 3.10
    before, after = equity[MARKET[worthless_from - 1]], equity[MARKET[worthless_from]]
    assert (before, after) == (pytest.approx(cash + 1_000), pytest.approx(cash))
