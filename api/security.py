"""Who is calling: the `X-API-Key` check shared by REST and GraphQL.

Credential classes: the admin key (`svc-admin-...`, from settings only, compared in
constant time, not rate limited: it is the operator's) and client keys (`svc-sk-...`,
their records the desk's: desk/keys.py). Every keyed request is authenticated, then
counted against its key's per-minute limit (the key's own setting, else its tier's
default), in one count for all its client's keys (`counted_as`); the decision's RateLimit
headers go on the response. A request without a valid key is counted per client address
(`rate_limit_unauthenticated`) and answered 401, or 429 past that limit; so is a public
report read without a key (`report_reader`), answered with the address's RateLimit headers.

Authentication comes before validation, on every route: `KeyCheckedRoute` (the route
class of every router) checks the key before FastAPI reads a parameter or the body, so a
bad key is a 401, counted, whatever else is wrong with the request (a request with a body
was already checked at the edge, api/edge.py, before a byte of it was read). The route
dependency `principal` (api/deps.py `CallerDep`) then yields the `Principal` the route
found; it is the one dependency, and it checks the key itself on a route of another class.

A client acts on its own portfolio (`client:<client_id>`); the admin key acts on the
house portfolio. That is why another client's suggestion id answers 404: it is simply not
in the caller's portfolio.
"""

from __future__ import annotations

import hmac
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import format_datetime
from enum import Enum
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Depends, Request, Security
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_flat_dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from pydantic_core import ErrorDetails
from sqlalchemy import Connection
from starlette.concurrency import run_in_threadpool
from starlette.routing import Match
from starlette.types import Message, Receive, Scope, Send

from api.ratelimit import ADDRESS_POLICY, WINDOW_SECONDS, Decision, MemoryStore, decide, minute_left
from api.services import Services
from desk import (
    INSIGHTS_REFUSAL,
    INSIGHTS_SWITCHED_OFF,
    Account,
    KeyCheck,
    KeyRecord,
    VersionMoved,
    is_client_key,
    settle,
)
from market.errors import AuthenticationError, BusyError, PermissionDeniedError, RateLimitedError

api_key_header_name = "X-API-Key"
api_key_header = APIKeyHeader(
    name=api_key_header_name,
    auto_error=False,
    description="A client key `svc-sk-<hex>` from POST /api/keys/generate, or the admin key `svc-admin-<hex>`.",
)
ADMIN_PREFIX = "svc-admin-"
READS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class Principal:
    kind: str  # "admin" or "client"
    key_id: str | None
    client_id: str | None
    client_name: str | None
    tier: str | None
    macro_access: bool | None
    rotated_at: datetime | None = None  # a key in a rotation's grace period: when it was rotated
    sunset_at: datetime | None = None  # and when that grace period ends

    def key_headers(self) -> dict[str, str]:
        """On every response to a key in a rotation's grace period, the client is told it
        is deprecated (RFC 9745 `Deprecation`, a Unix time) and when it stops working
        (RFC 8594 `Sunset`, an HTTP date); nothing for any other caller."""
        if self.rotated_at is None or self.sunset_at is None:
            return {}
        return {
            "Deprecation": f"@{int(self.rotated_at.timestamp())}",
            "Sunset": format_datetime(self.sunset_at.astimezone(UTC), usegmt=True),
        }

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"

    @property
    def account(self) -> Account:
        """The portfolio this caller acts on (portfolio/accounts.py `Account`)."""
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

    @property
    def macro_insights_refusal(self) -> str | None:
        """Why this caller may not read the macro insights, as its 403 (GraphQL: FORBIDDEN)
        says it; None when it may. A key switched off is told so, not that it needs the
        tier it has."""
        if self.may_read_macro_insights:
            return None
        return INSIGHTS_SWITCHED_OFF if self.macro_access is False else INSIGHTS_REFUSAL


ADMIN = Principal("admin", None, None, None, None, True)


def request_fact(request: Request, name: str) -> Any:
    """`request.state.<name>`, or None when unset. Not `getattr(request.state, name, None)`:
    Starlette's State raises (and chains) an AttributeError for a name it lacks, and that
    cost 6% of a cached read's CPU. `request.state` keeps its values in the scope's
    "state" dict, read here directly."""
    return request.scope.get("state", {}).get(name)


