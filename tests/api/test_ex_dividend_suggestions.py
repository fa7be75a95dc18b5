"""A suggestion for a dividend's ex-date is priced ex-dividend (the review's div_exdate run).

A client holds 1,000 OUT bought at Friday's close of 20.00; T0 stored, on Friday, a 2.00
dividend of OUT and a 5.00 dividend of LIQ, both ex Monday. Monday's T2 planned from
Friday's closes. Before the fix it priced the SELL of OUT at 19.85 and the BUY of LIQ at
50.15, the closes with the dividend still in them: the client was paid 19,850 for shares
the exchange priced at 18 and the 2,000 dividend on top (paid twice), and paid 50.15 for a
share that earns no dividend. The 15% band, centred on the undivided close, let both
through. Now the plan reads Friday's prices less the dividends going ex by Monday (the
exchange's reference price, `portfolio.dividends.per_share_on_count` as the valuation
applies it) and says so in the reason; the manual trade's band and the preview are centred
on the same reference; a dividend stored after the plan refuses the confirmation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest
from pydantic import SecretStr

from market.settings import Settings
from pipeline.runner import run_stage
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.api.conftest import Clock, client_served
from tests.conftest import ADMIN_KEY
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_long_and_avoid

MONDAY = CALENDAR.next_trading_day(DAY)
FRIDAY_NOON = datetime(2026, 11, 20, 17, 0, tzinfo=UTC)
MONDAY_MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time
LISTED = "{ portfolio { suggestions { nodes { suggestionId symbol side quantity limitPrice reason } } } }"
CONFIRM = (
    'mutation { confirmSuggestion(suggestionId: "%s") { __typename ... on Suggestion { state tradeId } '
    "... on InvalidInput { message } ... on Conflict { message } } }"
)


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[httpx.Client, Clock, Settings]]:
    """Acme's portfolio over REST holding 1,000 OUT bought at 20 and 80,000 cash."""
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000})
    engine = service_engine(settings)
    seed_long_and_avoid(engine)
    with client_served(settings, "Acme Ltd", FRIDAY_NOON) as (http, clock):
        assert http.post("/api/portfolio/cash", json={"amount": "100000.00"}).status_code == 201
        order = {"side": "buy", "symbol": "OUT", "quantity": 1000, "price": "20"}
        bought = http.post("/api/portfolio/trade", json=order)
        assert bought.status_code == 201, bought.text
        yield http, clock, settings


def _graph(http: httpx.Client, query: str) -> dict:
    response = http.post("/graphql", json={"query": query})
    assert response.status_code == 200 and "errors" not in response.json(), response.text
    return response.json()["data"]


def _cash(http: httpx.Client) -> Decimal:
    return Decimal(http.get("/api/portfolio/summary").json()["cash"])


