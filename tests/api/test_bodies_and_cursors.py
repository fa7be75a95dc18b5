"""Issue 64, item 4 (the API part): what a client sends that the service must refuse
clearly and without writing: a body that is not UTF-8, a cursor the API did not issue for
this list and this portfolio, a client key on an admin route whatever its body, the
trade preview's `side`, an Idempotency-Key that is not printable ASCII.

Every route that takes a body comes from the app's own OpenAPI document (plus /graphql)
and every admin route from the app's own routes, so a new one is covered without editing
this file."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
from sqlalchemy import func, select

from api.app import create_app
from api.edge import MULTIPART_OVERHEAD
from pipeline.serving import serve_in_thread
from store import tables
from tests.api.conftest import Api, assert_problem
from tests.api.graph import gql
from tests.conftest import ADMIN_KEY

Operation = tuple[str, str, dict[str, Any]]  # method, path with its parameters filled, the operation


def stored(api: Api) -> dict[str, int]:
    """How many rows each table of the store holds (the rate limiter's counters aside:
    operational state, not a write of the request's)."""
    with api.world.engine.connect() as conn:
        return {
            name: conn.execute(select(func.count()).select_from(table)).scalar_one()
            for name, table in tables.metadata.tables.items()
            if name != tables.rate_limit_counters.name
        }


def _operations(api: Api) -> Iterator[Operation]:
    """Every operation of the app's OpenAPI document, its path parameters filled with the
    client's key id (a real id: a route that reads one finds it)."""
    openapi = api.http.get("/openapi.json").json()
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            filled = {p["name"]: api.world.acme_key_id for p in operation.get("parameters", []) if p["in"] == "path"}
            yield method.upper(), path.format(**filled), operation | {"components": openapi["components"]["schemas"]}


def _sample(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    """A body of `schema` as a client writes one: its declared example, else every property
    at a small value (an enum's first, a number 1 or its minimum, text "LIQ"), so the write
    would go through if it were read."""
    if "$ref" in schema:
        return _sample(components[schema["$ref"].rsplit("/", 1)[1]], components)
    if "example" in schema or "examples" in schema:
        return schema.get("example") or schema["examples"][0]
    options = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    if options:
        return _sample(options[0], components)
    kind = schema.get("type")
    if kind == "object":
        return {name: _sample(s, components) for name, s in schema.get("properties", {}).items()}
    if "enum" in schema:
        return schema["enum"][0]
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    return True if kind == "boolean" else "LIQ"


# --- bodies that are not UTF-8 ------------------------------------------------------------------


def _not_utf8(example: Any) -> Iterator[bytes]:
    """A body the operation would take (its documented example), sent as no UTF-8 reader
    reads it: in UTF-16 (json.loads guessed it and the write went through), and in UTF-8
    with a byte that is not (0xff)."""
    text = json.dumps(example)
    yield text.encode("utf-16")
    yield text[:-1].encode() + b', "note": "caf\xe9"}' if text.endswith("}") else text.encode() + b"\xff"


def _problem_names_utf8(response: Any, where: str) -> None:
    body = assert_problem(response, 400, "not UTF-8")
    assert "offset" in body["detail"], (where, body)


def test_a_body_that_is_not_utf8_is_400_problem_json_on_every_route_and_writes_nothing(api: Api) -> None:
    before = stored(api)
    walked = []
    for method, path, operation in _operations(api):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" not in content:
            continue
        example = _sample(content["application/json"]["schema"], operation["components"])
        for body in _not_utf8(example):
            response = api.call(method, path, ADMIN_KEY, content=body, headers={"content-type": "application/json"})
            _problem_names_utf8(response, f"{method} {path} {body[:40]!r}")
        walked.append(f"{method} {path}")
    assert len(walked) >= 7, walked  # trade, cash, and the five key routes with a body
    documents = (
        '{"query": "{ __typename }"}',
        '{"query": "mutation { moveCash(amount: \\"10.00\\", note: \\"top-up\\") { __typename } }"}',
    )
    for key in (api.world.acme_key, ADMIN_KEY):
        for document in documents:
            for body in (document.encode("utf-16"), document[:-1].encode() + b' , "x": "\xff"}'):
                response = api.call("POST", "/graphql", key, content=body, headers={"content-type": "application/json"})
                _problem_names_utf8(response, f"/graphql {body[:40]!r}")
        response = api.call(
            "POST",
            "/graphql",
            key,
            content=b'{"query":"{ __typename }\xff"}',
            headers={"content-type": "application/json"},
        )
        _problem_names_utf8(response, "/graphql, the issue's body")
    assert stored(api) == before
    # the same bodies in UTF-8 are taken (the refusal is the encoding's, not the body's)
    assert gql(api, "{ __typename }", api.world.acme_key).json() == {"data": {"__typename": "Query"}}


def test_uploads_read_no_json_and_refuse_text_that_is_not_utf8_without_writing(api: Api) -> None:
    """The two uploads take multipart, not JSON (415 for a JSON body); a research note in
    text that is not UTF-8 is refused with the reason, and neither writes."""
    before = stored(api)
    uploads = [
        (m, p) for m, p, o in _operations(api) if "multipart/form-data" in o.get("requestBody", {}).get("content", {})
    ]
    assert len(uploads) == 2, uploads
    for method, path in uploads:
        refused = api.call(
            method, path, api.world.acme_key, content=b'{"x": "\xff"}', headers={"content-type": "application/json"}
        )
        assert_problem(refused, 415, "multipart/form-data")
        note = api.call(
            method,
            path,
            api.world.acme_key,
            files={"file": ("note-caf\xe9.txt", "LIQ caf\xe9".encode("latin-1"), "text/plain")},
        )
        assert note.status_code in (415, 422) and note.headers["content-type"] == "application/problem+json", note.text
    assert stored(api) == before


# --- the refusals before any route, as the OpenAPI document lists them ------------------------

PROBLEM_BODY = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _unreadable(operation: dict[str, Any]) -> tuple[bytes, str]:
    """A body the operation's decoder refuses with a 400, and its content type: JSON nested
    40 levels deep, or a multipart form without its boundary."""
    if "multipart/form-data" in operation["requestBody"]["content"]:
        return b"--x\r\n", "multipart/form-data"
    return b"[" * 40 + b"]" * 40, "application/json"


def _oversized(operation: dict[str, Any], settings: Any) -> tuple[bytes, str]:
    """A body one byte over the operation's cap, of the media type it reads."""
    if "multipart/form-data" in operation.get("requestBody", {}).get("content", {}):
        return b"-" * (settings.pdf_max_bytes + MULTIPART_OVERHEAD + 1), "multipart/form-data; boundary=b"
    return b'{"note": "' + b"a" * settings.max_body_bytes + b'"}', "application/json"


def _other_media(operation: dict[str, Any]) -> tuple[bytes, str]:
    """A small body of a media type the operation does not read: JSON for an upload, text
    for the rest (a GET or a confirmation sent a body included)."""
    if "multipart/form-data" in operation.get("requestBody", {}).get("content", {}):
        return b"{}", "application/json"
    return b"note", "text/plain"


def test_the_refusals_before_any_route_are_listed_on_every_operation_and_answered_so(api: Api) -> None:
    """414 (a URL over `max_url_bytes`) is in every operation's responses; 413 (a body over
    its cap) and 415 (a body of a media type it does not read) in every REST operation,
    whatever its method, as the edge checks every request that carries a body (a GET, a
    confirmation or a revocation sent one is answered so); 400 (a body that cannot be read)
    in every one with a request body; each a problem+json body, and each what the operation
    answers, with the admin key (every route lets it through to the edge's checks).
    /healthz, which the edge lets a body through to, lists neither."""
    small = api.world.settings.model_copy(update={"pdf_max_bytes": 1000, "max_body_bytes": 1000})
    before = stored(api)
    seen: dict[str, list[str]] = {"400": [], "413": [], "414": [], "415": []}
    with serve_in_thread(create_app(small, now=api.clock)) as base, httpx.Client(base_url=base) as http:
        for method, path, operation in _operations(api):
            responses, where = operation["responses"], f"{method} {path}"
            sends = [("414", {"url": f"{path}?q={'a' * small.max_url_bytes}"})]
            if path.startswith("/api/"):
                for status, (body, media) in (("413", _oversized(operation, small)), ("415", _other_media(operation))):
                    sends.append((status, {"content": body, "headers": {"content-type": media}}))
            else:
                assert "413" not in responses and "415" not in responses, (where, responses)
                answer = http.request(method, path, content=b"x" * 2000, headers={"content-type": "text/plain"})
                assert answer.status_code == 200, (where, answer.text)
            if "requestBody" in operation:
                body, media = _unreadable(operation)
                sends.append(("400", {"content": body, "headers": {"content-type": media}}))
            for status, request in sends:
                assert responses.get(status, {}).get("content") == PROBLEM_BODY, (where, status, responses)
                headers = {"X-API-Key": ADMIN_KEY, **request.get("headers", {})}
                answer = http.request(method, request.get("url", path), content=request.get("content"), headers=headers)
                assert_problem(answer, int(status))
                seen[status].append(where)
    assert stored(api) == before
    operations = len(list(_operations(api)))
    rest = operations - 1  # all but /healthz
    assert [len(seen[status]) for status in ("400", "413", "414", "415")] == [9, rest, operations, rest], seen


# --- admin routes: the key's rights before the body ----------------------------------------------


def _calls(dependant: Any) -> Iterator[Any]:
    for sub in dependant.dependencies:
        yield sub.call
        yield from _calls(sub)


def _admin_routes(api: Api) -> list[tuple[str, str]]:
    """(method, path) of every route that needs the admin key, read from the app's routes:
    those with the admin dependency anywhere under them."""
    from fastapi.routing import APIRoute

    from api.app import create_app
    from api.security import admin
    from tests.api.conftest import Clock

    app = create_app(api.world.settings, now=Clock())
    return [
        (method, route.path.format(key_id=api.world.acme_key_id))
        for route in app.routes
        if isinstance(route, APIRoute) and admin in set(_calls(route.dependant))
        for method in sorted(route.methods)
    ]


MALFORMED = (b'{"per_minute": ', b'{"tier": "PRO", "tier": "PRO"}', b"[" * 40 + b"]" * 40, b'{"x": "\xff"}')


def test_a_client_key_on_an_admin_route_is_403_whatever_its_body_and_a_bad_key_still_401(api: Api) -> None:
    routes = _admin_routes(api)
    assert {path.rsplit("/", 1)[-1] for _, path in routes} >= {
        "generate",
        "rotate",
        "rate-limit",
        "macro-access",
        "tier",
    }
    json_body = {"content-type": "application/json"}
    before = stored(api)
    for method, path in routes:
        for body in MALFORMED:
            assert_problem(api.call(method, path, api.world.acme_key, content=body, headers=json_body), 403, "admin")
            assert_problem(api.call(method, path, "svc-sk-" + "0" * 40, content=body, headers=json_body), 401)
        assert_problem(api.call(method, path + "?limit=abc&cursor=%", api.world.acme_key), 403, "admin")
    assert stored(api) == before
    # the admin key's malformed body is still read and refused for what it is
    tier = f"/api/keys/{api.world.acme_key_id}/tier"
    assert_problem(api.call("PUT", tier, ADMIN_KEY, content=MALFORMED[0], headers=json_body), 422, "JSON")


# --- cursors: only as issued, for this list and this portfolio ------------------------------------


def _forged(value: Any) -> str:
    """A cursor as a forger writes it: any JSON (NaN included), base64url-encoded like the API's own."""
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


def _portfolio(api: Api, key: str) -> str:
    return api.call("GET", "/api/portfolio/summary", key).json()["portfolio_id"]


def unlimited(api: Api) -> None:
    """The clients' keys past their rate limits: these tests send more than a minute's share."""
    from desk import keys as keystore
    from tests.api.world import MORNING

    for key_id in (api.world.acme_key_id, api.world.beta_key_id):
        keystore.set_option(api.world.engine, key_id, "RATE_LIMIT_SET", 1_000_000, now=MORNING)


NAN = float("nan")
# list: (REST path, its reader, GraphQL field reading `$after`, its reader)
LISTS = {
    "trades": ("/api/portfolio/trade", "acme", "portfolio { trades(after: $after) { nodes { tradeId } } }", "acme"),
    "cashMovements": (
        "/api/portfolio/cash",
        "acme",
        "portfolio { cashMovements(after: $after) { nodes { entryId } } }",
        "acme",
    ),
    "suggestions": (
        "/api/suggestions",
        "acme",
        "portfolio { suggestions(after: $after) { nodes { suggestionId } } }",
        "acme",
    ),
    "aiDays": (
        "/api/ai-portfolio/history",
        "admin",
        "aiPortfolio { days(after: $after) { nodes { tradingDate } } }",
        "admin",
    ),
    "predictions": (
        None,
        None,
        'instrument(symbol: "LIQ") { predictions(after: $after) { nodes { tradingDate } } }',
        "acme",
    ),
    "sentiment": (
        None,
        None,
        'instrument(symbol: "LIQ") { sentiment(after: $after) { nodes { tradingDate } } }',
        "acme",
    ),
}
# list: keys of the wrong kind or out of range (each sent untagged, as the issue forged it, and
# with the reader's own portfolio tag where the list is a portfolio's, so only the key is wrong)
WRONG_KEYS = {
    "trades": [None, NAN, "1", 1.5, True, 0, [1]],
    "cashMovements": [None, NAN, "1", -1],
    "suggestions": [
        None,
        NAN,
        ["2026-11-23", NAN, "LIQ"],
        ["2026-02-30", True, "LIQ"],
        ["9999-12-31", True, "LIQ"],
        ["2026-11-23", True, None],
        ["2026-11-23", 1, "LIQ"],
    ],
    "aiDays": [None, NAN, "2026-02-30", "9999-12-31", "20261120", 20261120],
    "predictions": [None, NAN, "9999-12-31", "2026-02-30", "0001-01-01"],
    "sentiment": [None, "2026-02-30", "9999-12-31", "2026-W09-1", ""],
}


def _graphql_refuses(api: Api, field: str, key: str, cursor: str) -> str:
    body = gql(api, f"query($after: String) {{ {field} }}", key, {"after": cursor}).json()
    errors = body.get("errors") or []
    assert [e.get("extensions", {}).get("code") for e in errors] == ["BAD_USER_INPUT"], (field, cursor, body)
    return errors[0]["message"]


def test_a_cursor_whose_key_is_of_the_wrong_kind_is_422_and_bad_user_input_never_a_page(api: Api) -> None:
    """The issue's cases: `["trades", null]` served as the first page (cash movements,
    suggestions, AI days too), a suggestions cursor with a NaN key an empty page, GraphQL
    `predictions` paging from 9999-12-31 and `sentiment` from an impossible 2026-02-30."""
    from api import paging

    unlimited(api)
    keys = {"acme": api.world.acme_key, "admin": ADMIN_KEY}
    tags = {
        page.name: page.of(_portfolio(api, api.world.acme_key))
        for page in (paging.TRADES, paging.CASH, paging.SUGGESTIONS)
    }
    for name, (path, rest_reader, field, graph_reader) in LISTS.items():
        for key in WRONG_KEYS[name]:
            cursors = [_forged([name, key])]
            if name in tags:  # the same key with the reader's own portfolio tag: only the key is wrong
                cursors.append(tags[name].cursor(key))
            for cursor in cursors:
                if path is not None:
                    assert_problem(api.call("GET", path, keys[rest_reader], params={"cursor": cursor}), 422, name)
                assert name in _graphql_refuses(api, field, keys[graph_reader], cursor)


PORTFOLIO_LISTS = {  # GraphQL field of a portfolio's list: its REST route (None: GraphQL only)
    "trades": "/api/portfolio/trade",
    "cashMovements": "/api/portfolio/cash",
    "suggestions": "/api/suggestions",
    "positions": None,
}


def _end_cursor(api: Api, key: str, field: str) -> str:
    body = gql(api, f"{{ portfolio {{ {field}(first: 1) {{ pageInfo {{ endCursor }} }} }} }}", key).json()
    cursor = body["data"]["portfolio"][field]["pageInfo"]["endCursor"]
    assert cursor, (field, body)
    return cursor


def test_another_portfolios_cursor_is_refused_and_a_clients_own_still_pages(api: Api) -> None:
    """A cursor names the portfolio whose list issued it: Acme's, sent by Beta (another
    client) or by the admin key (the house portfolio), is 422 / BAD_USER_INPUT, never an
    empty page; Acme's own cursors page on, from REST to GraphQL and back."""
    unlimited(api)
    acme, beta = api.world.acme_key, api.world.beta_key
    order = {"side": "buy", "symbol": "LIQ", "quantity": 1, "price": "52.00"}
    assert api.acme("POST", "/api/portfolio/trade", json=order).status_code == 201
    for _ in range(2):
        assert api.acme("POST", "/api/portfolio/cash", json={"amount": "1.00"}).status_code == 201
    issued = {field: _end_cursor(api, acme, field) for field in PORTFOLIO_LISTS}
    rest_next = api.acme("GET", "/api/portfolio/cash", params={"limit": 1}).json()["next_cursor"]
    for other in (beta, ADMIN_KEY):
        for field, path in PORTFOLIO_LISTS.items():
            message = _graphql_refuses(
                api, f"portfolio {{ {field}(after: $after) {{ pageInfo {{ endCursor }} }} }}", other, issued[field]
            )
            assert "this portfolio's" in message, message
            if path is not None:
                assert_problem(api.call("GET", path, other, params={"cursor": issued[field]}), 422, "this portfolio's")
        assert_problem(
            api.call("GET", "/api/portfolio/cash", other, params={"cursor": rest_next}), 422, "this portfolio's"
        )
    # Acme's own: REST's next_cursor pages on in REST and in GraphQL, GraphQL's endCursor in REST
    rest = api.acme("GET", "/api/portfolio/cash", params={"limit": 1, "cursor": rest_next}).json()
    graph = gql(
        api,
        "query($a: String) { portfolio { cashMovements(first: 1, after: $a) { nodes { entryId } } } }",
        acme,
        {"a": rest_next},
    ).json()
    assert (
        [i["entry_id"] for i in rest["items"]]
        == [n["entryId"] for n in graph["data"]["portfolio"]["cashMovements"]["nodes"]]
        != []
    )
    assert api.acme("GET", "/api/portfolio/trade", params={"cursor": issued["trades"]}).json() == {
        "items": [],
        "next_cursor": None,
    }


# --- the side of an order: one rule for the trade and its preview --------------------------------

SIDES = ("buy", "sell", "BUY", "SELL", "Buy", "sElL", "short", "", " buy")


def _refuses_side(response: Any) -> bool:
    """Whether a 422 is the schema's refusal of `side` (rather than of something after it)."""
    assert response.status_code in (200, 422), response.text
    errors = response.json().get("errors", []) if response.status_code == 422 else []
    return any(e["loc"][-1] == "side" for e in errors)


def test_the_trade_preview_takes_a_side_exactly_as_the_trade_does(api: Api) -> None:
    """`?side=SELL` was 422 on the preview while the trade takes "SELL": each spelling is
    now taken by both or refused by both, the refusal naming `side`."""
    unlimited(api)
    before = stored(api)
    taken = []
    for side in SIDES:
        preview = api.acme(
            "GET", "/api/portfolio/trade/preview", params={"side": side, "symbol": "LIQ", "quantity": 10}
        )
        # a price far outside the day's band: a trade whose side is read is refused for its price, and writes nothing
        trade = api.acme(
            "POST", "/api/portfolio/trade", json={"side": side, "symbol": "LIQ", "quantity": 10, "price": "0.01"}
        )
        assert trade.status_code == 422, (side, trade.text)
        assert _refuses_side(preview) == _refuses_side(trade), (side, preview.text, trade.text)
        if not _refuses_side(preview):
            assert preview.status_code == 200 and preview.json()["side"] == side.upper(), (side, preview.text)
            taken.append(side)
    assert taken == ["buy", "sell", "BUY", "SELL"]
    assert stored(api) == before


# --- an Idempotency-Key that is not printable ASCII ----------------------------------------------

# Values an HTTP client can send that the server's parser lets through to the app (bytes as
# sent: a header is bytes on the wire). Control characters but tab the parser refuses itself
# (docs/api.md says what the client gets).
UNPRINTABLE_KEYS = (b"caf\xe9", "caf\u00e9".encode(), b"\x80\xff", b"order\t42", b"k" * 201, b"k" * 20_000)


def test_an_idempotency_key_that_is_not_printable_ascii_is_422_over_rest_and_graphql_and_books_nothing(
    api: Api,
) -> None:
    unlimited(api)
    order = {"side": "buy", "symbol": "LIQ", "quantity": 1, "price": "52.00"}
    before = stored(api)
    for key in UNPRINTABLE_KEYS:
        refused = api.acme("POST", "/api/portfolio/trade", json=order, headers={"Idempotency-Key": key})
        assert_problem(refused, 422, "Idempotency-Key must be 1 to 200 printable ASCII characters")
        text = key.decode("latin-1")  # what the app saw; GraphQL takes the same text as an argument
        placed = gql(
            api,
            'mutation($k: String) { placeTrade(order: {side: "BUY", symbol: "LIQ", quantity: 1, price: "52.00"}, '
            "idempotencyKey: $k) { __typename ... on UserError { message } } }",
            api.world.acme_key,
            {"k": text},
        ).json()["data"]["placeTrade"]
        assert placed["__typename"] == "InvalidInput" and "idempotencyKey must be 1 to 200" in placed["message"], placed
    assert stored(api) == before
    # printable keys still make retries safe: the second send replays the first
    first, again = (
        api.acme("POST", "/api/portfolio/trade", json=order, headers={"Idempotency-Key": "order 42/~"})
        for _ in range(2)
    )
    assert first.status_code == again.status_code == 201 and again.json()["replayed"], again.text
    assert first.json()["trade_id"] == again.json()["trade_id"]
