"""Who is calling: the `X-API-Key` dependency shared by REST and GraphQL.

Credential classes: the admin key (`svc-admin-...`, from settings only, compared in
constant time, not rate limited: it is the operator's) and client keys (`svc-sk-...`,
api/keystore.py). Every keyed request is authenticated, then counted against its key's
per-minute limit (the key's own setting, else its tier's default); the decision's
RateLimit headers go on the response.

A client acts on its own portfolio (`client:<client_id>`); the admin key acts on the
house portfolio. That is why another client's suggestion id answers 404: it is simply not
in the caller's portfolio.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, FastAPI, Request, Security
from fastapi.security import APIKeyHeader
from sqlalchemy import Connection, select
from starlette.concurrency import run_in_threadpool

from api import keystore
from api.ratelimit import WINDOW_SECONDS, Decision, decide
from api.services import Services, request_connection, services
from market.errors import AuthenticationError, PermissionDeniedError, RateLimitedError
from portfolio.ledger import HOUSE_PORTFOLIO, client_portfolio_id
from store import tables
from store.history import VersionMoved, settle

api_key_header_name = "X-API-Key"
api_key_header = APIKeyHeader(
    name=api_key_header_name,
    auto_error=False,
    description="A client key `svc-sk-<hex>` from POST /api/keys/generate, or the admin key `svc-admin-<hex>`.",
)


@dataclass(frozen=True)
class Principal:
    kind: str  # "admin" or "client"
    key_id: str | None
    client_id: str | None
    client_name: str | None
    tier: str | None
    macro_access: bool | None

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"

    @property
    def portfolio_id(self) -> str:
        return HOUSE_PORTFOLIO if self.is_admin else client_portfolio_id(self.client_id or "")

    @property
    def may_read_macro_insights(self) -> bool:
        """PRO and INSTITUTIONAL keys, and keys whose macro access is switched on; a key
        switched off is refused whatever its tier."""
        if self.is_admin:
            return True
        if self.macro_access is not None:
            return self.macro_access
        return self.tier in ("PRO", "INSTITUTIONAL")


ADMIN = Principal("admin", None, None, None, None, True)


def request_fact(request: Request, name: str) -> Any:
    """`request.state.<name>`, or None when unset. Not `getattr(request.state, name, None)`:
    Starlette's State raises (and chains) an AttributeError for a name it lacks, and that
    cost 6% of a cached read's CPU. `request.state` keeps its values in the scope's
    "state" dict, read here directly."""
    return request.scope.get("state", {}).get(name)


def authenticate(
    request: Request, svc: Services, presented: str | None, conn: Connection | None = None, defer: bool = False
) -> Principal:
    """The caller of `presented`, counted once against its rate limit. The edge (api/edge.py)
    authenticates a request that carries a body before reading it; the route's dependency
    then gets the same principal back instead of a second lookup and count. `defer`: the
    keys' version may ride on the request's next version read (api/keystore.py KeyCache)."""
    known = request_fact(request, "principal")
    if known is not None:
        return known
    try:
        caller = _authenticate(request, svc, presented, conn, defer)
    except AuthenticationError as failure:
        _count_failure(request, svc, failure, conn)
        raise
    request.state.principal = caller
    return caller


def _count_failure(request: Request, svc: Services, failure: AuthenticationError, conn: Connection | None) -> None:
    """Failed authentications count per client address (`rate_limit_unauthenticated` a
    minute); past the limit the answer is 429 instead of 401, so guessing keys or flooding
    without one is throttled like any key's requests."""
    address = request.client.host if request.client else "unknown"
    limit = svc.settings.rate_limit_unauthenticated
    decision = decide(svc.limiter, f"unauthenticated:{address}", limit, time.time(), conn)
    if not decision.allowed:
        raise RateLimitedError(
            f"over the limit of {limit} requests per minute without a valid key from this address "
            f"({failure.detail}); retry in {decision.retry_after} s",
            headers=decision.headers(),
        ) from failure


def _misplaced_key(request: Request) -> str:
    """Where a key that was sent but not in X-API-Key went, said in the 401 (an empty
    string when nowhere)."""
    if request.headers.get("authorization", "").lower().startswith("bearer "):
        return "; an Authorization: Bearer header was sent, but this service reads the key from X-API-Key only"
    if "api_key" in request.query_params or "apikey" in request.query_params:
        return (
            "; a key was sent as a query parameter, which this service does not read (URLs end up in logs and "
            "browser history): send it in the X-API-Key header"
        )
    return ""


