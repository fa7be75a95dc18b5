"""Calling /graphql in the API tests."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.api.conftest import Api


def gql(
    api: Api, query: str, key: str | None, variables: dict[str, Any] | None = None, operation_name: str | None = None
) -> httpx.Response:
    body: dict[str, Any] = {"query": query}
    if variables is not None:
        body["variables"] = variables
    if operation_name is not None:
        body["operationName"] = operation_name
    return api.call("POST", "/graphql", key, json=body)


def data(api: Api, query: str, key: str | None, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `data` of a query that must succeed without errors."""
    response = gql(api, query, key, variables)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "errors" not in body, body["errors"]
    return body["data"]


def snake(value: Any) -> Any:
    """camelCase keys to the REST API's snake_case, recursively (rsi14 -> rsi_14)."""
    if isinstance(value, dict):
        return {_snake(k): snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake(v) for v in value]
    return value


def _snake(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return re.sub(r"(?<=[a-z])(\d+)$", r"_\1", name)
