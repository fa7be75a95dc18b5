"""Concurrent trades on real Postgres: the portfolio lock makes the balance checks and the
writes atomic, so cash never goes negative and a retried Idempotency-Key executes once."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, date, datetime
from decimal import Decimal
from threading import Barrier, Event

import pytest
from sqlalchemy import text

from desk.desk import Desk, keep_books
from ingest.books import append_actions
from market.errors import ConflictError
from market.settings import Settings
from portfolio import ledger, suggestions
from portfolio.ledger import TradeRejected
from portfolio.trading import ManualTrade, PlacedTrade, move_cash, open_client_portfolio, place_manual_trade
from store import tables
from store.engine import build_engine
from store.history import append_history, current_rows
from store.transactions import write_transaction
from tests.portfolio.seed import CALENDAR, seed_market
from tests.portfolio.test_manual_trades import NOW

THREADS = 15


def _fire(settings: Settings, portfolio_id: str, orders: list[tuple[ManualTrade, str | None]]) -> list[object]:
    # The service role, as the API runs; its default pool (5 + 10 overflow) bounds the
    # connections, so 15 threads each hold one.
    engine = build_engine(settings.database_url, service_role=settings.postgres_service_role)
    barrier = Barrier(THREADS)

    def one(job: tuple[ManualTrade, str | None]) -> object:
        try:
            barrier.wait(timeout=0.5)
        except Exception:  # noqa: BLE001 - the barrier only lines up the first wave
            pass
        try:
            return place_manual_trade(engine, settings, CALENDAR, portfolio_id, job[0], job[1], now=NOW)
        except (TradeRejected, ConflictError) as exc:
            return exc

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(one, orders))
    engine.dispose()
    return results


@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_two_hundred_concurrent_buys_spend_exactly_the_cash(settings: Settings) -> None:
    engine = build_engine(settings.database_url)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    portfolio_id = open_client_portfolio(engine, "acme")
    move_cash(engine, portfolio_id, "7350", now=NOW)  # 73 buys of 100, with 50 left over
    results = _fire(settings, portfolio_id, [(ManualTrade("buy", "AAA", 1, 100, 0), None)] * 200)
    succeeded = [r for r in results if isinstance(r, PlacedTrade)]
    refused = [r for r in results if isinstance(r, TradeRejected)]
    assert len(succeeded) == 73 and len(refused) == 127
    assert all("costs 100.00 with fees; cash is 50.00" in str(r) for r in refused)
    with engine.connect() as conn:
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("50")
        assert ledger.holdings(conn, portfolio_id)["AAA"].quantity == 73
    engine.dispose()


@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_the_same_idempotency_key_fifty_times_at_once_trades_once(settings: Settings) -> None:
    engine = build_engine(settings.database_url)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    portfolio_id = open_client_portfolio(engine, "acme")
    move_cash(engine, portfolio_id, "100000", now=NOW)
    results = _fire(settings, portfolio_id, [(ManualTrade("buy", "AAA", 5, 100, 0), "retry-me")] * 50)
    assert all(isinstance(r, PlacedTrade) for r in results)
    assert len({r.trade_id for r in results}) == 1
    assert sum(1 for r in results if not r.replayed) == 1
    with engine.connect() as conn:
        assert len(ledger.trade_rows(conn, portfolio_id)) == 1
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("99500")
    engine.dispose()


@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_a_split_stored_by_t0_and_a_sale_on_the_old_count_at_once_keep_the_book_replayable(settings: Settings) -> None:
    """T0's day stores a late 1-for-10 consolidation of LIQ (ex Tuesday) and checks the books
    (`desk.keep_books`) while a client who bought 100 LIQ on Monday sells 60 on Wednesday.
    The check read the book without the portfolio's lock: it passed before the sale, the sale
    passed its own check on the old count (the split not yet committed), both committed, and
    every later valuation and trade of the book failed "sells 60 LIQ holding 10". The check
    takes the portfolio's lock: the sale waits for T0's commit and is judged on the new count
    (its price, the old count's, is outside the band around 500.00), and refused."""
    engine = build_engine(settings.database_url)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000}})
    portfolio_id = open_client_portfolio(engine, "acme")
    move_cash(engine, portfolio_id, "100000", now=datetime(2026, 11, 23, 14, 0, tzinfo=UTC))
    buy = ManualTrade("buy", "LIQ", 100, "50.00", 0)
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, buy, now=datetime(2026, 11, 23, 15, 0, tzinfo=UTC))
    split = {"symbol": "LIQ", "action_date": date(2026, 11, 24), "kind": "SPLIT", "amount": 0.1, "source": "t0"}
    checked, go = Event(), Event()

    def t0_day() -> None:
        with write_transaction(engine, "delivery:2026-11-25") as conn:
            append_actions(conn, [{**split, "detail": {"text": "1 for 10 consolidation"}}], keep_books)
            checked.set()
            go.wait(10)

    def sale() -> object:
        order, moment = ManualTrade("sell", "LIQ", 60, "50.00", 0), datetime(2026, 11, 25, 15, 0, tzinfo=UTC)
        try:
            return place_manual_trade(engine, settings, CALENDAR, portfolio_id, order, now=moment)
        except TradeRejected as exc:
            return exc

    with ThreadPoolExecutor(2) as pool:
        stored = pool.submit(t0_day)
        assert checked.wait(10)
        sold = pool.submit(sale)
        _until_waiting_or_done(engine, sold)
        go.set()
        stored.result(timeout=20)
        refused = sold.result(timeout=20)
    assert isinstance(refused, TradeRejected) and "close of 500.00" in str(refused), refused  # the new count's
    with engine.connect() as conn:
        assert ledger.holdings(conn, portfolio_id)["LIQ"].quantity == 10  # the book replays, on the new count
    engine.dispose()


