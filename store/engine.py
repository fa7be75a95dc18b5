"""Engines for the two supported databases.

SQLite (the embedded default) gets foreign keys, WAL and a busy timeout, and explicit
BEGIN statements so a stage can take the write lock up front (`BEGIN IMMEDIATE`) instead
of failing half-way when another writer holds it. Postgres uses psycopg 3; service
connections `SET ROLE` to the append-only service role (see sql/postgres/0003).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, SQLAlchemyError
from sqlalchemy.pool import NullPool, StaticPool

from market.settings import Settings
from store.shared_reads import SHARED_READS, SharedReads

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine


def normalise_url(url: str) -> str:
    """Pick the psycopg 3 driver for plain postgresql:// URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def build_engine(url: str, *, service_role: str | None = None, pool: PoolSize | None = None) -> Engine:
    """`pool`: the QueuePool's size, overflow and checkout timeout (settings.db_pool_*);
    SQLAlchemy's defaults (5, 10, 30 s) when not given."""
    url = normalise_url(url)
    sizing = {"pool_size": pool.size, "max_overflow": pool.overflow, "pool_timeout": pool.timeout} if pool else {}
    if make_url(url).get_backend_name() == "sqlite":
        return _sqlite_engine(url, sizing=sizing)
    engine = create_engine(url, **sizing)
    _ping_when_idle(engine)
    if service_role:
        _set_role_on_connect(engine, service_role)
    _SERVICE_ROLES[engine] = service_role
    return engine


_SERVICE_ROLES: weakref.WeakKeyDictionary[Engine, str | None] = weakref.WeakKeyDictionary()

SQLITE_BUSY_TIMEOUT_SECONDS = 30.0  # how long a SQLite connection waits for another writer's lock


def _sqlite_engine(url: str, *, preview: bool = False, single: bool = False, sizing: dict | None = None) -> Engine:
    """`single`: one connection, used from any thread in turn (StaticPool), as a preview's.
    Its file, and the folders above it, are made by `marketintel db upgrade` only (store/
    migrations.py `upgrade`); SQLite itself makes a missing file on the first connection,
    which `require_store` refuses first."""
    if preview or single:
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
            poolclass=StaticPool,
            pool_reset_on_return=None,
        )
    else:
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS}, **(sizing or {}))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # noqa: ANN001
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_SECONDS * 1000)}")
        cursor.close()

    if not preview:  # a preview engine's transactions are savepoints (preview_engine)

        @event.listens_for(engine, "begin")
        def _on_begin(connection) -> None:  # noqa: ANN001
            # On the driver's connection: through exec_driver_sql the BEGIN went through
            # SQLAlchemy's whole execution path: 8% of a cached API read's profile.
            # sqlite_begin=None: no BEGIN at all, each statement reads in its own snapshot (an
            # API request's reads, as on Postgres in autocommit: api/services.py LazyConnection).
            # Outside SQLAlchemy's execution path the driver's error (`database is locked`)
            # is wrapped here, as SQLAlchemy wraps it (OperationalError), for every caller.
            mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
            if mode is not None:
                try:
                    connection.connection.driver_connection.execute(f"BEGIN {mode}")
                except sqlite3.Error as failure:
                    raise DBAPIError.instance(f"BEGIN {mode}", (), failure, sqlite3.Error) from failure

    return engine


def sqlite_file(engine: Engine) -> Path | None:
    """The file a SQLite engine's store is; None for a database server or an in-memory one."""
    database = engine.url.database
    if engine.url.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database)


IDLE_BEFORE_PING_SECONDS = 5.0


def _ping_when_idle(engine: Engine) -> None:
    """SQLAlchemy's pessimistic disconnect handling, for connections that sat in the pool:
    a connection checked out after more than IDLE_BEFORE_PING_SECONDS unused is pinged
    first, and one that does not answer is replaced (the pool retries the checkout with a
    fresh one). The pool's own `pool_pre_ping` pings on every checkout: one more round trip
    per API request (under load a connection is back in use within milliseconds); without
    it the cached reads on Postgres served 10-40% more requests a second in one paired run.
    The cost: if the server restarts while connections are in steady use, the statements
    already under way fail (once; SQLAlchemy then invalidates the pool and the next
    checkouts connect anew)."""

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection, record) -> None:  # noqa: ANN001
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, _proxy) -> None:  # noqa: ANN001
        returned, idle_seconds = record.info.get("returned_at"), IDLE_BEFORE_PING_SECONDS
        if returned is not None and time.monotonic() - returned > idle_seconds:
            try:
                engine.dialect.do_ping(dbapi_connection)
            except Exception as failure:  # the driver's own error types: any failure means a dead connection
                raise DisconnectionError(f"a pooled connection idle for {idle_seconds:g} s did not answer") from failure