def _authenticate(
    request: Request, svc: Services, presented: str | None, conn: Connection | None, defer: bool = False
) -> Principal:
    if not presented:
        raise AuthenticationError(f"the X-API-Key header is missing{_misplaced_key(request)}")
    if presented.startswith("svc-admin-"):
        if hmac.compare_digest(presented.encode(), svc.settings.checked_admin_key().encode()):
            return ADMIN
        raise AuthenticationError("the API key is not valid")
    if not keystore.CLIENT_KEY_PATTERN.match(presented):
        raise AuthenticationError("the X-API-Key header is malformed: expected svc-sk- followed by hex digits")
    if conn is None:
        with svc.engine.connect() as own:
            record = keystore.authenticate(own, svc.settings, presented, svc.now(), svc.keys)
    else:
        record = keystore.authenticate(conn, svc.settings, presented, svc.now(), svc.keys, defer)
    if record is None:
        raise AuthenticationError("the API key is unknown, revoked or rotated out")
    limit = record.rate_limit or svc.settings.rate_limit_for(record.tier)  # type: ignore[arg-type]
    decision = _count(request, svc, record.key_id, limit, conn)
    request.state.rate_limit = decision
    if not decision.allowed:
        raise RateLimitedError(
            f"over the limit of {limit} requests per minute for this key; retry in {decision.retry_after} s",
            headers=decision.headers(),
        )
    return Principal("client", record.key_id, record.client_id, record.client_name, record.tier, record.macro_access)


