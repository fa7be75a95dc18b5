"""The desk's own rules, beside what the transports' tests hold it to: a read is kept per
version and rebuilt once the version moves (desk/cache.py); an owner's expensive read is
one at a time, a build inside it the same read; an opening deposit is recorded once; a
portfolio is opened once per desk on a caller's connection."""

from __future__ import annotations

import pickle
import threading
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import event

from desk import AI_PORTFOLIO, Account, Desk, ReportOrder, Versioned
from desk.cache import ReadCache
from market.errors import RateLimitedError
from market.settings import Settings
from portfolio.ledger import ensure_portfolio, record_cash
from tests.conftest import ON_SQLITE_ONLY
from tests.portfolio.seed import CALENDAR, DAY, seed_market

AFTER_CLOSE = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)  # the evening of DAY, exchange time 17:00


def _desk(settings: Settings) -> Desk:
    desk = Desk.from_settings(settings, now=lambda: AFTER_CLOSE)
    seed_market(desk.engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    return desk


def test_a_read_is_kept_per_version_and_rebuilt_once_it_moves(settings: Settings) -> None:
    desk = _desk(settings)
    pid = desk.open_portfolio(Account.of_client("acme"))
    desk.move_cash(pid, "1000")
    with desk.engine.connect() as conn:
        first = desk.positions(conn, pid)
        again = desk.positions(conn, pid)
        assert first.version == again.version and first.value() is again.value()  # kept: the same object
        rendered = [desk.cache.rendered(first, "form", lambda v: str(v.cash).encode()) for _ in range(2)]
        assert rendered == [b"1000.00", b"1000.00"]
    desk.move_cash(pid, "500")
    with desk.engine.connect() as conn:
        moved = desk.positions(conn, pid)
        assert moved.version != first.version and moved.value().cash == Decimal("1500.00")
        assert desk.cache.rendered(moved, "form", lambda v: str(v.cash).encode()) == b"1500.00"
        assert desk.portfolio_summary(conn, pid).value()["cash"] == Decimal("1500.00")  # the same valuation


def test_the_ai_portfolios_reads_and_the_performance_are_models_kept_per_version(settings: Settings) -> None:
    """The AI summary, its positions and the model's performance are built once per version
    and shared by every transport: REST renders the kept model (`rendered`), GraphQL's
    `aiPortfolio` and `modelPerformance` read the same objects (`ai_portfolio`, `value`)."""
    desk = _desk(settings)
    with desk.engine.begin() as conn:
        ensure_portfolio(conn, AI_PORTFOLIO, "AI")  # as the AI stage opens it and deposits (a client's move
        record_cash(conn, AI_PORTFOLIO, "C-1", Decimal("1000"), "DEPOSIT", desk.now())  # of cash is refused)
    with desk.engine.connect() as conn:
        summary, positions, performance = desk.ai_summary(conn), desk.ai_positions(conn), desk.performance(conn)
        assert summary.value() is desk.ai_summary(conn).value() and summary.value()["cash"] == Decimal("1000.00")
        assert positions.value() is desk.ai_positions(conn).value()
        assert performance.value() is desk.performance(conn).value()
        whole = desk.ai_portfolio(conn)
        assert whole[0] is summary.value() and whole[1] is positions.value()
    with desk.engine.begin() as conn:
        record_cash(conn, AI_PORTFOLIO, "C-2", Decimal("500"), "DEPOSIT", desk.now())
    with desk.engine.connect() as conn:
        moved = desk.ai_summary(conn)
        assert moved.version != summary.version and moved.value()["cash"] == Decimal("1500.00")
        assert desk.ai_portfolio(conn)[0] is moved.value()
        assert desk.performance(conn).value() is performance.value()  # the model's records did not move


def test_an_owners_expensive_read_is_one_at_a_time_and_a_build_inside_it_is_the_same_read() -> None:
    cache = ReadCache()
    inner = Versioned(("record", "acme"), 1, lambda: cache.owned("acme", ("record", "acme"), 1, lambda: 42), "acme")
    assert cache.rendered(inner, "body", lambda value: str(value).encode()) == b"42"  # nested under one turn

    started, release = threading.Event(), threading.Event()

    def slow() -> int:
        started.set()
        release.wait(10)
        return 7

    worker = threading.Thread(target=lambda: cache.owned("beta", ("record", "beta"), 1, slow))
    worker.start()
    try:
        assert started.wait(10)
        with pytest.raises(RateLimitedError):
            cache.owned("beta", ("record", "beta"), 2, lambda: 8)  # another miss of beta's while one runs
        assert cache.owned("acme", ("other",), 1, lambda: 9) == 9  # another owner is not held up
    finally:
        release.set()
        worker.join()
    assert cache.owned("beta", ("record", "beta"), 1, lambda: 0) == 7  # kept: a hit needs no turn


def test_an_opening_deposit_is_recorded_once(settings: Settings) -> None:
    desk = _desk(settings)
    pid = desk.open_portfolio(Account.of_client("demo"))
    assert desk.deposit_once(pid, "DEMO:opening-cash", Decimal("5000"), "opening cash") == Decimal("5000")
    assert desk.deposit_once(pid, "DEMO:opening-cash", Decimal("5000"), "opening cash") == Decimal("5000")
    assert desk.deposit_once(pid, "DEMO:top-up", Decimal("250"), "another entry") == Decimal("5250")


def test_a_portfolio_is_opened_once_on_a_callers_connection(settings: Settings) -> None:
    """The first request of a caller opens its book on the request's connection; later ones
    read nothing for it (portfolios are never closed)."""
    desk = _desk(settings)
    statements: list[str] = []
    event.listen(desk.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with desk.engine.connect() as conn:
        assert desk.open_portfolio(Account.of_client("acme"), conn) == "client:acme"
        opened = len(statements)
        assert desk.open_portfolio(Account.of_client("acme"), conn) == "client:acme"
    assert opened > 0 and len(statements) == opened
    with desk.engine.connect() as conn:
        assert desk.valuation(conn, "client:acme").cash == Decimal("0.00")  # it exists


@ON_SQLITE_ONLY
def test_a_report_order_travels_to_a_worker_process(settings: Settings) -> None:
    """What the API's worker processes receive (api/services.py `apart`) survives pickling."""
    order = Desk(_desk(settings).engine, settings, CALENDAR, lambda: AFTER_CLOSE).report_order("compliance")
    travelled = pickle.loads(pickle.dumps(order))
    assert isinstance(travelled, ReportOrder) and callable(travelled)
    assert (travelled.kind, travelled.settings, travelled.now) == ("compliance", settings, AFTER_CLOSE)
    assert travelled.calendar.next_trading_day(DAY) == CALENDAR.next_trading_day(DAY)
