"""The schema and the FastAPI router mounted at /graphql.

Batching is off (Strawberry's default: no `batching_config`), so one HTTP request is one
operation, counted once against the key's rate limit and capped by one cost estimate.
Introspection and GraphiQL are on by default for developers; `graphql_introspection=false`
turns both off. GET is accepted for queries (never mutations), as the GraphQL-over-HTTP
spec allows; a key is required either way, so cross-site requests cannot act.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from typing import Any

import strawberry
from fastapi.responses import HTMLResponse
from strawberry.extensions import DisableIntrospection, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.fastapi import GraphQLRouter

from api.contract import conform
from api.docs_pages import graphiql_html, local_only
from api.graphql import cache
from api.graphql.context import graph_context
from api.graphql.limits import ControlCharacters, CostLimiter, ErrorPolicy, OperationBudget, error_code, unexpected
from api.graphql.mutation import Mutation
from api.graphql.query import Query
from api.graphql.scalars import SCALAR_OVERRIDES
from api.jsonbody import strict_json
from api.services import heavy_client
from market.budget import Deadline
from market.settings import Settings

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
        lambda: CostLimiter(max_cost),
        ControlCharacters,
        OperationBudget,
    ]
    if not introspection:
        extensions.append(DisableIntrospection)
    return ServiceSchema(query=Query, mutation=Mutation, extensions=extensions, scalar_overrides=SCALAR_OVERRIDES)


class ServiceSchema(strawberry.Schema):
    """Strawberry's schema, logging as REST does: a client's mistake (a syntax or
    validation error, a domain error with a code: unknown symbol, bad date, FORBIDDEN) is
    one INFO line without a traceback; an unexpected error is logged with its traceback by
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
        return strict_json(data, text_rule=False)

    async def execute_single(
        self, request: Any, request_adapter: Any, sub_response: Any, context: Any, root_value: Any, request_data: Any
    ) -> Any:
        """The operation in a worker thread under its wall-clock budget, stopped when its
        client disconnects (`_stopped_on_disconnect`); a market query's result kept per data
        version (api/graphql/cache.py) and answered from there while the version holds."""
        svc = context.svc
        budget = context.budget = Deadline(
            svc.settings.graphql_timeout_seconds, "the operation", "ask for smaller pages (`first`) or fewer fields"
        )
        operation = super().execute_single(request, request_adapter, sub_response, context, root_value, request_data)
        watcher = asyncio.create_task(_stopped_on_disconnect(request, budget))
        try:
            return await self._run(svc, heavy_client(context.caller), context, request_data, operation, budget)
        finally:
            watcher.cancel()

    async def _run(
        self, svc: Any, client: str, context: Any, request_data: Any, operation: Any, budget: Deadline
    ) -> Any:
        def timed() -> Any:
            budget.restart()  # the budget counts from the operation's turn, not from its wait for one
            result = asyncio.run(operation)
            if result.data:
                result.data = conform(result.data)  # the response contract, as REST's (api/contract.py)
            return result

        if context.caller is None or not cache.cacheable(request_data.query, request_data.operation_name):
            return await svc.run_heavy(client, timed)
        desk = svc.desk
        kept = cache.key(request_data.query, request_data.variables, request_data.operation_name, desk.closed_day())

        def run() -> Any:
            with desk.engine.connect() as conn:
                version = desk.instrument_version(conn)
            ran = []
            result = desk.cache.cached(kept, version, lambda: ran.append(1) or timed(), size=_kept_size)
            if not ran:
                operation.close()  # answered from the cache: the coroutine is never run
            return result

        return await svc.run_heavy(client, run)


async def _stopped_on_disconnect(request: Any, budget: Deadline) -> None:
    """Stop the operation's budget once its client has disconnected (polled: the request's
    body is read, so the next ASGI message is the disconnect)."""
    while not await request.is_disconnected():
        await asyncio.sleep(DISCONNECT_POLL_SECONDS)
    budget.stop("its client disconnected")


def _kept_size(result: Any) -> int | None:
    """A successful result's size as JSON (what it counts against the cache's bound); a
    result with errors is not kept."""
    if result.errors or result.data is None:
        return None
    return len(json.dumps(result.data, default=str))


def graphql_router(settings: Settings) -> GraphQLRouter:
    return StrictGraphQLRouter(
        build_schema(settings),
        context_getter=graph_context,
        graphql_ide="graphiql" if settings.graphql_introspection else None,
        include_in_schema=False,
        multipart_uploads_enabled=False,
    )


if __name__ == "__main__":  # python -m api.graphql.schema > api/graphql/schema.graphql
    from market.settings import get_settings

    print(build_schema(get_settings()).as_str())