def _until_waiting_or_done(engine, future: Future, seconds: float = 5.0) -> None:
    """Return once `future` is done or another session waits for an advisory lock."""
    waiting = text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'")
    deadline = time.monotonic() + seconds
    with engine.connect() as conn:
        while not future.done() and time.monotonic() < deadline:
            if conn.execute(waiting).scalar():
                return
            conn.rollback()
            time.sleep(0.02)


def _pending_pair(engine, day: date) -> tuple[tuple[str, str], tuple[str, str]]:
    """Two clients, each with a pending suggestion for `day`, as T2 stores them."""
    rows = []
    for client in ("acme", "bolt"):
        portfolio_id = open_client_portfolio(engine, client)
        rows.append(
            {
                "suggestion_id": suggestions.suggestion_id(portfolio_id, day, "AAA", "BUY"),
                "portfolio_id": portfolio_id,
                "trading_date": day,
                "symbol": "AAA",
                "side": "BUY",
                "quantity": 10,
                "limit_price": Decimal("100"),
                "reason": {"signals_from": "2026-11-20"},
                "expires_at": suggestions.expires_at(day),
                "fees": Decimal("1"),
            }
        )
    with write_transaction(engine, "t2") as conn:
        append_history(conn, tables.suggestions, rows)
        pending = [
            {"suggestion_id": r["suggestion_id"], "state": "PENDING", "portfolio_id": r["portfolio_id"]} for r in rows
        ]
        append_history(conn, tables.suggestion_events, pending)
    return (rows[0]["portfolio_id"], rows[0]["suggestion_id"]), (rows[1]["portfolio_id"], rows[1]["suggestion_id"])


@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_a_rejection_committing_after_another_clients_is_listed_at_once(settings: Settings) -> None:
    """Client A's rejection takes a suggestion event id, client B's (another portfolio's lock)
    takes the next and commits first; A's pending list read in between is kept under the
    events' newest id. The list was keyed by the newest event of every portfolio: A's commit,
    an older id, did not move it, and A's list showed the rejected suggestion as pending for
    good. Keyed by A's own events, which only A's lock holders write, the commit moves it."""
    day = date(2026, 11, 23)
    desk = Desk.serving(settings, now=lambda: datetime(2026, 11, 23, 9, 0, tzinfo=UTC))
    (a, sa), (b, sb) = _pending_pair(desk.engine, day)
    inside, go = Event(), Event()

    def slow_answer(result: object) -> object:  # the transport renders the answer before the commit
        inside.set()
        go.wait(10)
        return result

    def listed() -> list[str]:
        with desk.engine.connect() as conn:
            return [s.suggestion_id for s in desk.pending_suggestions(conn, a).value()]

    with ThreadPoolExecutor(1) as pool:
        rejected = pool.submit(desk.reject_suggestion, a, sa, slow_answer)
        assert inside.wait(10)
        desk.reject_suggestion(b, sb)  # commits first, with the later event id
        assert listed() == [sa]  # A's rejection not committed yet
        go.set()
        rejected.result(timeout=20)
    assert listed() == []
    desk.engine.dispose()


@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_expiry_waits_for_a_rejection_in_flight_and_records_nothing_over_it(settings: Settings) -> None:
    """T2's `expire_stale` wrote EXPIRED without the portfolio's lock: run while a client's
    rejection was being answered, it read the suggestion as pending, and both events were
    stored (and its event, under another lock, could commit ids out of order with the
    portfolio's). It takes each portfolio's lock: it waits, sees the rejection, writes nothing."""
    day = date(2026, 11, 23)
    desk = Desk.serving(settings, now=lambda: datetime(2026, 11, 23, 9, 0, tzinfo=UTC))
    (a, sa), _ = _pending_pair(desk.engine, day)
    inside, go = Event(), Event()

    def slow_answer(result: object) -> object:
        inside.set()
        go.wait(10)
        return result

    later = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)  # both suggestions expired
    with ThreadPoolExecutor(2) as pool:
        rejected = pool.submit(desk.reject_suggestion, a, sa, slow_answer)
        assert inside.wait(10)
        expired = pool.submit(suggestions.expire_stale, desk.engine, day, later)
        _until_waiting_or_done(desk.engine, expired)
        go.set()
        rejected.result(timeout=20)
        assert expired.result(timeout=20) == 1  # the other client's only
    with desk.engine.connect() as conn:
        events = current_rows(conn, tables.suggestion_events, where=[tables.suggestion_events.c.suggestion_id == sa])
    assert sorted(e["state"] for e in events) == ["PENDING", "REJECTED"]
    desk.engine.dispose()
