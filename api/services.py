"""What a request handler needs, built once per app: settings, the service engine, the
trading calendar, the clock (tests pin it), the rate limiter's store, a small cache of
rendered bodies keyed by the store's data version, and the limit on heavy work.

The cache is how read models that change only when data is appended are built once per
change rather than per request: an entry is `(key, version) -> value`, where the version
is read from the database on every request (`store.history.newest_ids`: the newest ids of
the append-only rows the value depends on). So every API process (`serve --workers N`)
keeps its own copy, and each sees a write from any process or stage on its next request:
the version it reads has moved, the entry is rebuilt once and replaces the old one.
Portfolio valuations are cached this way (`valuation`), keyed by the newest price, the
portfolio's newest trade and cash entry and the valuation day."""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import signal
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from datetime import time as dt_time
from typing import TYPE_CHECKING, Any

from anyio import CapacityLimiter, to_thread
from fastapi import Request
from fastapi.responses import Response
from pydantic import TypeAdapter
from sqlalchemy import Connection, Engine

from api.keystore import KeyCache
from api.ratelimit import CounterStore, counter_store
from desk import Desk
from market.clock import TradingCalendar, default_calendar, utc_now
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import Rider, newest_ids

if TYPE_CHECKING:
    from views.valuation import PortfolioValuation

REPLAY_MORNING = dt_time(7, 30)  # a replay's clock starts here on the session after its newest priced day
CACHE_ENTRIES = 4096  # entries kept per process; the oldest key goes first past it ...
CACHE_BYTES = 64 * 1024 * 1024  # ... or past this many bytes of rendered bodies (a 2,000-bar history is ~600 KB)
PER_OWNER_HEAVY = 1  # expensive reads one client may have running at once (Services.owned)
_ADAPTERS: dict[Any, TypeAdapter] = {}
_APART: dict[int, ProcessPoolExecutor] = {}  # worker processes by their number, shared by this process's apps
_APART_LOCK = threading.Lock()


def json_body(model: Any, body: Any) -> bytes:
    """`body` validated as `model` and rendered as JSON, as FastAPI's response_model would.
    A schema reads a typed result's attributes as it reads a dict's keys (`from_attributes`):
    a portfolio valuation (views/valuation.py `PortfolioValuation`) is rendered as itself,
    without a second, JSON form of it to keep in step."""
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(model)
    return adapter.dump_json(adapter.validate_python(body, from_attributes=True))


def written(model: Any, status_code: int = 200, shown: Callable[[Any], Any] = lambda result: result) -> Callable:
    """A REST write's `respond` (store.transactions `answered`): the write's result, as
    `shown(result)`, rendered as `model`'s JSON body into the response, inside the write's
    transaction. A body that cannot be rendered raises before the commit, so the write is
    rolled back and the error (500) means nothing was written; once committed, all that is
    left is to send these bytes (docs/api.md, "A write's answer")."""

    def respond(result: Any) -> Response:
        return Response(json_body(model, shown(result)), status_code=status_code, media_type="application/json")

    return respond


class LazyConnection:
    """A request's connection, checked out of the pool on first use (in the worker thread
    that first reads) and given back by `release`. Everything else is the SQLAlchemy
    Connection's own: attribute access is passed through.

    It reads statement by statement, each in its own snapshot: on Postgres in autocommit
    (at the default READ COMMITTED every statement sees its own snapshot in a transaction
    too, so this changes no answer and saves the BEGIN and ROLLBACK round trips), on SQLite
    without a BEGIN (`sqlite_begin=None`, store/engine.py), the same semantics, which saves
    a BEGIN and a ROLLBACK per request (their share of a cached read's profile was 12%).
    The cached reads need no more: a version is read before the body it keys, and the
    append-only rows only grow, so a body is never older than its version. A write on it
    (store.transactions.write_on) takes a real transaction first: the default isolation
    level on Postgres, BEGIN IMMEDIATE on SQLite."""

    __slots__ = ("_engine", "_conn", "rider")

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn: Connection | None = None
        self.rider: Rider | None = None  # a check riding on the next version read (store.history.Rider)

    def __getattr__(self, name: str) -> Any:
        conn = self._conn
        if conn is None:
            conn = self._engine.connect()
            if conn.dialect.name == "postgresql":
                conn.execution_options(isolation_level="AUTOCOMMIT")
            elif conn.dialect.name == "sqlite":
                conn.execution_options(sqlite_begin=None)
            self._conn = conn
        return getattr(conn, name)

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


