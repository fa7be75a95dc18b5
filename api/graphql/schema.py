"""The schema and the FastAPI router mounted at /graphql.

Batching is off (Strawberry's default: no `batching_config`), so one HTTP request is one
operation, capped by one cost estimate and counted against the key's rate limit as one
request, a mutation as one per write it will make (api/graphql/limits.py `WritesCharged`).
Introspection and GraphiQL are on by default for developers; `graphql_introspection=false`
turns both off. GET is accepted for queries (never mutations), as the GraphQL-over-HTTP
spec allows; a key is required either way, so cross-site requests cannot act.

A market query whose answer is kept for the current data version is answered by its
route before FastAPI or Strawberry see it (`KeptAnswerRoute`): no heavy turn, no
operation, no encoding; every other operation runs in its client's heavy turn
(`StrictGraphQLRouter`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from typing import Any

import strawberry
from cross_web import HTTPException as TransportError
from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette.datastructures import QueryParams
from starlette.types import Message, Receive, Scope, Send
from strawberry.extensions import DisableIntrospection, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.fastapi import GraphQLRouter
from strawberry.types.unset import UNSET

from api.contract import conform
from api.docs_pages import graphiql_html, local_only
from api.graphql import cache
from api.graphql.context import graph_context
from api.graphql.limits import (
    ControlCharacters,
    CostLimiter,
    ErrorPolicy,
    HeaderKeyRefused,
    LongNumbers,
    OneOperation,
    OneSchemaRead,
    OperationBudget,
    WritesCharged,
    error_code,
    refused_whole,
    unexpected,
)
from api.graphql.mutation import Mutation
from api.graphql.query import Query
from api.graphql.scalars import SCALAR_OVERRIDES
from api.jsonbody import strict_json
from api.problems import problem
from api.security import api_key_header_name, check_key, connection_of, start_over, still_held
from api.services import Services, heavy_client
from desk import VersionMoved
from market.budget import Deadline
from market.settings import Settings
from market.text import unprintable

log = logging.getLogger(__name__)
DISCONNECT_POLL_SECONDS = 0.25


def build_schema(settings: Settings) -> strawberry.Schema:
    """The schema with the settings' limits. The types are the same for every app; only
    the limits differ, so a process builds one schema per set of limits (converting the
    types took about a third of building the app)."""
    return _schema(
        settings.graphql_introspection,
        settings.graphql_max_depth,
        settings.graphql_max_tokens,
        settings.graphql_max_aliases,
        settings.graphql_max_cost,
    )


@functools.cache
def _schema(introspection: bool, max_depth: int, max_tokens: int, max_aliases: int, max_cost: int) -> ServiceSchema:
    # Factories, not instances: Strawberry builds a fresh extension for each request.
    extensions = [
        lambda: ErrorPolicy(hide_suggestions=not introspection),
        lambda: QueryDepthLimiter(max_depth=max_depth),
        lambda: MaxTokensLimiter(max_token_count=max_tokens),
        lambda: MaxAliasesLimiter(max_alias_count=max_aliases),
        OneOperation,
        LongNumbers,
        OneSchemaRead,
        lambda: CostLimiter(max_cost),
        ControlCharacters,
        HeaderKeyRefused,
        WritesCharged,
        OperationBudget,
    ]
    if not introspection:
        extensions.append(DisableIntrospection)
    return ServiceSchema(query=Query, mutation=Mutation, extensions=extensions, scalar_overrides=SCALAR_OVERRIDES)


class ServiceSchema(strawberry.Schema):
    """Strawberry's schema, logging as REST does: a client's mistake (a syntax or
    validation error, a domain error with a code: unknown symbol, bad date, FORBIDDEN) is
    one INFO line without a traceback (the client's text it quotes escaped, market/logging.py:
    a line feed in a variable cannot start a line); an unexpected error is logged with its traceback by
    `ErrorPolicy` (api/graphql/limits.py), which also masks it. Strawberry logged every
    error at ERROR with a 20-line traceback."""

    def process_errors(self, errors: list[Any], execution_context: Any = None) -> None:
        for error in errors:
            if not unexpected(error):
                log.info("GraphQL request refused (%s): %s", error_code(error) or "invalid", error.message)


class StrictGraphQLRouter(GraphQLRouter):
    """Request bodies decoded like REST's (api/jsonbody.py): a key named twice is a 422.
    Each operation (parse, validate, execute) runs in a worker thread on an event loop of
    its own, under the heavy-work limit (`Services.run_heavy`), in its caller's share of it
    (`heavy_client`: a key's client; requests without a key together): a document
    that is slow to validate or execute never holds the server's event loop, and one
    client's many operations queue behind each other, not in front of another client's."""

    @property
    def graphql_ide_html(self) -> str:
        """GraphiQL from installed assets (api/docs_pages.py), not strawberry's CDN page."""
        return graphiql_html()

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return local_only(HTMLResponse(self.graphql_ide_html))

    def decode_json(self, data: str | bytes) -> object:
        """A GraphQL request is a JSON object (a list is a batch, which is off): any other
        JSON value is refused here, where Strawberry would have asked it for its keys."""
        value = _json(data, "the body")
        if not isinstance(value, dict | list):
            raise TransportError(400, f"the body must be a JSON object with a `query`, not a JSON {_kind(value)}")
        if isinstance(value, dict):
            _check_operation_name(value.get("operationName"))
        return value

    def parse_query_params(self, params: Any) -> dict[str, object]:
        """A GET's parameters, its `variables` and `extensions` decoded as JSON, each named
        where it is not (`_json`): Strawberry said "Unable to parse request body as JSON" of
        a request that has no body."""
        params = dict(params)
        for name in ("variables", "extensions"):
            if params.get(name):
                params[name] = _json(params[name], f"the `{name}` parameter")
        return params

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """Strawberry's own refusals of a request (its transport: the content type, the
        body's shape, a mutation by GET, batching) as RFC 9457 problems like every other
        error of the service, not its plain-text answers; a body that is not JSON (or no
        body) on a POST is 415, as on REST."""
        try:
            return await super().run(request, context=context, root_value=root_value)
        except TransportError as refused:
            if not isinstance(request, Request):
                raise
            media = request.headers.get("content-type", "").split(";")[0].strip().lower()
            unsupported = request.method == "POST" and media != "application/json"
            status = 415 if unsupported else refused.status_code
            detail = "a GraphQL POST's body is application/json" if unsupported else refused.reason
            return problem(request, status, detail)

    def encode_json(self, data: object) -> str | bytes:
        """A kept answer's body as it is (`cache.Rendered`), anything else as Strawberry encodes it."""
        return data.body if isinstance(data, cache.Rendered) else super().encode_json(data)

    async def process_result(self, request: Any, result: Any) -> Any:
        return result if isinstance(result, cache.Rendered) else await super().process_result(request, result)

    async def execute_single(
        self, request: Any, request_adapter: Any, sub_response: Any, context: Any, root_value: Any, request_data: Any
    ) -> Any:
        """The operation in a worker thread under its wall-clock budget, stopped when its
        client disconnects (`_stopped_on_disconnect`); a market query's answer rendered and
        kept per data version (api/graphql/cache.py), for `KeptAnswerRoute` to answer
        while the version holds."""
        svc = context.svc
        budget = context.budget = Deadline(
            svc.settings.graphql_timeout_seconds, "the operation", "ask for smaller pages (`first`) or fewer fields"
        )
        operation = super().execute_single(request, request_adapter, sub_response, context, root_value, request_data)
        watcher = asyncio.create_task(_stopped_on_disconnect(request, budget))

        def held() -> None:  # the key checked again after a wait for the turn: 401, or its rights as they are now
            try:
                context.caller = still_held(request)
            except BaseException:
                operation.close()  # refused before it ran: never to be awaited
                raise

        try:
            return await self._run(svc, context, request_data, operation, budget, held)
        finally:
            watcher.cancel()

    async def _run(self, svc: Any, context: Any, request_data: Any, operation: Any, budget: Deadline, held: Any) -> Any:
        client = heavy_client(context.caller)

        def timed() -> Any:
            budget.restart()  # the budget counts from the operation's turn, not from its wait for one
            result = asyncio.run(operation)
            refused = refused_whole(result)
            if refused is not None:  # over the key's limit before anything ran: REST's 429
                raise refused
            ErrorPolicy.coded_strays(result)  # an error raised outside every resolver
            if result.data:
                result.data = conform(result.data)  # the response contract, as REST's (api/contract.py)
            return result

        if context.caller is None or not cache.cacheable(request_data.query, request_data.operation_name):
            return await svc.run_heavy(client, timed, held=held)
        desk = svc.desk
        kept = cache.key(request_data.query, request_data.variables, request_data.operation_name, desk.closed_day())

        def run() -> Any:
            with desk.engine.connect() as conn:
                version = desk.instrument_version(conn)
            ran = []

            def build() -> Any:
                ran.append(1)
                return cache.rendered(timed(), self.encode_json)

            answer = desk.cache.cached(kept, version, build, size=cache.kept_size)
            if not ran:
                operation.close()  # built meanwhile by another request: the coroutine is never run
            return answer

        return await svc.run_heavy(client, run, held=held)


class KeptAnswerRoute(APIRoute):
    """The /graphql routes' class: a market query whose answer is kept for the current data
    version (api/graphql/cache.py) is answered here, before FastAPI resolves the
    operation's context or Strawberry parses it, as a REST read is: the key checked as a
    REST read checks it (on GET a key this process has seen from memory, its keys' version
    riding on the version read; a POST's key was checked at the edge), counted against its
    rate limit, then the market tables' version read on the request's connection
    (`Services.version_read`: on the event loop on a SQLite file, else in a worker thread)
    and the kept bytes sent. No heavy turn is taken: a client's turn is for work that has to
    be done, and its kept answers are not held up behind its own operations.
    Anything else (another document, a miss, a moved key) goes on to the router as before,
    a POST's body replayed to it. A method /graphql does not serve (OPTIONS, HEAD, PUT) is
    its 405 once the key is checked and counted, as `KeyCheckedRoute` answers it on REST:
    without a key it answered 405, never counted against the address's limit."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if scope["method"] not in ("GET", "POST"):  # its 405, after the key as on every route
            await check_key(request, request.headers.get(api_key_header_name))
            await super().handle(scope, receive, send)
            return
        posted = scope["method"] == "POST"
        body = await request.body() if posted else b""
        answer = await _kept_answer(request, body)
        if answer is not None:
            await Response(answer, media_type="application/json")(scope, receive, send)
            return
        await super().handle(scope, _replayed(body, receive) if posted else receive, send)


async def _kept_answer(request: Request, body: bytes) -> bytes | None:
    """The kept answer of the request's market query at the current version, or None. What
    could refuse the request (its parameters or body) is read before the key is checked,
    and nothing is refused here: any such request goes on to the router, which checks the
    key first as ever. Once checked, the key's deferred check is always settled, on the
    version read or by the connection's release."""
    presented = request.headers.get(api_key_header_name)
    asked = _asked(request, body) if presented else None
    if asked is None:
        return None
    svc: Services = request.app.state.services
    kept = cache.key(*asked, svc.desk.closed_day())
    await check_key(request, presented, defer=request.method == "GET")
    try:
        async with connection_of(request) as conn:
            return await svc.version_read(conn, cache.kept_answer, svc.desk, conn, kept)
    except VersionMoved:  # the keys moved meanwhile: checked afresh on the router's way
        start_over(request)
        return None


def _json(data: str | bytes, what: str) -> object:
    """`data` decoded as REST decodes a body (api/jsonbody.py `strict_json`); JSON that does
    not decode is a 400 naming `what` it was (the body, a GET's `variables`) and where it
    broke, as REST's body says it (api/problems.py)."""
    try:
        return strict_json(data, text_rule=False)
    except json.JSONDecodeError as error:
        raise TransportError(
            400, f"{what} is not valid JSON: {error.msg} at character {error.pos}; send a JSON object"
        ) from None


def _check_operation_name(name: object) -> None:
    """A body's `operationName` is a string of printable text or null, else a 400: an
    object there reached the answers' cache as a key (unhashable: a 500), and Strawberry's
    refusal of an unknown name quotes it."""
    if name is not None and not isinstance(name, str):
        raise TransportError(400, f"`operationName` must be a string or null, not a JSON {_kind(name)}")
    found = unprintable(name) if name is not None else None
    if found is not None:
        raise TransportError(400, f"`operationName` holds {found}; send printable text")


def _asked(request: Request, body: bytes) -> cache.Asked | None:
    """The (query, variables, operation name) of a GET's parameters or a POST's JSON body
    when the document is one `cache.cacheable` found a market query before; None for
    anything else, and for anything the router would refuse (it answers those)."""
    if request.method == "POST":
        if not body or "application/json" not in request.headers.get("content-type", ""):
            return None
        asked = _decoded(body, posted=True)
    else:
        query_string = request.scope.get("query_string", b"")
        asked = _decoded_get(query_string) if len(query_string) <= GET_KEPT_BYTES else _decoded(query_string)
    return asked if asked is not None and cache.remembered(asked.query, asked.operation_name) else None


GET_KEPT_BYTES = 4096  # a GET's parameters decoded once per query string up to this long (`_decoded_get`)


def _decoded(sent_bytes: bytes, posted: bool = False) -> cache.Asked | None:
    """What a POST's JSON body or a GET's query string asks, decoded as Strawberry's view
    decodes it (`StrictGraphQLRouter`); None for anything it would refuse or could not be a
    kept answer's (extensions, a variables value that is not an object)."""
    try:
        if posted:
            sent = strict_json(sent_bytes, text_rule=False)
        else:
            sent = dict(QueryParams(sent_bytes))
            if sent.get("variables"):  # JSON text; an empty one is refused by the router
                sent["variables"] = strict_json(sent["variables"], text_rule=False)
    except (HTTPException, ValueError):
        return None
    if not isinstance(sent, dict) or sent.get("extensions") is not None:
        return None
    query, variables, operation = sent.get("query"), sent.get("variables"), sent.get("operationName")
    if not isinstance(query, str) or not isinstance(variables, dict | None) or not isinstance(operation, str | None):
        return None
    return cache.Asked(query, variables, operation)


@functools.lru_cache(maxsize=1024)
def _decoded_get(query_string: bytes) -> cache.Asked | None:
    """`_decoded` of a GET's query string, kept: a screen polled by GET sends the same one
    each time, and decoding it (the URL's escapes, then the variables' JSON) cost a tenth
    of a kept answer's time. What it returns is only read (`cache.key`)."""
    return _decoded(query_string)


def _replayed(body: bytes, receive: Receive) -> Receive:
    """`receive` with the body already read handed over first."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def _stopped_on_disconnect(request: Any, budget: Deadline) -> None:
    """Stop the operation's budget once its client has disconnected (polled: the request's
    body is read, so the next ASGI message is the disconnect)."""
    while not await request.is_disconnected():
        await asyncio.sleep(DISCONNECT_POLL_SECONDS)
    budget.stop("its client disconnected")


def graphql_router(settings: Settings) -> GraphQLRouter:
    """The /graphql routes: GET and POST only. Strawberry's router also serves its path over
    WebSocket (its subscription protocols, which run queries and mutations too); the schema
    has no subscriptions, and that transport is outside the key check every HTTP request
    gets (api/edge.py, `KeptAnswerRoute`, `graph_context`), so its route is dropped and an
    upgrade is refused at the handshake (403), as on any other path."""
    router = StrictGraphQLRouter(
        build_schema(settings),
        context_getter=graph_context,
        graphql_ide="graphiql" if settings.graphql_introspection else None,
        include_in_schema=False,
        multipart_uploads_enabled=False,
        route_class=KeptAnswerRoute,
    )
    router.routes = [route for route in router.routes if not isinstance(route, APIWebSocketRoute)]
    return router


if __name__ == "__main__":  # python -m api.graphql.schema > api/graphql/schema.graphql
    from market.settings import get_settings

    print(build_schema(get_settings()).as_str())


def _kind(value: object) -> str:
    """A decoded JSON value's kind, as a client would name it."""
    if value is None:
        return "null"
    kinds = {bool: "boolean", str: "string", int: "number", float: "number", dict: "object", list: "array"}
    return kinds.get(type(value), type(value).__name__)
