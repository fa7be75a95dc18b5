"""History is append-only, and the database itself enforces it."""

from datetime import UTC, date

import pytest
from sqlalchemy import exc, text

from market.settings import Settings
from store import tables
from store.engine import build_engine, migration_engine, service_engine
from store.history import append_history
from store.inspection import tables_without_append_only


def _seed(engine) -> None:
    with engine.begin() as conn:
        append_history(
            conn,
            tables.eod_prices,
            [
                {
                    "symbol": "NCBFG",
                    "trading_date": date(2026, 11, 20),
                    "close": 101.5,
                    "volume": 12000,
                    "source": "test",
                }
            ],
        )
        append_history(
            conn,
            tables.stage_runs,
            [
                {
                    "run_id": "r1",
                    "stage": "health",
                    "trading_date": date(2026, 11, 20),
                    "event": "STARTED",
                    "trigger": "test",
                }
            ],
        )


def test_every_table_carries_the_append_only_triggers(settings: Settings) -> None:
    assert tables_without_append_only(migration_engine(settings)) == []


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE eod_prices SET close = 1 WHERE symbol = 'NCBFG'",
        "DELETE FROM eod_prices WHERE symbol = 'NCBFG'",
        "DELETE FROM eod_prices",
        "UPDATE stage_runs SET event = 'SUCCEEDED'",
        "DELETE FROM schema_migrations",
        "UPDATE schema_migrations SET checksum = 'x'",
    ],
)
def test_update_and_delete_are_rejected_by_the_database(settings: Settings, statement: str) -> None:
    owner = migration_engine(settings)
    _seed(owner)
    with pytest.raises(exc.DBAPIError, match="append-only history"):
        with owner.begin() as conn:
            conn.exec_driver_sql(statement)
    with owner.connect() as conn:
        assert conn.execute(text("SELECT close FROM eod_prices")).scalar_one() == 101.5


@pytest.mark.postgres
@pytest.mark.parametrize("statement", ["TRUNCATE eod_prices", "TRUNCATE stage_runs CASCADE"])
def test_truncate_is_rejected_on_postgres(postgres_url: str, statement: str) -> None:
    from store.migrations import upgrade

    owner = build_engine(postgres_url)
    upgrade(owner)
    _seed(owner)
    with pytest.raises(exc.DBAPIError, match="append-only history: TRUNCATE"):
        with owner.begin() as conn:
            conn.exec_driver_sql(statement)
    owner.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "statement",
    ["UPDATE eod_prices SET close = 1", "DELETE FROM eod_prices", "TRUNCATE eod_prices"],
)
def test_the_service_role_lacks_the_privileges(postgres_url: str, statement: str) -> None:
    from store.migrations import upgrade

    owner = build_engine(postgres_url)
    upgrade(owner)
    _seed(owner)
    service = build_engine(postgres_url, service_role="marketintel_app")
    with service.connect() as conn:
        assert conn.execute(text("SELECT current_user")).scalar_one() == "marketintel_app"
    with pytest.raises(exc.ProgrammingError, match="permission denied"):
        with service.begin() as conn:
            conn.exec_driver_sql(statement)
    with service.begin() as conn:  # it can still read and append
        append_history(
            conn,
            tables.eod_prices,
            [{"symbol": "JMMBGL", "trading_date": date(2026, 11, 20), "close": 40.0, "volume": 0, "source": "test"}],
        )
        assert conn.execute(text("SELECT count(*) FROM eod_prices")).scalar_one() == 2
    service.dispose()
    owner.dispose()


def test_service_engine_appends_through_the_same_writer(settings: Settings) -> None:
    _seed(service_engine(settings))
    with service_engine(settings).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM eod_prices")).scalar_one() == 1


@pytest.fixture
def ledger_store(settings: Settings):
    """A client portfolio with one deposit and one trade, written by the real services."""
    from datetime import datetime

    from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
    from tests.portfolio.seed import CALENDAR, seed_market

    now = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    portfolio_id = open_client_portfolio(engine, "acme")
    move_cash(engine, portfolio_id, "10000", now=now)
    place_manual_trade(
        engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "AAA", 50, 100, 0), idempotency_key="k1", now=now
    )
    return engine, settings, portfolio_id, now


