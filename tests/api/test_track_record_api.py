"""The track records over REST and GraphQL say what the book held and, where there are no
statistics, why (issue 55): a client with no history gets a reason, not bare nulls; the
AI portfolio's record carries its average exposure and fills beside the benchmarks."""

from __future__ import annotations

from tests.api.conftest import Api
from tests.api.graph import data, snake

HELD = "days fillCount averageExposure mostlyCash note reason trades"


def test_a_client_without_history_is_told_why_over_rest_and_graphql(api: Api) -> None:
    key = api.world.beta_key  # Beta Fund: a key, no trade, no cash movement
    rest = api.call("GET", "/api/portfolio/track-record", key)
    assert rest.status_code == 200, rest.text
    body = rest.json()
    assert body["days"] == 0 and body["reason"] == "no trades or cash movements yet"
    assert body["fill_count"] == 0 and body["sharpe"] is None and body["benchmarks"] == {}
    graph = snake(data(api, "{ portfolio { trackRecord { %s } } }" % HELD, key)["portfolio"]["trackRecord"])
    assert graph == {k: body.get(k) for k in graph}
    assert graph["reason"] == "no trades or cash movements yet"


def test_the_ai_track_record_states_exposure_and_fills_beside_the_benchmarks(api: Api) -> None:
    rest = api.acme("GET", "/api/ai-portfolio/track-record").json()
    assert rest["fill_count"] == rest["trades"] == 1
    assert 0 < rest["average_exposure"] <= 1 and rest["reason"] is None
    assert rest["mostly_cash"] is (rest["average_exposure"] < 0.05)
    assert (rest["note"] is not None) is rest["mostly_cash"]
    assert "equal_weight_liquid" in rest["benchmarks"]
    live = rest["records"]["live"]
    assert live["fill_count"] == 1 and "average_exposure" in live and "mostly_cash" in live
    graph = snake(
        data(api, "{ aiPortfolio { trackRecord { %s } } }" % HELD, api.world.acme_key)["aiPortfolio"]["trackRecord"]
    )
    assert graph == {k: rest.get(k) for k in graph}
