"""What a request handler needs, built once per app: the settings, the desk (every use case
on the service engine, the trading calendar and the clock, with its cache of read models:
desk/desk.py), the rate limiter's store, the limits on heavy work and uploads, and the
database slots a request's one connection waits for.

The transport's own concerns live here and nothing of the domain: a request's connection
(`LazyConnection`, `connection`), the slots and gates it waits at (`Slots`, `ClientGate`,
`UploadGate`), heavy work in worker threads and processes (`run_heavy`, `apart`), and a
read's body rendered once per version of the desk's read (`body`: kept in the desk's
cache beside the read models, desk/cache.py), so a kept read costs the desk's version read
and a dict lookup."""

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
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, TypeVar

from anyio import CapacityLimiter, to_thread
from fastapi import Request
from fastapi.responses import Response
from pydantic import TypeAdapter
from sqlalchemy import Connection, Engine

from api.ratelimit import CounterStore, MemoryStore, counter_store
from desk import Account, Desk, Versioned
from market.clock import TradingCalendar
from market.errors import BusyError, RateLimitedError
from market.settings import Settings

T = TypeVar("T")
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

    __slots__ = ("_engine", "_conn", "rider", "answer_key")

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn: Connection | None = None
        self.rider: Any = None  # a check riding on the next version read (desk.KeyCheck)
        self.answer_key: Hashable = None  # the request's URL and caller, for `Services.answer` to remember

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

    @property
    def checked_out(self) -> bool:
        """Whether the request has a connection of its own yet."""
        return self._conn is not None

    @contextmanager
    def reading_on(self, conn: Connection) -> Iterator[None]:
        """`conn` in place of a pooled connection for the statements made in the block (the
        request has none yet): the event-loop reader's one version read
        (`Services.version_read`). A read that outlives the block (a body built later in a
        worker thread) checks out its own as ever."""
        self._conn = conn
        try:
            yield
        finally:
            self._conn = None

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _read_on(on: Connection, conn: LazyConnection, read: Callable[..., T], args: tuple) -> T:
    """`read(*args)` with the request's `conn` reading on `on` (`Services.version_read`)."""
    with conn.reading_on(on):
        return read(*args)


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
    async def queued(self, client: str) -> AsyncIterator[bool]:
        """A turn for `client`, waited for on the event loop while its share or the
        process's turns are all taken (never refused); yields whether it waited."""
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
            yield waiter is not None
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


@dataclass(frozen=True, slots=True)
class Recipe:
    """How a read's answer was found (`Services.answer`): the desk's read, to be asked
    again for its version (`read(conn)`), and the form its body is kept in."""

    read: Callable[[Connection], Versioned[Any]]
    form: Hashable


class Recipes:
    """The recipe of each read answered lately, by the request's URL and caller (at most
    ENTRIES, the oldest dropped first, and none for a URL over URL_BYTES: at most a few MB
    whatever URLs are sent): what lets a route answer the next request for the same URL
    from the body kept for the current version, before FastAPI reads a parameter
    (api/security.py `KeyCheckedRoute`). A recipe is remembered only once its read has
    answered 200, so its URL is one FastAPI validated and the same URL asks the same read;
    the caller (the whole `Principal`: key, client, tier, rights) is in the key, so a read
    is asked again only for the caller it was answered to."""

    ENTRIES = 4096
    URL_BYTES = 1024

    def __init__(self) -> None:
        self._recipes: dict[Hashable, Recipe] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._recipes)

    def get(self, key: Hashable) -> Recipe | None:
        return self._recipes.get(key)

    def remember(self, key: tuple[str, bytes, Any], recipe: Recipe) -> None:
        path, query, _ = key
        if len(path) + len(query) > self.URL_BYTES:
            return
        with self._lock:
            if key not in self._recipes and len(self._recipes) >= self.ENTRIES:
                self._recipes.pop(next(iter(self._recipes)))
            self._recipes[key] = recipe


