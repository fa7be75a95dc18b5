"""Facts about the live database that the health stage and the tests check."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, text

from store.tables import OPERATIONAL_TABLES


def table_names(engine: Engine) -> list[str]:
    return sorted(n for n in inspect(engine).get_table_names() if not n.startswith("sqlite_"))


def tables_without_append_only(engine: Engine) -> list[str]:
    """History tables that lack the triggers rejecting UPDATE and DELETE (and TRUNCATE on
    Postgres, and on SQLite an INSERT colliding with a stored row, which is how REPLACE
    rewrites one); the operational tables (store/tables.py) are exempt by design."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            rows = conn.execute(text("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")).all()
            guarded: dict[str, set[str]] = {}
            for table, sql in rows:
                for op in ("UPDATE", "DELETE", "INSERT"):
                    if f"BEFORE {op} ON" in sql.upper() and "RAISE(ABORT" in sql.upper():
                        guarded.setdefault(table, set()).add(op)
            required = {"UPDATE", "DELETE", "INSERT"}
        else:
            rows = conn.execute(
                text(
                    "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                    "JOIN pg_proc p ON p.oid = t.tgfoid WHERE p.proname = 'reject_history_change' "
                    "AND c.relnamespace = current_schema()::regnamespace"
                )
            ).all()
            guarded = {}
            for table, trigger in rows:
                guarded.setdefault(table, set()).add(trigger)
            required = {"append_only_rows", "append_only_truncate"}
    return [
        name
        for name in table_names(engine)
        if name not in OPERATIONAL_TABLES and not required <= guarded.get(name, set())
    ]
