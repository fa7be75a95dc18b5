"""A database server's event-loop readers (store/engine.py `ServerReader`): the connections an
API process's version reads are awaited on instead of a pooled connection carried to a
worker thread (api/services.py `Services.version_read`). What they must never do: answer
from an old snapshot (each statement sees every commit made before it, by any
connection), read as anyone but the service role, lend more connections than the pool
holds, lend a connection again whose read did not end cleanly or that the server ended,
or outlive the engines' disposal."""

from __future__ import annotations

import asyncio
import gc
import uuid
import warnings
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import SAWarning

from store import engine as engines
from store.engine import PoolSize, build_engine, server_reader
from tests.conftest import PG_ADMIN_URL
from tests.store.readers import newest, rows_engine

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    with rows_engine(postgres_url, PoolSize(2, 0, 5)) as engine:
        yield engine


async def _read(engine: Engine, function, *args):
    async with server_reader(engine).lent() as conn:
        assert conn is not None
        return await conn.run_sync(function, *args)


def _backends(postgres_url: str) -> list[int]:
    """The process ids of the server's connections to the test's database, but this one."""
    database = postgres_url.rpartition("/")[2]
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (database,)
        ).fetchall()
    return [pid for (pid,) in rows]


def test_it_sees_every_commit_on_any_loop_in_autocommit(engine: Engine) -> None:
    reader = server_reader(engine)
    assert reader is not None and server_reader(engine) is reader  # one per engine
    assert asyncio.run(_read(engine, newest)) == 1
    for n in range(2, 5):  # another connection's commits, each seen by the next read, each on a new loop
        with engine.begin() as writer:
            writer.execute(text("INSERT INTO rows (id) VALUES (:n)"), {"n": n})
        assert asyncio.run(_read(engine, newest)) == n
    count = asyncio.run(_read(engine, lambda conn: conn.execute(text("SELECT count(*) FROM rows")).scalar_one()))
    assert count == 4  # SQLAlchemy's way too, and its logical transaction is ended when given back
    state = asyncio.run(
        _read(engine, lambda conn: (conn.in_transaction(), conn.connection.driver_connection.autocommit))
    )
    assert state == (False, True)


def test_it_reads_as_the_service_role(postgres_url: str) -> None:
    role = f"reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}"')
    engine = build_engine(postgres_url, service_role=role)
    try:
        assert asyncio.run(_read(engine, lambda conn: conn.execute(text("SELECT current_user")).scalar_one())) == role
    finally:
        engines.dispose_engines()
        engine.dispose()
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f'DROP ROLE "{role}"')


def test_no_more_lent_than_the_pool_holds_and_each_kept(engine: Engine, postgres_url: str) -> None:
    reader = server_reader(engine)

    async def three_at_once() -> list:
        async with reader.lent() as first, reader.lent() as second, reader.lent() as third:
            return [first, second, third]

    first, second, third = asyncio.run(three_at_once())
    assert first is not None and second is not None and third is None  # the caller takes the pool's way
    engine.dispose()  # the pool's own (it made the table)
    assert len(_backends(postgres_url)) == 2

    async def again() -> object:
        async with reader.lent() as conn:
            return conn

    assert asyncio.run(again()) in (first, second)  # kept, not connected anew


def test_a_read_cancelled_under_way_is_not_lent_again(engine: Engine) -> None:
    reader = server_reader(engine)

    async def cancelled() -> object:
        lent: list[object] = []

        async def sleeping() -> None:
            async with reader.lent() as conn:
                lent.append(conn)
                await conn.run_sync(lambda c: c.execute(text("SELECT pg_sleep(30)")))

        task = asyncio.create_task(sleeping())
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return lent[0]

    busy = asyncio.run(asyncio.wait_for(cancelled(), 10))
    assert busy.closed  # its statement was under way: closed, not given back

    async def next_read() -> tuple:
        async with reader.lent() as conn:
            return conn, await conn.run_sync(newest)

    conn, found = asyncio.run(next_read())
    assert conn is not busy and found == 1

    async def both_at_once() -> tuple:
        async with reader.lent() as first, reader.lent() as second:
            return first, second

    assert None not in asyncio.run(both_at_once())  # the cancelled read's lending was counted back


def test_a_connection_the_server_ended_fails_once_or_is_replaced_when_pinged(
    engine: Engine, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert asyncio.run(_read(engine, newest)) == 1

    def end_every_connection() -> None:
        pids = _backends(postgres_url)
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            for pid in pids:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

    end_every_connection()
    with pytest.raises(psycopg.OperationalError):  # in steady use (not idle long enough to be pinged): it fails ...
        asyncio.run(_read(engine, newest))
    assert asyncio.run(_read(engine, newest)) == 1  # ... and the next one is on a new connection
    end_every_connection()
    monkeypatch.setattr(engines, "IDLE_BEFORE_PING_SECONDS", 0.0)  # each lent connection counts as idle long
    assert asyncio.run(_read(engine, newest)) == 1  # pinged, found ended, replaced before the read


def test_disposing_the_engines_closes_its_connections(engine: Engine, postgres_url: str) -> None:
    reader = server_reader(engine)  # held here: its connections are closed, not left to the garbage collector

    async def both() -> None:
        async with reader.lent() as first, reader.lent() as second:
            await first.run_sync(newest)
            await second.run_sync(newest)

    asyncio.run(both())
    engine.dispose()  # the pool's own
    assert len(_backends(postgres_url)) == 2  # the reader's two, kept
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engines.dispose_engines()
        gc.collect()
    assert [w.message for w in caught if issubclass(w.category, SAWarning)] == []  # closed, not dropped
    for _ in range(50):  # the server notices a closed connection within moments
        if not _backends(postgres_url):
            break
        asyncio.run(asyncio.sleep(0.1))
    assert _backends(postgres_url) == []


def test_no_server_reader_for_sqlite(tmp_path) -> None:
    engine = build_engine(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        assert server_reader(engine) is None
    finally:
        engines.dispose_engines()
        engine.dispose()