class Slots:
    """At most `size` holders at once: an asyncio.Semaphore per event loop (a uvicorn worker
    has one; a test may serve one app from several loops in turn, and a semaphore that had
    to wait belongs to its loop). Not anyio's CapacityLimiter: it looked up the current task
    and entered a cancel scope on every acquire and release, 5% of a cached read's CPU; an
    uncontended semaphore is a counter. The app is served on asyncio (uvicorn)."""

    __slots__ = ("size", "_by_loop")

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._by_loop.get(loop)
        if semaphore is None:
            semaphore = self._by_loop.setdefault(loop, asyncio.Semaphore(self.size))
        return semaphore


class _Waiter:
    """A request queued at a `ClientGate` (`queued`): woken on its own event loop once a
    turn has been handed to it (`granted`, counted as its client's from that moment)."""

    __slots__ = ("loop", "future", "granted")

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[None] = self.loop.create_future()
        self.granted = False

    def grant(self) -> bool:
        """Hand it the turn; False when its loop has closed (nobody is left to take it)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            _wake(self.future)
        else:  # a waiter of another loop (a test serving one app from several in turn)
            try:
                self.loop.call_soon_threadsafe(_wake, self.future)
            except RuntimeError:
                return False
        self.granted = True
        return True


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # cancelled meanwhile: its task gives the turn back (`ClientGate.queued`)
        future.set_result(None)


class ClientGate:
    """At most `total` turns at once in this process, `per_client` of them for one client
    (a client's key, the house counting as one, or an address). A client's turns are
    counted while they run, its entry dropped when it holds and waits for none, so many
    clients leave nothing behind. Shared by every event loop and thread of the process (a
    lock, never awaited). Two ways past a full share:

    - `UploadGate.turn` refuses at once (uploads: a queued upload would hold its body and a
      connection to its client);
    - `queued` waits its turn on the event loop, holding no thread and no database
      connection (heavy work, `Services.run_heavy`). A freed turn goes to the client that
      has waited longest whose share is not used up (each client then goes to the back of
      the line), so one client's queue, however long, never stands in front of another
      client's request: that waits at most for one turn to end."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total, self.per_client = total, min(per_client, total)
        self._lock = threading.Lock()
        self._running: dict[str, int] = {}
        self._held = 0
        self._waiting: dict[str, deque[_Waiter]] = {}  # clients in the order they are next served

    def _free(self, client: str) -> bool:
        return self._held < self.total and self._running.get(client, 0) < self.per_client

    def _take(self, client: str) -> None:
        self._running[client] = self._running.get(client, 0) + 1
        self._held += 1

    def _drop(self, client: str) -> None:
        self._held -= 1
        left = self._running[client] - 1
        if left:
            self._running[client] = left
        else:
            del self._running[client]

    def _give(self, client: str) -> None:
        """Under the lock: `client`'s turn ended; the turns now free go to waiting clients."""
        self._drop(client)
        handed = True
        while handed and self._held < self.total:
            handed = False
            for waiting in list(self._waiting):
                if not self._free(waiting):
                    continue
                queue = self._waiting.pop(waiting)
                self._take(waiting)
                if not queue.popleft().grant():
                    self._drop(waiting)
                handed = True
                if queue:
                    self._waiting[waiting] = queue  # to the back of the line
                if self._held >= self.total:
                    break

    @asynccontextmanager
    async def queued(self, client: str) -> AsyncIterator[None]:
        """A turn for `client`, waited for on the event loop while its share or the
        process's turns are all taken (never refused)."""
        waiter = None
        with self._lock:
            if self._free(client):  # nobody waits who could take it: a freed turn is handed at once
                self._take(client)
            else:
                waiter = _Waiter()
                self._waiting.setdefault(client, deque()).append(waiter)
        if waiter is not None:
            try:
                await waiter.future
            except BaseException:  # cancelled (its client left): give back a turn handed meanwhile
                with self._lock:
                    if waiter.granted:
                        self._give(client)
                    else:
                        queue = self._waiting[client]
                        queue.remove(waiter)
                        if not queue:
                            del self._waiting[client]
                raise
        try:
            yield
        finally:
            with self._lock:
                self._give(client)


class UploadGate(ClientGate):
    """At most `total` uploads read and filed at once in this process, `per_client` of them
    for one client: an upload is refused at once past either (429 past its client's share,
    503 past the process's), with a Retry-After of the typical time an upload takes here
    (a moving average, at least 1 s), rather than queued: a queue would hold the body and a
    connection to the client for as long as others' PDFs take. Each upload runs one PDF
    sandbox (ingest/pdf_text.py, memory-capped), so this also bounds the sandboxes' memory
    and CPU."""

    def __init__(self, total: int, per_client: int) -> None:
        super().__init__(total, per_client)
        self._typical = 1.0

    @contextmanager
    def turn(self, client: str) -> Iterator[None]:
        from market.errors import BusyError, RateLimitedError

        with self._lock:
            wait = {"Retry-After": str(max(1, math.ceil(self._typical)))}
            if self._running.get(client, 0) >= self.per_client:
                raise RateLimitedError(
                    f"your client already has {self.per_client} upload(s) being read, the most it "
                    "may have at once; send the next when one has finished",
                    headers=wait,
                )
            if self._held >= self.total:
                raise BusyError(
                    f"the service is reading {self.total} uploads, the most it reads at once; retry shortly",
                    headers=wait,
                )
            self._take(client)
        started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._typical += 0.3 * (time.monotonic() - started - self._typical)
                self._give(client)


@dataclass
class Services:
    settings: Settings
    engine: Engine
    calendar: TradingCalendar
    now: Callable[[], datetime]
    limiter: CounterStore
    heavy: CapacityLimiter
    # One per connection the pool keeps (db_pool_size): requests wait here, holding nothing. Not
    # one per overflow connection too: those are closed as soon as they are given back, so
    # 16 concurrent requests on a pool of 5 + 10 opened and closed ten connections a round
    # (on SQLite with its PRAGMAs) instead of reusing them.
    slots: Slots
    uploads: UploadGate
    heavy_turns: ClientGate  # heavy_requests turns, heavy_requests_per_client of them a client's (`run_heavy`)
    _cache: dict[Any, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _cached_bytes: int = 0
    open_portfolios: set[str] = field(default_factory=set)  # portfolios known to exist (never closed)
    keys: KeyCache = field(default_factory=KeyCache)  # the client keys seen, by keys' version (api/keystore.py)
    _building: dict[Any, list] = field(default_factory=dict)  # single-flight builds: key -> [lock, users]
    _turns: dict[str, int] = field(default_factory=dict)  # expensive reads running, by owner (`owned`)
    desk: Desk = field(init=False)  # every use case, on this engine, settings, calendar and clock (desk/desk.py)

    def __post_init__(self) -> None:
        self.desk = Desk(self.engine, self.settings, self.calendar, self.now)

    def cached(
        self, key: Any, version: Any, build: Callable[[], Any], size: Callable[[Any], int | None] | None = None
    ) -> Any:
        """`build()` once per (key, version); a new version replaces the old entry. `size`:
        the bytes a value counts against the cache's bound (default: a body's length, else
        0), or None for a value not to keep."""
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        with self._building_turn(key):  # one build per key at a time: the others take its result
            with self._lock:
                hit = self._cache.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]
            return self._built(key, version, build(), size)

    @contextmanager
    def _building_turn(self, key: Any) -> Iterator[None]:
        """Builders of `key` take turns (single flight: eight concurrent reads of a changed
        track record compute it once, not eight times); the lock is dropped with its last user."""
        with self._lock:
            entry = self._building.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._building[key]

    def _built(self, key: Any, version: Any, value: Any, size: Callable[[Any], int | None] | None) -> Any:
        size = size(value) if size is not None else len(value) if isinstance(value, bytes) else 0
        if size is None:
            return value
        with self._lock:
            old = self._cache.pop(key, None)
            self._cached_bytes -= old[2] if old else 0
            while self._cache and (len(self._cache) >= CACHE_ENTRIES or self._cached_bytes + size > CACHE_BYTES):
                self._cached_bytes -= self._cache.pop(next(iter(self._cache)))[2]
            self._cache[key] = (version, value, size)
            self._cached_bytes += size
        return value

    def owned(
        self,
        owner: str,
        key: Any,
        version: Any,
        build: Callable[[], Any],
        size: Callable[[Any], int | None] | None = None,
    ) -> Any:
        """`cached`, where a miss is `owner`'s expensive read (a book's track record rebuilt
        after a write): while one of an owner's expensive reads runs, another miss of theirs
        is refused at once with 429 and a Retry-After, never queued (a queued request would
        hold one of the process's database slots and a worker thread while it waits). So a
        client writing and reading in a loop takes at most one slot's and one thread's share
        of the process; a read that finds the current version kept is answered as ever."""
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        with self._turn(owner):
            return self.cached(key, version, build, size)

    @contextmanager
    def _turn(self, owner: str) -> Iterator[None]:
        from market.errors import RateLimitedError

        with self._lock:
            if self._turns.get(owner, 0) >= PER_OWNER_HEAVY:
                raise RateLimitedError(
                    "your previous expensive read (a track record being rebuilt after a change) is still "
                    "running; retry when it has finished",
                    headers={"Retry-After": "1"},
                )
            self._turns[owner] = self._turns.get(owner, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._turns[owner] - 1
                if left:
                    self._turns[owner] = left
                else:
                    del self._turns[owner]

    def body(self, key: Any, version: Any, model: Any, build: Callable[[], Any], owner: str | None = None) -> Response:
        """The JSON response of `build()` as `model`, rendered once per (key, version); with
        `owner`, a miss is that owner's expensive read (`owned`)."""
        render = lambda: json_body(model, build())  # noqa: E731
        value = self.owned(owner, key, version, render) if owner else self.cached(key, version, render)
        return Response(value, media_type="application/json")

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A request's one connection. The wait for it is on the event loop, for a slot (as
        many as the pool has connections), before the request holds a connection or a
        worker thread; a request with a slot then finds a connection free in the pool when
        it first reads. So a request never waits for a thread while holding a connection,
        or for a connection while holding one: a pool of 2 serves 64 concurrent requests,
        in turn."""
        async with self.slots():
            conn = LazyConnection(self.engine)
            try:
                yield conn  # type: ignore[misc]
            finally:
                conn.release()

    async def run_heavy(
        self, client: str, function: Callable[..., Any], *args: Any, gone: Callable[[], Awaitable[bool]] | None = None
    ) -> Any:
        """`function(*args)` in a worker thread, at most `heavy_requests` at a time (PDF
        reports, GraphQL operations), at most `heavy_requests_per_client` of them
        `client`'s (`heavy_client`): the rest wait for a turn on the event loop without
        holding a thread or a database connection, so the event loop, /healthz and light
        requests keep their share of the CPU, and one client's many heavy requests keep
        another's waiting for one turn at most. One wait for both bounds (`ClientGate`):
        no request holds its client's share while it waits for the process's, or the
        other way round. The limiter bounds the worker threads to the same number. `gone`
        (the request's `is_disconnected`) is asked when the turn comes: a client that has
        left is not served (ClientGone), so requests abandoned in the queue cost nothing
        (40 abandoned PDFs held their client's turn for 18 s)."""
        async with self.heavy_turns.queued(client):
            if gone is not None and await gone():
                raise ClientGone(f"the client of a heavy request ({client}) left while it waited for its turn")
            return await to_thread.run_sync(function, *args, limiter=self.heavy)

    def apart(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` in a worker process, for heavy work that would otherwise hold
        this process's interpreter for its whole length: a PDF report took 80-90% of the
        server's interpreter while one client fetched reports, and every other client's
        request waited for its turn at the interpreter behind it (docs/performance.md,
        "Heavy work"). Called in a heavy turn's worker thread (`run_heavy`), which waits
        without holding the interpreter, so the turns and their limits are the same.

        The processes are this process's, at most `heavy_requests` of them, started on first
        use and kept (spawned, so each imports what its work needs once), shared by every
        app this process serves. `function` and `args` travel by pickle: a module-level
        function and plain values, and so does the result or the error. A pool whose worker
        died (killed, out of memory) is replaced for the next call; this one is 503."""
        from market.errors import BusyError

        pool = _worker_processes(self.settings.heavy_requests)
        try:
            return pool.submit(function, *args).result()
        except BrokenProcessPool:
            with _APART_LOCK:
                if _APART.get(self.settings.heavy_requests) is pool:
                    del _APART[self.settings.heavy_requests]
            pool.shutdown(wait=False)
            raise BusyError(
                "the worker process building this answer stopped before it finished; retry shortly",
                headers={"Retry-After": "1"},
            ) from None

    def valuation_day(self, conn: Connection) -> date:
        """The day portfolios are valued at: the latest priced trading day (or, on an empty
        store, the latest trading day on the exchange clock), read on the caller's connection."""
        from views.market import valuation_day

        return valuation_day(conn, self.calendar, self.now())

    def valuation_version(self, conn: Connection, portfolio_id: str, *more: Any) -> tuple:
        """What a portfolio's valuation depends on: the valuation day, the current session
        (`TradingCalendar.session_of`: after it a trade's shares are pending), the newest price id,
        the portfolio's newest trade and cash entry ids (its writers hold its lock, so its
        ids commit in order) and the newest corporate action id (a split changes its
        holdings), plus any `more` parts for `newest_ids`."""
        newest = newest_ids(
            conn,
            tables.eod_prices,
            (tables.trades, "portfolio_id", portfolio_id),
            (tables.cash_entries, "portfolio_id", portfolio_id),
            tables.corporate_actions,
            *more,
        )
        # The valuation day follows from the prices, but on a store without any it is the clock's.
        session = self.calendar.session_of(self.now())  # after it, a trade's shares are pending
        day = self.cached(("valuation-day",), (newest[0], session), lambda: self.valuation_day(conn))
        return (day, session, *newest)

    def valuation(self, conn: Connection, portfolio_id: str, version: tuple | None = None) -> PortfolioValuation:
        """`views.valuation.portfolio_view` of the portfolio, computed once per valuation
        version (`valuation_version`) in this process."""
        from views.valuation import portfolio_view

        version = version or self.valuation_version(conn, portfolio_id)
        return self.cached(
            ("valuation", portfolio_id), version[:6], lambda: portfolio_view(conn, portfolio_id, *version[:2])
        )


def _worker_processes(size: int) -> ProcessPoolExecutor:
    """This process's pool of `size` worker processes (`Services.apart`), made on first use."""
    with _APART_LOCK:
        pool = _APART.get(size)
        if pool is None:
            context = multiprocessing.get_context("spawn")  # never fork a process with threads and an event loop
            pool = _APART[size] = ProcessPoolExecutor(
                size, mp_context=context, initializer=_worker_started, initargs=(os.getpid(),)
            )
        return pool


def _worker_started(server: int) -> None:
    """A worker process leaves Ctrl-C to its server and ends once the server has: uvicorn
    ends by its signal after a graceful shutdown, so the pool's own goodbye at exit never
    runs, and a worker would be left waiting for work (checked once a second)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == server:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=watch, name="server-watch", daemon=True).start()


class ReplayClock:
    """The service's clock on a replayed market (MARKETINTEL_REPLAY_PATH): the replay's own
    time, not the wall clock, so what lives on the market's clock (suggestions open until
    their session's close, the latest closed day) reads as it would have then. It starts
    at 07:30 exchange time on the session after the store's newest priced day (T2's
    suggestions for that session are open, its close is ahead) and advances with the wall
    clock from the first time it is read; on a store without prices it is the wall clock."""

    def __init__(self, engine: Engine, calendar: TradingCalendar) -> None:
        self.engine, self.calendar = engine, calendar
        self._offset: Any = None

    def __call__(self) -> datetime:
        wall = utc_now()
        if self._offset is None:
            from sqlalchemy import func, select

            from market.clock import EXCHANGE_TZ

            with self.engine.connect() as conn:
                newest = conn.execute(select(func.max(tables.eod_prices.c.trading_date))).scalar_one_or_none()
            if newest is None:
                return wall
            session = self.calendar.next_trading_day(newest)
            start = datetime.combine(session, REPLAY_MORNING, tzinfo=EXCHANGE_TZ).astimezone(wall.tzinfo)
            self._offset = start - wall
        return wall + self._offset


def build_services(settings: Settings, now: Callable[[], datetime] | None = None) -> Services:
    engine = service_engine(settings)
    calendar = default_calendar()
    if now is None and settings.replay_path is not None:
        now = ReplayClock(engine, calendar)
    return Services(
        settings,
        engine,
        calendar,
        now or utc_now,
        counter_store(settings, engine),
        CapacityLimiter(settings.heavy_requests),
        Slots(settings.db_pool_size),
        UploadGate(settings.upload_reads, settings.upload_reads_per_client),
        ClientGate(settings.heavy_requests, settings.heavy_requests_per_client),
    )


ANONYMOUS = "anonymous"


class ClientGone(Exception):
    """A request's client disconnected while it waited for a heavy turn; nobody reads its answer."""


def heavy_client(caller: Any) -> str:
    """Whose share of the heavy turns a request takes (`Services.run_heavy`): a key's
    client (its portfolio, as an upload's: the admin key is one caller, the house), else
    every request without a key together (public reports, the GraphiQL page): counted per
    address, eight addresses took both turns and another client's read waited 4 s."""
    return caller.portfolio_id if caller is not None else ANONYMOUS


async def services(request: Request) -> Services:
    """Async on purpose: FastAPI runs a sync dependency in the thread pool, a hop this needs not."""
    return request.app.state.services
