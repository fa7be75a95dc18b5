"""Issue 39 acceptance: a NUL and other control characters, sent in every text an operation
takes (path and query parameters, JSON body fields, upload filenames and contents, GraphQL
arguments and variables), are refused as bad input on both databases: never a 5xx, never
GraphQL's masked "Unexpected error", and nothing stored. Every operation comes from the
app's own OpenAPI schema and GraphQL schema, so a new endpoint is swept without editing
this file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
from graphql import GraphQLInputObjectType, GraphQLList, GraphQLNonNull, GraphQLScalarType, get_named_type

from api.graphql.schema import build_schema
from tests.api.conftest import Api
from tests.conftest import ADMIN_KEY

BADS = ("\u0000", "\u0007", "\u001b", "\u007f")


def _sample(schema: dict[str, Any], components: dict[str, Any], bad: str) -> Any:
    """A value of `schema` whose every string holds `bad`."""
    if "$ref" in schema:
        return _sample(components[schema["$ref"].rsplit("/", 1)[1]], components, bad)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return _sample(options[0], components, bad)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: _sample(s, components, bad) for name, s in schema.get("properties", {}).items()}
    if kind == "array":
        return [_sample(schema.get("items", {}), components, bad)]
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    if "enum" in schema:
        return f"{schema['enum'][0]}{bad}"
    return f"A{bad}1"


def _rest_requests(openapi: dict[str, Any], bad: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    components = openapi.get("components", {}).get("schemas", {})
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            parameters = operation.get("parameters", [])
            strings = [p for p in parameters if p["in"] in ("path", "query")]
            filled = {p["name"]: "1" for p in strings if p["in"] == "path"}
            for parameter in strings or [None]:
                values = dict(filled)
                if parameter is not None:
                    values[parameter["name"]] = f"A{bad}1"
                url = path.format(**{k: quote(v, safe="") for k, v in values.items() if k in filled})
                query = (
                    {parameter["name"]: values[parameter["name"]]} if parameter and parameter["in"] == "query" else {}
                )
                yield method.upper(), url, {"params": query}
            body = operation.get("requestBody", {}).get("content", {})
            if "application/json" in body:
                yield (
                    method.upper(),
                    path.format(**filled),
                    {"json": _sample(body["application/json"]["schema"], components, bad)},
                )
            if "multipart/form-data" in body:
                for name, content in ((f"note{bad}.txt", b"LIQ looks strong"), ("note.txt", f"LIQ {bad}".encode())):
                    yield method.upper(), path.format(**filled), {"files": {"file": (name, content, "text/plain")}}


NOT_TEXT = {"Int", "Float", "Boolean"}


def _takes_text(kind: Any) -> bool:
    named = get_named_type(kind)
    if isinstance(named, GraphQLInputObjectType):
        return any(_takes_text(f.type) for f in named.fields.values())
    return named.name not in NOT_TEXT


def _graphql_fields() -> Iterator[tuple[str, str, list[Any], str]]:
    """(operation, root field, its arguments, its selection) of every root field that takes text."""
    from market.settings import Settings

    schema = build_schema(Settings())._schema
    for operation, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        for name, field in root.fields.items():
            arguments = list(field.args.items())
            if any(_takes_text(a.type) for _, a in arguments):
                selection = "" if isinstance(get_named_type(field.type), GraphQLScalarType) else "{ __typename }"
                yield operation, name, arguments, selection


def _graphql_value(kind: Any, bad: str) -> Any:
    named = get_named_type(kind)
    if isinstance(named, GraphQLInputObjectType):
        value: Any = {n: _graphql_value(f.type, bad) for n, f in named.fields.items()}
    else:
        value = {"Int": 1, "Float": 1.0, "Boolean": True}.get(named.name, f"A{bad}1")
    inner = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    return [value] if isinstance(inner, GraphQLList) else value


def test_a_control_character_in_any_operation_is_bad_input_never_a_server_error(api: Api) -> None:
    from desk import keys as keystore
    from tests.api import world

    keystore.set_option(api.world.engine, api.world.acme_key_id, "RATE_LIMIT_SET", 1_000_000, now=world.MORNING)
    world.run_t3(api.world.settings)  # macro insights are 503 (not ready) until T3 has run: every 5xx is a failure here
    openapi = api.http.get("/openapi.json").json()
    cash_before = api.acme("GET", "/api/portfolio/cash").json()["items"]
    failures, sent = [], 0
    for bad in BADS:
        for key in (api.world.acme_key, ADMIN_KEY):
            for method, url, kwargs in _rest_requests(openapi, bad):
                try:
                    response = api.call(method, url, key, **kwargs)
                except httpx.HTTPError as exc:
                    failures.append(f"{method} {url} {kwargs}: {type(exc).__name__} {exc}")
                    continue
                sent += 1
                if response.status_code >= 500:
                    failures.append(f"{method} {url} {kwargs}: {response.status_code} {response.text[:200]}")
        for operation, name, arguments, selection in _graphql_fields():
            for key in (api.world.acme_key, ADMIN_KEY):
                declared = ", ".join(f"${n}: {a.type}" for n, a in arguments)
                passed = ", ".join(f"{n}: ${n}" for n, _ in arguments)
                document = f"{operation}({declared}) {{ {name}({passed}) {selection} }}"
                variables = {n: _graphql_value(a.type, bad) for n, a in arguments}
                response = api.call("POST", "/graphql", key, json={"query": document, "variables": variables})
                sent += 1
                body = response.json() if response.headers.get("content-type", "").endswith("json") else {}
                errors = body.get("errors") or []
                codes = {e.get("extensions", {}).get("code") for e in errors}
                if response.status_code >= 500 or not errors or "BAD_USER_INPUT" not in codes:
                    failures.append(f"graphql {name} {variables}: {response.status_code} {response.text[:200]}")
    assert failures == [], "\n".join(failures[:40])
    assert sent > 200, sent
    assert api.acme("GET", "/api/portfolio/cash").json()["items"] == cash_before  # nothing was stored
