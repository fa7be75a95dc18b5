"""Identical version reads on a database server's event-loop readers share one statement
(store/shared_reads.py, through store/history.py `newest_ids` on store/engine.py
`ServerReader`). What they must never do: answer a read from a statement sent before it
began (a commit made before a request asked would be missed), leave a read waiting when
the read that leads it fails or is cancelled, or share between different statements.

The reads are of a view that sleeps, so a statement is under way long enough for others to
come and a commit to land while it is."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, Table, text

from store.engine import PoolSize, server_reader
from store.history import newest_ids
from tests.store.readers import rows_engine

pytestmark = pytest.mark.postgres

SLEEP = 0.3  # seconds a read of the view takes
# a read of this one takes long enough for a commit and a cancellation to land while it is
# under way on a loaded machine (a 2-core CI runner shared with the suite's other worker;
# at 2 s a clean-clone run saw the commit land after the statement had answered)
SLOWER = 4.0
slow_rows = Table("slow_rows", MetaData(), Column("id", Integer), Column("mark", Integer))
slower_rows = Table("slower_rows", MetaData(), Column("id", Integer), Column("mark", Integer))


@pytest.fixture
def engine(postgres_url: str) -> Iterator[Engine]:
    with rows_engine(postgres_url, PoolSize(8, 0, 5)) as engine:
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE rows ADD COLUMN mark INTEGER DEFAULT 0"))
            conn.execute(text(f"CREATE VIEW slow_rows AS SELECT r.id, r.mark FROM rows r, pg_sleep({SLEEP}) s"))
            conn.execute(text(f"CREATE VIEW slower_rows AS SELECT r.id, r.mark FROM rows r, pg_sleep({SLOWER}) s"))
        yield engine


async def _newest(engine: Engine, *parts) -> tuple:
    async with server_reader(engine).lent() as conn:
        assert conn is not None
        return await conn.run_sync(newest_ids, *parts)


def _insert(engine: Engine, n: int, mark: int = 0) -> None:
    with engine.begin() as writer:
        writer.execute(text("INSERT INTO rows (id, mark) VALUES (:n, :mark)"), {"n": n, "mark": mark})


def test_reads_that_come_while_one_is_under_way_share_the_next_and_see_what_it_missed(engine: Engine) -> None:
    shared = server_reader(engine).shared
    sent, answered = shared.sent, shared.shared

    async def scenario() -> tuple:
        first = asyncio.create_task(_newest(engine, slow_rows))
        await asyncio.sleep(SLEEP / 3)  # its statement is under way, its snapshot taken
        await asyncio.to_thread(_insert, engine, 2)  # committed before the next reads begin
        later = [asyncio.create_task(_newest(engine, slow_rows)) for _ in range(5)]
        return await first, await asyncio.gather(*later)

    first, later = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert first == (1,)  # sent before the commit
    assert later == [(2,)] * 5  # never the first's answer: each from a statement sent after it began
    assert shared.sent - sent == 2  # the first's, and one for the five who came while it was under way
    assert shared.shared - answered == 4


def test_a_lone_read_and_reads_of_other_statements_each_send_their_own(engine: Engine) -> None:
    shared = server_reader(engine).shared
    _insert(engine, 2, mark=7)
    sent = shared.sent

    async def scenario() -> list:
        reads = [_newest(engine, (slow_rows, "mark", mark)) for mark in (0, 7, 9)]
        return await asyncio.gather(*reads)

    assert asyncio.run(asyncio.wait_for(scenario(), 10)) == [(1,), (2,), (None,)]
    assert shared.sent - sent == 3  # other parameters, other statements: none shared


def test_when_the_lead_is_cancelled_the_next_one_waiting_leads(engine: Engine) -> None:
    """The lead of the boarders' statement is cancelled while it is under way, after a commit
    landed. Either the cancellation stops the statement, and the next boarder leads and sends
    it again, which sees the commit; or the driver lets the statement finish (psycopg may
    answer a statement it was asked to cancel), and its values go to the boarders: they were
    sent after every boarder began, which is all a read is promised. Which one happened is
    read from the statements sent, and the answers must be that one's; every wait ends, and
    a lone read afterwards leads at once."""
    shared = server_reader(engine).shared

    async def scenario() -> tuple[list, int]:
        first = asyncio.create_task(_newest(engine, slower_rows))
        await asyncio.sleep(SLEEP)
        boarders = [asyncio.create_task(_newest(engine, slower_rows)) for _ in range(4)]
        await first
        await asyncio.sleep(SLEEP)  # the first boarder leads the next statement, under way now
        sent = shared.sent
        await asyncio.to_thread(_insert, engine, 3)  # after the statement's snapshot: it would answer 1
        boarders[0].cancel()  # while that statement is under way (SLOWER leaves the room)
        results = await asyncio.gather(*boarders, return_exceptions=True)
        resent = shared.sent - sent
        late = await _newest(engine, slower_rows)  # nothing left waiting: a lone read leads at once
        return [*results, late], resent

    (cancelled, *answers, late), resent = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert isinstance(cancelled, asyncio.CancelledError)
    assert resent in (0, 1)
    # sent again after the lead left: it sees the commit; else the lead's own statement's answer
    assert answers == [(3,) if resent else (1,)] * 3
    assert late == (3,)
    assert shared._by_loop == {} or all(not lines for lines in shared._by_loop.values())