@dataclass
class Services:
    settings: Settings
    desk: Desk  # every use case, on this process's engine, calendar and clock (desk/desk.py)
    limiter: CounterStore
    heavy: CapacityLimiter
    # One per connection the pool keeps (db_pool_size): requests wait here, holding nothing. Not
    # one per overflow connection too: those are closed as soon as they are given back, so
    # 16 concurrent requests on a pool of 5 + 10 opened and closed ten connections a round
    # (on SQLite with its PRAGMAs) instead of reusing them.
    slots: Slots
    uploads: UploadGate
    heavy_turns: ClientGate  # heavy_requests turns, heavy_requests_per_client of them a client's (`run_heavy`)
    recipes: Recipes = field(default_factory=Recipes)  # how reads answered lately were found (`answer`)

    @property
    def engine(self) -> Engine:
        return self.desk.engine

    @property
    def calendar(self) -> TradingCalendar:
        return self.desk.calendar

    def now(self) -> datetime:
        """The desk's clock (a replay's, or a test's pinned one)."""
        return self.desk.now()

    def body(
        self,
        read: Versioned[Any],
        model: Any,
        shown: Callable[[Any], Any] | None = None,
        page: Hashable = None,
    ) -> Response:
        """The JSON response of the desk's `read` as `model` (its value as `shown(value)`, a
        REST page of it), rendered once per version of the read and `page` asked, kept in
        the desk's cache (desk/cache.py `ReadCache.rendered`); a miss of a read with an
        owner is that owner's expensive read (429 while another of theirs runs)."""
        render = (lambda value: json_body(model, shown(value))) if shown else (lambda value: json_body(model, value))
        return Response(self.desk.cache.rendered(read, (model, page), render), media_type="application/json")

    async def answer(
        self,
        conn: Connection,
        read: Callable[[Connection], Versioned[Any]],
        model: Any,
        shown: Callable[[Any], Any] | None = None,
        page: Hashable = None,
    ) -> Response:
        """`body` of the desk's `read(conn)`, for a read's async handler: the read's version
        and the lookup of its kept body where they cost least (`version_read`: on a SQLite
        file on the event loop, so a kept body costs no thread hop, as a bare endpoint's
        constant costs none but its own), and only a body not kept yet for that version
        rendered in a worker thread (its build, and a miss of a read with an owner, as
        `body`). Once answered, the recipe is remembered under the request's URL and caller
        (`kept_answer`); a read that failed (404, 503, 429) leaves none."""
        versioned = await self.version_read(conn, read, conn)
        body = self.desk.cache.kept_rendering(versioned, (model, page))
        response = (
            Response(body, media_type="application/json")
            if body is not None
            else await to_thread.run_sync(self.body, versioned, model, shown, page)
        )
        answer_key = getattr(conn, "answer_key", None)
        if answer_key is not None:
            self.recipes.remember(answer_key, Recipe(read, (model, page)))
        return response

    async def kept_answer(self, conn: Connection, answer_key: Hashable) -> Response | None:
        """The body kept for the current version of the read last answered for `answer_key`
        (a request's URL and caller: `answer`), found with its version read alone; None when
        there is no such read or no body kept for that version (the route then handles the
        request as ever)."""
        recipe = self.recipes.get(answer_key)
        if recipe is None:
            return None
        body = self.desk.cache.kept_rendering(await self.version_read(conn, recipe.read, conn), recipe.form)
        return None if body is None else Response(body, media_type="application/json")

    async def portfolio_on(self, conn: Connection, account: Account) -> str:
        """The account's portfolio id for a read's async handler (`answer`): from the desk's
        memory of the portfolios it has opened, with no I/O; else opened on `conn` in a
        worker thread (the desk's `open_portfolio`: a read, and a write the first time)."""
        if account.portfolio_id in self.desk.opened:
            return account.portfolio_id
        return await to_thread.run_sync(self.desk.open_portfolio, account, conn)

    @cached_property
    def _local_reads(self) -> bool:
        """A SQLite file with rate limits counted in this process's memory (`version_read`)."""
        return self.engine.dialect.name == "sqlite" and isinstance(self.limiter, MemoryStore)

    async def version_read(self, conn: Connection, read: Callable[..., T], *args: Any) -> T:
        """`read(*args)`: a version read for the request whose connection is `conn` (the key
        check riding on it) and a lookup of what is kept for that version; where it costs
        least, while the request has no connection of its own yet (none checked out of the
        pool and given back for it):
        - on a database server, awaited on the event loop on one of the process's server
          readers (store/engine.py `ServerReader`): the round trip holds neither the loop
          nor a worker thread, and the thread hop and the pool's checkout that carried it
          cost about as much of the interpreter as the rest of a kept answer;
        - on a SQLite file with the counts in memory, on the event loop, one statement of
          ~20 us on a local file that writes nothing and waits for no connection, where the
          thread hop that would carry it cost more than the read: on the process's
          event-loop reader (`EventLoopReader`), else on the pool's when one is idle.
        Otherwise in a worker thread, as a REST handler's read: a count written beside the
        read or a wait for a connection never holds the event loop."""
        if isinstance(conn, LazyConnection) and not conn.checked_out:
            server = self.desk.server_reader()
            if server is not None:
                async with server.lent() as lent:
                    if lent is not None:
                        return await lent.run_sync(_read_on, conn, read, args)
        if self._local_reads:
            reader = self.desk.event_loop_reader()
            if reader is not None and isinstance(conn, LazyConnection) and not conn.checked_out:
                with reader.lent() as lent:
                    if lent is not None:
                        with conn.reading_on(lent):
                            return read(*args)
            checked_out = getattr(self.engine.pool, "checkedout", None)
            if checked_out is not None and checked_out() < self.settings.db_pool_size:
                return read(*args)
        return await to_thread.run_sync(read, *args)

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
        self,
        client: str,
        function: Callable[..., Any],
        *args: Any,
        gone: Callable[[], Awaitable[bool]] | None = None,
        held: Callable[[], object] | None = None,
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
        (40 abandoned PDFs held their client's turn for 18 s). `held` (blocking: the
        request's key checked again, api/security.py `still_held`) runs in the turn's
        thread before `function` when the request waited for its turn, and refuses it by
        raising: a key revoked while its withdrawal waited behind its client's report had
        the withdrawal booked 17 s after the revocation. A request served at once was
        checked as it arrived."""
        async with self.heavy_turns.queued(client) as waited:
            if gone is not None and await gone():
                raise ClientGone(f"the client of a heavy request ({client}) left while it waited for its turn")
            if waited and held is not None:
                return await to_thread.run_sync(_after, held, function, *args, limiter=self.heavy)
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


def build_services(settings: Settings, now: Callable[[], datetime] | None = None) -> Services:
    desk = Desk.serving(settings, now)
    return Services(
        settings,
        desk,
        counter_store(settings, desk.engine),
        CapacityLimiter(settings.heavy_requests),
        Slots(settings.db_pool_size),
        UploadGate(settings.upload_reads, settings.upload_reads_per_client),
        ClientGate(settings.heavy_requests, settings.heavy_requests_per_client),
    )


ANONYMOUS = "anonymous"


class ClientGone(Exception):
    """A request's client disconnected while it waited for a heavy turn; nobody reads its answer."""


def _after(first: Callable[[], object], function: Callable[..., Any], *args: Any) -> Any:
    """`first()`, then `function(*args)`, in one worker thread (`Services.run_heavy`'s `held`)."""
    first()
    return function(*args)


def heavy_client(caller: Any) -> str:
    """Whose share of the heavy turns a request takes (`Services.run_heavy`): a key's
    client (its portfolio, as an upload's: the admin key is one caller, the house), else
    every request without a key together (public reports, the GraphiQL page): counted per
    address, eight addresses took both turns and another client's read waited 4 s."""
    return caller.portfolio_id if caller is not None else ANONYMOUS


async def services(request: Request) -> Services:
    """Async on purpose: FastAPI runs a sync dependency in the thread pool, a hop this needs not."""
    return request.app.state.services
