"""The edge: the one ASGI middleware every request passes before any route, dependency or
body parser sees it.

In order:
1. A request id: the caller's `X-Request-ID` when it is a plain token (letters, digits,
   `.` `_` `:` `-`, at most 128), else a fresh one; it goes back on every response.
2. A URL longer than `max_url_bytes` is 414 (a GraphQL document in `GET ?query=` included);
   one whose decoded path or query holds a control character is 422 (market/text.py), and
   so is a query that names a parameter twice (`_query_fault`) and a header read as one
   value sent twice (`SINGLE_HEADERS`; a doubled X-API-Key is the authentication's 401).
3. A request that carries a body (a Content-Length above 0, or Transfer-Encoding), or
   that 2. refuses, on any path but the open ones (`/healthz`, the docs) is
   authenticated here first, before a byte of its body is read: no key, a bad key or an
   exhausted rate limit is answered (401, 429, counted) and the body is never parsed,
   buffered or spooled. The principal is kept on the request, so the route's own key
   check reuses it (counted once against the rate limit); a body that completes
   RECHECK_AFTER_SECONDS or more after that check has the key checked again
   (`_held_through_body`: 401 when it was revoked meanwhile). Every other request is
   authenticated by its route before anything of it is read (api/security.py
   `KeyCheckedRoute`).
4. The media type (JSON endpoints take JSON, the two uploads multipart), the content
   coding (none: `_coding_refusal`, /graphql's body too) and the declared Content-Length
   against the path's cap are checked from the headers (415, 413).
5. The body is counted as it streams in: the moment it passes the cap (a chunked body
   declares no length) reading stops with a 413, so nothing larger than the cap is ever
   held in memory or spooled to disk.

Caps: uploads `pdf_max_bytes` plus the multipart framing; every other body (REST JSON and
GraphQL) `max_body_bytes`.
"""

from __future__ import annotations

import functools
import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from fastapi import HTTPException
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import problem, problem_for, unexpected
from api.security import api_key_header_name, authenticate, carries_body, held_since_check, recheck_due, request_fact
from market.errors import AuthenticationError, MarketIntelError
from market.settings import Settings
from market.text import unprintable

UPLOAD_PATHS = ("/api/portfolio/upload-pdf", "/api/portfolio/upload-research")
OPEN_PATHS = ("/healthz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json")
MULTIPART_OVERHEAD = 1 << 16
REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def _query_fault(query_string: bytes) -> str | None:
    """What is wrong with a query string, as its 422 says it, or None: a control character
    once decoded (market/text.py), or a parameter named twice, REST's or /graphql's GET
    alike: `?side=buy&side=sell` previewed a sell (the last one counted) where a proxy or a
    log reading the first saw a buy, the ambiguity a JSON body's key named twice is refused
    for (api/jsonbody.py). No route takes a parameter more than once."""
    text = query_string.decode("latin-1")
    where = unprintable(unquote_plus(text))
    if where is not None:
        return f"the URL's query holds {where}; send printable text"
    seen: set[str] = set()
    for name, _ in parse_qsl(text, keep_blank_values=True):
        if name in seen:
            return f"the URL's query names the parameter '{name[:60]}' more than once; send each parameter once"
        seen.add(name)
    return None


# Remembered for the last 1,024 query strings up to 4 KB: a client polling a URL sends the
# same one each time, and the GraphQL screen's document by GET is 300 escaped bytes to
# decode on every request.
_kept_query_check = functools.lru_cache(maxsize=1024)(_query_fault)
QUERY_KEPT_BYTES = 4096


# Headers the service reads as one value. Sent twice, which one is meant is a guess: a
# proxy or a log may take the last where the service took the first (two X-API-Key headers
# acted as the first client, two Idempotency-Keys keyed the write by the first). A doubled
# X-API-Key is a bad key (401, api/security.py `_authenticate`, the edge's check first).
SINGLE_HEADERS = ("X-API-Key", "Idempotency-Key")


def _header_refusal(request: Request) -> Any:
    """422 for a header of SINGLE_HEADERS sent more than once; None otherwise."""
    for name in SINGLE_HEADERS:
        sent = len(request.headers.getlist(name))
        if sent > 1:
            return problem(request, 422, f"the {name} header is sent {sent} times; send it once")
    return None


class BodyTooLarge(HTTPException):
    """Raised from `receive` once a body passes its cap; FastAPI's body parsing re-raises
    an HTTPException as it is, and the problem handlers answer it as 413."""

    def __init__(self, detail: str) -> None:
        super().__init__(status_code=413, detail=detail)


