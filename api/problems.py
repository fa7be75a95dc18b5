"""RFC 9457 problem details for every non-2xx response.

Domain errors (market/errors.py) map to statuses here and only here, one class each.
Every problem's `type` is a URI reference relative to the service, `/problems/<slug>`, one
per kind of problem (one per status the API answers, plus `budget-exceeded`); GET on it
(no key needed) returns a page saying what the problem means and what to do about it.
Each type has one title, whatever the occurrence (RFC 9457 3.1.3); `detail` says what
happened this time. PROBLEM_TYPES below is the one table behind the answers and the pages.
"""

from __future__ import annotations

import functools
import html
import logging
import uuid
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from api.security import api_key_header_name, check_key, refund, refunded_refusal
from api.services import ClientGone
from api.uploads import unreadable_form
from market import errors
from market.text import encodable

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"
# RFC 9110 15.5.2: a 401 MUST carry a challenge naming how to authenticate. API keys have no
# registered scheme; `APIKey` is FastAPI's (its APIKeyHeader's own 401), the parameter names the header.
CHALLENGE = {"WWW-Authenticate": f'APIKey header="{api_key_header_name}"'}

PROBLEMS_PATH = "/problems"


@dataclass(frozen=True)
class ProblemType:
    """One kind of problem: its page's slug, its status, and its title (RFC 9457 3.1.3: the
    same for every occurrence; what this occurrence is goes in `detail`), what it means and
    what to do about it. The one table behind the answers, the pages and docs/errors.md."""

    slug: str
    status: int
    title: str
    meaning: str
    remedy: str

    @property
    def uri(self) -> str:
        """The type's URI: a reference relative to the service (RFC 9457 3.1.1 lets `type` be
        one; the client resolves it against the URL it asked), the same in every answer. It
        was built from the request's Host header, so a client naming another host had that
        host echoed into the answer (and into any cache that stored it)."""
        return f"{PROBLEMS_PATH}/{self.slug}"


def _type(status: int, slug: str, title: str, meaning: str, remedy: str) -> ProblemType:
    return ProblemType(slug, status, title, meaning, remedy)


# The type of each status the API answers (its title the status's RFC 9110 reason phrase).
PROBLEM_TYPES: dict[int, ProblemType] = {
    400: _type(
        400,
        "bad-request",
        "Bad Request",
        "The request could not be read (e.g. a body that is not valid JSON).",
        "Send a well-formed request; the detail names what could not be read.",
    ),
    401: _type(
        401,
        "unauthenticated",
        "Unauthorized",
        "No API key was sent, or the key is malformed, unknown, revoked or rotated out.",
        "Send your key in the X-API-Key header (svc-sk- followed by 40 hex digits); ask the operator for a new "
        "key if yours was revoked or rotated.",
    ),
    403: _type(
        403,
        "forbidden",
        "Forbidden",
        "The key is valid but its tier or settings do not allow this (admin-only endpoints, macro "
        "insights for STANDARD keys or with macro access switched off).",
        "Use a key of the tier the detail names, or ask the operator to change your key's tier or switch.",
    ),
    404: _type(
        404,
        "not-found",
        "Not Found",
        "Nothing is stored under what the request names: an unknown symbol, portfolio, suggestion, "
        "key or day, or a path that is not an endpoint.",
        "Check the identifier; GET /api/market/latest lists the symbols, /docs lists the endpoints.",
    ),
    405: _type(
        405,
        "method-not-allowed",
        "Method Not Allowed",
        "The path exists but not with this HTTP method.",
        "Use one of the methods in the response's Allow header.",
    ),
    409: _type(
        409,
        "conflict",
        "Conflict",
        "The request contradicts what is stored: an idempotency key reused with another body, a "
        "suggestion already decided or out of date (the market its plan read moved since: a split, a "
        "dividend, a corrected close), a sale of shares not held, a trade that would overdraw cash.",
        "Read the current state (the detail says what clashed) and send a request that fits it.",
    ),
    413: _type(
        413,
        "payload-too-large",
        "Content Too Large",
        "The body or upload is over the service's limit.",
        "Send a smaller body; the detail gives the limit.",
    ),
    414: _type(
        414,
        "uri-too-long",
        "URI Too Long",
        "The URL is over the service's limit (e.g. a huge GraphQL document sent by GET).",
        "Send long GraphQL documents by POST.",
    ),
    415: _type(
        415,
        "unsupported-media-type",
        "Unsupported Media Type",
        "The body's content type is not one this endpoint reads.",
        "Send application/json, or multipart/form-data with a `file` part for uploads.",
    ),
    422: _type(
        422,
        "invalid-input",
        "Unprocessable Content",
        "A value is outside what the endpoint accepts: a malformed date or amount, a date "
        "outside the supported range, a field that fails the schema, a trade, cash movement or "
        "statement line the ledger refuses (the day's price band, the liquidity rails, the cash "
        "it would leave).",
        "Correct the fields named in the detail (and in `errors` for schema failures).",
    ),
    429: _type(
        429,
        "rate-limited",
        "Too Many Requests",
        "The key (or, without a key, the address) is over its requests per minute, or its "
        "client already has as many uploads being read as it may.",
        "Wait the Retry-After seconds; the RateLimit headers show the budget.",
    ),
    500: _type(
        500,
        "internal-error",
        "Internal Server Error",
        "The service failed in a way it did not expect.",
        "Quote the request_id to the operator; the request may be retried.",
    ),
    503: _type(
        503,
        "not-ready",
        "Service Unavailable",
        "The data asked for is not there yet: the day's delivery, stage or model has not run, or "
        "the database schema is not up to date; or the process is at its limit of uploads being "
        "read.",
        "Retry after the stage named in the detail has run, or after the Retry-After seconds when given.",
    ),
}
# A kind of problem of its own within a status (GraphQL's code BUDGET_EXCEEDED, not BAD_USER_INPUT).
BUDGET_EXCEEDED = _type(
    422,
    "budget-exceeded",
    "Budget Exceeded",
    "Work on what the request sent (a research note being read, a GraphQL operation) ran past "
    "its time budget and was stopped; nothing of it was kept.",
    "Send less at once (a shorter note, fewer fields or writes in one operation).",
)
ALL_TYPES: tuple[ProblemType, ...] = (*PROBLEM_TYPES.values(), BUDGET_EXCEEDED)

