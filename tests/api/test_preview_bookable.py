"""A trade preview says whether the caller's portfolio would book the order now, and if not
why, in the booking's own words (portfolio/trading.py `standing`): it counted neither the
holding nor the cash, so a sell of 500 shares while holding 100, or a buy past the cash,
was shown priced and costed and then refused at booking. REST, GraphQL and the CLI alike;
still 200 with the prices."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from market.settings import Settings
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data
from tests.pipeline.test_cli import cli
from tests.portfolio.clients import announce_action

PREVIEW = "/api/portfolio/trade/preview"
TUESDAY = date(2026, 11, 24)
TUESDAY_MORNING = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)  # 08:00 exchange time, before the session
FIELDS = "price fees bookingTotal held cashAvailable bookable refusal"


def _preview(api: Api, side: str, quantity: int) -> dict[str, Any]:
    shown = api.acme("GET", PREVIEW, params={"side": side, "symbol": "LIQ", "quantity": quantity})
    assert shown.status_code == 200, shown.text  # still priced
    return shown.json()


def _book(api: Api, preview: dict[str, Any]) -> Any:
    order = {"side": preview["side"], "symbol": "LIQ", "quantity": preview["quantity"], "price": preview["price"]}
    return api.acme("POST", "/api/portfolio/trade", json=order)


def _cash(api: Api) -> Decimal:
    rows = api.acme("GET", "/api/portfolio/cash", params={"limit": 500}).json()["items"]
    return sum((Decimal(r["amount"]) for r in rows), Decimal(0))


def test_a_sell_past_the_holding_is_shown_refused_in_the_bookings_words(api: Api) -> None:
    bought = _book(api, {"side": "BUY", "quantity": 100, "price": "50.00"})
    assert bought.status_code == 201, bought.text
    preview = _preview(api, "sell", 500)
    assert (preview["held"], preview["bookable"]) == (100, False)
    assert preview["refusal"] == "cannot sell 500 LIQ: the portfolio holds 100"
    assert_problem(_book(api, preview), 422, preview["refusal"])  # the booking refuses with that sentence
    graph = data(
        api, f'{{ tradePreview(side: "sell", symbol: "LIQ", quantity: 500) {{ {FIELDS} }} }}', api.world.acme_key
    )
    assert (graph["tradePreview"]["bookable"], graph["tradePreview"]["refusal"]) == (False, preview["refusal"])
    assert _preview(api, "sell", 100)["bookable"] is True


def test_a_buy_past_the_cash_is_shown_refused_and_a_bookable_one_charges_its_total(api: Api) -> None:
    cash = _cash(api)
    past = _preview(api, "buy", 5000)  # about 250,000 of LIQ; the portfolio has 200,000
    assert Decimal(past["booking_total"]) > cash and Decimal(past["cash_available"]) == cash
    assert past["bookable"] is False
    assert (
        past["refusal"] == f"buying 5000 LIQ costs {Decimal(past['booking_total']):,.2f} with fees; cash is {cash:,.2f}"
    )
    assert_problem(_book(api, past), 422, past["refusal"])
    within = _preview(api, "buy", 1000)
    assert (within["bookable"], within["refusal"], within["held"]) == (True, None, 0)
    booked = _book(api, within)
    assert booked.status_code == 201, booked.text
    assert Decimal(booked.json()["fees"]) == Decimal(within["fees"])
    assert cash - _cash(api) == Decimal(within["booking_total"])  # charged exactly the preview's total


def test_the_cli_says_whether_the_portfolio_would_book_it(settings: Settings) -> None:
    from market.clock import exchange_now, latest_closed_trading_day
    from store.engine import service_engine
    from tests.portfolio.seed import seed_market

    seed_market(
        service_engine(settings),
        {"AAA": {"close": 52.0, "volume": 20_000}},
        day=latest_closed_trading_day(exchange_now()),
    )
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    shown = cli("portfolio", "preview", "buy", "AAA", "1000", "--portfolio", "client:acme")
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert (body["bookable"], body["held"], body["cash_available"]) == (False, 0, "5000.00")
    booked = cli("portfolio", "trade", "client:acme", "buy", "AAA", "1000", body["price"])
    assert booked.returncode == 1 and body["refusal"] in booked.stderr
    assert json.loads(cli("portfolio", "preview", "buy", "AAA", "10").stdout)["bookable"] is None
    unknown = cli("portfolio", "preview", "buy", "AAA", "10", "--portfolio", "client:nobody")
    assert (unknown.returncode, unknown.stdout) == (1, "") and "no portfolio 'client:nobody'" in unknown.stderr


def test_a_buy_may_spend_the_dividends_its_booking_credits_first(api: Api) -> None:
    """The booking credits the dividends owed before it checks the cash, and a buy may spend
    them even before their payment date: so does the preview's `cash_available`."""
    assert _book(api, {"side": "BUY", "quantity": 1000, "price": "50.00"}).status_code == 201
    announce_action(api.world.engine, "LIQ", "DIVIDEND", 5.0, TUESDAY, "ex-date 2026-11-24, payment 2026-12-15")
    api.clock.moment = TUESDAY_MORNING
    cash = _cash(api)  # not yet credited: 5,000 more once a booking credits it
    per_share = Decimal(_preview(api, "buy", 100)["booking_total"]) / 100
    quantity = int((cash + Decimal(2500)) / per_share)
    shown = _preview(api, "buy", quantity)
    assert cash < Decimal(shown["booking_total"]) <= cash + 5000, shown
    assert (Decimal(shown["cash_available"]), shown["bookable"], shown["refusal"]) == (cash + 5000, True, None)
    booked = _book(api, shown)
    assert booked.status_code == 201, booked.text
    assert cash + 5000 - _cash(api) == Decimal(shown["booking_total"])
