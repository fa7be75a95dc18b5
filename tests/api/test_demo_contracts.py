"""What a new user of the demo found (issue 42): `/api/market/latest?date=` for a day of the
bootstrapped validation record, and `/api/market/breadth` served from a read model like
the other reads. Over real HTTP, on SQLite and Postgres."""

from __future__ import annotations

from datetime import date

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import DAY
from tests.portfolio.seed import CALENDAR

FIRST_LIVE = CALENDAR.previous_trading_day(DAY)  # the world's first live predictions
RECORD_DAY = CALENDAR.previous_trading_day(FIRST_LIVE)  # before it: only a validation record can have scored it
WF_MODEL = f"wf-{CALENDAR.add_trading_days(RECORD_DAY, -2).isoformat()}-h1-warm"


def _validation_rows(day: date) -> list[dict]:
    common = {
        "trading_date": day,
        "model_id": WF_MODEL,
        "horizon_days": 1,
        "layer1_backend": "fallback-empirical-v2",
        "layer1_p_up": 0.5,
        "raw_score": 0.1,
        "expected_return": 0.001,
        "predicted_class": 1,
        "calibration_rows": 500,
    }
    return [
        {
            **common,
            "symbol": "LIQ",
            "predicted_return": 0.004,
            "p_up": 0.61,
            "score": 61.0,
            "action": "HOLD",
            "weight": 0.0,
            "tercile": "TOP",
            "held_edge": 0.002,
            "round_trip_cost": 0.014,
            "decision_reason": "edge +0.20% over 1 sessions below round-trip cost 1.40% (spread 0.40%, fees 1.00%)",
        },
        {
            **common,
            "symbol": "MID",
            "predicted_return": -0.002,
            "p_up": 0.41,
            "score": 41.0,
            "action": "AVOID",
            "weight": 0.0,
            "tercile": "BOTTOM",
            "held_edge": -0.001,
            "round_trip_cost": 0.02,
            "decision_reason": None,
        },
    ]


def test_latest_for_a_validation_record_day_serves_that_records_scores_and_says_so(api: Api) -> None:
    """Issue 42: a day before the first live day, scored by the bootstrapped validation
    record (the AI portfolio's replay traded on those scores), answered "not scored yet".
    It now carries the validation record's predictions, labelled: `model_id` the
    walk-forward model, `reason` naming the record. The cached body moves when the record
    is appended (the route's version counts validation predictions too)."""
    params = {"date": RECORD_DAY.isoformat()}
    before = api.acme("GET", "/api/market/latest", params=params)  # cached before the record exists
    assert before.status_code == 200
    liq = before.json()["LIQ"]
    assert liq["score"] is None and "not scored yet" not in liq["reason"]
    assert (
        "scored by neither record" in liq["reason"]
        and f"the live record starts {FIRST_LIVE.isoformat()}" in liq["reason"]
    )

    with api.world.engine.begin() as conn:
        append_history(conn, tables.validation_predictions, _validation_rows(RECORD_DAY))

    body = api.acme("GET", "/api/market/latest", params=params).json()
    liq, mid, dry = body["LIQ"], body["MID"], body["DRY"]
    assert (liq["score"], liq["action"], liq["tercile"], liq["predicted_return"]) == (61.0, "HOLD", "TOP", 0.004)
    assert liq["model_id"] == WF_MODEL and liq["layer1_backend"] == "fallback-empirical-v2"
    assert liq["decision_reason"].startswith("edge +0.20%") and liq["held_edge"] == 0.002
    assert liq["reason"].startswith("validation record:") and "/api/ai/performance" in liq["reason"]
    assert (mid["score"], mid["action"], mid["model_id"]) == (41.0, "AVOID", WF_MODEL)
    assert dry["score"] is None and "no prediction" in dry["reason"] and "validation record" in dry["reason"]

    # A live day is still answered from the live record alone, unlabelled.
    live = api.acme("GET", "/api/market/latest", params={"date": FIRST_LIVE.isoformat()}).json()["LIQ"]
    assert live["model_id"] == "test-model" and live["reason"] is None and live["score"] == 72.0
    # A day before the record: scored by neither, and it says where each record stands.
    early = CALENDAR.add_trading_days(RECORD_DAY, -5)
    old = api.acme("GET", "/api/market/latest", params={"date": early.isoformat()}).json()["LIQ"]
    assert old["score"] is None and f"the validation record covers {RECORD_DAY.isoformat()}" in old["reason"]


def test_breadth_is_a_read_model_built_once_per_data_version(api: Api, monkeypatch) -> None:
    """Issue 42: /api/market/breadth recomputed every instrument's bars and RSI on every
    call (0.6-1.4 s on the demo store). It is now built once per data version (prices,
    fundamentals) and closed day, shared by REST and GraphQL's marketBreadth, and rebuilt
    when either moves."""
    import views.breadth

    builds: list[object] = []
    real = views.breadth.latest_market

    def counted(*args, **kwargs):
        builds.append(args[3] if len(args) > 3 else kwargs.get("requested"))
        return real(*args, **kwargs)

    monkeypatch.setattr(views.breadth, "latest_market", counted)
    first = api.acme("GET", "/api/market/breadth")
    assert first.status_code == 200 and first.headers["content-type"] == "application/json"
    for _ in range(3):
        again = api.acme("GET", "/api/market/breadth")
        assert again.status_code == 200 and again.json() == first.json()
    graph = data(api, "{ marketBreadth { tradingDate advancers indexConstituents } }", api.world.acme_key)
    assert graph["marketBreadth"] == {
        "tradingDate": DAY.isoformat(),
        "advancers": first.json()["advancers"],
        "indexConstituents": first.json()["index_constituents"],
    }
    assert len(builds) == 1, builds  # one build for four REST calls and a GraphQL one

    dated = api.acme("GET", "/api/market/breadth", params={"date": FIRST_LIVE.isoformat()})
    assert dated.status_code == 200 and dated.json()["trading_date"] == FIRST_LIVE.isoformat()
    api.acme("GET", "/api/market/breadth", params={"date": FIRST_LIVE.isoformat()})
    assert len(builds) == 2  # a date is its own entry, built once

    assert first.json()["index_constituents"] == 1  # LIQ alone has shares outstanding
    with api.world.engine.begin() as conn:  # fundamentals move the version: MID joins the index
        append_history(
            conn,
            tables.fundamentals,
            [
                {
                    "symbol": "MID",
                    "report_date": date(2026, 9, 30),
                    "period_end": date(2026, 9, 30),
                    "shares_outstanding": 1_000_000,
                    "source": "test",
                }
            ],
        )
    moved = api.acme("GET", "/api/market/breadth").json()
    assert moved["index_constituents"] == 2 and "MID" not in moved["index_excluded"]
    assert len(builds) == 3
    assert api.acme("GET", "/api/market/breadth").json() == moved and len(builds) == 3