def _snapshot(engine) -> dict:
    with engine.connect() as conn:
        return {
            t: [tuple(r) for r in conn.execute(text(f"SELECT * FROM {t} ORDER BY id"))]
            for t in ("trades", "cash_entries")
        }


REWRITES = [  # issue 18: each rewrote a trade or the deposit on SQLite; {id} etc. come from the stored row
    "INSERT OR REPLACE INTO trades SELECT id, trade_id, portfolio_id, trading_date, executed_at, symbol, side, 5000, "
    "'1', fees, origin, rationale, idempotency_key, recorded_at, spread_cost, impact_cost FROM trades",
    "REPLACE INTO trades (trade_id, portfolio_id, trading_date, executed_at, symbol, side, quantity, price, origin, "
    "recorded_at) SELECT trade_id, portfolio_id, trading_date, executed_at, symbol, side, 1, '1', origin, recorded_at "
    "FROM trades",
    "INSERT OR REPLACE INTO trades (portfolio_id, idempotency_key, trade_id, trading_date, executed_at, symbol, side, "
    "quantity, price, origin, recorded_at) SELECT portfolio_id, idempotency_key, 'T-new', trading_date, executed_at, "
    "symbol, side, 1, '1', origin, recorded_at FROM trades",
    "INSERT OR REPLACE INTO cash_entries SELECT id, entry_id, portfolio_id, '99999999', kind, trade_id, note, "
    "effective_at, recorded_at FROM cash_entries WHERE kind = 'DEPOSIT'",
    "REPLACE INTO cash_entries (entry_id, portfolio_id, amount, kind, effective_at, recorded_at) SELECT entry_id, "
    "portfolio_id, '99999999', kind, effective_at, recorded_at FROM cash_entries WHERE kind = 'DEPOSIT'",
    "INSERT INTO cash_entries SELECT id, entry_id, portfolio_id, '99999999', kind, trade_id, note, effective_at, "
    "recorded_at FROM cash_entries WHERE kind = 'DEPOSIT' ON CONFLICT DO NOTHING",
]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("statement", REWRITES)
def test_replace_cannot_rewrite_a_trade_or_a_deposit_on_sqlite(ledger_store, statement: str) -> None:
    import sqlite3

    engine, settings, portfolio_id, now = ledger_store
    before = _snapshot(engine)
    # the service's own connection, and a bare sqlite3 connection to the file (a copy of the store)
    with pytest.raises(exc.DBAPIError, match="append-only history"):
        with engine.begin() as conn:
            conn.exec_driver_sql(statement)
    raw = sqlite3.connect(engine.url.database)
    if "ON CONFLICT DO NOTHING" not in statement:
        with pytest.raises(sqlite3.IntegrityError, match="append-only history"):
            raw.execute(statement)
    raw.commit()
    raw.close()
    assert _snapshot(engine) == before


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_appends_still_work_beside_the_replace_guard(ledger_store) -> None:
    from decimal import Decimal

    from portfolio import ledger
    from portfolio.trading import ManualTrade, move_cash, place_manual_trade
    from tests.portfolio.seed import CALENDAR

    engine, settings, portfolio_id, now = ledger_store
    move_cash(engine, portfolio_id, "500", now=now)
    replayed = place_manual_trade(
        engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "AAA", 50, 100, 0), idempotency_key="k1", now=now
    )
    assert replayed.replayed is True
    place_manual_trade(
        engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "AAA", 5, 100, 0), idempotency_key="k2", now=now
    )
    with engine.connect() as conn:
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("10500") - 5000 - 500
        assert ledger.holdings(conn, portfolio_id)["AAA"].quantity == 55


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_upsert_cannot_rewrite_a_trade_on_postgres(ledger_store) -> None:
    engine, settings, portfolio_id, now = ledger_store
    before = _snapshot(engine)
    owner = migration_engine(settings)
    with pytest.raises(exc.DBAPIError, match="append-only history"):
        with owner.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO trades (trade_id, portfolio_id, trading_date, executed_at, symbol, side, quantity, price, "
                "origin) SELECT trade_id, portfolio_id, trading_date, executed_at, symbol, side, 1, 1, origin "
                "FROM trades ON CONFLICT (trade_id) DO UPDATE SET quantity = 5000"
            )
    assert _snapshot(engine) == before