def test_an_ex_date_is_planned_confirmed_traded_and_previewed_ex_dividend(served) -> None:
    http, clock, settings = served
    announce_action(service_engine(settings), "OUT", "DIVIDEND", 2.0, MONDAY, "final, ex-date 2026-11-23")
    announce_action(service_engine(settings), "LIQ", "DIVIDEND", 5.0, MONDAY, "final, ex-date 2026-11-23")
    run_stage("t2_suggestions", MONDAY, settings=settings)
    clock.moment = MONDAY_MORNING
    listed = {s["side"]: s for s in http.get("/api/suggestions").json()["items"]}
    sell, buy = listed["SELL"], listed["BUY"]
    assert (sell["symbol"], sell["quantity"], buy["symbol"]) == ("OUT", 1000, "LIQ")
    assert Decimal("17.5") < Decimal(sell["limit_price"]) < Decimal("18"), sell  # was 19.85
    assert Decimal("45") < Decimal(buy["limit_price"]) < Decimal("45.5"), buy  # was 50.15
    assert sell["reason"]["close"] == 18.0 and buy["reason"]["close"] == 45.0
    assert (sell["reason"]["dividend_per_share"], buy["reason"]["dividend_per_share"]) == ("2.0", "5.0")
    assert "less the dividend of 2.0 per share" in sell["reason"]["dividend_adjustment"]
    graph = {s["side"]: s for s in _graph(http, LISTED)["portfolio"]["suggestions"]["nodes"]}
    assert (graph["SELL"]["limitPrice"], graph["BUY"]["limitPrice"]) == (sell["limit_price"], buy["limit_price"])

    before = _cash(http)  # the dividend of 2,000 credited by T2
    confirmed = http.post(f"/api/suggestions/{sell['suggestion_id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "CONFIRMED", confirmed.text
    proceeds = _cash(http) - before
    assert proceeds == Decimal(sell["limit_price"]) * 1000 - Decimal(sell["fees"])
    assert proceeds + 2000 < 20_000  # shares worth 18 ex-dividend and the dividend: not paid twice
    done = _graph(http, CONFIRM % buy["suggestion_id"])["confirmSuggestion"]
    assert done["__typename"] == "Suggestion" and done["state"] == "CONFIRMED", done

    # a manual trade's band and the preview are centred on the ex-date's reference price
    refused = http.post("/api/portfolio/trade", json={"side": "buy", "symbol": "LIQ", "quantity": 10, "price": "52"})
    assert refused.status_code == 422, refused.text
    assert (
        "band 38.25-51.75 (15% around 45.00: the 2026-11-20 close of 50.00 less the dividend of 5.00"
        in (refused.json()["detail"])
    )
    traded = http.post("/api/portfolio/trade", json={"side": "buy", "symbol": "LIQ", "quantity": 10, "price": "45.10"})
    assert traded.status_code == 201, traded.text
    preview = http.get("/api/portfolio/trade/preview", params={"side": "buy", "symbol": "LIQ", "quantity": 10}).json()
    assert (preview["close"], preview["touch"]) == ("45.00", "45.10"), preview
    # the LIQ bought on the ex-date earns no dividend: it is valued at the ex-date's reference
    # price too, not at Friday's 50.00 (an unrealised gain of the dividend it never had)
    (liq,) = (p for p in http.get("/api/portfolio").json()["positions"] if p["symbol"] == "LIQ")
    assert liq["price"] == "45.00", liq


def test_a_dividend_stored_after_the_plan_refuses_the_confirmation(served) -> None:
    """T2 planned the SELL of OUT at 19.85 before any dividend was known; a 2.00 dividend
    ex Monday stored after (a notice delivered at 08:00) makes that limit the
    dividend-bearing price: both transports refuse it, saying why, and book nothing."""
    http, clock, settings = served
    run_stage("t2_suggestions", MONDAY, settings=settings)
    clock.moment = MONDAY_MORNING
    (sell,) = [s for s in http.get("/api/suggestions").json()["items"] if s["side"] == "SELL"]
    assert Decimal(sell["limit_price"]) > 19 and "dividend_adjustment" not in sell["reason"]
    announce_action(service_engine(settings), "OUT", "DIVIDEND", 2.0, MONDAY, "final, ex-date 2026-11-23")
    said = "OUT's dividends going ex by 2026-11-23 changed after this suggestion was planned (0 per share then, 2.0"
    refused = http.post(f"/api/suggestions/{sell['suggestion_id']}/confirm")
    assert refused.status_code == 409 and said in refused.json()["detail"], refused.text
    graph = _graph(http, CONFIRM % sell["suggestion_id"])["confirmSuggestion"]
    assert graph["__typename"] == "Conflict" and said in graph["message"], graph
    positions = http.get("/api/portfolio").json()["positions"]
    assert [(p["symbol"], p["quantity"]) for p in positions] == [("OUT", 1000)]


@pytest.mark.parametrize(
    ("bar", "said"),
    [
        (
            (18.0, 17.9, 18.1),
            "OUT's 2026-11-20 close was corrected after this suggestion was planned (20.00 then, 18.00 now)",
        ),
        (
            (20.0, 18.9, 19.0),
            "OUT's 2026-11-20 closing bid was corrected after this suggestion was planned (19.90 then, 18.90 now)",
        ),
    ],
    ids=["close", "quotes-only"],
)
def test_a_close_or_quotes_corrected_after_the_plan_is_a_conflict_that_says_so(served, bar, said) -> None:
    """T2 planned the SELL of OUT on Friday's close of 20.00 and bid of 19.90; T0 then
    corrected the close to 18.00, or only the quotes (bid 18.90, the close standing), inside
    the band, so the old limit (19.85, 10% or 5% over the corrected market) was booked. Both
    transports answer a conflict that says what was corrected and what the client can do,
    book nothing, and leave the suggestion to reject."""
    http, clock, settings = served
    run_stage("t2_suggestions", MONDAY, settings=settings)
    clock.moment = MONDAY_MORNING
    (sell,) = [s for s in http.get("/api/suggestions").json()["items"] if s["side"] == "SELL"]
    assert Decimal(sell["limit_price"]) > 19, sell
    with service_engine(settings).begin() as conn:  # T0's correction of Friday's bar
        append_history(conn, tables.eod_prices, [price_row("OUT", DAY, bar[0], 40_000, *bar[1:])])
    refused = http.post(f"/api/suggestions/{sell['suggestion_id']}/confirm")
    assert refused.status_code == 409, refused.text
    problem = refused.json()
    assert refused.headers["content-type"].startswith("application/problem+json"), refused.headers
    assert problem["type"].endswith("/problems/conflict") and said in problem["detail"], problem
    assert "reject it" in problem["detail"] and "manual trade" in problem["detail"], problem
    graph = _graph(http, CONFIRM % sell["suggestion_id"])["confirmSuggestion"]
    assert graph["__typename"] == "Conflict" and said in graph["message"], graph
    positions = http.get("/api/portfolio").json()["positions"]
    assert [(p["symbol"], p["quantity"]) for p in positions] == [("OUT", 1000)]
    assert http.post(f"/api/suggestions/{sell['suggestion_id']}/reject").json()["state"] == "REJECTED"
