"""The schema and the FastAPI router mounted at /graphql.

Batching is off (Strawberry's default: no `batching_config`), so one HTTP request is one
operation, counted once against the key's rate limit and capped by one cost estimate.
Introspection and GraphiQL are on by default for developers; `graphql_introspection=false`
turns both off. GET is accepted for queries (never mutations), as the GraphQL-over-HTTP
spec allows; a key is required either way, so cross-site requests cannot act.
"""
from __future__ import annotations

import asyncio
from typing import Any

import strawberry
from fastapi.responses import HTMLResponse
from strawberry.extensions import DisableIntrospection, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.fastapi import GraphQLRouter

from api.docs_pages import graphiql_html, local_only
from api.graphql.context import graph_context
from api.graphql.limits import CostLimiter, ErrorPolicy
from api.graphql.mutation import Mutation
from api.graphql.query import Query
from api.graphql.scalars import SCALAR_OVERRIDES
from api.jsonbody import strict_json
from market.settings import Settings


def build_schema(settings: Settings) -> strawberry.Schema:
    # Factories, not instances: Strawberry builds a fresh extension for each request.
    extensions = [
        lambda: ErrorPolicy(hide_suggestions=not settings.graphql_introspection),
        lambda: QueryDepthLimiter(max_depth=settings.graphql_max_depth),
        lambda: MaxTokensLimiter(max_token_count=settings.graphql_max_tokens),
        lambda: MaxAliasesLimiter(max_alias_count=settings.graphql_max_aliases),
        lambda: CostLimiter(settings.graphql_max_cost),
    ]
    if not settings.graphql_introspection:
        extensions.append(DisableIntrospection)
    return strawberry.Schema(query=Query, mutation=Mutation, extensions=extensions, scalar_overrides=SCALAR_OVERRIDES)


class StrictGraphQLRouter(GraphQLRouter):
    """Request bodies decoded like REST's (api/jsonbody.py): a key named twice is a 422.
    Each operation (parse, validate, execute) runs in a worker thread on an event loop of
    its own, under the heavy-work limit (`Services.run_heavy`): a document that is slow to
    validate or execute never holds the server's event loop."""

    @property
    def graphql_ide_html(self) -> str:
        """GraphiQL from installed assets (api/docs_pages.py), not strawberry's CDN page."""
        return graphiql_html()

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return local_only(HTMLResponse(self.graphql_ide_html))

    def decode_json(self, data: str | bytes) -> object:
        return strict_json(data)

    async def execute_single(self, request: Any, request_adapter: Any, sub_response: Any, context: Any,  # noqa: PLR0913
                             root_value: Any, request_data: Any) -> Any:
        operation = super().execute_single(request, request_adapter, sub_response, context, root_value, request_data)
        return await context.svc.run_heavy(asyncio.run, operation)


def graphql_router(settings: Settings) -> GraphQLRouter:
    return StrictGraphQLRouter(build_schema(settings), context_getter=graph_context,
                         graphql_ide="graphiql" if settings.graphql_introspection else None,
                         include_in_schema=False, multipart_uploads_enabled=False)


if __name__ == "__main__":  # python -m api.graphql.schema > api/graphql/schema.graphql
    from market.settings import get_settings

    print(build_schema(get_settings()).as_str())