def _services(request: Request) -> Services:
    return request.app.state.services


# --- the check ----------------------------------------------------------------------------


def authenticate(request: Request, svc: Services, presented: str | None, conn: Connection | None = None) -> Principal:
    """The caller of `presented`, counted once against its rate limit, read from the
    database (on `conn`, else on a connection of its own); blocking, so called in a worker
    thread. A request checked once keeps its principal (`request.state.principal`): the
    edge's check of a request with a body is the route's too."""
    known = request_fact(request, "principal")
    if known is not None:
        return known
    try:
        caller = _authenticate(request, svc, presented, conn)
    except AuthenticationError as failure:
        _count_failure(request, svc, failure, conn)
        raise
    request.state.principal = caller
    return caller


def _is_admin_key(svc: Services, presented: str) -> bool:
    """The one comparison with the admin key: its prefix, then the key in constant time."""
    return presented.startswith(ADMIN_PREFIX) and hmac.compare_digest(
        presented.encode(), svc.settings.checked_admin_key().encode()
    )


def _authenticate(request: Request, svc: Services, presented: str | None, conn: Connection | None) -> Principal:
    sent = len(request.headers.getlist(api_key_header_name))
    if sent > 1:  # which one is meant? a proxy may act on the last, the service read the first
        raise AuthenticationError(f"the X-API-Key header is sent {sent} times; send one key")
    if not presented:
        raise AuthenticationError(f"the X-API-Key header is missing{_misplaced_key(request)}")
    if _is_admin_key(svc, presented):
        return ADMIN
    if presented.startswith(ADMIN_PREFIX):
        raise AuthenticationError("the API key is not valid")
    if conn is None:
        with svc.engine.connect() as own:
            record = svc.desk.key_record(own, presented)
    else:
        record = svc.desk.key_record(conn, presented)
    if record is None:
        if not is_client_key(presented):
            raise AuthenticationError("the X-API-Key header is malformed: expected svc-sk- followed by hex digits")
        raise AuthenticationError("the API key is unknown, revoked or rotated out")
    _admit(request, svc, record, conn)
    return _client(record)


def _client(record: KeyRecord) -> Principal:
    return Principal(
        "client",
        record.key_id,
        record.client_id,
        record.client_name,
        record.tier,
        record.macro_access,
        record.rotated_at,
        record.expires_at,
    )


def _admit(request: Request, svc: Services, record: KeyRecord, conn: Connection | None) -> None:
    """Count the request against its key's limit; 429 past it, with the key's own headers
    (`Principal.key_headers`): the refused request has no principal for the edge to read
    them from, and a key in a rotation's grace period is told so on every answer."""
    limit = record.rate_limit or svc.settings.rate_limit_for(record.tier)  # type: ignore[arg-type]
    decision = _count(request, svc, counted_as(record), limit, conn)
    request.state.rate_limit = decision
    if not decision.allowed:
        raise RateLimitedError(
            f"over the limit of {limit} requests per minute for this key (a client's keys count together); "
            f"retry in {decision.retry_after} s",
            headers={**decision.headers(), **_client(record).key_headers()},
        )


@dataclass(frozen=True)
class Counted:
    """A request's count (`request.state.counted`): the counter it went to (`counted_as`),
    the minute it fell in, its decision, and how many requests it cost (one; a GraphQL
    mutation one per write: `charge`). A refused request's was never kept (`decide`)."""

    counter: str
    window: int
    decision: Decision
    cost: int = 1

    def take_back(self, svc: Services, conn: Connection | None = None, amount: int | None = None) -> None:
        """Undo the count (`amount` of it, else all), if it was kept."""
        if self.decision.allowed:
            svc.limiter.undo(self.counter, self.window, conn, self.cost if amount is None else amount)


