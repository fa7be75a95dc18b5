"""A dividend credited at its ex-date is the holder's and counts in equity, but the cash
it adds cannot leave the service before the notice's payment date: REST and GraphQL
withdrawals share the one check (portfolio/dividends.py `check_withdrawal`), and the
portfolio summary shows that cash as `dividends_receivable`."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from portfolio import suggestions
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


FRIDAY = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)  # 10:00 exchange time
SATURDAY = datetime(2026, 11, 21, 15, 0, tzinfo=UTC)
MONDAY_EX = date(2026, 11, 23)  # the session of the world's pending suggestions
MONDAY_NOTICE = "MID dividend 2.00 per share, ex-date 2026-11-23, payment 2026-12-15"


def _friday_holder_of_mid(api: Api) -> None:
    """Acme buys 1,000 MID on Friday; T0 then stores a 2.00 dividend of MID ex Monday, paid
    on 12-15; the clock moves to Saturday."""
    api.clock.moment = FRIDAY
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "MID", "quantity": 1000, "price": "20.00"}
    )
    assert bought.status_code == 201 and bought.json()["trading_date"] == "2026-11-20", bought.text
    announce_action(api.world.engine, "MID", "DIVIDEND", 2.0, MONDAY_EX, MONDAY_NOTICE)
    api.clock.moment = SATURDAY


def _dividend_entries(api: Api) -> list[dict]:
    listed = api.acme("GET", "/api/portfolio/cash", params={"limit": 100})
    assert listed.status_code == 200, listed.text
    return [e for e in listed.json()["items"] if e["kind"] == "DIVIDEND"]


def test_a_weekend_confirmation_credits_no_dividend_going_ex_on_its_session(api: Api) -> None:
    """Confirming Monday's suggestion on Saturday credited MID's Monday dividend at once: the
    summary showed 2,000 more cash (none of it receivable) and equity jumped by it beside
    Friday's close with the dividend in it; a Saturday sale of the 1,000 MID (dated Friday,
    so not held at Friday's close: the dividend is not owed) reversed nothing, and the whole
    balance, the 2,000 included, could be withdrawn. A dividend is credited by the session
    it goes ex in, as a manual trade or a withdrawal that weekend credits it."""
    _friday_holder_of_mid(api)
    before = _summary(api)
    (suggestion,) = api.acme("GET", "/api/suggestions").json()["items"]
    confirmed = api.acme("POST", f"/api/suggestions/{suggestion['suggestion_id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "CONFIRMED", confirmed.text
    cost = Decimal(suggestion["limit_price"]) * int(suggestion["quantity"]) + Decimal(suggestion["fees"])
    after = _summary(api)
    assert Decimal(after["cash"]) == Decimal(before["cash"]) - cost  # no dividend in it
    assert Decimal(after["equity"]) < Decimal(before["equity"])  # the fees, the spread: no dividend
    assert _dividend_entries(api) == []
    sold = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "SELL", "symbol": "MID", "quantity": 1000, "price": "20.00"}
    )
    assert sold.status_code == 201 and sold.json()["trading_date"] == "2026-11-20", sold.text
    api.clock.moment = datetime(2026, 11, 23, 13, 0, tzinfo=UTC)  # Monday 08:00: the ex-date
    assert api.acme("POST", "/api/portfolio/cash", json={"amount": "10.00"}).status_code == 201
    assert _dividend_entries(api) == []  # not held at Friday's close: not owed, never credited
    assert _summary(api)["dividends_receivable"] == "0.00"


def test_a_dividend_credited_before_its_ex_date_is_a_receivable_until_paid(api: Api) -> None:
    """T2 for Monday run on Saturday (a stage run ahead of its 07:00) credits Monday's
    dividend then: the summary counted a receivable only for notices with an ex-date by
    today, so that weekend it showed none and the 2,000 could leave before the exchange paid
    it. Whatever credited it, a dividend is judged payable by its payment date alone."""
    _friday_holder_of_mid(api)
    suggestions.generate(api.world.engine, api.world.settings, MONDAY_EX, now=SATURDAY)
    (entry,) = _dividend_entries(api)
    assert entry["amount"] == "2000.00"
    shown = _summary(api)
    assert shown["dividends_receivable"] == "2000.00"
    everything = Decimal(shown["cash"])
    assert_problem(
        api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{everything}"}),
        422,
        "dividends not yet paid: 2,000.00 of MID (ex-date 2026-11-23) paid on 2026-12-15",
        f"at most {everything - 2000:,.2f}",
    )


def test_a_refusal_names_the_dividend_a_cancelled_notice_took_back_first(api: Api) -> None:
    """The 150.00 was paid and withdrawn, then the exchange cancelled the notice: the next
    use of the cash takes it back first. The client is shown 100.00 after a deposit and
    withdraws it: the refusal said only "would leave cash at -100.00"; it names the dividend
    taken back and writes nothing (the summary still shows the 100.00)."""
    rest = _holder_of_liq(api, "interim dividend")
    api.clock.moment = WEDNESDAY
    everything = rest + Decimal("150.00")
    taken = api.acme("POST", "/api/portfolio/cash", json={"amount": f"-{everything}"})
    assert taken.status_code == 201 and taken.json()["balance"] == "0.00", taken.text
    announce_action(api.world.engine, "LIQ", "DIVIDEND", 0.0, EX_DATE, "interim dividend cancelled")
    deposited = api.acme("POST", "/api/portfolio/cash", json={"amount": "100"})
    assert deposited.status_code == 201 and deposited.json()["balance"] == "100.00", deposited.text
    assert _summary(api)["cash"] == "100.00"
    said = "100.00 of the cash first takes back LIQ's dividend of ex-date 2026-11-24 (its notice corrected"
    assert_problem(
        api.acme("POST", "/api/portfolio/cash", json={"amount": "-100"}), 422, "would leave cash at -100.00", said
    )
    refused = data(api, WITHDRAW % "-100", api.world.acme_key)["moveCash"]
    assert refused["__typename"] == "InvalidInput" and said in refused["message"], refused
    buy = {"side": "BUY", "symbol": "LIQ", "quantity": 1, "price": "52.05"}
    assert_problem(api.acme("POST", "/api/portfolio/trade", json=buy), 422, said)
    assert _summary(api)["cash"] == "100.00" and len(_dividend_entries(api)) == 1  # nothing written
