"""GET /api/analysis: the day's written analysis and its notifications, over real HTTP."""

from __future__ import annotations

from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from store import tables
from store.history import current_rows
from tests.api.conftest import Api, assert_problem
from tests.api.world import DAY


def test_the_days_analysis_as_stored_with_its_notifications(api: Api) -> None:
    assert_problem(api.acme("GET", "/api/analysis"), 503, "no analysis has been written yet")

    async def hook(_) -> Response:
        return Response(status_code=204)

    with serve_in_thread(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as base:
        run_stage(
            "t1_analysis",
            DAY,
            settings=api.world.settings.model_copy(
                update={"webhook_url": f"{base}/hook", "webhook_secret": SecretStr("s3cret")}
            ),
        )
    body = api.acme("GET", "/api/analysis").json()
    with api.world.engine.connect() as conn:
        (stored,) = current_rows(conn, tables.analyses)
    assert (
        body["trading_date"] == DAY.isoformat() and body["writer"] == "template-v1" and body["fallback_reason"] is None
    )
    # the facts as stored, answered under the response contract by their declared types (docs/api.md)
    from analysis.day_facts import DayFacts
    from api.contract import conform

    assert body["body"] == stored["body"] and body["facts"] == conform(stored["facts"], DayFacts) != {}
    assert body["notifications"] == [
        {
            "notification_id": f"{DAY.isoformat()}:analysis",
            "kind": "ANALYSIS",
            "severity": "INFO",
            "title": f"Market analysis for {DAY.isoformat()}",
            "delivered": True,
        }
    ]
    assert api.acme("GET", "/api/analysis", params={"date": DAY.isoformat()}).json() == body
    assert_problem(api.acme("GET", "/api/analysis", params={"date": "2026-11-19"}), 404, "2026-11-19")
    assert_problem(api.acme("GET", "/api/analysis", params={"date": "19-11-2026"}), 422, "date")


def test_a_day_that_is_no_closed_session_is_refused_as_the_market_refuses_it(api: Api) -> None:
    """A future day or a holiday is bad input (422 with the reason, GraphQL BAD_USER_INPUT), as
    /api/market/latest answers it, not 'no analysis is stored' (404)."""
    from tests.api.graph import gql

    for day, words in (("2030-01-02", "has not closed yet"), ("2026-12-25", "is not a trading day")):
        market = api.acme("GET", "/api/market/latest", params={"date": day})
        assert_problem(market, 422, words)
        analysis = api.acme("GET", "/api/analysis", params={"date": day})
        assert_problem(analysis, 422, words)
        assert analysis.json()["detail"] == market.json()["detail"]
        (error,) = gql(api, f'{{ analysis(date: "{day}") {{ tradingDate }} }}', api.world.acme_key).json()["errors"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT" and words in error["message"], error
