"""The DDL twins and the Python table definitions describe one schema."""

import pytest
from sqlalchemy import inspect

from market.settings import Settings
from store.engine import build_engine
from store.tables import HISTORY_TABLES, OPERATIONAL_TABLES


def _columns(url: str) -> dict[str, dict[str, bool]]:
    engine = build_engine(url)
    inspector = inspect(engine)
    found = {}
    for table in inspector.get_table_names():
        if table.startswith("sqlite_"):
            continue
        primary = set(inspector.get_pk_constraint(table)["constrained_columns"])
        # SQLite reports an INTEGER PRIMARY KEY as nullable; a primary key never is.
        found[table] = {
            c["name"]: bool(c["nullable"]) and c["name"] not in primary for c in inspector.get_columns(table)
        }
    engine.dispose()
    return found


def test_python_tables_match_the_ddl(settings: Settings) -> None:
    reflected = _columns(settings.database_url)
    assert set(reflected) == set(HISTORY_TABLES) | set(OPERATIONAL_TABLES)
    for name, table in {**HISTORY_TABLES, **OPERATIONAL_TABLES}.items():
        declared = {c.name: bool(c.nullable) and not c.primary_key for c in table.c}
        assert reflected[name] == declared, name


@pytest.mark.postgres
def test_sqlite_twin_has_the_same_tables_and_columns_as_postgres(postgres_url: str, tmp_path) -> None:
    from store.migrations import upgrade

    sqlite_url = f"sqlite:///{tmp_path / 'twin.db'}"
    for url in (sqlite_url, postgres_url):
        engine = build_engine(url)
        upgrade(engine)
        engine.dispose()
    assert _columns(sqlite_url) == _columns(postgres_url)


def test_every_table_declares_a_natural_key() -> None:
    for name, table in HISTORY_TABLES.items():
        assert table.info["key"], name
        assert "recorded_at" in table.c, name


def test_a_portfolios_newest_ids_are_one_index_lookup(tmp_path) -> None:
    """The data versions read on every cached API request (store.history.newest_ids, a
    portfolio's trades, cash, days and suggestions) use the (portfolio_id, id) indexes of
    migration 0012, not a walk over the portfolio's whole history."""
    from sqlalchemy import text

    from store import tables
    from store.engine import build_engine
    from store.history import newest_ids
    from store.migrations import upgrade

    engine = build_engine(f"sqlite:///{tmp_path}/plan.db")
    upgrade(engine)
    plans = []
    with engine.connect() as conn:
        for table in (tables.trades, tables.cash_entries, tables.portfolio_days, tables.suggestions):
            newest_ids(conn, (table, "portfolio_id", "ai"))  # the statement runs
            plan = conn.execute(
                text(f"EXPLAIN QUERY PLAN SELECT max(id) FROM {table.name} WHERE portfolio_id = 'ai'")
            ).all()
            plans.append(" ".join(str(row[-1]) for row in plan))
    engine.dispose()
    assert all(
        f"ix_{t}_portfolio_id" in p for t, p in zip(("trades", "cash_entries", "portfolio_days", "suggestions"), plans)
    ), plans
