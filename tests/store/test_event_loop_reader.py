"""A SQLite file's event-loop reader (store/engine.py `EventLoopReader`): the one connection
an API process's version reads use on its event loop instead of a pooled one
(api/services.py `Services.version_read`). What it must never do: answer from an old
snapshot (it sees every commit made before its statement, by any connection), hold a
snapshot after a read (a checkpoint must be able to move the whole log into the file),
serve two borrowers at once, or keep a connection that failed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from store import engine as engines
from store.engine import event_loop_reader
from tests.store.readers import newest, rows_engine


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with rows_engine(f"sqlite:///{tmp_path / 'store.db'}") as engine:
        yield engine


def test_it_sees_every_commit_and_holds_no_snapshot_after_a_read(engine: Engine) -> None:
    reader = event_loop_reader(engine)
    assert reader is not None and event_loop_reader(engine) is reader  # one per engine
    with reader.lent() as conn:
        assert newest(conn) == 1
        assert conn.execute(text("SELECT count(*) FROM rows")).scalar_one() == 1  # SQLAlchemy's way too
    for n in range(2, 5):  # another connection's commits, each seen by the next read
        with engine.begin() as writer:
            writer.execute(text("INSERT INTO rows (id) VALUES (:n)"), {"n": n})
        with reader.lent() as conn:
            assert newest(conn) == n
    with reader.lent() as conn:
        assert not conn.in_transaction()
    with engine.connect() as other:
        busy, log, moved = other.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()
    assert busy == 0 and log > 0 and moved == log  # no read snapshot held back the checkpoint


def test_one_borrower_at_a_time_and_a_failed_connection_is_dropped(engine: Engine) -> None:
    reader = event_loop_reader(engine)
    with reader.lent() as conn:
        with reader.lent() as second:
            assert second is None  # the caller takes the pool's way
        first = conn
    with pytest.raises(OperationalError), reader.lent() as conn:
        conn.execute(text("SELECT * FROM no_such_table"))
    with reader.lent() as conn:
        assert conn is not first and newest(conn) == 1  # connected afresh


def test_no_reader_for_an_in_memory_database() -> None:
    engine = engines.build_engine("sqlite://")
    try:
        assert event_loop_reader(engine) is None
    finally:
        engines.dispose_engines()
        engine.dispose()
