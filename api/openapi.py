"""OpenAPI adjustments FastAPI cannot express per route: error bodies are
application/problem+json, every /api/ operation names the X-API-Key scheme, and the
refusals that come before any route (api/edge.py, api/jsonbody.py) are listed where they
apply: 414 (a URL over `max_url_bytes`) on every operation, 413 (a body over its cap) and
415 (a body of the wrong media type) on every one the edge checks a body for, every
/api/ operation whatever its method, 400 (a body that cannot be read) on every one with a
request body."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from api.edge import body_refusals
from api.problems import PROBLEM_JSON
from api.schemas.common import DESCRIPTIONS

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


def _refusals_before_the_route(path: str, operation: dict[str, Any]) -> None:
    """Adds the refusals the edge and the body's decoder make before any route to
    `operation`'s responses: 414 to each; 413 and 415 to each the edge checks a body for,
    whatever its method (api/edge.py `body_refusals`: a GET or a confirmation sent a body is
    answered so too); 400 to one with a request body."""
    responses = operation.setdefault("responses", {})
    statuses = [414, *body_refusals(path)]
    if "requestBody" in operation:
        statuses.append(400)
    for status in statuses:
        responses.setdefault(
            str(status), {"description": DESCRIPTIONS[status], "content": {PROBLEM_JSON: {"schema": PROBLEM_REF}}}
        )


def install_openapi(app: FastAPI) -> None:
    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                _refusals_before_the_route(path, operation)
                for status, response in operation.get("responses", {}).items():
                    content = response.get("content", {})
                    if status[0] in "45" and "application/json" in content:
                        content[PROBLEM_JSON] = content.pop("application/json")
                    if path.startswith("/api/") and status[0] == "2":
                        response.setdefault("headers", {}).update(
                            {
                                "RateLimit-Policy": {
                                    "description": "Client keys: quota per window.",
                                    "schema": {"type": "string"},
                                },
                                "RateLimit": {
                                    "description": "Client keys: remaining requests, seconds to reset.",
                                    "schema": {"type": "string"},
                                },
                                "Deprecation": {
                                    "description": "A key in a rotation's grace period (RFC 9745): "
                                    "@<Unix time it was rotated>.",
                                    "schema": {"type": "string"},
                                },
                                "Sunset": {
                                    "description": "A key in a rotation's grace period (RFC 8594): "
                                    "the HTTP date it stops working.",
                                    "schema": {"type": "string"},
                                },
                            }
                        )
        app.openapi_schema = schema
        return schema

    app.openapi = build  # type: ignore[method-assign]
