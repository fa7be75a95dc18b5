"""Write transactions for stages: one transaction per stage and trading date, holding an
exclusive lock so two runs of the same stage cannot interleave their writes.

A client's write answers from inside its transaction (`answered`): the transport's
`respond` renders the result before the commit, so an answer that cannot be rendered rolls
the write back and an error always means nothing was written (docs/api.md, "A write's
answer")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, text

from store.history import settle

T = TypeVar("T")
# What every writer of the closes and corporate actions (T0's day, `marketintel import`)
# holds from before its first append to its commit, so their ids commit in the order they
# were taken: the kept reads name those tables' newest ids (store.history.newest_ids).
MARKET_FILES = "market-files"
Respond = Callable[[Any], Any] | None  # a transport's rendering of a write's result, run before the commit


def answered(result: T, respond: Respond) -> Any:
    """What a write answers: `result`, or `respond(result)` (the transport's rendered
    answer). Called inside the write's transaction, before the commit: if rendering fails
    the write is rolled back."""
    return result if respond is None else respond(result)


@contextmanager
def write_transaction(engine: Engine, lock_name: str, *more: str) -> Iterator[Connection]:
    """Commit everything written inside, or nothing.

    Postgres: a transaction-scoped advisory lock on `lock_name` (other stages go on), then
    on each of `more`, in that order (T0's day: the market files' lock, then its day's).
    SQLite: BEGIN IMMEDIATE, the database's single write lock, taken up front so the
    transaction never fails half-way on a busy database.
    """
    with engine.connect() as conn, write_on(conn, lock_name):
        for name in more:
            hold_lock(conn, name)
        yield conn


@contextmanager
def write_on(conn: Connection, lock_name: str) -> Iterator[Connection]:
    """`write_transaction` on a connection already held (an API request's one connection):
    the read transaction it may be in ends first, then the same locked transaction runs;
    a Postgres connection that read in autocommit reads so again after it (api/services.py)."""
    reading = conn.get_execution_options().get("isolation_level")
    transactional(conn)
    sqlite = conn.dialect.name == "sqlite"
    if sqlite:
        before = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.execution_options(sqlite_begin="IMMEDIATE")
    try:
        with conn.begin():
            hold_lock(conn, lock_name)
            yield conn
    finally:
        if sqlite:
            conn.execution_options(sqlite_begin=before)
        if reading == "AUTOCOMMIT" and not conn.in_transaction():
            conn.execution_options(isolation_level="AUTOCOMMIT")


@contextmanager
def snapshot_read(engine: Engine) -> Iterator[Connection]:
    """A read transaction that sees one state of the store from its first statement to its
    end, whatever commits meanwhile (a report read while T1 books its day is all of the day
    before or all of it after, never half of each). Postgres: REPEATABLE READ (READ
    COMMITTED, the default, sees each commit at the next statement); the level is reset
    when the connection goes back to its pool. SQLite: a deferred transaction, whose first
    read fixes the WAL snapshot it reads."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


def hold_lock(conn: Connection, lock_name: str) -> None:
    """Take `lock_name`'s lock in the transaction `conn` is in, held until it ends: the
    lock `write_transaction` takes, for a transaction that must also hold another writer's
    (T0's day checking the books of the portfolios its splits touch). Postgres: the
    transaction-scoped advisory lock on `lock_name`, waited for while another transaction
    holds it. SQLite: nothing to take, the transaction already holds the database's one
    write lock (BEGIN IMMEDIATE)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": lock_name})


def transactional(conn: Connection) -> Connection:
    """Make a held connection ready to begin a real transaction: end the read transaction it
    may be in, and take a Postgres connection that reads in autocommit (an API request's:
    api/services.py) back to the default isolation level, so BEGIN ... COMMIT is atomic.
    A check still riding on the connection (store.history.Rider) is read first: nothing is
    written on an assumption that no longer holds."""
    settle(conn)
    if conn.in_transaction():
        conn.commit()
    if conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
        conn.execution_options(isolation_level=conn.default_isolation_level)
    return conn
