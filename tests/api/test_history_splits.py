"""A symbol's history across a split: the prices and volume are served as traded, so the
close halves on a 2-for-1 ex-date. The answer names the split (its ex-date and factor),
REST and GraphQL alike, so a client reading closes can put them on one count instead of
reading a -49% day; a withdrawn notice (no factor) is no split, one announced ahead is listed."""

from __future__ import annotations

from datetime import UTC, date, datetime

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import DAY, MONDAY
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import price_row

TUESDAY_MORNING = datetime(2026, 11, 24, 12, 30, tzinfo=UTC)  # MONDAY's session has closed
SPLITS = '{ instrument(symbol: "LIQ") { splits { exDate factor } recentBars(first: 2) { nodes { close } } } }'


def test_history_across_a_split_names_it_so_closes_can_be_put_on_one_count(api: Api) -> None:
    engine = api.world.engine
    announce_action(engine, "LIQ", "SPLIT", 2.0, MONDAY, "LIQ 2 for 1")
    announce_action(engine, "MID", "SPLIT", None, DAY, "MID split withdrawn: no factor")
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("LIQ", MONDAY, 26.5, 80_000, 26.45, 26.55)])
    api.clock.moment = TUESDAY_MORNING

    page = api.acme("GET", "/api/market/history/LIQ", params={"limit": 2}).json()
    before, on = page["items"]
    assert (before["trading_date"], on["trading_date"]) == (DAY.isoformat(), MONDAY.isoformat())
    assert on["close"] / before["close"] < 0.52  # as traded: halved on the ex-date
    assert page["splits"] == [{"ex_date": MONDAY.isoformat(), "factor": 2.0}]
    (split,) = page["splits"]
    adjusted = before["close"] / split["factor"]  # the day before, on the ex-date's count
    quoted = api.acme("GET", "/api/market/latest").json()["LIQ"]["change_pct"]
    assert round((on["close"] / adjusted - 1) * 100, 2) == quoted == 1.9  # the day's move, as /latest serves it

    graph = data(api, SPLITS, api.world.acme_key)["instrument"]
    assert graph["splits"] == [{"exDate": MONDAY.isoformat(), "factor": 2.0}]
    assert [b["close"] for b in graph["recentBars"]["nodes"]] == [before["close"], on["close"]]

    assert api.acme("GET", "/api/market/history/MID", params={"limit": 1}).json()["splits"] == []  # withdrawn
    announce_action(engine, "SLOW", "SPLIT", 0.1, date(2026, 12, 7), "SLOW 1 for 10 from 7 December")
    ahead = api.acme("GET", "/api/market/history/SLOW", params={"limit": 1}).json()["splits"]
    assert ahead == [{"ex_date": "2026-12-07", "factor": 0.1}]  # announced: after the newest bar
