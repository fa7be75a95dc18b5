"""Cash dividends reach the portfolios that held the name at the close before the
ex-date: the AI portfolio's day, a client's morning suggestions, a manual trade or
withdrawal; once, append-only, corrections as differences (SQLite and Postgres)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine, select

from market.clock import session_close_utc
from market.errors import StageFailedError
from market.settings import Settings
from pipeline.runner import run_stage
from portfolio import ledger
from portfolio.dividends import credit_dividends
from portfolio.ledger import AI_PORTFOLIO, TradeRejected
from portfolio.suggestions import generate
from portfolio.trading import move_cash, open_client_portfolio
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.clients import EX_DATE, FRIDAY, MONDAY, Client, announce_action, open_funded_client, trade
from tests.portfolio.seed import CALENDAR, DAY, seed_market, seed_predictions


def announce(engine: Engine, symbol: str, amount: float | None, day: date = EX_DATE) -> None:
    announce_action(engine, symbol, "DIVIDEND", amount, day, "interim")


def dividend_entries(engine: Engine, portfolio_id: str) -> list[dict]:
    c = tables.cash_entries.c
    with engine.connect() as conn:
        return [
            dict(r._mapping)
            for r in conn.execute(
                select(c.entry_id, c.amount, c.note, c.effective_at)
                .where(c.portfolio_id == portfolio_id, c.kind == "DIVIDEND")
                .order_by(c.id)
            )
        ]


def cash(engine: Engine, portfolio_id: str) -> Decimal:
    with engine.connect() as conn:
        return ledger.cash_balance(conn, portfolio_id)


@pytest.fixture
def client(settings: Settings) -> Client:
    return open_funded_client(settings, "5000", FRIDAY)


def test_a_holder_is_paid_once_and_can_spend_it(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)  # all the cash
    announce(engine, "AAA", 2.0)
    with pytest.raises(TradeRejected, match="would leave cash at -10.00"):
        move_cash(engine, portfolio_id, "-10", now=FRIDAY)  # Friday: the ex-date has not come
    assert move_cash(engine, portfolio_id, "-100", now=MONDAY) == 0  # Monday: the 100 are owed, and spendable
    move_cash(engine, portfolio_id, "250", now=MONDAY)
    (entry,) = dividend_entries(engine, portfolio_id)
    assert entry["entry_id"] == f"DIV:{portfolio_id}:AAA:2026-11-23" and entry["amount"] == Decimal("100")
    assert entry["note"] == "dividend 2.0 per share on 50 AAA, ex-date 2026-11-23"
    assert entry["effective_at"] == session_close_utc(EX_DATE)
    assert cash(engine, portfolio_id) == Decimal("250")


def test_entitlement_is_the_holding_at_the_close_before_the_ex_date(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 40, 100, FRIDAY)
    announce(engine, "AAA", 1.5)
    announce(engine, "BBB", 1.0)
    trade(client, "sell", "AAA", 40, 100, MONDAY)  # sold on the ex-date: the dividend is still the seller's
    trade(client, "buy", "BBB", 100, 10, MONDAY)  # bought on the ex-date: it is not the buyer's
    assert [(e["entry_id"].split(":")[-2], e["amount"]) for e in dividend_entries(engine, portfolio_id)] == [
        ("AAA", Decimal("60"))
    ]
    assert cash(engine, portfolio_id) == Decimal("5000") - 4000 + 60 + 4000 - 1000


def test_a_corrected_notice_is_settled_by_the_difference(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", 2.0)
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        assert credit_dividends(conn, portfolio_id, DAY) == []  # through Friday: nothing is due yet
        (paid,) = credit_dividends(conn, portfolio_id, EX_DATE)
        assert credit_dividends(conn, portfolio_id, EX_DATE) == []  # a re-run pays nothing
    assert paid["amount"] == "100.00" and paid["shares"] == 50
    announce(engine, "AAA", 2.5)  # the exchange corrects the amount
    announce(engine, "AAA", None, CALENDAR.add_trading_days(DAY, 2))  # a notice without an amount pays nothing
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        (more,) = credit_dividends(conn, portfolio_id, CALENDAR.add_trading_days(DAY, 2))
    assert more["amount"] == "25.00" and more["entry_id"].endswith(":1")
    move_cash(engine, portfolio_id, "-125", now=MONDAY)  # spends it all
    announce(engine, "AAA", 1.0)  # corrected down: 75 too much was paid, and the cash is gone
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        assert credit_dividends(conn, portfolio_id, EX_DATE) == []  # cash never goes below zero: nothing to take
    move_cash(engine, portfolio_id, "60", now=MONDAY)  # credits first: the 60 is not there yet, so still nothing
    with pytest.raises(TradeRejected, match="would leave cash at -60.00"):
        move_cash(engine, portfolio_id, "-60", now=MONDAY)  # the pending reversal takes the 60 before it can leave
    assert cash(engine, portfolio_id) == Decimal("60")  # refused whole: the withdrawal and what the reversal took
    move_cash(engine, portfolio_id, "20", now=MONDAY)  # the reversal takes the 60 first, the 20 arrives after
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        (settled,) = credit_dividends(conn, portfolio_id, EX_DATE)  # the rest, now that the cash covers it
    assert settled["amount"] == "-15.00" and settled["entry_id"].endswith(":3")
    entries = dividend_entries(engine, portfolio_id)
    assert [e["amount"] for e in entries] == [Decimal("100"), Decimal("25"), Decimal("-60"), Decimal("-15")]
    assert "notice corrected after it was credited: -60.00" in entries[2]["note"]
    assert cash(engine, portfolio_id) == Decimal("5")


def test_a_statement_balance_already_holds_the_dividends_before_it(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", 2.0)
    later = CALENDAR.add_trading_days(DAY, 3)
    announce(engine, "AAA", 1.0, later)
    # what a statement sync of Monday's statement appends
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.record_cash(
            conn,
            portfolio_id,
            "SYNC-1",
            Decimal("100"),
            "RECONCILIATION",
            MONDAY + timedelta(days=5),
            "statement of 2026-11-23, uploaded on the Saturday after",
        )
        append_history(
            conn,
            tables.statement_imports,
            [
                {
                    "portfolio_id": portfolio_id,
                    "file_sha256": "f" * 64,
                    "status": "SYNCED",
                    "parsed": {"as_of": "2026-11-23"},
                }
            ],
        )
        (paid,) = credit_dividends(conn, portfolio_id, later)  # Monday's is in the statement; Wednesday's is not
    assert paid["ex_date"] == later.isoformat() and cash(engine, portfolio_id) == Decimal("150")


def test_a_cancelled_notice_is_reversed(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 40, 100, FRIDAY)
    announce(engine, "AAA", 1.0)
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        credit_dividends(conn, portfolio_id, EX_DATE)
    announce(engine, "AAA", None)  # the exchange withdraws the notice's amount
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        (reversed_,) = credit_dividends(conn, portfolio_id, EX_DATE)
    assert reversed_["amount"] == "-40.00" and cash(engine, portfolio_id) == Decimal("1000")


def test_morning_suggestions_credit_client_portfolios_first(client) -> None:
    engine, settings, portfolio_id = client
    trade(client, "buy", "BBB", 200, 10, FRIDAY)
    announce(engine, "BBB", 0.25)
    seed_predictions(engine, DAY, {"BBB": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    result = run_stage("t2_suggestions", EX_DATE, settings=settings)
    assert result.summary["dividends"] == 1
    assert [(d["portfolio_id"], d["symbol"], d["amount"]) for d in result.tables["dividends"]] == [
        (portfolio_id, "BBB", "50.00")
    ]
    assert generate(engine, settings, EX_DATE).dividends == []  # a re-run pays nothing
    assert cash(engine, portfolio_id) == Decimal("3050")


def test_the_ai_portfolio_is_paid_before_it_plans_the_ex_date(settings: Settings) -> None:
    """Decided on the day before, filled in the next session, held at the close before the
    ex-date: paid on the ex-date before anything is filled or planned."""
    engine = service_engine(settings)
    market = {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}}
    decided_on = CALENDAR.previous_trading_day(DAY)
    seed_market(engine, market, day=decided_on)
    seed_predictions(engine, decided_on, {"LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15}})
    run_stage("t1_trade", decided_on, settings=settings)
    seed_market(engine, market)
    seed_predictions(engine, DAY, {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    first = run_stage("t1_trade", DAY, settings=settings)
    assert first.tables["orders"][0]["quantity"] == 6000 and first.summary["dividends"] == 0
    seed_market(engine, market, day=EX_DATE)
    seed_predictions(engine, EX_DATE, {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    announce(engine, "LIQ", 0.5)
    second = run_stage("t1_trade", EX_DATE, settings=settings)
    assert [(d["symbol"], d["shares"], d["amount"]) for d in second.tables["dividends"]] == [("LIQ", 6000, "3000.00")]
    assert Decimal(second.summary["cash"]) == Decimal(first.summary["cash"]) + 3000
    again = run_stage("t1_trade", EX_DATE, settings=settings)
    assert again.summary["rerun"] is True and len(dividend_entries(engine, AI_PORTFOLIO)) == 1


def test_the_ai_portfolio_values_a_name_that_did_not_trade_on_its_ex_date_ex_dividend(settings: Settings) -> None:
    """LIQ does not trade on its ex-date (OTH does): the day credits the AI book's 3,000 and
    values the 6,000 LIQ at Friday's 50.00 carried less the 0.50 (the exchange's reference
    price, 49.50), so the day's row, its track record's point, counts the dividend once."""
    engine = service_engine(settings)
    market = {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}}
    decided_on = CALENDAR.previous_trading_day(DAY)
    seed_market(engine, market, day=decided_on)
    seed_predictions(engine, decided_on, {"LIQ": {"score": 71.0, "action": "LONG", "tercile": "TOP", "weight": 0.15}})
    run_stage("t1_trade", decided_on, settings=settings)
    seed_market(engine, market)
    seed_predictions(engine, DAY, {"LIQ": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    first = run_stage("t1_trade", DAY, settings=settings)
    seed_market(engine, {"OTH": {"close": 10.0, "volume": 40_000, "bid": 9.9, "ask": 10.1}}, day=EX_DATE)
    held = {s: {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"} for s in ("LIQ", "OTH")}
    seed_predictions(engine, EX_DATE, held)
    announce(engine, "LIQ", 0.5)
    second = run_stage("t1_trade", EX_DATE, settings=settings)
    assert Decimal(second.summary["cash"]) == Decimal(first.summary["cash"]) + 3000
    c = tables.portfolio_days.c
    with engine.connect() as conn:
        row = conn.execute(select(c.market_value).where(c.portfolio_id == AI_PORTFOLIO, c.trading_date == EX_DATE))
        assert row.scalar_one() == Decimal("297000")  # 6,000 x 49.50, was 6,000 x 50.00 beside the credit


def test_one_book_that_does_not_replay_does_not_stop_the_others_morning(client) -> None:
    engine, settings, portfolio_id = client
    other = open_client_portfolio(engine, "zeta")
    move_cash(engine, other, "1000", now=FRIDAY)
    trade(client, "buy", "BBB", 200, 10, FRIDAY)
    with engine.begin() as conn:  # a book broken outside the ledger's checks (a hand edit, an old bug)
        append_history(
            conn,
            tables.trades,
            [
                {
                    "trade_id": "T-broken",
                    "portfolio_id": portfolio_id,
                    "trading_date": DAY,
                    "executed_at": FRIDAY,
                    "symbol": "AAA",
                    "side": "SELL",
                    "quantity": 5,
                    "price": Decimal("100"),
                    "fees": Decimal("0"),
                    "origin": "MANUAL",
                    "rationale": {},
                }
            ],
        )
    with engine.begin() as conn:
        append_history(
            conn,
            tables.trades,
            [
                {
                    "trade_id": "T-zeta",
                    "portfolio_id": other,
                    "trading_date": DAY,
                    "executed_at": FRIDAY,
                    "symbol": "BBB",
                    "side": "BUY",
                    "quantity": 100,
                    "price": Decimal("10"),
                    "fees": Decimal("0"),
                    "origin": "MANUAL",
                    "rationale": {},
                }
            ],
        )
    announce(engine, "BBB", 0.25)
    seed_predictions(engine, DAY, {"BBB": {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}})
    with pytest.raises(
        StageFailedError, match=f"planned 1 of 2 portfolios; not: {portfolio_id}: ledger of .* sells 5 AAA"
    ):
        generate(engine, settings, EX_DATE)
    assert [e["amount"] for e in dividend_entries(engine, other)] == [Decimal("25")]  # the other book was still paid
    assert dividend_entries(engine, portfolio_id) == []


def test_the_cash_history_keeps_the_order_it_was_shown_in(client) -> None:
    """A dividend effective at Monday's close is credited only at the next call, after a
    deposit made on Tuesday: the balances already listed do not change, the dividend comes
    after them and its timestamp says when it took effect."""
    from views.portfolio import cash_page

    def cash_history(conn, portfolio_id):  # every movement: one page larger than the book
        return [row for _, row in cash_page(conn, portfolio_id, None, 10_000)]

    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", 2.0)
    with engine.connect() as conn:
        shown = cash_history(conn, portfolio_id)
    with engine.begin() as conn:  # a deposit recorded without the credit that move_cash runs first
        ledger.record_cash(conn, portfolio_id, "DEP-tuesday", Decimal("10"), "DEPOSIT", MONDAY + timedelta(days=1))
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        credit_dividends(conn, portfolio_id, EX_DATE)
    with engine.connect() as conn:
        history = cash_history(conn, portfolio_id)
    assert history[: len(shown)] == shown
    assert [h["kind"] for h in history[len(shown) :]] == ["DEPOSIT", "DIVIDEND"]
    assert history[-1]["timestamp"].startswith(EX_DATE.isoformat()) and history[-1]["balance"] == Decimal("110")


def test_the_ex_dates_morning_values_a_credited_dividend_once(client) -> None:
    """A review's run: the ex-date's morning credits the dividend (effective at its close)
    while the latest close is the day before's, with the dividend still in it: the summary
    counted the 100 twice, cash and price, until the ex-date's close was stored. The close
    is read ex-dividend once the cash holds the credit; before the credit, as it was."""
    from views.valuation import portfolio_view

    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", 2.0)  # ex-date Monday
    with engine.connect() as conn:
        before = portfolio_view(conn, portfolio_id, DAY, EX_DATE)
    move_cash(engine, portfolio_id, "1", now=MONDAY - timedelta(hours=8))  # Monday morning: credits the 100
    with engine.connect() as conn:
        after = portfolio_view(conn, portfolio_id, DAY, EX_DATE)
        weekend = portfolio_view(conn, portfolio_id, DAY, DAY)  # Friday's session: the cash holds it all the same
    assert after.cash == before.cash + Decimal("101")
    assert after.equity == before.equity + Decimal("1")  # the deposit, not the dividend again
    assert (before.positions[0].price, after.positions[0].price) == (Decimal("100"), Decimal("98"))
    assert (weekend.positions[0].price, weekend.equity) == (Decimal("98"), after.equity)


def test_a_split_and_a_dividend_of_one_ex_date_read_the_ex_dates_morning_on_one_count(client) -> None:
    """A 2-for-1 split and a 2.00 dividend (per share held the night before) share Monday's
    ex-date. Credited on Saturday (Monday's T2 run ahead), the holding is still 50 shares
    on Friday's count at Friday's close less the 2.00: 98. That morning the cash holds the
    100 and the holding is 100 shares at Friday's close on the new count less the dividend
    on that count: (100 - 2) / 2 = 49, not the per-old-share 2.00 taken from the halved
    close (48, 100 off the book)."""
    from views.valuation import portfolio_view

    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)  # all the cash
    announce_action(engine, "AAA", "SPLIT", 2.0, EX_DATE, "2 for 1")
    announce(engine, "AAA", 2.0)
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:  # Monday's T2, run on Saturday
        credit_dividends(conn, portfolio_id, EX_DATE)
    with engine.connect() as conn:
        saturday = portfolio_view(conn, portfolio_id, DAY, DAY)  # on Friday's count, the split still to come
    (held,) = saturday.positions
    assert (saturday.cash, held.quantity, held.price, held.market_value) == (100, 50, 98, 4900)
    move_cash(engine, portfolio_id, "1", now=MONDAY - timedelta(hours=8))  # Monday morning
    with engine.connect() as conn:
        view = portfolio_view(conn, portfolio_id, DAY, EX_DATE)
    (held,) = view.positions
    assert (view.cash, held.quantity, held.price, held.market_value) == (101, 100, 49, 4900)
    assert view.equity == Decimal("5001.00")  # Friday's 5000 and the deposit: the dividend counted once


def test_a_dividend_is_spendable_at_its_ex_date_and_withdrawable_at_its_payment_date(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)  # all the cash
    announce_action(engine, "AAA", "DIVIDEND", 2.0, EX_DATE, "ex-date 2026-11-23, payment 2026-12-14")
    with pytest.raises(TradeRejected, match=r"100\.00 of AAA \(ex-date 2026-11-23\) paid on 2026-12-14; at most 0\.00"):
        move_cash(engine, portfolio_id, "-0.01", now=MONDAY)
    assert dividend_entries(engine, portfolio_id) == []  # refused whole: not even the credit is written
    trade(client, "buy", "BBB", 5, 10, MONDAY)  # a purchase may spend it (only money leaving is held back)
    move_cash(engine, portfolio_id, "30", now=MONDAY)
    with pytest.raises(
        TradeRejected, match=r"at most 0\.00 can be withdrawn before then \(the cash, 80\.00"
    ):  # 50 left of the 100 unpaid
        move_cash(engine, portfolio_id, "-1", now=MONDAY)
    assert move_cash(engine, portfolio_id, "-80", now=datetime(2026, 12, 14, 15, tzinfo=UTC)) == 0  # paid
