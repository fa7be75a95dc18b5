"""Every GraphQL error carries `extensions.code`, so a client can tell its own mistake
from the service's without reading the message: a document that does not parse (or is
too long to) GRAPHQL_PARSE_FAILED, one the schema or the limits refuse
GRAPHQL_VALIDATION_FAILED, a variable missing or of the wrong type BAD_USER_INPUT. A
review found all of these without a code while the domain, cost and budget errors had one."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.exc import OperationalError

from api.app import create_app
from pipeline.serving import serve_in_thread
from tests.api.conftest import Api, Clock, assert_problem
from tests.api.graph import gql

ALIASES = "{ " + " ".join(f"a{i}: __typename" for i in range(16)) + " }"
TOKENS = "{ " + " ".join("__typename" for _ in range(2100)) + " }"


@pytest.mark.parametrize(
    ("document", "variables", "code", "said"),
    [
        ("{ nope }", None, "GRAPHQL_VALIDATION_FAILED", "Cannot query field 'nope'"),
        ("{ instruments(first: 1) { nodes { symbol }", None, "GRAPHQL_PARSE_FAILED", "Syntax Error"),
        (TOKENS, None, "GRAPHQL_PARSE_FAILED", "more than 2000 tokens"),
        (ALIASES, None, "GRAPHQL_VALIDATION_FAILED", "16 aliases found"),
        ("query($s: String!) { instrument(symbol: $s) { symbol } }", {}, "BAD_USER_INPUT", "to be provided"),
        ("query($s: String!) { instrument(symbol: $s) { symbol } }", {"s": 5}, "BAD_USER_INPUT", "$s"),
        ("query($d: String) { __typename }", None, "GRAPHQL_VALIDATION_FAILED", "is never used"),
        ("query { instrument(symbol: $s) { symbol } }", None, "GRAPHQL_VALIDATION_FAILED", "is not defined"),
        (
            'mutation { moveCash(amount: "1.00", bogus: 1) { __typename } }',
            None,
            "GRAPHQL_VALIDATION_FAILED",
            "bogus",
        ),
    ],
)
def test_a_request_the_schema_refuses_says_so_in_its_code(
    api: Api, document: str, variables: dict | None, code: str, said: str
) -> None:
    response = gql(api, document, api.world.acme_key, variables)
    errors = response.json()["errors"]
    assert errors and all(e.get("extensions", {}).get("code") == code for e in errors), errors
    assert any(said in e["message"] for e in errors), errors


def test_a_read_that_raises_stop_iteration_is_answered_not_left_hanging(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that raises StopIteration (a `next()` that found nothing: the AI portfolio's
    positions after a rename did) is the field's masked error, answered at once, and the
    service answers the next request. asyncio cannot set a StopIteration on the future a
    resolver awaits, so the operation, and the worker thread running it, waited for ever."""

    def broken(*_: object, **__: object) -> None:
        raise StopIteration

    monkeypatch.setattr("views.portfolio.ai_positions", broken)
    query = {"query": "{ aiPortfolio { positions { nodes { symbol } } } instruments(first: 1) { nodes { symbol } } }"}
    with httpx.Client(base_url=api.base, timeout=10) as http:
        answer = http.post("/graphql", json=query, headers={"X-API-Key": api.world.acme_key}).json()
    assert answer["data"]["aiPortfolio"] is None and answer["data"]["instruments"]["nodes"]
    (error,) = answer["errors"]
    assert error["path"] == ["aiPortfolio"] and error["message"].startswith("Unexpected error")
    assert gql(api, "{ __typename }", api.world.acme_key).status_code == 200


def test_each_graphql_error_code_is_one_rest_problem_type() -> None:
    """A domain error's GraphQL code and its REST problem type name one kind of problem:
    two errors share a code exactly when they share a type (BUDGET_EXCEEDED is
    budget-exceeded, not invalid-input's title and type with its own code)."""
    from api.graphql.limits import CODES
    from api.problems import type_for

    pairs = {(code, type_for(cls("x")).slug) for cls, code in CODES.items()}  # type: ignore[union-attr]
    assert len({code for code, _ in pairs}) == len({slug for _, slug in pairs}) == len(pairs), pairs


class _CountsFailOnCharge:
    """The key's counter store, failing as a database under it would (its statement and its
    server in the message) when a mutation's writes are charged, after the request's admission."""

    def __init__(self, store: object) -> None:
        self.store = store

    def hit(self, key_id: str, window: int, conn: object = None, amount: int = 1) -> tuple[int, int]:
        if amount > 1:
            raise OperationalError(
                "UPDATE rate_limit_counters SET hits = hits + 2", {}, Exception("server at 10.0.0.5 port 5432 closed")
            )
        return self.store.hit(key_id, window, conn, amount)

    def undo(self, *args: object, **kwargs: object) -> None:
        self.store.undo(*args, **kwargs)


def test_a_failure_before_the_operation_runs_is_masked_coded_and_writes_nothing(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected error outside every resolver (the writes' charge, the cost walk: the
    schema's extensions) is masked with code INTERNAL_SERVER_ERROR like a resolver's, and
    logged; it reached the client as it was raised, the failing SQL and the database
    server's address in its message, with no code, and was logged nowhere."""
    app = create_app(api.world.settings, now=Clock())
    services = app.state.services
    services.limiter = _CountsFailOnCharge(services.limiter)
    deposits = 'mutation { a: moveCash(amount: "1.00") { __typename } b: moveCash(amount: "1.00") { __typename } }'
    with serve_in_thread(app) as base, httpx.Client(base_url=base, timeout=10) as http:
        before = http.get("/api/portfolio/cash", headers={"X-API-Key": api.world.acme_key}).json()["items"]
        answer = http.post("/graphql", json={"query": deposits}, headers={"X-API-Key": api.world.acme_key})
        after = http.get("/api/portfolio/cash", headers={"X-API-Key": api.world.acme_key}).json()["items"]
    body = answer.json()
    assert body["data"] is None, body
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR" and error["message"].startswith("Unexpected error")
    assert "rate_limit_counters" not in answer.text and "10.0.0.5" not in answer.text
    assert after == before
    logged = [r for r in caplog.records if r.levelname == "ERROR" and r.exc_info]
    assert any("rate_limit_counters" in str(r.exc_info[1]) for r in logged), caplog.records


def test_json_that_does_not_decode_is_named_where_it_was_sent(api: Api) -> None:
    """A GET's `variables` parameter and a POST's body that are not JSON each say which it
    was and where it broke, as REST's body does; both were "Unable to parse request body as
    JSON", a GET's too, which has no body."""
    key = api.world.acme_key
    document = "query($a: Int) { __typename }"
    by_get = api.call("GET", "/graphql", key, params={"query": document, "variables": '{"a": 1'})
    assert_problem(by_get, 400, "the `variables` parameter is not valid JSON", "send a JSON object")
    assert "body" not in by_get.json()["detail"]
    extensions = api.call("GET", "/graphql", key, params={"query": document, "extensions": "nope"})
    assert_problem(extensions, 400, "the `extensions` parameter is not valid JSON")
    posted = api.call(
        "POST", "/graphql", key, content=b'{"query": "{ __typename }",}', headers={"content-type": "application/json"}
    )
    assert_problem(posted, 400, "the body is not valid JSON", "character 27")
