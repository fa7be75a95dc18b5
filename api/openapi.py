"""OpenAPI adjustments FastAPI cannot express per route: error bodies are
application/problem+json, and every /api/ operation names the X-API-Key scheme."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from api.problems import PROBLEM_JSON


def install_openapi(app: FastAPI) -> None:
    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
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
                            }
                        )
        app.openapi_schema = schema
        return schema

    app.openapi = build  # type: ignore[method-assign]
