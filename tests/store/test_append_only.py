"""History is append-only, and the database itself enforces it."""
from datetime import date

import pytest
from sqlalchemy import exc, text

from market.settings import Settings
from store import tables
from store.engine import build_engine, migration_engine, service_engine
from store.history import append_history
from store.inspection import tables_without_append_only


def _seed(engine) -> None:  # noqa: ANN001
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [
            {"symbol": "NCBFG", "trading_date": date(2026, 11, 20), "close": 101.5, "volume": 12000, "source": "test"}
        ])
        append_history(conn, tables.stage_runs, [
            {"run_id": "r1", "stage": "health", "trading_date": date(2026, 11, 20), "event": "STARTED", "trigger": "test"}
        ])


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
        append_history(conn, tables.eod_prices, [
            {"symbol": "JMMBGL", "trading_date": date(2026, 11, 20), "close": 40.0, "volume": 0, "source": "test"}
        ])
        assert conn.execute(text("SELECT count(*) FROM eod_prices")).scalar_one() == 2
    service.dispose()
    owner.dispose()


def test_service_engine_appends_through_the_same_writer(settings: Settings) -> None:
    _seed(service_engine(settings))
    with service_engine(settings).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM eod_prices")).scalar_one() == 1
