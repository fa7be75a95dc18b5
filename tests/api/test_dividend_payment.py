"""A dividend credited at its ex-date is the holder's and counts in equity, but the cash
it adds cannot leave the service before the notice's payment date: REST and GraphQL
withdrawals share the one check (portfolio/dividends.py `check_withdrawal`), and the
portfolio summary shows that cash as `dividends_receivable`."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from tests.api.conftest import Api, assert_problem
from tests.api.graph import data
from tests.portfolio.clients import announce_action

EX_DATE = date(2026, 11, 24)  # a Tuesday, after acme's Monday buy (tests/api/world.py's MORNING)
WEDNESDAY = datetime(2026, 11, 25, 15, 0, tzinfo=UTC)
PAID = datetime(2026, 12, 15, 15, 0, tzinfo=UTC)
WITHDRAW = (
    'mutation { moveCash(amount: "%s") { __typename ... on CashMoved { balance } ... on InvalidInput { message } } }'
)


def _holder_of_liq(api: Api, text: str) -> Decimal:
    """Acme holds 100 LIQ bought on Monday, before a 1.50 dividend ex Tuesday announced
    with `text`; the cash it has besides the dividend."""
    cash = Decimal(api.acme("GET", "/api/portfolio/summary").json()["cash"])
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    announce_action(api.world.engine, "LIQ", "DIVIDEND", 1.5, EX_DATE, text)
    return cash - Decimal("5205.00") - Decimal(bought.json()["fees"])


def _summary(api: Api) -> dict:
    response = api.acme("GET", "/api/portfolio/summary")
    assert response.status_code == 200, response.text
    return response.json()


def test_a_dividend_cannot_be_withdrawn_before_its_payment_date(api: Api) -> None:
    rest = _holder_of_liq(api, "interim, ex-date 2026-11-24, payment 2026-12-15")
    api.clock.moment = WEDNESDAY  # credited at Tuesday's close, paid on 12-15
    everything = rest + Decimal("150.00")
    assert_problem(
        api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{everything}"}),
        422,
        "dividends not yet paid: 150.00 of LIQ (ex-date 2026-11-24) paid on 2026-12-15",
        f"at most {rest:,.2f}",
    )
    taken = api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{rest}"})  # the rest may leave
    assert taken.status_code == 201 and taken.json()["balance"] == "150.00", taken.text
    shown = _summary(api)  # what the client is shown is what it can withdraw
    assert shown["cash"] == "150.00" and shown["dividends_receivable"] == "150.00"
    graph = data(api, "{ portfolio { cash dividendsReceivable } }", api.world.acme_key)["portfolio"]
    assert graph == {"cash": "150.00", "dividendsReceivable": "150.00"}
    refused = data(api, WITHDRAW % "-0.01", api.world.acme_key)["moveCash"]
    assert refused["__typename"] == "InvalidInput", refused
    assert "150.00 of LIQ (ex-date 2026-11-24) paid on 2026-12-15; at most 0.00" in refused["message"]
    assert _summary(api)["cash"] == "150.00"  # refused: nothing written
    api.clock.moment = PAID  # the payment date: paid, and withdrawable
    assert _summary(api)["dividends_receivable"] == "0.00"
    moved = data(api, WITHDRAW % "-150", api.world.acme_key)["moveCash"]
    assert moved == {"__typename": "CashMoved", "balance": "0.00"}


def test_a_notice_without_a_payment_date_is_paid_at_its_ex_date(api: Api) -> None:
    rest = _holder_of_liq(api, "interim dividend")
    api.clock.moment = WEDNESDAY
    assert _summary(api)["dividends_receivable"] == "0.00"
    everything = rest + Decimal("150.00")
    taken = api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{everything}"})
    assert taken.status_code == 201 and taken.json()["balance"] == "0.00", taken.text


def test_a_payment_date_that_cannot_be_read_holds_the_dividend_back(api: Api) -> None:
    """A notice that speaks of its payment and whose date cannot be read ("2026-12-32", a
    date before the ex-date) was paid at once: withdrawable before the exchange paid it.
    It is held back, the refusal saying why, until the notice is corrected."""
    rest = _holder_of_liq(api, "interim, ex-date 2026-11-24, payment 2026-12-32")
    api.clock.moment = WEDNESDAY
    everything = rest + Decimal("150.00")
    assert_problem(
        api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{everything}"}),
        422,
        "150.00 of LIQ (ex-date 2026-11-24) whose payment date cannot be read from the exchange's notice",
        f"at most {rest:,.2f} can be withdrawn before then (the cash, {everything:,.2f} with the dividends credited",
    )
    announce_action(
        api.world.engine, "LIQ", "DIVIDEND", 1.5, EX_DATE, "interim, ex-date 2026-11-24, payment 2026-11-25"
    )
    taken = api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{everything}"})  # corrected: paid Wednesday
    assert taken.status_code == 201 and taken.json()["balance"] == "0.00", taken.text
