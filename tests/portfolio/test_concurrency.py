"""Concurrent trades on real Postgres: the portfolio lock makes the balance checks and the
writes atomic, so cash never goes negative and a retried Idempotency-Key executes once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from threading import Barrier

import pytest

from market.errors import ConflictError
from market.settings import Settings
from portfolio import ledger
from portfolio.ledger import TradeRejected
from portfolio.trading import ManualTrade, PlacedTrade, move_cash, open_client_portfolio, place_manual_trade
from store.engine import build_engine
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
    results = _fire(settings, portfolio_id, [(ManualTrade("buy", "AAA", 1, 100), None)] * 200)
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
    results = _fire(settings, portfolio_id, [(ManualTrade("buy", "AAA", 5, 100), "retry-me")] * 50)
    assert all(isinstance(r, PlacedTrade) for r in results)
    assert len({r.trade_id for r in results}) == 1
    assert sum(1 for r in results if not r.replayed) == 1
    with engine.connect() as conn:
        assert len(ledger.trade_rows(conn, portfolio_id)) == 1
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("99500")
    engine.dispose()
