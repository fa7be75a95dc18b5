"""A GraphQL mutation is charged one request per write it will make, on the key's one
count with REST, before anything runs (api/graphql/limits.py `WritesCharged`): a mutation
of 15 aliased `moveCash` made 15 writes for one counted request, so a key of 60 requests
a minute could write about 900 times a minute by GraphQL. Writes that do not all fit are
refused whole, REST's 429, and nothing is written; a query stays one request."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.api.conftest import Api, assert_problem

DEPOSITS = "mutation {%s}"
DEPOSIT = ' d%d: moveCash(amount: "10.00") { __typename ... on CashMoved { balance } }'


def _remaining(response: httpx.Response) -> int:
    return int(re.search(r"r=(\d+)", response.headers["RateLimit"]).group(1))


def _deposits(count: int) -> dict:
    return {"query": DEPOSITS % "".join(DEPOSIT % i for i in range(count))}


@contextmanager
def _limited(api: Api, counted_in: str, per_minute: int) -> Iterator[Callable[..., httpx.Response]]:
    """Acme's key limited to `per_minute`, on an app whose counts are kept `counted_in`
    (process memory, or the database as several workers keep them)."""
    from api.app import create_app
    from pipeline.serving import serve_in_thread
    from tests.api.conftest import Clock

    assert api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": per_minute}).is_success
    here = create_app(api.world.settings.model_copy(update={"rate_limit_store": counted_in}), now=Clock())
    with serve_in_thread(here) as base:

        def acme(method: str, path: str, **kwargs) -> httpx.Response:
            return api.http.request(method, base + path, headers={"X-API-Key": api.world.acme_key}, **kwargs)

        yield acme


def _movements(acme: Callable[..., httpx.Response]) -> int:
    page = acme("GET", "/api/portfolio/cash", params={"limit": 200})
    assert page.status_code == 200, page.text
    return len(page.json()["items"])


@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_a_mutation_whose_writes_do_not_all_fit_is_refused_whole_and_writes_nothing(api: Api, counted_in: str) -> None:
    with _limited(api, counted_in, 5) as acme:
        booked = _movements(acme)  # one request: four left
        refused = acme("POST", "/graphql", json=_deposits(15))
        assert_problem(refused, 429, "15 writes", "nothing was run", "never fits: send at most 5 at once")
        assert int(refused.headers["Retry-After"]) >= 1 and _remaining(refused) == 0
        assert _movements(acme) == booked  # nothing booked, and the refusal counted nothing: three left
        four = acme("POST", "/graphql", json=_deposits(4))
        assert_problem(four, 429, "4 writes")
        three = acme("POST", "/graphql", json=_deposits(3))
        assert three.status_code == 200, three.text
        assert [v["__typename"] for v in three.json()["data"].values()] == ["CashMoved"] * 3
        assert _remaining(three) == 0  # five: two reads and three writes
        assert_problem(acme("GET", "/api/portfolio/summary"), 429)


@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_each_write_a_mutation_makes_is_one_request_and_a_query_is_one(api: Api, counted_in: str) -> None:
    """Three aliased writes take three requests, as three REST calls; a write under
    @skip is not made and not charged; a query of many aliases is one request."""
    with _limited(api, counted_in, 20) as acme:
        before = _remaining(acme("GET", "/api/portfolio/summary"))
        three = acme("POST", "/graphql", json=_deposits(3))
        assert three.status_code == 200 and _remaining(three) == before - 3, three.text
        skipped = acme(
            "POST",
            "/graphql",
            json={
                "query": 'mutation($no: Boolean!) { a: moveCash(amount: "1") { __typename } '
                'b: moveCash(amount: "1") @skip(if: $no) { __typename } '
                '... on Mutation { c: moveCash(amount: "1") @include(if: $no) { __typename } } }',
                "variables": {"no": True},
            },
        )
        assert skipped.status_code == 200, skipped.text
        assert set(skipped.json()["data"]) == {"a", "c"} and _remaining(skipped) == before - 5
        aliases = " ".join(f"q{i}: instruments(first: 1) {{ nodes {{ symbol }} }}" for i in range(15))
        query = acme("POST", "/graphql", json={"query": "{ %s }" % aliases})
        assert query.status_code == 200 and "errors" not in query.json(), query.text
        assert _remaining(query) == before - 6


@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_a_mutations_typename_is_no_write_and_is_not_charged(api: Api, counted_in: str) -> None:
    """`__typename` at a mutation's root writes nothing: two deposits asked beside two of them
    are two requests and fit where two remain; they were charged as four writes and refused
    as never fitting a limit of four."""
    with _limited(api, counted_in, 4) as acme:
        booked = _movements(acme)  # one request: three left
        acme("GET", "/api/portfolio/summary")  # two left
        body = {"query": "mutation { __typename again: __typename %s }" % (DEPOSIT % 0 + DEPOSIT % 1)}
        two = acme("POST", "/graphql", json=body)
        assert two.status_code == 200, two.text
        assert two.json()["data"]["__typename"] == "Mutation" and _remaining(two) == 0
        assert_problem(acme("POST", "/graphql", json={"query": "mutation { __typename }"}), 429)  # one request still
    assert api.acme("GET", "/api/portfolio/cash", params={"limit": 200}).json()["items"].__len__() == booked + 2