# The type of each domain error class (market/errors.py), the most specific class first.
TYPE_BY_ERROR: dict[type[errors.MarketIntelError], ProblemType] = {
    errors.BudgetExceededError: BUDGET_EXCEEDED,
    errors.InvalidInputError: PROBLEM_TYPES[422],
    errors.NotFoundError: PROBLEM_TYPES[404],
    errors.ConflictError: PROBLEM_TYPES[409],
    errors.NotReadyError: PROBLEM_TYPES[503],
    errors.AuthenticationError: PROBLEM_TYPES[401],
    errors.PermissionDeniedError: PROBLEM_TYPES[403],
    errors.PayloadTooLargeError: PROBLEM_TYPES[413],
    errors.UnsupportedMediaTypeError: PROBLEM_TYPES[415],
    errors.RateLimitedError: PROBLEM_TYPES[429],
}


def problem(
    request: Request,
    status: int,
    detail: str,
    *,
    kind: ProblemType | None = None,
    headers: dict[str, str] | None = None,
    **extra: object,
) -> JSONResponse:
    """The problem+json answer: `kind` (by default the status's type) gives the type URI and
    the title, `detail` says what happened this time."""
    kind = kind or PROBLEM_TYPES.get(status, PROBLEM_TYPES[500])
    request_id = getattr(request.state, "request_id", None) or uuid.uuid4().hex
    body = _encodable(
        {
            "type": kind.uri,
            "title": kind.title,
            "status": status,
            "detail": detail,
            "instance": request.url.path,
            "request_id": request_id,
            **extra,
        }
    )
    challenge = CHALLENGE if status == 401 else {}
    return JSONResponse(
        body,
        status_code=status,
        media_type=PROBLEM_JSON,
        headers={**(headers or {}), **challenge, "X-Request-ID": request_id},
    )