class KeyWithdrawn(HTTPException):
    """Raised from `receive` when the body's last byte arrives and its key, checked before
    the body was read, no longer works (`_held_through_body`); answered 401 like BodyTooLarge's 413."""

    def __init__(self, detail: str) -> None:
        super().__init__(status_code=401, detail=detail)


async def _held_through_body(request: Request) -> None:
    """The key of a request whose body has just arrived checked again when the body came a
    while after the key was checked (api/security.py `held_since_check`): KeyWithdrawn
    (401, nothing of the request run or counted) when it was revoked or rotated out
    meanwhile. A withdrawal whose body came half a second after the key was revoked was booked."""
    if not recheck_due(request):
        return
    try:
        await run_in_threadpool(held_since_check, request, "its body arrived")
    except AuthenticationError as withdrawn:
        raise KeyWithdrawn(withdrawn.detail) from withdrawn


# The docs pages' static assets (api/docs_pages.py) are the same for everyone and never change
# while a process runs: the one answer a cache may keep.
CACHEABLE_PREFIX = "/static/"
NO_STORE = {"Cache-Control": "no-store"}


def _with_headers(request: Request, start: Message) -> Message:
    """A response's start message with the request id, the rate limit's headers, the
    key's (`Principal.key_headers`: a key in a rotation's grace period is deprecated) and,
    where the route set none, `Cache-Control: no-store` (`NO_STORE`): an answer depends on
    the caller's key, which travels in X-API-Key, a header no shared cache knows as a
    credential (RFC 9111 3.5 exempts `Authorization` alone), so a proxy or CDN in front
    could store one client's portfolio under its URL (`GET /graphql?query=...` too) and
    hand it to the next client asking that URL; and its RateLimit fields are this request's."""
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"x-request-id"]
    headers.append((b"x-request-id", request.state.request_id.encode()))
    decision = request_fact(request, "rate_limit")
    caller = request_fact(request, "principal")
    added = {**(decision.headers() if decision is not None else {}), **(caller.key_headers() if caller else {})}
    if not request.scope.get("path", "").startswith(CACHEABLE_PREFIX):
        added.update(NO_STORE)
    present = {k.lower() for k, _ in headers}
    headers += [(k.lower().encode(), v.encode()) for k, v in added.items() if k.lower().encode() not in present]
    return {**start, "headers": headers}


def _query_check(query_string: bytes) -> str | None:
    check = _kept_query_check if len(query_string) <= QUERY_KEPT_BYTES else _query_fault
    return check(query_string)


def checks_media_type(path: str) -> bool:
    """Whether a body sent to `path` is held to a media type (415): every REST path, the
    uploads to multipart and the rest to JSON (`Edge._body_refusal`)."""
    return path.startswith("/api/")


def body_refusals(path: str) -> tuple[int, ...]:
    """What the edge may answer a request to `path` (a route's path or its template) that
    carries a body, whatever its method, before any route reads it: 413 past the path's cap,
    415 where it checks the media type; nothing on the open paths, which it lets through.
    The OpenAPI document lists them on each operation from here (api/openapi.py)."""
    if path in OPEN_PATHS:
        return ()
    return (413, 415) if checks_media_type(path) else (413,)


def declared_length(length: str | None) -> int | None:
    """A Content-Length header's bytes, or None where it is absent or not ASCII digits (the
    server in front answers a malformed one; "²" is a digit to `str.isdigit` but not to
    `int`, and raised past every handler here)."""
    text = (length or "").strip()
    return int(text) if text.isascii() and text.isdigit() else None


def _coding_refusal(request: Request) -> Any:
    """415 for a body sent with a content coding other than `identity` (RFC 9110 15.5.16,
    with `Accept-Encoding: identity`), on every path whose body the edge checks, /graphql
    included; None without one. The service decodes none: a gzipped JSON body was a 400
    saying its bytes were not UTF-8, and a body declared gzip but sent plain (a proxy that
    inflated it and kept the header) was read as it came and acted on."""
    sent = ",".join(request.headers.getlist("content-encoding"))
    codings = [c.strip().lower() for c in sent.split(",") if c.strip() and c.strip().lower() != "identity"]
    if not codings:
        return None
    return problem(
        request,
        415,
        f"the request body is sent with Content-Encoding {', '.join(codings)[:60]}, which this service does not "
        "decode; send the body as it is, without a Content-Encoding",
        headers={"Accept-Encoding": "identity"},
    )


