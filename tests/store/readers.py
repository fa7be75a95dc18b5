"""What the event-loop readers' tests share (tests/store/test_event_loop_reader.py,
test_server_reader.py): a store holding one table of rows, and the newest row read as
store/history.py `_on_driver` reads a version."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text

from store import engine as engines
from store.engine import PoolSize


@contextmanager
def rows_engine(url: str, pool: PoolSize | None = None) -> Iterator[Engine]:
    """An engine on `url` whose store holds `rows` with the row 1; the engines and their
    readers disposed of afterwards."""
    engine = engines.build_engine(url, pool=pool)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE rows (id INTEGER PRIMARY KEY)"))
        conn.execute(text("INSERT INTO rows (id) VALUES (1)"))
    try:
        yield engine
    finally:
        engines.dispose_engines()
        engine.dispose()


def newest(conn: Connection) -> int:
    """The newest row's id on the DBAPI cursor, as store/history.py `_on_driver` reads."""
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute("SELECT max(id) FROM rows")
        return cursor.fetchone()[0]
    finally:
        cursor.close()