def _encodable(value: Any) -> Any:
    """`value` (a problem's body) with every text `encodable`: a detail quotes what the
    client sent (a key named twice, an unknown operation's name), and a lone surrogate in it
    (JSON's `"\\ud800"`) made the answer fail to encode, a 500 instead of the problem."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encodable(v) for v in value]
    return value


def problem_for(request: Request, error: errors.MarketIntelError) -> JSONResponse:
    """The problem response of a domain error (the exception handler and the edge share it)."""
    kind = type_for(error)
    if kind is None:
        log.exception("unmapped domain error", exc_info=error)
        return problem(request, 500, "internal error; quote the request id to the operator")
    return problem(request, kind.status, error.detail, kind=kind, headers=error.context.get("headers"))  # type: ignore[arg-type]


def unexpected(request: Request, exc: BaseException) -> JSONResponse:
    """The 500 of an error no handler expected, logged with its traceback. The edge
    (api/edge.py) answers it before Starlette's outermost handler would, which sends the
    same answer and then re-raises, so that the server drops the connection: a client
    could see the reset instead of the answer. A database error on a store whose schema is
    not current (the API serves degraded until `marketintel db upgrade`, /healthz says so)
    is the 503 `SCHEMA_BEHIND` says, with Retry-After: every request was a 500."""
    log.exception("unhandled error", exc_info=exc)
    if _schema_behind(request):
        return problem(request, 503, SCHEMA_BEHIND, headers={"Retry-After": str(SCHEMA_RETRY_SECONDS)})
    return problem(request, 500, "internal error; quote the request id to the operator")


def _schema_behind(request: Request) -> bool:
    """Whether the store's schema is not current, asked only once a request failed (it reads
    the applied migrations); False where the store cannot even say (the 500 stands)."""
    try:
        return not request.app.state.services.desk.schema_current()
    except Exception:  # noqa: BLE001 - a store that does not answer: the error is the service's
        return False


SCHEMA_BEHIND = "the service's database is not up to date (an upgrade is pending); retry later"
SCHEMA_RETRY_SECONDS = 60


def type_for(error: errors.MarketIntelError) -> ProblemType | None:
    """The problem type of a domain error: its nearest class in TYPE_BY_ERROR; None for one
    the API does not expect (a 500)."""
    for cls in type(error).__mro__:
        if cls in TYPE_BY_ERROR:
            return TYPE_BY_ERROR[cls]
    return None


def _not_json(error: dict) -> str:
    """A body that does not decode as JSON, said as what is wrong and where: FastAPI's own
    words were "JSON decode error" under the character's offset ("11: JSON decode error")."""
    reason = (error.get("ctx") or {}).get("error", "not JSON")
    return f"the body is not valid JSON: {reason} at character {error['loc'][-1]}; send one JSON object"


async def _domain(request: Request, exc: errors.MarketIntelError) -> JSONResponse:
    """A domain error's problem; one refusing an admitted request before its work is not
    counted against the key's limit (api/security.py `refund`)."""
    if refunded_refusal(exc):
        await run_in_threadpool(refund, request, request.app.state.services)
    return problem_for(request, exc)


def install_problem_handlers(app: FastAPI, open_paths: tuple[str, ...]) -> None:
    """The problem answers, and the one for a path no route serves (`_unrouted`) in place of
    Starlette's redirect of a path with its trailing slash toggled."""
    app.exception_handler(errors.MarketIntelError)(_domain)
    app.router.redirect_slashes = False
    app.router.default = functools.partial(_unrouted, app, open_paths)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            headers = {**(headers or {}), "Allow": _allowed_methods(app, request)}
        return problem(request, exc.status_code, _http_detail(request, exc, headers), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        unreadable = next((e for e in exc.errors() if e["type"] == "json_invalid"), None)
        if unreadable is not None:
            return problem(request, 422, _not_json(unreadable), errors=fields)
        # Name each failing field and why (pydantic's messages do not repeat the input).
        named = "; ".join(f"{'.'.join(str(p) for p in f['loc'][1:]) or f['loc'][0]}: {f['msg']}" for f in fields)
        return problem(request, 422, f"the request does not match the schema: {named}", errors=fields)

    @app.exception_handler(ClientGone)
    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, exc: Exception) -> Response:
        """The client left before its answer (a body cut off, a heavy request's turn come
        too late): nothing to answer and nothing wrong with the service. 499, nginx's
        'client closed request', for the access log."""
        log.info("client left before its answer: %s %s (%s)", request.method, request.url.path, type(exc).__name__)
        return Response(status_code=499)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return unexpected(request, exc)

    @app.get(PROBLEMS_PATH + "/{slug}", response_class=HTMLResponse, include_in_schema=False)
    def problem_page(slug: str) -> HTMLResponse:
        """The page a problem's `type` URI resolves to (no key needed)."""
        for kind in ALL_TYPES:
            if kind.slug == slug:
                return HTMLResponse(_page(kind))
        raise StarletteHTTPException(404, f"no problem type '{slug[:40]}'; the types are listed at {PROBLEMS_PATH}")

    @app.get(PROBLEMS_PATH, response_class=HTMLResponse, include_in_schema=False)
    def problem_index() -> HTMLResponse:
        rows = "".join(
            f'<li><a href="{kind.uri}">{kind.status} {kind.slug}</a> ({html.escape(kind.title)}): '
            f"{html.escape(kind.meaning)}</li>"
            for kind in ALL_TYPES
        )
        return HTMLResponse(
            f"<!doctype html><html lang=en><meta charset=utf-8><title>Problem types</title>"
            f"<h1>Problem types</h1><p>Every error is RFC 9457 application/problem+json; its "
            f"<code>type</code> links here.</p><ul>{rows}</ul></html>"
        )


