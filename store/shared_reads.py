"""One statement for the identical version reads that wait on it together (a database
server's event-loop readers: store/engine.py `ServerReader`).

On Postgres every kept API answer reads its data version (the newest ids of what it
reads, and its key's) in one statement awaited on the event loop: a round trip to a
server that may share the machine. Sixteen clients asking for the same screen send the
same statement sixteen times, each costing the server's backend and the API process's
driver more than the rest of the kept answer (docs/performance.md).

`SharedReads` lets them share it without giving up what each read promises: **a read's
answer comes from a statement sent after the read began**, so it sees every commit made
before the request asked (the per-request freshness of docs/api.md). A read that finds no
such statement under way sends its own at once (the lead). One that finds one under way
(sent before it began: its answer may predate a commit the read must see) does not take
that answer: it boards the next statement, which the first boarder sends, for all who
boarded, as soon as the one under way has answered. So at most one identical statement
is under way per event loop at a time and each read waits at most for the one under way
and its own; a lone read waits for nothing. Reads are identical when their SQL and
parameters are (`key`).

A lead that fails or is cancelled hands the lead to the next boarder still waiting, who
sends the statement again (a cancelled boarder is skipped); every boarder's wait ends,
with the values or the lead. A cancellation the driver lets the statement finish through
(psycopg may answer a statement it was asked to cancel) lands its values before the lead
raises: they come from a statement sent after every boarder began, as promised. Only
reads awaited on one event loop share: the state is kept per loop and touched on the
loop's thread alone.

The anchor is group commit, applied to reads: the database does the work once for
everyone who asked while it was busy, and nobody is answered from before they asked.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable
from typing import Any

SHARED_READS = "shared_reads"  # where a reader's connection carries its SharedReads (Connection.info)
LEAD = object()  # a boarder's turn to send the statement for everyone on board


class _Line:
    """One statement's reads on one loop: the boarders of the statement under way
    (`flying`, None when none is) and those who came while it was (`boarding`)."""

    __slots__ = ("flying", "boarding")

    def __init__(self) -> None:
        self.flying: list[asyncio.Future] | None = None
        self.boarding: list[asyncio.Future] = []


class SharedReads:
    """The identical reads of each event loop, sharing one statement each (module docstring)."""

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, _Line]] = (
            weakref.WeakKeyDictionary()
        )
        self.sent = 0  # statements sent through `read` (tests and benchmarks read them)
        self.shared = 0  # reads answered by another's statement

    def read(self, key: Hashable, send: Callable[[], Any], wait: Callable[[Any], Any]) -> Any:
        """The values of the statement `key` names, from a statement sent after this call
        began: `send()` sends it (in the caller's greenlet, on its own connection) when
        this read leads, else the values of the one it boarded. `wait(awaitable)` waits on
        the loop from the caller's greenlet (SQLAlchemy's `await_only`)."""
        loop = asyncio.get_running_loop()
        lines = self._by_loop.get(loop)
        if lines is None:
            lines = self._by_loop.setdefault(loop, {})
        line = lines.get(key)
        if line is None:
            line = lines[key] = _Line()
        if line.flying is None:
            line.flying = []
            return self._lead(lines, key, line, send)
        mine = loop.create_future()
        line.boarding.append(mine)
        try:
            got = wait(mine)
        except BaseException:
            if mine.done() and not mine.cancelled() and mine.result() is LEAD:
                self._landed(lines, key, line, None)  # the lead came with the cancellation: hand it on
            raise
        if got is LEAD:
            return self._lead(lines, key, line, send)
        self.shared += 1
        return got

    def _lead(self, lines: dict[Hashable, _Line], key: Hashable, line: _Line, send: Callable[[], Any]) -> Any:
        self.sent += 1
        try:
            values = send()
        except BaseException:
            self._landed(lines, key, line, None)
            raise
        self._landed(lines, key, line, values)
        return values

    @staticmethod
    def _landed(lines: dict[Hashable, _Line], key: Hashable, line: _Line, values: Any) -> None:
        """The statement under way answered `values` (None: it failed, or its lead left):
        its boarders have them, or the next of them leads it again; then those who boarded
        meanwhile go, the first of them leading."""
        flying = line.flying or []
        if values is not None:
            for waiting in flying:
                if not waiting.done():
                    waiting.set_result(values)
        elif _hand_lead(flying):
            return
        line.flying = None
        if line.boarding:
            going, line.boarding = line.boarding, []
            if _hand_lead(going):
                line.flying = going
                return
        if line.flying is None and not line.boarding:
            lines.pop(key, None)


def _hand_lead(boarders: list[asyncio.Future]) -> bool:
    """The lead to the first boarder still waiting (taken off the list); False when none is."""
    while boarders:
        first = boarders.pop(0)
        if not first.done():
            first.set_result(LEAD)
            return True
    return False
