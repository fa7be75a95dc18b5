"""Write transactions for stages: one transaction per stage and trading date, holding an
exclusive lock so two runs of the same stage cannot interleave their writes."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Connection, Engine, text


@contextmanager
def write_transaction(engine: Engine, lock_name: str) -> Iterator[Connection]:
    """Commit everything written inside, or nothing.

    Postgres: a transaction-scoped advisory lock on `lock_name` (other stages go on).
    SQLite: BEGIN IMMEDIATE, the database's single write lock, taken up front so the
    transaction never fails half-way on a busy database.
    """
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn.execution_options(sqlite_begin="IMMEDIATE")
        with conn.begin():
            if engine.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": lock_name})
            yield conn
