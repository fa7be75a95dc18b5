"""A dividend credited ahead of its ex-date is counted once (the review's weekend run).

A client holds 1,000 OUT bought at Friday's close of 20.00 and 80,000 cash; T0 stored a
2.00 dividend of OUT ex Monday. Monday's T2, run on Saturday, credits the 2,000 into the
cash (effective at Monday's close) while the latest close is still Friday's, with the
dividend in it. The summary, the positions and GraphQL's portfolio counted the 2,000
twice all weekend (cash and price) until Monday's close was stored. Every valuation at
Friday's close read for a later session now takes the credited dividend off that close
(the ex-date's reference price, 18.00): 100,000 on Saturday, Sunday, Monday morning and
after Monday's close of 18.00. Friday's row of the track record is a day's close: Friday's
price and Friday's cash, without the credit, before and after it."""

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
from views.book_record import BookState, book_version, catch_up

MONDAY = CALENDAR.next_trading_day(DAY)
FRIDAY_NOON = datetime(2026, 11, 20, 17, 0, tzinfo=UTC)
SATURDAY = datetime(2026, 11, 21, 17, 0, tzinfo=UTC)
SUNDAY = datetime(2026, 11, 22, 17, 0, tzinfo=UTC)
MONDAY_MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time
MONDAY_EVENING = datetime(2026, 11, 23, 23, 0, tzinfo=UTC)  # 18:00, Monday's close stored
BOOK = "{ portfolio { cash equity marketValue positions { nodes { symbol price marketValue } } } }"


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[httpx.Client, Clock, Settings]]:
    """Acme's portfolio over REST holding 1,000 OUT bought at 20 and 80,000 cash."""
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000})
    seed_long_and_avoid(service_engine(settings))
    with client_served(settings, "Acme Ltd", FRIDAY_NOON) as (http, clock):
        assert http.post("/api/portfolio/cash", json={"amount": "100000.00"}).status_code == 201
        order = {"side": "buy", "symbol": "OUT", "quantity": 1000, "price": "20", "fees": "0"}  # no broker fee
        assert http.post("/api/portfolio/trade", json=order).status_code == 201
        yield http, clock, settings


def _shown(http: httpx.Client) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal]:
    """(cash, summary equity, positions' equity, GraphQL equity, OUT's price) as a client reads them."""
    summary = http.get("/api/portfolio/summary").json()
    positions = http.get("/api/portfolio").json()
    graph = http.post("/graphql", json={"query": BOOK}).json()["data"]["portfolio"]
    (out,) = positions["positions"]
    assert graph["positions"]["nodes"] == [
        {"symbol": "OUT", "price": out["price"], "marketValue": out["market_value"]}
    ], graph
    assert Decimal(positions["equity"]) == Decimal(positions["cash"]) + Decimal(out["market_value"])
    return (
        Decimal(summary["cash"]),
        Decimal(summary["equity"]),
        Decimal(positions["equity"]),
        Decimal(graph["equity"]),
        Decimal(out["price"]),
    )


def _cli_shown(monkeypatch: pytest.MonkeyPatch, portfolio_id: str, moment: datetime) -> str:
    """The first line `marketintel portfolio show` prints at `moment`."""
    from typer.testing import CliRunner

    from cli.main import app

    monkeypatch.setattr("desk.desk.utc_now", lambda: moment)
    shown = CliRunner().invoke(app, ["portfolio", "show", portfolio_id])
    assert shown.exit_code == 0, shown.output
    return shown.stdout.splitlines()[0]


def _book_days(settings: Settings, portfolio_id: str) -> dict[str, tuple[float, float]]:
    """The track record's valued days (portfolio/book_days.py): date -> (equity, market value / equity)."""
    with service_engine(settings).connect() as conn:
        state = BookState()
        catch_up(conn, portfolio_id, state, book_version(conn, portfolio_id))
    days = state.days
    return {d.isoformat(): (e, x) for d, e, x in zip(days.dates, days.equity, days.exposure, strict=True)}


def test_a_dividend_credited_on_saturday_is_counted_once_until_and_after_its_ex_date(served, monkeypatch) -> None:
    http, clock, settings = served
    portfolio_id = http.get("/api/portfolio/summary").json()["portfolio_id"]
    announce_action(service_engine(settings), "OUT", "DIVIDEND", 2.0, MONDAY, "final, ex-date 2026-11-23")
    clock.moment = SATURDAY
    assert _shown(http) == (80_000, 100_000, 100_000, 100_000, 20)  # not credited yet: the close holds it
    record, friday = http.get("/api/portfolio/track-record").json(), _book_days(settings, portfolio_id)

    run_stage("t2_suggestions", MONDAY, settings=settings)  # Monday's T2, run on Saturday: credits the 2,000
    for moment in (SATURDAY, SUNDAY, MONDAY_MORNING):
        clock.moment = moment
        assert _shown(http) == (82_000, 100_000, 100_000, 100_000, 18), moment  # was 102,000 at 20.00
        said = _cli_shown(monkeypatch, portfolio_id, moment)
        assert said.startswith(f"{portfolio_id}: cash 82,000.00") and said.endswith(
            ", equity 100,000.00 at the 2026-11-20 closes"
        ), said
    assert http.get("/api/portfolio/track-record").json() == record  # Friday's close, Friday's cash
    assert friday[DAY.isoformat()] == (100_000.0, 0.2)  # Friday's close of 20 and Friday's 80,000
    assert _book_days(settings, portfolio_id) == friday

    with service_engine(settings).begin() as conn:  # Monday's close arrives: OUT opens ex-dividend at 18
        rows = [price_row("OUT", MONDAY, 18.0, 40_000, 17.9, 18.1), price_row("LIQ", MONDAY, 50.0, 40_000, 49.9, 50.1)]
        append_history(conn, tables.eod_prices, rows)
    clock.moment = MONDAY_EVENING
    assert _shown(http) == (82_000, 100_000, 100_000, 100_000, 18)
    days = _book_days(settings, portfolio_id)
    assert days[DAY.isoformat()] == friday[DAY.isoformat()]
    assert days[MONDAY.isoformat()] == (100_000.0, 0.18)  # the cash counts from Monday's close, once


def test_shares_bought_ahead_on_the_ex_date_are_worth_the_reference_price_from_saturday(served) -> None:
    """Monday's plan, run and confirmed on Saturday, buys LIQ for Monday at Monday's
    reference price (Friday's 50.00 less its 5.00 dividend ex Monday, which the shares do
    not earn): the position reads 45.00 all weekend, as it does on Monday morning, not an
    unrealised gain of 5,000 on a dividend the client never had."""
    http, clock, settings = served
    announce_action(service_engine(settings), "LIQ", "DIVIDEND", 5.0, MONDAY, "final, ex-date 2026-11-23")
    clock.moment = SATURDAY
    run_stage("t2_suggestions", MONDAY, settings=settings)
    (buy,) = [s for s in http.get("/api/suggestions").json()["items"] if s["side"] == "BUY"]
    confirmed = http.post(f"/api/suggestions/{buy['suggestion_id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "CONFIRMED", confirmed.text
    for moment, pending in ((SATURDAY, "2026-11-23"), (MONDAY_MORNING, None)):
        clock.moment = moment
        (liq,) = [p for p in http.get("/api/portfolio").json()["positions"] if p["symbol"] == "LIQ"]
        assert (liq["price"], liq["pending_until"]) == ("45.00", pending), (moment, liq)  # was 50.00 on Saturday
        assert Decimal(liq["unrealized_pnl"]) < 0, liq  # its fees and the spread, not the dividend as a gain
