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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Request, Security
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from sqlalchemy import Connection
from starlette.concurrency import run_in_threadpool

from api import keystore
from api.ratelimit import WINDOW_SECONDS, Decision, decide
from api.services import Services, request_connection, services
from market.errors import AuthenticationError, PermissionDeniedError, RateLimitedError
from portfolio.accounts import Account, open_account, open_on
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
    def account(self) -> Account:
        """The portfolio this caller acts on (portfolio/accounts.py)."""
        return Account.house() if self.is_admin else Account.of_client(self.client_id or "")

    @property
    def portfolio_id(self) -> str:
        return self.account.portfolio_id

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
    if conn is None:
        with svc.engine.connect() as own:
            record = keystore.authenticate(own, svc.settings, presented, svc.now(), svc.keys)
    else:
        record = keystore.authenticate(conn, svc.settings, presented, svc.now(), svc.keys, defer)
    if record is None:
        if not keystore.is_client_key(presented):
            raise AuthenticationError("the X-API-Key header is malformed: expected svc-sk- followed by hex digits")
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
    """`decide` once a request. A request that starts over (`KeyCheckedRoute`) keeps the
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


class KeyToCheck:
    """A client key that its route checks in the handler's own worker thread, first thing
    (`KeyCheckedRoute`): what `principal` answers for such a route, in place of the
    `Principal` that the handler then receives. `principal()` is the same `authenticate` on
    the request's connection that any other route gets, exact on every request (a
    revocation holds from the next request in every worker); only where it runs changes."""

    __slots__ = ("request", "svc", "presented", "conn")

    def __init__(self, request: Request, svc: Services, presented: str, conn: Connection) -> None:
        self.request, self.svc, self.presented, self.conn = request, svc, presented, conn

    def principal(self, defer: bool = False) -> Principal:
        return authenticate(self.request, self.svc, self.presented, self.conn, defer)

    def afresh(self) -> Principal:
        """The key checked again, its earlier answer forgotten (its count kept: `_count`)."""
        self.request.state.principal = None
        return self.principal()


async def principal(
    request: Request,
    svc: Services = Depends(services),
    presented: str | None = Security(api_key_header),
    conn: Connection = Depends(request_connection, scope="function"),
) -> Principal | KeyToCheck:
    """Any valid key, checked on the request's one connection (api/deps.py's ConnDep), in
    this order:

    1. a request the edge already checked (one with a body: api/edge.py): that caller;
    2. the admin key: compared in memory here, nothing counted;
    3. another key on a route that checks it in its handler's thread (`KeyCheckedRoute`, a
       sync handler): a `KeyToCheck`, which that route turns into the `Principal` before
       the handler's code runs;
    4. anything else (an async route): checked here, in a worker thread.

    A key that fails its check answers 401 (or 429 when its address keeps failing) in every
    case; only a valid key reaches the handler."""
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
    if presented and isinstance(route, KeyCheckedRoute) and route.checks_key_in_handler:
        return KeyToCheck(request, svc, presented, conn)
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


class KeyCheckedRoute(APIRoute):
    """The route class of every router (`APIRouter(route_class=...)`, FastAPI's extension
    point for routes). A sync handler runs in a worker thread, and checking a client key
    needs the database; run by a dependency of its own, the check took a second trip
    through the thread pool (enqueue, a worker's wake-up, the GIL handed over and back):
    measured, a quarter of a cached read's time on SQLite. So for a sync handler that
    declares a caller (`CallerDep`), the call FastAPI makes in the worker thread is
    `_checked_first(handler)`: the key checked there, then the handler.

    On a read (GET, HEAD) the check of a key this process has seen does not read the keys'
    version itself: the version rides on the handler's own version read (one statement
    instead of two; api/keystore.py KeyCache). Whatever happens, it is read before the
    answer leaves and before any data is written (store.history.settle; the rate-limit
    count, which counts the request itself, does not wait: api/ratelimit.py), and when it
    moved the handler's work is dropped and the request starts over: the key checked
    afresh (401 if it no longer holds, its new tier and limits if they changed), then the
    handler again. So the keys are read in the statement that reads the data, or later,
    never earlier."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        # a parameter of the handler (`dependencies=[...]` passes nothing the handler could be given)
        declares_caller = any(d.call is principal and d.name is not None for d in self.dependant.dependencies)
        runs_in_a_thread = not (  # FastAPI's own reading of the handler
            self.dependant.is_coroutine_callable
            or self.dependant.is_gen_callable
            or self.dependant.is_async_gen_callable
        )
        self.checks_key_in_handler = declares_caller and runs_in_a_thread
        if self.checks_key_in_handler:
            self.dependant.call = _checked_first(self.dependant.call, reads=self.methods <= {"GET", "HEAD"})


def _checked_first(handler: Callable[..., Any], reads: bool) -> Callable[..., Any]:
    """`handler`, its `KeyToCheck` argument made a `Principal` first (see `KeyCheckedRoute`)."""

    @functools.wraps(handler)
    def checked(**values: Any) -> Any:
        name = next((n for n, value in values.items() if isinstance(value, KeyToCheck)), None)
        if name is None:  # the admin key, or a caller the edge checked: already a Principal
            return handler(**values)
        check: KeyToCheck = values[name]
        if not reads:
            return handler(**{**values, name: check.principal()})
        try:
            try:
                return handler(**{**values, name: check.principal(defer=True)})
            finally:  # the answer, or the error, leaves only on a key confirmed
                settle(check.conn)
        except VersionMoved:
            return handler(**{**values, name: check.afresh()})

    return checked


def report_reader(
    request: Request, svc: Services = Depends(services), presented: str | None = Security(api_key_header)
) -> Principal | None:
    """The PDF reports: any valid key, or no key at all while `public_reports` is on (a key
    that is presented is still checked and counted)."""
    if svc.settings.public_reports and not presented:
        return None
    return authenticate(request, svc, presented)


async def admin(caller: Principal | KeyToCheck = Depends(principal)) -> Principal:
    """The admin key; a client key's own check runs first (401 or 429 before 403)."""
    if isinstance(caller, KeyToCheck):
        caller = await run_in_threadpool(caller.principal)
    if not caller.is_admin:
        raise PermissionDeniedError("this endpoint needs the admin key")
    return caller


def caller_portfolio_on(conn: Connection, svc: Services, caller: Principal) -> str:
    """The caller's portfolio id on the request's connection, opened there on first use
    (portfolio/accounts.py `open_on`)."""
    return open_on(conn, caller.account, svc.open_portfolios)


def caller_portfolio(svc: Services, caller: Principal) -> str:
    """The caller's portfolio id, opened on first use in a transaction of its own (a
    client key's is opened when issued)."""
    return open_account(svc.engine, caller.account)
