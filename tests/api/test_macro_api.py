"""The macro endpoints over real HTTP: indicators with filters, point in time and currency,
422s, and the tier rule of macro insights with the per-key switch (REST and GraphQL)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from desk import keys as keystore
from market.clock import exchange_date
from tests.api import world
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data, gql, snake
from tests.api.world import MORNING
from tests.conftest import ADMIN_KEY

MONDAY = world.MACRO_MONDAY


def test_indicators_latest_filtered_point_in_time_and_converted(api: Api) -> None:
    world.run_t3(api.world.settings)
    body = api.acme("GET", "/api/v1/macro/indicators").json()
    assert body["generation"] == "v7" and body["as_of"] is None and body["currency"] is None
    codes = {(i["source"], i["indicator_code"]) for i in body["indicators"]}
    assert {
        ("BOJ", "POLICY_RATE"),
        ("BOJ", "USDJMD"),
        ("BOJ", "NIR"),
        ("BOJ", "M2"),
        ("STATIN", "CPI_YOY"),
        ("STATIN", "GDP"),
        ("STATIN", "UNEMPLOYMENT"),
        ("PIOJ", "GDP_GROWTH_EST"),
        ("PIOJ", "GROWTH_OUTLOOK"),
    } <= codes
    assert body["count"] == len(body["indicators"]) == len(codes)

    boj = api.acme("GET", "/api/v1/macro/indicators", params={"source": "boj", "category": "reserves"}).json()
    assert [(i["source"], i["indicator_code"]) for i in boj["indicators"]] == [("BOJ", "NIR")]
    old = api.acme("GET", "/api/v1/macro/indicators", params={"as_of": "2025-06-30"}).json()
    assert old["as_of"] == "2025-06-30" and all(i["release_date"] <= "2025-06-30" for i in old["indicators"])

    usd = api.acme("GET", "/api/v1/macro/indicators", params={"category": "output", "currency": "usd"}).json()
    gdp = next(i for i in usd["indicators"] if i["indicator_code"] == "GDP")
    (rate,) = gdp["fx"]
    assert gdp["currency"] == "USD" and gdp["original"]["currency"] == "JMD" and rate["pair"] == "USDJMD"
    assert gdp["value"] == pytest.approx(gdp["original"]["value"] / rate["rate"], rel=1e-9)

    graph = data(
        api,
        """{ macroIndicators(category: "output", currency: "usd") { nodes { source category indicatorCode
        period frequency value unit currency releaseDate original { value currency unit }
        fx { pair periods rate releaseDate source note } note generation } } }""",
        api.world.acme_key,
    )
    nodes = snake(graph["macroIndicators"]["nodes"])
    assert {n.pop("generation") for n in nodes} == {"v7"}
    assert nodes == usd["indicators"]


def test_a_release_dated_after_today_is_not_served_as_the_latest(api: Api) -> None:
    """A release dated after today (a replay's T3 for a later week, or a source's release
    calendar) was served as the latest value when no `as_of` was given: the latest is what
    is known today, on both transports; asked `as_of` that later day it is refused as ever."""
    from store import tables
    from store.history import append_history

    world.run_t3(api.world.settings)
    today = exchange_date(MORNING)
    later = {
        "source": "BOJ",
        "category": "monetary",
        "indicator_code": "POLICY_RATE",
        "period": "2099-12",
        "frequency": "M",
        "value": 99.0,
        "unit": "percent",
        "currency": None,
        "release_date": today + timedelta(days=3),
    }
    with api.world.engine.begin() as conn:
        append_history(conn, tables.macro_observations, [later])
    body = api.acme("GET", "/api/v1/macro/indicators", params={"source": "boj"}).json()
    rate = next(i for i in body["indicators"] if i["indicator_code"] == "POLICY_RATE")
    assert body["as_of"] is None and rate["period"] != "2099-12" and rate["value"] != 99.0, rate
    graph = data(api, '{ macroIndicators(source: "boj") { nodes { indicatorCode period } } }', api.world.acme_key)
    assert {"indicatorCode": "POLICY_RATE", "period": "2099-12"} not in graph["macroIndicators"]["nodes"]


def test_indicators_422_for_a_bad_date_or_currency(api: Api) -> None:
    assert_problem(api.acme("GET", "/api/v1/macro/indicators", params={"as_of": "2026-13-01"}), 422, "as_of")
    assert_problem(
        api.acme("GET", "/api/v1/macro/indicators", params={"currency": "XYZ"}), 422, "unknown currency code 'XYZ'"
    )
    assert_problem(api.acme("GET", "/api/v1/macro/indicators", params={"source": "IMF"}), 422, "unknown source 'IMF'")
    body = gql(api, '{ macroIndicators(currency: "XYZ") { nodes { value } } }', api.world.acme_key).json()
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


@pytest.mark.parametrize("name", ["source", "category", "currency"])
def test_a_filter_of_50_kb_is_refused_in_a_line_not_sent_back_whole(api: Api, name: str) -> None:
    """REST holds the filters to a few characters; GraphQL's arguments have no length cap,
    and its refusal repeated the whole argument (a 50 KB message, logged as well). It
    names the argument's start, as REST's words do."""
    given = "IMF" + "X" * 50_000
    body = gql(api, '{ macroIndicators(%s: "%s") { nodes { value } } }' % (name, given), api.world.acme_key).json()
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT" and body["data"] == {"macroIndicators": None}
    assert f"'{given[:40]}'" in error["message"] and len(error["message"]) < 200, len(error["message"])


def test_an_as_of_after_today_is_refused_not_answered_with_todays_values_under_its_label(api: Api) -> None:
    world.run_t3(api.world.settings)
    today = exchange_date(MORNING)
    known = api.acme("GET", "/api/v1/macro/indicators", params={"as_of": today.isoformat()}).json()
    assert known["as_of"] == today.isoformat() and known["count"] > 0
    for later in (today + timedelta(days=1), date(2199, 1, 1)):
        assert_problem(
            api.acme("GET", "/api/v1/macro/indicators", params={"as_of": later.isoformat()}),
            422,
            f"as_of {later.isoformat()} is after today ({today.isoformat()})",
        )
        body = gql(
            api, f'{{ macroIndicators(asOf: "{later.isoformat()}") {{ nodes {{ value }} }} }}', api.world.acme_key
        )
        assert body.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT", body.text


def test_insights_follow_the_tier_and_the_per_key_switch(api: Api) -> None:
    w = api.world
    assert_problem(api.call("GET", "/api/macro_insights", w.beta_key), 503, "T3")  # PRO, but nothing computed yet
    world.run_t3(api.world.settings)
    institutional = keystore.generate(w.engine, w.settings, "Inst Ltd", "INSTITUTIONAL", now=MORNING)["api_key"]
    refused = assert_problem(api.acme("GET", "/api/macro_insights"), 403, "PRO or INSTITUTIONAL", "macro-access")
    assert "svc-sk" not in refused["detail"]
    for key in (w.beta_key, institutional, ADMIN_KEY):
        body = api.call("GET", "/api/macro_insights", key).json()
        assert body["week_start"] == MONDAY.isoformat() and body["generation"] == "v7"
        assert [p["parameter"] for p in body["parameters"]] == ["rates_regime", "fx_pressure", "macro_risk"]
        assert [s["code"] for s in body["sources"]] == ["BOJ", "STATIN", "PIOJ"]
        assert all(s["latest_release"] < MONDAY.isoformat() for s in body["sources"])

    keystore.set_option(w.engine, w.acme_key_id, "MACRO_ACCESS_SET", True, now=MORNING)
    assert api.acme("GET", "/api/macro_insights").status_code == 200  # STANDARD with macro access on
    keystore.set_option(w.engine, w.beta_key_id, "MACRO_ACCESS_SET", False, now=MORNING)
    switched_off = assert_problem(api.call("GET", "/api/macro_insights", w.beta_key), 403, "switched off for this key")
    assert "need a PRO" not in switched_off["detail"]  # told why, not to get the tier it has

    query = "{ macroInsights { weekStart parameters { parameter value reading } } modelPerformance { modelId } }"
    assert data(api, query, w.acme_key)["macroInsights"]["weekStart"] == MONDAY.isoformat()
    denied = gql(api, query, w.beta_key).json()
    assert denied["data"]["macroInsights"] is None and denied["data"]["modelPerformance"] is not None
    assert denied["errors"][0]["extensions"]["code"] == "FORBIDDEN" and denied["errors"][0]["path"] == ["macroInsights"]
    assert denied["errors"][0]["message"] == switched_off["detail"]  # the same words on both transports
    standard = keystore.generate(w.engine, w.settings, "Plain Ltd", "STANDARD", now=MORNING)["api_key"]
    assert gql(api, query, standard).json()["errors"][0]["message"] == refused["detail"]
    rest = api.acme("GET", "/api/macro_insights").json()
    graph = data(api, "{ macroInsights { parameters { parameter value reading } } }", w.acme_key)["macroInsights"]
    assert graph["parameters"] == [{k: p[k] for k in ("parameter", "value", "reading")} for p in rest["parameters"]]


def test_insights_are_the_latest_week_started_by_today_on_releases_known_then(api: Api) -> None:
    """T3 computed the week of 2026-11-23 (on STATIN's 2026-11-20 release, among others)
    while the service's clock read Wednesday 2026-11-18: the insights served that week's
    parameters, built on a release /api/v1/macro/indicators hid as not known yet. The week
    served is the latest starting on or before today (macro_indicators' today), on REST and
    GraphQL, so nothing in it was released after today; on the Monday it starts, it is served."""
    world.run_t3(api.world.settings)
    world.run_t3(api.world.settings, MONDAY + timedelta(days=7))
    wednesday = datetime(2026, 11, 18, 13, 0, tzinfo=UTC)  # 08:00 exchange time
    query = "{ macroInsights { weekStart parameters { parameter inputs } sources { code latestRelease } } }"
    for moment, week in ((wednesday, MONDAY), (MORNING, MONDAY + timedelta(days=7))):
        api.clock.moment = moment
        today = exchange_date(moment).isoformat()
        rest = api.call("GET", "/api/macro_insights", api.world.beta_key).json()
        served = data(api, query, api.world.beta_key)["macroInsights"]
        graph = {  # `inputs` is JSON, served as stored: its keys stay as they are
            "week_start": served["weekStart"],
            "parameters": served["parameters"],
            "sources": snake(served["sources"]),
        }
        for body in (rest, graph):
            assert body["week_start"] == week.isoformat(), (moment, body["week_start"])
            released = [i["release_date"] for p in body["parameters"] for i in p["inputs"].values()]
            assert released and max(released) < week.isoformat() <= today
            assert all(s["latest_release"] is None or s["latest_release"] <= today for s in body["sources"])
        assert [p["inputs"] for p in graph["parameters"]] == [p["inputs"] for p in rest["parameters"]]
    # what the Wednesday's answer left out: the next week's parameters draw on a later release
    assert max(i["release_date"] for p in rest["parameters"] for i in p["inputs"].values()) > "2026-11-18"


@pytest.mark.parametrize(
    "given",
    [
        "2026-11-20T00:00:00+14:00",  # 2026-11-19 05:00 exchange time: read as the 20th, a day ahead
        "2026-11-19T00:00:00-05:00",
        "2026-11-19T00:00:00Z",
        "2026-11-19T00:00:00",
        "1795392000",  # 2026-11-23 00:00 UTC as a Unix time
        "20261119",
        "2026-W47-4",
    ],
)
def test_as_of_is_a_date_and_nothing_else_a_time_or_offset_is_refused_not_dropped(api: Api, given: str) -> None:
    """An adversarial run: REST read `as_of=2026-11-20T00:00:00+14:00` (an instant on the
    19th at the exchange) as the 20th, dropping the time and its offset, and answered the
    releases of the 20th under it; a Unix time was read as its UTC date; GraphQL refused
    those but took the ISO basic and week forms REST refused. Both transports take
    YYYY-MM-DD only, as documented."""
    world.run_t3(api.world.settings)
    assert_problem(api.acme("GET", "/api/v1/macro/indicators", params={"as_of": given}), 422, "as_of", "YYYY-MM-DD")
    body = gql(
        api, "query($d: Date) { macroIndicators(asOf: $d) { nodes { value } } }", api.world.acme_key, {"d": given}
    )
    (error,) = body.json()["errors"]
    assert "YYYY-MM-DD" in error["message"] and body.json().get("data") is None
    assert api.acme("GET", "/api/v1/macro/indicators", params={"as_of": "2026-11-19"}).status_code == 200
