"""No answer of the service may be stored by a shared cache in front of it (a proxy, a CDN):
answers depend on the caller's key, and the key travels in `X-API-Key`, which no cache
knows as a credential (RFC 9111 3.5 exempts `Authorization` alone). Without a
`Cache-Control` a cache may store a 200 heuristically (RFC 9111 4.2.2; Varnish's default
keeps it two minutes) under its URL, and the next client asking the same URL (its own
portfolio, `GET /graphql?query={portfolio{cash}}`) is answered another client's. Every
answer but the docs pages' static assets is `Cache-Control: no-store` (api/edge.py)."""

from __future__ import annotations

import httpx

from tests.api.conftest import Api

PORTFOLIO_BY_GET = {"query": "{ portfolio { portfolioId cash } }"}
MARKET_BY_GET = {"query": "{ instruments(first: 2) { nodes { symbol } } }"}


def shared_cache_may_store(response: httpx.Response) -> bool:
    """RFC 9111 3's rule for a shared cache, for a request without `Authorization`: a final
    answer it may store unless `no-store` or `private` says otherwise."""
    directives = {d.strip().split("=")[0].lower() for d in response.headers.get("cache-control", "").split(",")}
    return not ({"no-store", "private"} & directives)


def test_no_keyed_answer_may_be_stored_by_a_shared_cache(api: Api) -> None:
    acme, beta = api.world.acme_key, api.world.beta_key
    answers = {
        "a client's portfolio": api.call("GET", "/api/portfolio/summary", acme),
        "a client's trades": api.call("GET", "/api/portfolio/trade", acme),
        "the market": api.call("GET", "/api/market/latest", acme),
        "a portfolio by GraphQL GET": api.call("GET", "/graphql", acme, params=PORTFOLIO_BY_GET),
        "a market query by GraphQL GET": api.call("GET", "/graphql", beta, params=MARKET_BY_GET),
        "the same, its kept answer": api.call("GET", "/graphql", acme, params=MARKET_BY_GET),
        "a new key's secret": api.admin("POST", "/api/keys/generate", json={"client_name": "Zed", "tier": "PRO"}),
        "a write's answer": api.call("POST", "/api/portfolio/cash", acme, json={"amount": "10.00"}),
        "a refusal": api.call("GET", "/api/portfolio/summary", "svc-sk-" + "0" * 40),
        "a refused body": api.call("POST", "/api/portfolio/cash", acme, json={"amount": "x"}),
        "liveness": api.call("GET", "/healthz"),
    }
    for what, response in answers.items():
        assert response.status_code < 500, (what, response.text)
        assert not shared_cache_may_store(response), (what, response.headers)
        assert response.headers["cache-control"] == "no-store", what
    portfolio = answers["a portfolio by GraphQL GET"].json()["data"]["portfolio"]
    assert portfolio["portfolioId"].startswith("client:")  # the caller's own: what a cache would have handed on


def test_the_docs_pages_static_assets_stay_cacheable(api: Api) -> None:
    asset = api.call("GET", "/static/docs/swagger-ui.css")
    assert asset.status_code == 200
    assert "no-store" not in asset.headers.get("cache-control", "")
    report = api.call("HEAD", "/api/quant-briefing.pdf", api.world.acme_key)  # a route's own header is kept
    assert report.headers["cache-control"] == "no-store"