async def _unrouted(app: FastAPI, open_paths: tuple[str, ...], scope: Scope, receive: Receive, send: Send) -> None:
    """A path no route serves, a route's path with a trailing slash among them: 404, after
    the key check every request off the open paths passes (401 without a valid key, 429
    past the limit, counted either way), and naming the route's path when there is one.
    Never Starlette's 307 to the path without the slash: its absolute Location is built
    from the scheme the request arrived with (http:// behind a proxy that does not say
    https), and clients that follow redirects resend X-API-Key to it. A WebSocket is
    refused at its handshake, as Starlette refuses it."""
    if scope["type"] != "http":
        await app.router.not_found(scope, receive, send)
        return
    request = Request(scope, receive)
    path = scope["path"]
    meant = path.rstrip("/") or "/"
    if meant != path and not _served(app, {**scope, "path": meant}):
        meant = path
    if meant not in open_paths:
        await check_key(request, request.headers.get(api_key_header_name))
    detail = f"no endpoint at {path[:200]}; " + (
        f"did you mean {meant[:200]} (without the trailing slash)?"
        if meant != path
        else "the endpoints are listed at /docs"
    )
    raise StarletteHTTPException(404, detail)


def _served(app: FastAPI, scope: Scope) -> bool:
    """Whether some route serves `scope`'s path, whatever the method."""
    return any(route.matches(scope)[0] is not Match.NONE for route in app.router.routes)


def _allowed_methods(app: FastAPI, request: Request) -> str:
    """Every method some route serves at this path: Starlette's 405 named only the first
    route that matched it (OPTIONS /api/portfolio/cash listed GET, not POST, which a route
    of its own serves), and HEAD where the route answers it as its GET (api/security.py
    `HeadAsGet`; /graphql does not): a route's `methods` never listed it."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = (
            route.matches({**request.scope, "method": "GET"}) if hasattr(route, "matches") else (Match.NONE, None)
        )
        if match is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
            if route.matches({**request.scope, "method": "HEAD"})[0] is Match.FULL:
                methods.add("HEAD")
    return ", ".join(sorted(methods))


def _http_detail(request: Request, exc: StarletteHTTPException, headers: dict[str, str] | None) -> str:
    """Routing errors say what was asked and what exists, not the status phrase again; an
    unreadable multipart body, why (api/uploads.py `unreadable_form`)."""
    detail = str(exc.detail)
    if exc.status_code == 400 and isinstance(exc.__context__, MultiPartException) and exc.__context__.__cause__:
        return unreadable_form(exc.__context__)  # Starlette's "Invalid multipart data." said nothing of why
    if detail != HTTPStatus(exc.status_code).phrase:
        return detail
    if exc.status_code == 404:
        return f"no endpoint at {request.url.path[:200]}; the endpoints are listed at /docs"
    if exc.status_code == 405:
        allowed = (headers or {}).get("Allow") or "see /docs"
        return f"{request.method} is not allowed on {request.url.path[:200]}; allowed: {allowed}"
    return detail


def _page(kind: ProblemType) -> str:
    title = html.escape(f"{kind.status} {kind.title}")
    return (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{title}</title>"
        f"<h1>{title} <small>({kind.slug})</small></h1><p>{html.escape(kind.meaning)}</p>"
        f"<h2>What to do</h2><p>{html.escape(kind.remedy)}</p>"
        f"<p>The response body is RFC 9457 application/problem+json: <code>detail</code> says what happened "
        f'this time, <code>request_id</code> identifies the request. <a href="{PROBLEMS_PATH}">All problem '
        f"types</a>.</p></html>"
    )
