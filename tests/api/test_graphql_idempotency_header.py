"""GraphQL takes a mutation's idempotency key as its `idempotencyKey` argument; REST's
`Idempotency-Key` header on /graphql was ignored. A client retrying a `moveCash` it sent
with the header, as it sends the same deposit over REST, was booked once per retry: four
deposits for one. A mutation sent with the header is refused whole before anything runs
(BAD_USER_INPUT naming the argument), as a key operation refuses it on REST; a query with
it is a read, safe to retry, and answers as ever."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api
from tests.api.graph import data

DEPOSIT = 'mutation { moveCash(amount: "5.00", note: "retried") { __typename ... on CashMoved { balance } } }'


def _deposits(api: Api) -> list[dict]:
    items = api.acme("GET", "/api/portfolio/cash", params={"limit": 1000}).json()["items"]
    return [i for i in items if i.get("note") == "retried"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_mutation_sent_with_the_rest_idempotency_header_is_refused_and_books_nothing(api: Api) -> None:
    headers = {"X-API-Key": api.world.acme_key, "Idempotency-Key": "deposit-7"}
    for _ in range(2):  # the client's send and its retry
        response = api.call("POST", "/graphql", json={"query": DEPOSIT}, headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["data"] is None, body
        [error] = body["errors"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT", error
        assert "Idempotency-Key header" in error["message"] and "`idempotencyKey`" in error["message"], error
    assert _deposits(api) == []
    # a query with the header answers; the argument is the key that books once
    query = api.call("POST", "/graphql", json={"query": "{ portfolio { cash } }"}, headers=headers)
    assert query.status_code == 200 and "errors" not in query.json(), query.text
    keyed = DEPOSIT.replace('note: "retried")', 'note: "retried", idempotencyKey: "deposit-7")')
    first, again = (data(api, keyed, api.world.acme_key)["moveCash"] for _ in range(2))
    assert first == again and len(_deposits(api)) == 1