def _count(request: Request, svc: Services, key_id: str, limit: int, conn: Connection | None) -> Decision:
    """`decide` once a request. A request that starts over (`PendingCheck.run`) keeps the
    decision it had while its key's limit is the same; when the limit changed meanwhile,
    its hit (if it was counted: a refused request is not) moves to a new decision."""
    earlier = request_fact(request, "counted")
    if earlier is not None:
        counted_key, window, decision = earlier
        if counted_key == key_id and decision.limit == limit:
            return decision
        if decision.allowed:
            svc.limiter.undo(counted_key, window, conn)
    now = time.time()
    decision = decide(svc.limiter, key_id, limit, now, conn)
    request.state.counted = (key_id, int(now // WINDOW_SECONDS), decision)
    return decision


class PendingCheck:
    """A client key whose check runs in the handler's own worker thread, first thing, before
    any of the handler's code (`check_in_handler_thread`): what `principal` gives a sync
    route. The check is the same `authenticate` on the same connection, exact on every
    request (a revocation holds from the next request in every worker); only where it runs
    changes. Run by a dependency of its own, the key lookup cost a second trip through the
    thread pool per request (enqueue, a worker's wake-up, the GIL handed over and back):
    measured, a quarter of a cached read's time on SQLite.

    On a read route (GET, HEAD) the check of a key this process has seen defers the keys'
    version to the handler's own version read (api/keystore.py KeyCache): one statement
    instead of two. Whatever happens, the version is read before the answer leaves and
    before any data is written (store.transactions.transactional; the rate-limit count,
    which counts the request itself, does not wait: api/ratelimit.py), and when it moved the
    handler's work is dropped and the request starts over: the key checked afresh (401 if
    it no longer holds, its new tier and limits if they changed), then the handler again.
    Same snapshot rule as before: the keys are read in the statement that reads the data,
    or later, never earlier."""

    __slots__ = ("request", "svc", "presented", "conn")

    def __init__(self, request: Request, svc: Services, presented: str, conn: Connection) -> None:
        self.request, self.svc, self.presented, self.conn = request, svc, presented, conn

    def resolve(self) -> Principal:
        return authenticate(self.request, self.svc, self.presented, self.conn)

    def run(self, call: Callable[..., Any], args: tuple, values: dict[str, Any], name: str) -> Any:
        """`call` with this check's principal as `values[name]`, the keys' version deferred
        (see above), starting over once when it moved."""
        try:
            try:
                values[name] = authenticate(self.request, self.svc, self.presented, self.conn, defer=True)
                return call(*args, **values)
            finally:  # the answer, or the error, leaves only on a key confirmed
                settle(self.conn)
        except VersionMoved:
            self.request.state.principal = None
            values[name] = self.resolve()
            return call(*args, **values)


async def principal(
    request: Request,
    svc: Services = Depends(services),
    presented: str | None = Security(api_key_header),
    conn: Connection = Depends(request_connection, scope="function"),
) -> Principal:
    """Any valid key, checked on the request's one connection (api/deps.py's ConnDep).

    Already known (the edge checked a request with a body) or the admin key (compared in
    memory, nothing counted): answered here. A client key on a sync route that checks keys
    in its worker thread: a `PendingCheck`, which that route resolves before its code runs.
    Anything else (async routes, a missing or malformed key, whose failure is counted in
    the database store): checked in a worker thread here."""
    known = request_fact(request, "principal")
    if known is not None:
        return known
    if (
        presented
        and presented.startswith("svc-admin-")
        and svc.settings.admin_key is not None
        and hmac.compare_digest(presented.encode(), svc.settings.checked_admin_key().encode())
    ):
        request.state.principal = ADMIN
        return ADMIN
    route = request.scope.get("route")
    if (
        presented
        and keystore.CLIENT_KEY_PATTERN.match(presented)
        and getattr(getattr(getattr(route, "dependant", None), "call", None), "checks_keys", False)
    ):
        return PendingCheck(request, svc, presented, conn)  # type: ignore[return-value]
    return await run_in_threadpool(authenticate, request, svc, presented, conn)


async def body_principal(
    request: Request, svc: Services = Depends(services), presented: str | None = Security(api_key_header)
) -> Principal:
    """The key of a request whose body the edge authenticated before reading it (the
    uploads: api/edge.py), without taking a database slot for the request: an upload holds
    one only while it stores what it read (api/routers/portfolio.py), never while its body
    streams in or its PDF is read. A request that reached here unchecked (no body) is
    checked on a slot taken and given back at once."""
    known = request_fact(request, "principal")
    if known is not None:
        return known
    async with svc.connection() as conn:
        return await run_in_threadpool(authenticate, request, svc, presented, conn)


def check_in_handler_thread(app: FastAPI) -> None:
    """Make every sync route of `app` resolve a `PendingCheck` among its arguments (its
    `CallerDep`) in its own worker thread before running: FastAPI calls a route's
    `dependant.call` in the thread pool, so the wrapper runs there. On read routes (GET,
    HEAD) the check defers the keys' version to the handler's own version read
    (`PendingCheck.run`). Async routes are left alone (`principal` checks their keys in a
    thread of its own)."""
    for route in app.routes:
        dependant = getattr(route, "dependant", None)
        call = getattr(dependant, "call", None)
        if call is None or getattr(call, "checks_keys", False) or inspect.iscoroutinefunction(inspect.unwrap(call)):
            continue

        reads = getattr(route, "methods", None) is not None and set(route.methods) <= {"GET", "HEAD"}  # type: ignore[attr-defined]

        def checked(*args: Any, __call: Callable[..., Any] = call, __reads: bool = reads, **values: Any) -> Any:
            for name, value in values.items():
                if type(value) is PendingCheck:
                    if __reads:
                        return value.run(__call, args, values, name)
                    values[name] = value.resolve()
            return __call(*args, **values)

        functools.update_wrapper(checked, call)
        checked.checks_keys = True  # type: ignore[attr-defined]
        dependant.call = checked


def report_reader(
    request: Request, svc: Services = Depends(services), presented: str | None = Security(api_key_header)
) -> Principal | None:
    """The PDF reports: any valid key, or no key at all while `public_reports` is on (a key
    that is presented is still checked and counted)."""
    if svc.settings.public_reports and not presented:
        return None
    return authenticate(request, svc, presented)


async def admin(caller: Principal = Depends(principal)) -> Principal:
    """The admin key; a client key's own check runs first (401 or 429 before 403)."""
    if type(caller) is PendingCheck:
        caller = await run_in_threadpool(caller.resolve)
    if not caller.is_admin:
        raise PermissionDeniedError("this endpoint needs the admin key")
    return caller


def caller_portfolio_on(conn: Connection, svc: Services, caller: Principal) -> str:
    """`caller_portfolio` on the request's connection: a read while the portfolio exists
    (once seen, remembered: portfolios are never closed), its opening on the same
    connection the first time (the house portfolio; a client's opens with its key)."""
    portfolio_id = caller.portfolio_id
    if portfolio_id in svc.open_portfolios:
        return portfolio_id
    p = tables.portfolios.c
    if conn.execute(select(p.id).where(p.portfolio_id == portfolio_id).limit(1)).first() is None:
        from portfolio.ledger import ensure_portfolio
        from store.transactions import write_on

        with write_on(conn, f"portfolio:{portfolio_id}"):
            ensure_portfolio(
                conn,
                portfolio_id,
                "HOUSE" if caller.is_admin else "CLIENT",
                None if caller.is_admin else caller.client_id,
            )
    svc.open_portfolios.add(portfolio_id)
    return portfolio_id


def caller_portfolio(svc: Services, caller: Principal) -> str:
    """The caller's portfolio id, opened on first use (a client key's is opened when issued)."""
    from portfolio.trading import open_client_portfolio

    kind = "HOUSE" if caller.is_admin else "CLIENT"
    return open_client_portfolio(svc.engine, caller.client_id or "admin", kind=kind)