def _set_role_on_connect(engine: Engine, role: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # noqa: ANN001
        with dbapi_connection.cursor() as cursor:
            cursor.execute(f'SET ROLE "{role}"')
        dbapi_connection.commit()


@dataclass(frozen=True)
class PoolSize:
    size: int
    overflow: int
    timeout: float


_ENGINES: dict[tuple[str, str | None, PoolSize | None], Engine] = {}


def service_engine(settings: Settings) -> Engine:
    """The engine every stage, notebook and API request uses (one pool per process, sized
    by settings.db_pool_size, db_max_overflow and db_pool_timeout)."""
    return _cached_engine(
        settings.database_url,
        settings.postgres_service_role or None,
        PoolSize(settings.db_pool_size, settings.db_max_overflow, settings.db_pool_timeout),
    )


@contextmanager
def preview_engine(settings: Settings) -> Iterator[Engine]:
    """An engine like `service_engine` on which nothing is ever stored: a stage run on it
    reads and writes as usual (its later reads see its own writes), and everything is
    rolled back when the block ends, whether it ends well or not.

    One database connection holds one outer transaction; every transaction the code opens
    (`engine.begin()`, `write_transaction`, the runner's `stage_runs` records) becomes a
    savepoint inside it: its commit releases the savepoint, its rollback rolls back to it.
    The limit: on SQLite the outer transaction holds the write lock from the first write
    to the end of the block, so a writer elsewhere waits (up to the 30 s busy timeout) while
    a preview runs."""
    url = normalise_url(settings.database_url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = _sqlite_engine(url, preview=True)
    else:
        engine = create_engine(url, poolclass=StaticPool, pool_reset_on_return=None)
        if settings.postgres_service_role:
            _set_role_on_connect(engine, settings.postgres_service_role)
    names: list[str] = []
    numbers = count(1)
    dialect = engine.dialect

    def savepoint(dbapi_connection, sql: str) -> None:  # noqa: ANN001
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(sql)
        finally:
            cursor.close()

    def do_begin(dbapi_connection) -> None:  # noqa: ANN001
        names.append(f"preview_{next(numbers)}")
        savepoint(dbapi_connection, f"SAVEPOINT {names[-1]}")

    def do_commit(dbapi_connection) -> None:  # noqa: ANN001
        if names:
            savepoint(dbapi_connection, f"RELEASE SAVEPOINT {names.pop()}")

    def do_rollback(dbapi_connection) -> None:  # noqa: ANN001
        if names:
            name = names.pop()
            savepoint(dbapi_connection, f"ROLLBACK TO SAVEPOINT {name}")
            savepoint(dbapi_connection, f"RELEASE SAVEPOINT {name}")

    dialect.do_begin, dialect.do_commit, dialect.do_rollback = do_begin, do_commit, do_rollback
    outer = engine.raw_connection()
    try:
        if dialect.name == "sqlite":
            savepoint(outer.driver_connection, "BEGIN")
        yield engine
    finally:
        outer.driver_connection.rollback()
        outer.close()
        engine.dispose()


def migration_engine(settings: Settings) -> Engine:
    """The owner connection, for `marketintel db upgrade` only."""
    return _cached_engine(settings.migration_database_url or settings.database_url, None)


def _cached_engine(url: str, service_role: str | None, pool: PoolSize | None = None) -> Engine:
    key = (url, service_role, pool)
    if key not in _ENGINES:
        _ENGINES[key] = build_engine(url, service_role=service_role, pool=pool)
    return _ENGINES[key]


def dispose_engines() -> None:
    """Close every pooled connection and every event-loop reader (tests, and forked workers
    before first use)."""
    while _READERS:
        reader = _READERS.popitem()[1]
        if reader is not None:
            reader.close()
    while _SERVER_READERS:
        server_reader = _SERVER_READERS.popitem()[1]
        if server_reader is not None:
            server_reader.close()
    while _ENGINES:
        _ENGINES.popitem()[1].dispose()


class EventLoopReader:
    """A SQLite file's one connection of its own for the short reads an API request makes on
    its event loop (api/services.py `Services.version_read`: a kept answer's version read,
    with the key check riding on it). A pooled connection's checkout and return cost as
    much as that read (about half of its 30% of a kept GraphQL answer's CPU, py-spy), and
    the read is one statement on a local file that waits for nothing, so one connection
    serves every such read of the process in turn, synchronously, never across an await.

    It reads as a request's connection does (`sqlite_begin=None`: no BEGIN, each statement
    in its own snapshot, so it sees every commit made before the statement, by any process)
    and holds no statement open after a read. It is lent to one reader at a time: `lent`
    yields None while another thread's event loop holds it (the caller takes the pool's
    way). A driver error drops the connection; the next read connects afresh."""

    def __init__(self, url: str) -> None:
        self.engine = _sqlite_engine(url, single=True)  # its own: one connection, never the pool's
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    @contextmanager
    def lent(self) -> Iterator[Connection | None]:
        if not self._lock.acquire(blocking=False):
            yield None
            return
        try:
            if self._conn is None:
                self._conn = self.engine.connect().execution_options(sqlite_begin=None)
            yield self._conn
        except DBAPIError:
            self._drop()
            raise
        finally:
            if self._conn is not None and self._conn.in_transaction():
                self._conn.rollback()  # a SQLAlchemy execute's logical transaction (no BEGIN was sent)
            self._lock.release()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.invalidate()
            conn.close()

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()
            self.engine.dispose()


_READERS: dict[Engine, EventLoopReader | None] = {}
_READERS_LOCK = threading.Lock()


def event_loop_reader(engine: Engine) -> EventLoopReader | None:
    """The `EventLoopReader` of `engine`'s database when it is a SQLite file (None for an
    in-memory database or a server's, whose reads go through the pool as ever)."""
    try:
        return _READERS[engine]
    except KeyError:
        pass
    url = engine.url
    database = url.database
    on_file = url.get_backend_name() == "sqlite" and database and database != ":memory:"
    with _READERS_LOCK:
        if engine not in _READERS:
            _READERS[engine] = (
                EventLoopReader(url.render_as_string(hide_password=False))
                if on_file and "mode=memory" not in str(url)
                else None
            )
        return _READERS[engine]


def dialect_of(engine: Engine) -> str:
    """'sqlite' or 'postgresql': the folder name under sql/."""
    return engine.dialect.name


class ServerReader:
    """A database server's connections for the short reads an API request makes on its
    event loop (api/services.py `Services.version_read`: a kept answer's version read, with
    the key check riding on it), the server's counterpart of `EventLoopReader`.

    A request's read is awaited on the loop: psycopg's asyncio driver under SQLAlchemy's
    asyncio extension, whose `AsyncConnection.run_sync` runs the desk's reads, written for
    a `Connection`, unchanged (in a greenlet; each statement's round trip is awaited, so the
    loop serves other requests meanwhile). Carried to a worker thread instead, with a
    pooled connection checked out and given back, the same read cost the server's
    interpreter about as much again as the rest of a kept answer: a kept
    /api/market/latest took 1.17 ms of the server's CPU a request against 0.68 ms here, the
    bare ceiling 0.57 ms (the thread hop, the wake-ups of two threads around one
    interpreter, the pool's checkout and reset; docs/performance.md, "How the read path is
    kept fast").

    Up to `size` connections (the pool's size: at most that many requests hold a slot at
    once, api/services.py `Services.connection`), opened on first need, kept, and lent to
    one read at a time; `lent` yields None when all are out (the caller takes the pool's
    way). Each reads as a request's connection does (autocommit: every statement in its
    own snapshot, so it sees every commit made before it), under the service role. One
    kept idle for more than IDLE_BEFORE_PING_SECONDS is pinged before it is lent, as the
    pool's are (`_ping_when_idle`), and replaced if it does not answer; one that is not
    idle when its read ends (a driver error, an await cancelled with its statement under
    way) is closed, never lent again. A connection is not bound to a loop: it is lent to
    one read at a time, and psycopg waits on whichever loop is running, so a test serving
    one app from several loops in turn shares it. Identical version reads awaited at once
    share one statement, each answered by one sent after it began (`shared`:
    store/shared_reads.py)."""

    def __init__(self, url: str, service_role: str | None, size: int) -> None:
        from psycopg.pq import TransactionStatus  # only a server's API process needs these
        from sqlalchemy.ext.asyncio import create_async_engine

        self.engine: AsyncEngine = create_async_engine(url, poolclass=NullPool)
        self._idle_status = TransactionStatus.IDLE
        if service_role:
            _set_role_on_connect(self.engine.sync_engine, service_role)
        self.size = size
        self.shared = SharedReads()  # identical version reads at once share a statement (store/shared_reads.py)
        self._free: list[tuple[AsyncConnection, float]] = []  # with when each was given back
        self._out = 0
        self._closes = 0  # how many times `close` was called: a connection lent before is not kept
        self._lock = threading.Lock()  # the loops of several threads may share a reader

    @asynccontextmanager
    async def lent(self) -> AsyncIterator[AsyncConnection | None]:
        with self._lock:
            if self._out >= self.size:
                kept = None
            else:
                self._out += 1
                kept = self._free.pop() if self._free else (None, 0.0)
            closes = self._closes
        if kept is None:
            yield None
            return
        conn: AsyncConnection | None = None
        try:
            conn = await self._ready(*kept)
            yield conn
        finally:
            await self._given_back(conn, closes)

    async def _ready(self, conn: AsyncConnection | None, returned_at: float) -> AsyncConnection:
        """`conn`, pinged first when it sat idle, or a new connection in its place."""
        if conn is not None and time.monotonic() - returned_at > IDLE_BEFORE_PING_SECONDS:
            try:
                await conn.run_sync(_ping)
            except Exception:  # noqa: BLE001 - the driver's own error types: any failure means a dead connection
                await _closed(conn)
                conn = None
        if conn is None:
            conn = await self.engine.connect()
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            conn.sync_connection.info[SHARED_READS] = self.shared
        return conn

    async def _given_back(self, conn: AsyncConnection | None, closes: int) -> None:
        """Kept for the next read when idle and not lent before a `close`, else closed; counted
        back in whatever happens (a cancellation included), so no lending is ever lost."""
        keep = conn is not None and self._idle(conn)
        try:
            if keep and conn.in_transaction():
                await conn.rollback()  # a SQLAlchemy execute's logical transaction (autocommit sent no BEGIN)
        except BaseException:
            keep = False
            raise
        finally:
            with self._lock:
                self._out -= 1
                keep = keep and closes == self._closes
                if keep:
                    self._free.append((conn, time.monotonic()))
            if not keep and conn is not None:
                await asyncio.shield(_closed(conn))

    def _idle(self, conn: AsyncConnection) -> bool:
        """Whether the driver's connection is open with nothing under way: no statement sent
        and unanswered, no transaction open on the server."""
        try:
            driver = conn.sync_connection.connection.driver_connection
        except SQLAlchemyError:  # invalidated by SQLAlchemy (a driver error, a cancelled statement)
            return False
        return not driver.closed and driver.pgconn.transaction_status == self._idle_status

    def close(self) -> None:
        """Close the kept connections (from any thread, a running loop's included); one lent
        now is closed when it is given back. A later read connects afresh."""
        with self._lock:
            self._closes += 1
            kept, self._free = self._free, []
        if kept:
            closing = threading.Thread(target=asyncio.run, args=(_all_closed([conn for conn, _ in kept]),))
            closing.start()
            closing.join()


def _ping(conn: Connection) -> None:
    conn.dialect.do_ping(conn.connection.dbapi_connection)


async def _closed(conn: AsyncConnection) -> None:
    try:
        await conn.invalidate()
        await conn.close()
    except Exception:  # noqa: BLE001 - a connection being dropped: nothing of it is used again
        pass


async def _all_closed(conns: list[AsyncConnection]) -> None:
    for conn in conns:
        await _closed(conn)


_SERVER_READERS: dict[Engine, ServerReader | None] = {}


def server_reader(engine: Engine) -> ServerReader | None:
    """The `ServerReader` of `engine`'s database when it is a Postgres server (None for
    SQLite, whose reads on the loop are `EventLoopReader`'s), sized as `engine`'s pool and
    under its service role."""
    try:
        return _SERVER_READERS[engine]
    except KeyError:
        pass
    with _READERS_LOCK:
        if engine not in _SERVER_READERS:
            size = engine.pool.size() if hasattr(engine.pool, "size") else 1
            _SERVER_READERS[engine] = (
                ServerReader(engine.url.render_as_string(hide_password=False), _SERVICE_ROLES.get(engine), size)
                if engine.dialect.name == "postgresql"
                else None
            )
        return _SERVER_READERS[engine]