class Edge:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app, self.settings = app, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)  # no receive: nothing here can read the body
        given = request.headers.get("x-request-id", "")
        # uuid4().hex's form, at half its cost
        request.state.request_id = given if REQUEST_ID.match(given) else secrets.token_hex(16)
        started = False

        head = scope["method"] == "HEAD"

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = _with_headers(request, message)
            elif head and message.get("body"):  # a HEAD answer has the GET's header fields, no content
                message = {**message, "body": b""}
            await send(message)

        path = request.url.path
        cap = self._cap(path)
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise BodyTooLarge(f"the request body is {self._limit(path)}; reading stopped there")
                if not message.get("more_body", False):
                    await _held_through_body(request)
            return message

        try:
            refusal = await self._refusal(request, path)
            if refusal is not None:
                await refusal(scope, receive, send_with_headers)
                return
            await self.app(scope, counted, send_with_headers)
        except Exception as exc:
            if started:
                raise
            # A body past its cap, raised where no exception handler saw it (outside a route), is
            # a 413; any other error no handler expected (the edge's own key check's included) is
            # a 500 the client receives (api/problems.py `unexpected`), never a dropped connection.
            from_body = isinstance(exc, BodyTooLarge | KeyWithdrawn)
            answer = problem(request, exc.status_code, str(exc.detail)) if from_body else unexpected(request, exc)
            await answer(scope, receive, send_with_headers)

    async def _refusal(self, request: Request, path: str) -> Any:
        """The response that ends the request here, or None to go on. A request that is
        refused for its URL or carries a body is authenticated first (the open paths
        aside): a bad key is a 401, counted, whatever else is wrong with the request."""
        url_refusal = self._url_refusal(request) or _header_refusal(request)
        length = request.headers.get("content-length")
        if (url_refusal is None and not carries_body(request.headers)) or path in OPEN_PATHS:
            return url_refusal
        try:
            await run_in_threadpool(
                authenticate, request, request.app.state.services, request.headers.get(api_key_header_name)
            )
        except MarketIntelError as error:
            return problem_for(request, error)
        request.state.key_checked_at = time.monotonic()  # a body that completes long after is checked again
        return url_refusal or self._body_refusal(request, path, length)

    def _url_refusal(self, request: Request) -> Any:
        """414 for a URL over `max_url_bytes`, 422 for a control character in its path or
        what `_query_fault` finds in its query; None for a URL that passes."""
        settings = self.settings
        if (
            len(request.scope.get("query_string", b"")) + len(request.scope.get("raw_path", b""))
            > settings.max_url_bytes
        ):
            return problem(
                request,
                414,
                f"the URL is over the limit of {settings.max_url_bytes:,} bytes; send a GraphQL document by POST",
            )
        where = unprintable(request.scope.get("path", ""))
        if where is not None:
            return problem(request, 422, f"the URL's path holds {where}; send printable text")
        fault = _query_check(request.scope.get("query_string", b""))
        return None if fault is None else problem(request, 422, fault)

    def _body_refusal(self, request: Request, path: str, length: str | None) -> Any:
        """413 for a declared length over the path's cap, 415 for a content coding
        (`_coding_refusal`) or the wrong media type."""
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        cap = self._cap(path)
        declared = declared_length(length)
        if declared is not None and declared > cap:
            return problem(request, 413, f"the request body is {declared:,} bytes, {self._limit(path)}")
        coded = _coding_refusal(request)
        if coded is not None:
            return coded
        if path in UPLOAD_PATHS:
            if media != "multipart/form-data":
                return problem(
                    request,
                    415,
                    f"uploads are multipart/form-data with a `file` part, not {media or 'no content type'}",
                )
        elif checks_media_type(path) and media != "application/json" and not media.endswith("+json"):
            return problem(request, 415, f"request bodies are application/json, not {media or 'no content type'}")
        return None

    def _limit(self, path: str) -> str:
        if path in UPLOAD_PATHS:
            return (
                f"over the limit of {self.settings.pdf_max_bytes:,} bytes for an upload "
                f"(plus {MULTIPART_OVERHEAD:,} of multipart framing)"
            )
        return f"over the limit of {self.settings.max_body_bytes:,} bytes"

    def _cap(self, path: str) -> int:
        if path in UPLOAD_PATHS:
            return self.settings.pdf_max_bytes + MULTIPART_OVERHEAD
        return self.settings.max_body_bytes