def refund(request: Request, svc: Services, unrun: int | None = None) -> None:
    """Take back the request's count: it was admitted, then refused before any work was done
    for it (`refunded_refusal`: another upload or expensive read of the client still running,
    the service's uploads all busy). A refused request is not counted, as one over the limit
    is not; its RateLimit header then says the count without it. Once per request. With
    `unrun`, only that many of what it was charged (`charge`): a mutation's writes that were
    not run (its budget spent before they began), the ones that were made still counted."""
    earlier: Counted | None = request_fact(request, "counted")
    if earlier is None or request_fact(request, "refunded") or not earlier.decision.allowed:
        return
    back = earlier.cost if unrun is None else min(unrun, earlier.cost)
    earlier.take_back(svc, None, back)
    if back == earlier.cost:
        request.state.refunded = True
    else:
        request.state.counted = replace(earlier, cost=earlier.cost - back)
    kept = request_fact(request, "rate_limit")
    if kept is not None:  # a request now remains: `t` is the minute's end again (`decide`)
        remaining = min(kept.limit, kept.remaining + back)
        request.state.rate_limit = replace(kept, remaining=remaining, reset_seconds=minute_left(time.time()))


def charge(request: Request, svc: Services, cost: int, what: str) -> None:
    """Count the request as `cost` requests (a GraphQL mutation: one per write it will
    make, `what` says so), on the counter and limit its admission counted it on, before
    any of it runs: the admission's count taken back and the whole cost decided at once
    (`decide`), so a request that does not fit whole is refused (RateLimitedError: 429,
    Retry-After when all of it fits) and counted not at all, and its RateLimit headers
    say what was charged. Nothing for a request not counted (the admin key), refused or
    refunded, or that cost no more than it was counted. Blocking."""
    earlier: Counted | None = request_fact(request, "counted")
    if earlier is None or cost <= earlier.cost or request_fact(request, "refunded") or not earlier.decision.allowed:
        return
    earlier.take_back(svc)
    now, limit = time.time(), earlier.decision.limit
    decision = decide(svc.limiter, earlier.counter, limit, now, None, earlier.decision.policy, cost)
    request.state.counted = Counted(earlier.counter, int(now // WINDOW_SECONDS), decision, cost)
    request.state.rate_limit = decision
    if decision.allowed:
        return
    then = f"it never fits: send at most {limit} at once" if cost > limit else f"retry in {decision.retry_after} s"
    raise RateLimitedError(
        f"{what}, each counted as a request, and they do not all fit the limit of {limit} requests per minute "
        f"for this key (a client's keys count together): nothing was run; {then}",
        headers=decision.headers(),
    )


def start_over(request: Request) -> None:
    """Forget the request's key check, for a check afresh once the keys' version moved
    after a key was answered from memory (`_kept_caller`, VersionMoved): its principal, the
    check riding on its connection, its kept answer's key, and its count: the hit taken
    before the version was read is taken back and its RateLimit headers dropped. So a key
    rotated out or revoked meanwhile is a 401 that uses none of its client's requests a
    minute and shows none of its headers, and a key that still holds is counted once, by
    the fresh check."""
    state = request.state
    state.principal = state.key_rider = state.answer_key = None
    earlier: Counted | None = request_fact(request, "counted")
    if earlier is not None and not request_fact(request, "refunded"):
        earlier.take_back(_services(request))
    state.counted = state.rate_limit = state.refunded = None


def still_held(request: Request, meanwhile: str = "this request waited for its turn") -> Principal | None:
    """The request's caller checked again, on a connection of its own (blocking), when its
    work starts a while after its key was checked, `meanwhile` saying what it waited for:
    its turn (`Services.run_heavy`'s `held`: a GraphQL operation or a report behind its
    client's others), or its body (api/edge.py `Edge`, which checks the key before reading
    a byte of it). A key revoked or rotated out meanwhile is refused (AuthenticationError,
    401) with nothing of the request run and its count taken back (`start_over`), as a key
    that moved before its request was answered is; a key whose tier, limits or macro access
    changed meanwhile goes on as it is now (the returned principal, also the request's).
    The admin key, from settings, and a request without a key (a public report) are not
    checked again. A withdrawal that waited behind its client's report was booked 17 s
    after the operator revoked the key, and one whose body came after the revocation was
    booked too."""
    caller: Principal | None = request_fact(request, "principal")
    if caller is None or caller.is_admin:
        return caller
    svc = _services(request)
    with svc.engine.connect() as conn:
        record = svc.desk.key_record(conn, request.headers.get(api_key_header_name) or "")
    if record is None:
        start_over(request)
        raise AuthenticationError(f"the API key was revoked or rotated out while {meanwhile}; nothing of it was run")
    request.state.principal = fresh = _client(record)
    return fresh


# A request whose work starts this long after its key was checked by the edge (its body
# arrived, its file was read) has the key checked again (`held_since_check`): a body can
# trickle in for minutes and a PDF take 20 s to read, and a revocation meanwhile held for
# none of it. One whose work starts within it (nearly every one) costs nothing more.
RECHECK_AFTER_SECONDS = 0.25


def recheck_due(request: Request) -> bool:
    """Whether RECHECK_AFTER_SECONDS have passed since the edge checked the request's key
    (`key_checked_at`, set for a request with a body); no I/O, so on the event loop."""
    checked = request_fact(request, "key_checked_at")
    return checked is not None and time.monotonic() - checked >= RECHECK_AFTER_SECONDS


def held_since_check(request: Request, meanwhile: str) -> None:
    """`still_held` when `recheck_due` (blocking): AuthenticationError (401, nothing of the
    request run or counted) for a key revoked or rotated out while `meanwhile`; the check's
    moment is then now, so a later step checks again only after as long again."""
    if recheck_due(request):
        still_held(request, meanwhile)
        request.state.key_checked_at = time.monotonic()


def refunded_refusal(error: BaseException) -> bool:
    """Whether an error refuses a request after admission without doing its work: over a
    per-client concurrency limit (429) or the service busy (503); both say when to retry."""
    return isinstance(error, (RateLimitedError, BusyError))


def counted_as(record: KeyRecord) -> str:
    """The count a client key's requests go to: its client's, not the key's own. A client's
    keys (a second key, a rotation's successor while its predecessor's grace period runs)
    share one count, and each admits a request while that count is under the key's own
    limit: a second key or a rotation with a grace period gave a client a second budget."""
    return f"client:{record.client_id}"


def _count_failure(request: Request, svc: Services, failure: AuthenticationError, conn: Connection | None) -> None:
    """Failed authentications count per client address (`count_by_address`); past the
    limit the answer is 429 instead of 401, so guessing keys or flooding without one is
    throttled like any key's requests."""
    try:
        count_by_address(request, svc, failure.detail, conn)
    except RateLimitedError as limited:
        raise limited from failure


def count_by_address(request: Request, svc: Services, why: str, conn: Connection | None = None) -> Decision:
    """Count a request without a valid key against its client address's limit
    (`rate_limit_unauthenticated` a minute, one count for all of the address's such
    requests); past the limit a RateLimitedError that says `why` the request had no key's
    budget. Blocking (a database or Redis store), so called in a worker thread."""
    address = request.client.host if request.client else "unknown"
    limit = svc.settings.rate_limit_unauthenticated
    decision = decide(svc.limiter, f"unauthenticated:{address}", limit, time.time(), conn, ADDRESS_POLICY)
    if not decision.allowed:
        raise RateLimitedError(
            f"over the limit of {limit} requests per minute without a valid key from this address "
            f"({why}); retry in {decision.retry_after} s",
            headers=decision.headers(),
        )
    return decision


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


def _count(request: Request, svc: Services, counter: str, limit: int, conn: Connection | None) -> Decision:
    """`decide` once a request, on `counter` (`counted_as`). A request checked again (a read
    that starts over: `KeyCheckedRoute`) keeps the decision it had while its count and its
    key's limit are the same; when either changed meanwhile, its hit (if it was counted: a
    refused request is not) moves to a new decision."""
    earlier: Counted | None = request_fact(request, "counted")
    if earlier is not None:
        if earlier.counter == counter and earlier.decision.limit == limit:
            return earlier.decision
        earlier.take_back(svc, conn)
    now = time.time()
    decision = decide(svc.limiter, counter, limit, now, conn)
    request.state.counted = Counted(counter, int(now // WINDOW_SECONDS), decision)
    return decision


def _kept_caller(request: Request, svc: Services, presented: str, defer: bool) -> Principal | None:
    """The caller answered from this process's memory, with no I/O (so on the event loop),
    or None when the database must answer: the admin key; or, on a route that may start
    over (`defer`), a client key this process has read before, its keys' version left to
    ride on the request's next version read (`KeyCheck`), counted now when the counts are
    kept in memory, else with that read. A key its kept rows refuse, or that its limit
    refuses, is left to the full check, which reads the version first."""
    if _is_admin_key(svc, presented):
        return ADMIN
    if not (defer and is_client_key(presented)):
        return None
    remembered = svc.desk.remembered_key(presented)
    if remembered is None:
        return None
    version, record = remembered
    if not isinstance(svc.limiter, MemoryStore):
        request.state.key_rider = KeyCheck(version, lambda conn: _admit(request, svc, record, conn))
        return _client(record)
    limit = record.rate_limit or svc.settings.rate_limit_for(record.tier)  # type: ignore[arg-type]
    decision = _count(request, svc, counted_as(record), limit, None)
    if not decision.allowed:  # the full check answers 429 with this decision, or 401 if the key moved
        return None
    request.state.rate_limit = decision
    request.state.key_rider = KeyCheck(version, None)
    return _client(record)


async def check_key(request: Request, presented: str | None, defer: bool = False, hold: bool = False) -> Principal:
    """The request's caller, checked once: what an earlier check of the request found
    (the edge's, the route's), else from memory where that needs no I/O (`_kept_caller`),
    else `authenticate` in a worker thread on a connection taken as a request takes its
    one (`Services.connection`): given back at once, or with `hold` left on the request
    for its route's `request_connection` to adopt (one connection a request, the check's
    and the handler's; `KeyCheckedRoute` gives back one left unadopted). A bad key raises
    AuthenticationError (401) or RateLimitedError (429), counted either way."""
    known = request_fact(request, "principal")
    if known is not None:
        return known
    svc = _services(request)
    caller = _kept_caller(request, svc, presented, defer) if presented else None
    if caller is not None:
        request.state.principal = caller
        return caller
    if hold:
        slot = svc.connection()
        conn = await slot.__aenter__()
        request.state.held_connection = (slot, conn)
        return await run_in_threadpool(authenticate, request, svc, presented, conn)
    async with svc.connection() as conn:
        return await run_in_threadpool(authenticate, request, svc, presented, conn)


async def settle_deferred(request: Request) -> None:
    """Settle the key check a request left to ride on its connection (`_kept_caller`) when
    the request is refused before its handler took one: on a connection taken for it
    (`connection_of`), the keys' version read (VersionMoved when it moved) and, with the
    counts in the database, the request counted (RateLimitedError past the key's limit).
    Nothing when no check is pending: the handler's connection settled it, or none rode."""
    rider = request_fact(request, "key_rider")
    if rider is not None and rider.moved is None:
        async with connection_of(request):
            pass


async def _release_unadopted(request: Request) -> None:
    """Give back the connection `check_key` held for a request whose route never took it."""
    held = request_fact(request, "held_connection")
    if held is not None:
        request.state.held_connection = None
        await held[0].__aexit__(None, None, None)


# --- the dependencies ---------------------------------------------------------------------


async def principal(request: Request, presented: str | None = Security(api_key_header)) -> Principal:
    """The one authentication dependency (api/deps.py `CallerDep`, the FastAPI template's
    `get_current_user`): always a valid key's `Principal`. On a `KeyCheckedRoute` the route
    checked the key before validation and this only hands its principal over; elsewhere
    the check runs here. `presented` declares the header, which puts the key scheme on the
    route in the OpenAPI document."""
    return await check_key(request, presented)


async def admin(caller: Principal = Depends(principal)) -> Principal:
    """The admin key; a client key's own check runs first (401 or 429 before 403)."""
    if not caller.is_admin:
        raise PermissionDeniedError("this endpoint needs the admin key")
    return caller


async def report_reader(request: Request, presented: str | None = Security(api_key_header)) -> Principal | None:
    """The PDF reports: any valid key, or no key at all while `public_reports` is on (a key
    that is presented is still checked and counted). A request without a key is counted
    against its address's limit (`count_by_address`): each one builds a PDF, and uncounted,
    one address's flood kept the reports' heavy turns busy and every other reader without
    a key queued behind it."""
    svc = _services(request)
    if svc.settings.public_reports and not presented:
        why = "a public report read without a key"
        request.state.rate_limit = await run_in_threadpool(count_by_address, request, svc, why)
        return None
    return await check_key(request, presented)


async def request_connection(request: Request) -> AsyncIterator[Connection]:
    """The request's one connection (`Services.connection`; api/deps.py `ConnDep`): the one
    its key was checked on when the route held it (`check_key`), else taken now. It carries
    the key check the route left to ride on it (`_kept_caller`), read by the handler's
    first version read; when the handler made none, it is read here before the answer
    leaves, whether the handler answered or failed: a moved keys' version raises
    VersionMoved, and the route starts over (`KeyCheckedRoute`)."""
    held = request_fact(request, "held_connection")
    if held is None:
        slot = _services(request).connection()
        conn = await slot.__aenter__()
    else:
        request.state.held_connection = None
        slot, conn = held
    rider = request_fact(request, "key_rider")
    if rider is not None:
        rider.conn = conn
    conn.rider = rider  # type: ignore[attr-defined]
    conn.answer_key = request_fact(request, "answer_key")  # type: ignore[attr-defined]
    try:
        yield conn
    except Exception:
        await _confirmed(conn)  # a moved keys' version replaces the handler's error
        raise
    else:
        await _confirmed(conn)
    finally:
        await slot.__aexit__(None, None, None)


# `request_connection` as a block, for a route that answers before FastAPI would resolve it
# (`KeyCheckedRoute._kept`, api/graphql/schema.py `KeptAnswerRoute`).
connection_of = asynccontextmanager(request_connection)


async def _confirmed(conn: Connection) -> None:
    rider = getattr(conn, "rider", None)
    if rider is not None and rider.moved is None:
        await run_in_threadpool(settle, conn)


# --- the route class ----------------------------------------------------------------------


class Access(Enum):
    """What a route asks of its caller, read from its dependencies."""

    OPEN = "open"  # no key dependency
    KEY = "key"  # `principal`, directly or under `admin`
    KEY_UNLESS_PUBLIC = "key unless public"  # `report_reader`


HEAD_ASKED = "marketintel.head_asked"  # a scope's key: a HEAD answered as its GET (`HeadAsGet`)


def asked_head(request: Request) -> bool:
    """Whether `request` is a HEAD answered as its GET (`HeadAsGet`): a route whose content
    costs work to make (a PDF report) answers it without making what is not sent."""
    return bool(request.scope.get(HEAD_ASKED))


class HeadAsGet(APIRoute):
    """A route that answers HEAD where it answers GET, as its GET (RFC 9110: a server that
    answers GET answers HEAD): the same handling, status and header fields; the edge drops
    the content (api/edge.py). FastAPI's APIRoute, unlike Starlette's Route, answered it
    405. The app's own routes (/healthz) are of this class, the routers' `KeyCheckedRoute`."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        return super().matches(self._as_get(scope))

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().handle(self._as_get(scope), receive, send)

    def _as_get(self, scope: Scope) -> Scope:
        """A HEAD request's scope as its GET's on a route that answers GET; any other as it is."""
        if scope.get("method") == "HEAD" and "GET" in self.methods:
            return {**scope, "method": "GET", HEAD_ASKED: True}
        return scope


class KeyCheckedRoute(HeadAsGet):
    """The route class of every router (`APIRouter(route_class=...)`, FastAPI's extension
    point for routes): the key is checked before the route reads anything of the request.

    FastAPI validates the path, query and body beside the dependencies and answers 422 for
    any error among them, so a key checked in a dependency lost to a bad parameter (and,
    checked in the handler's thread as it once was, was not even counted). Here `handle`,
    which the router calls before FastAPI's own request handling (and before its 405 for
    a method the path lacks), checks the key first; a bad one ends the request with 401 or
    429. `principal` then hands over the principal found. On a route that needs the admin
    key (`admin` among its dependencies) a client key is then 403, before the body or a
    parameter is read: a malformed body is the same 403 as a well-formed one.

    On a read (GET, HEAD) that takes the request's connection, a key this process has seen
    is answered from memory on the event loop, no thread or connection taken
    (`_kept_caller`): its keys' version rides on the handler's own version read, or is read
    on its own before the answer leaves (`request_connection`). When it moved, the
    handler's work (its answer or its error) is dropped and the request starts over: the
    key checked afresh (401 if it no longer holds, its new tier and limits if they
    changed), counted once, then the handler again. So the keys are read in the statement
    that reads the data, or later, never earlier. A request refused before the handler
    took its connection (an admin route's 403, an unknown parameter's 422, a method's 405)
    settles that check first (`_answered`, `settle_deferred`): a revoked key is 401 there
    too, and the refusal is counted against the key's limit as it is now.

    A GET route answers HEAD as its GET (`HeadAsGet`): key check and count included."""

    def __init__(self, path: str, endpoint: Any, **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        calls = set(_calls(self.dependant))
        self.access = (
            Access.KEY if principal in calls else Access.KEY_UNLESS_PUBLIC if report_reader in calls else Access.OPEN
        )
        self.holds = request_connection in calls  # the check's connection is the handler's
        self.defers = self.holds and self.methods <= READS
        self.admin_only = admin in calls  # the key's rights, like the key, come before anything read
        self.query_names = frozenset(f.alias for f in get_flat_dependant(self.dependant).query_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = self._as_get(scope)
        request = Request(scope)
        presented = request.headers.get(api_key_header_name)
        if not self._needs_key(request, presented):
            await self._handled(scope, receive, send)
            return
        try:
            try:
                await self._answered(request, presented, scope, receive, send)
            except VersionMoved:
                start_over(request)
                await self._checked(request, presented, hold=self.holds)  # afresh, from the database
                await self._handled(scope, receive, send)
        finally:
            await _release_unadopted(request)

    async def _answered(
        self, request: Request, presented: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The key's check, then the kept answer or the route's handling. A refusal raised
        before the handler took the request's connection (an admin route's 403, an unknown
        parameter's 422, a method's 405) first settles the key check left to ride on that
        connection (`settle_deferred`): a key that moved meanwhile starts over (401 if it no
        longer holds), one over its limit is 429, and the refusal is counted as any other."""
        try:
            await self._checked(request, presented, self.defers, self.holds)
            if not await self._kept(request, scope, receive, send):
                await self._handled(scope, receive, send)
        except VersionMoved:
            raise
        except Exception:
            await settle_deferred(request)
            raise

    async def _handled(self, scope: Scope, receive: Receive, send: Send) -> None:
        """FastAPI's handling, after the query string is held to the route's parameters: a
        parameter the route does not take is a 422 naming it (`?offset=5` on a route that
        pages by cursor answered the first page as if it were the sixth), as a body's
        unknown field is (`extra="forbid"`), and so is a body sent to a route that takes
        none, unless it says nothing (`_nothing_sent`). Not on a kept answer: its URL is one a route
        answered, so it passed (`_kept`); a method the route does not serve is its 405."""
        if self.body_field is None and scope["method"] in self.methods and carries_body(Request(scope).headers):
            receive = await _nothing_sent(receive)
        query = scope.get("query_string", b"")
        if query and scope["method"] in self.methods:
            given = dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
            unknown = sorted(set(given) - self.query_names)
            if unknown:
                known = sorted(self.query_names)
                raise RequestValidationError([_unknown_parameter(name, given[name], known) for name in unknown])
        await super().handle(scope, receive, send)

    async def _kept(self, request: Request, scope: Scope, receive: Receive, send: Send) -> bool:
        """A GET answered from the body kept for its URL and caller's read (`Services.answer`,
        `kept_answer`): the read's version read on the request's connection, the key check
        riding on it, and no parameter read again (the URL is the one validated when the
        read was answered); False when none is kept, and the route handles it as ever. The
        caller's whole `Principal` is in the key (its key, client, tier and rights), not only
        the portfolio it reads: a route's own checks of its caller are never skipped for
        another key. Runs after the key's check and an admin route's 403."""
        if not self.defers or scope["method"] != "GET" or carries_body(request.headers):
            return False  # a GET with a body is refused by `_handled`
        svc = _services(request)
        answer_key = (scope["path"], scope["query_string"], request_fact(request, "principal"))
        request.state.answer_key = answer_key
        if svc.recipes.get(answer_key) is None:
            return False
        async with connection_of(request) as conn:
            response = await svc.kept_answer(conn, answer_key)
        if response is None:
            return False
        await response(scope, receive, send)
        return True

    async def _checked(self, request: Request, presented: str | None, defer: bool = False, hold: bool = False) -> None:
        """The key (`check_key`: 401, 429), then on an admin route the key's rights (`admin`:
        403), so a client key learns nothing from a malformed body or parameter there."""
        caller = await check_key(request, presented, defer, hold)
        if self.admin_only:
            await admin(caller)

    def _needs_key(self, request: Request, presented: str | None) -> bool:
        if self.access is Access.KEY_UNLESS_PUBLIC:
            return bool(presented) or not _services(request).settings.public_reports
        return self.access is Access.KEY


def carries_body(headers: Any) -> bool:
    """Whether a request carries a body, from its headers alone: a Content-Length above 0,
    or a Transfer-Encoding (a chunked body declares no length). The edge's rule for what it
    authenticates before reading (api/edge.py) and the routes' for a body they do not take."""
    length = headers.get("content-length")
    return (length is not None and length.strip() != "0") or "transfer-encoding" in headers


EMPTY_BODY_BYTES = 64  # more than this is never an empty JSON object and its spaces


async def _nothing_sent(receive: Receive) -> Receive:
    """A body sent to a route that takes none, read (up to EMPTY_BODY_BYTES) and let through
    when it says nothing: empty, spaces, or an empty JSON object (`{}`, which many clients
    send with every POST: Angular's `post(url, {})`, `requests.post(url, json={})`); the
    messages the route may read after it (a disconnect) come from `receive`. Anything else
    is the 422 `_unwanted_body` says."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message["type"] == "http.request" and message.get("more_body", False)
        if sum(map(len, chunks)) > EMPTY_BODY_BYTES:
            raise RequestValidationError([_unwanted_body()])
    said = re.sub(rb"\s+", b"", b"".join(chunks))
    if said not in (b"", b"{}"):
        raise RequestValidationError([_unwanted_body()])
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": b"", "more_body": False}

    return replayed


def _unwanted_body() -> ErrorDetails:
    """A validation error for a body sent to a route that takes none, as pydantic words a
    body's unknown field: `{"quantity": 10}` sent to confirm a suggestion of 243 shares was
    ignored and all 243 were bought."""
    return ErrorDetails(
        type="extra_forbidden", loc=("body",), msg="this route takes no request body; send none (or {})", input=None
    )


def _unknown_parameter(name: str, value: str, known: list[str]) -> ErrorDetails:
    """A validation error for a query parameter the route does not take, as pydantic words
    a body's unknown field."""
    takes = f"this route takes {', '.join(known)}" if known else "this route takes no query parameters"
    return ErrorDetails(
        type="extra_forbidden", loc=("query", name), msg=f"not a parameter of this route ({takes})", input=value
    )


def _calls(dependant: Dependant) -> Any:
    """Every dependency callable under `dependant`, depth first."""
    for sub in dependant.dependencies:
        yield sub.call
        yield from _calls(sub)


# --- the caller's portfolio ---------------------------------------------------------------


def caller_portfolio_on(conn: Connection, svc: Services, caller: Principal) -> str:
    """The caller's portfolio id on the request's connection, opened there on first use
    (the desk's `open_portfolio`)."""
    return svc.desk.open_portfolio(caller.account, conn)


def caller_portfolio(svc: Services, caller: Principal) -> str:
    """The caller's portfolio id, opened on first use in a transaction of its own (a
    client key's is opened when issued)."""
    return svc.desk.open_portfolio(caller.account)
