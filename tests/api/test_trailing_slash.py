"""A path with a trailing slash (or any other unknown path) is a 404 problem, never a
redirect: a 307's absolute Location, built from the request's scheme, could be http://
behind a proxy that does not say https, and a client following it resent X-API-Key in
clear. The 404 is answered after the key check, counted like any request."""

from __future__ import annotations

import httpx
from fastapi.testclient import TestClient

from api.app import create_app
from tests.api.conftest import Api, assert_problem
from tests.conftest import ADMIN_KEY


def _client(api: Api) -> TestClient:
    return TestClient(create_app(api.world.settings, now=api.clock), follow_redirects=False)


def _remaining(response: httpx.Response) -> int:
    return int(response.headers["RateLimit"].split(";r=")[1].split(";")[0])


def test_a_trailing_slash_is_a_404_that_names_the_path_without_it(api: Api) -> None:
    key = {"X-API-Key": api.world.acme_key}
    with _client(api) as http:
        for method in ("GET", "HEAD", "OPTIONS", "DELETE"):
            answer = http.request(method, "/api/macro_insights/", headers=key)
            assert answer.status_code == 404 and "location" not in answer.headers, (method, answer.headers)
            assert answer.headers["content-type"] == "application/problem+json"
            if method != "HEAD":
                assert "did you mean /api/macro_insights" in answer.json()["detail"]
        assert_problem(http.get("/api/market/latest/", headers=key), 404, "did you mean /api/market/latest")
        assert_problem(http.get("/graphql/", headers=key), 404, "did you mean /graphql")
        posted = http.post("/graphql/", headers=key, json={"query": "{ __typename }"})
        assert_problem(posted, 404, "did you mean /graphql")
        assert_problem(http.get("/healthz/"), 404, "did you mean /healthz")
        unknown = assert_problem(http.get("/api/nothing-here/", headers=key), 404, "no endpoint at /api/nothing-here/")
        assert "did you mean" not in unknown["detail"]


def test_the_key_is_checked_and_counted_before_the_404(api: Api) -> None:
    with _client(api) as http:
        missing = http.get("/api/macro_insights/")
        assert_problem(missing, 401, "X-API-Key header is missing")
        assert "location" not in missing.headers
        assert_problem(http.get("/graphql/", headers={"X-API-Key": "svc-sk-" + "0" * 40}), 401, "unknown")
        key = {"X-API-Key": api.world.acme_key}
        first, second = http.get("/api/macro_insights/", headers=key), http.get("/api/nothing-here", headers=key)
        assert _remaining(first) - _remaining(second) == 1  # each 404 used one of the key's requests
        assert_problem(http.get("/api/market/latest/", headers={"X-API-Key": ADMIN_KEY}), 404, "did you mean")
