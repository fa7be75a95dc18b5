"""User portfolios: manual trades with every refusal reason, positions and cash from the
ledger, idempotent retries, and the append-only history they leave (SQLite and Postgres)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from market.errors import ConflictError, NotFoundError
from market.settings import Settings
from portfolio import ledger
from portfolio.ledger import TradeRejected
from portfolio.trading import move_cash
from store import tables
from tests.portfolio import clients

NOW = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)  # 13:00 exchange time on the Friday


@pytest.fixture
def client(settings: Settings) -> clients.Client:
    return clients.open_funded_client(settings, "10000", NOW)


def trade(client, side, symbol, quantity, price, fees=0, key=None):
    return clients.trade(client, side, symbol, quantity, price, NOW, fees, key)


def test_buy_then_sell_moves_cash_and_positions(client) -> None:
    engine, _, portfolio_id = client
    bought = trade(client, "buy", "AAA", 50, 100, fees=25)
    assert bought.cash_after == Decimal("4975") and bought.position_after == 50
    trade(client, "buy", "AAA", 10, 110)
    sold = trade(client, "sell", "AAA", 30, 105, fees=5)
    with engine.connect() as conn:
        (position,) = ledger.holdings(conn, portfolio_id).values()
        cash = ledger.cash_balance(conn, portfolio_id)
    # average cost (5,000 + 25 + 1,100) / 60 = 102.083333; half is released by the sale
    assert position.quantity == 30 and position.cost_basis == Decimal("3062.5")
    assert position.opened_on.isoformat() == "2026-11-20"
    assert cash == Decimal("10000") - 5025 - 1100 + 3150 - 5
    assert sold.position_after == 30


@pytest.mark.parametrize(
    "order, reason",
    [
        (("buy", "ZZZ", 1, 100), "unknown symbol 'ZZZ'"),
        (("buy", "AAA", 0, 100), "positive whole number"),
        (("buy", "AAA", -5, 100), "positive whole number"),
        (("buy", "AAA", 1.5, 100), "positive whole number"),
        (("buy", "AAA", "10", 100), "positive whole number"),
        (("buy", "AAA", True, 100), "positive whole number"),
        (("buy", "AAA", 1, 115.01), "outside the day's band 85.00-115.00"),
        (("buy", "AAA", 1, 84.99), "outside the day's band"),
        (("buy", "AAA", 1, "abc"), "price must be a decimal number like 101.50"),
        (("buy", "AAA", 1, "NaN"), "price must be a decimal number like 101.50"),
        (("buy", "AAA", 1, "６.４８"), "price must be a decimal number like 101.50"),  # issue 18: full-width digits
        (("buy", "AAA", 1, "1_00"), "price must be a decimal number like 101.50"),  # issue 18: read as 100
        (("buy", "AAA", 1, True), "price must be a decimal number like 101.50"),
        (("sell", "AAA", 1, 100), "cannot sell 1 AAA: the portfolio holds 0"),
        (("buy", "AAA", 101, 100), "costs 10,100.00 with fees; cash is 10,000.00"),
        (("hold", "AAA", 1, 100), "side must be buy or sell"),
    ],
)
def test_refusals_say_why_and_write_nothing(client, order, reason) -> None:
    engine, _, portfolio_id = client
    with pytest.raises(TradeRejected, match=reason.replace("(", r"\(").replace(")", r"\)")):
        trade(client, *order)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.trades)).scalar_one() == 0
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("10000")


def test_band_edges_are_inclusive_and_exact_cash_is_enough(client) -> None:
    assert trade(client, "buy", "AAA", 1, 115).price == Decimal("115")
    assert trade(client, "buy", "AAA", 1, 85).price == Decimal("85")
    spent = trade(client, "buy", "BBB", 980, 10)  # 9,800 of the 9,800 left: cash may reach zero exactly
    assert spent.cash_after == 0
    with pytest.raises(TradeRejected):
        trade(client, "buy", "BBB", 1, 10)


def test_a_band_between_cents_prints_the_edges_it_accepts(settings: Settings) -> None:
    """An adversarial run: a band of 10.5825-14.3175 was printed "10.58-14.32" and refused
    both; the band is now in whole cents, as prices are: 87.66-112.34 for 12.348% of 100 (87.652-112.348)."""
    odd = clients.open_funded_client(settings.model_copy(update={"trade_price_band": 0.12348}), "10000", NOW)
    with pytest.raises(TradeRejected, match="outside the day's band 87.66-112.34"):
        trade(odd, "buy", "AAA", 1, "87.65")
    with pytest.raises(TradeRejected, match="outside the day's band 87.66-112.34"):
        trade(odd, "buy", "AAA", 1, "112.35")
    assert trade(odd, "buy", "AAA", 1, "87.66").price == Decimal("87.66")
    assert trade(odd, "buy", "AAA", 1, "112.34").price == Decimal("112.34")


def test_a_band_refusal_prints_the_close_as_every_answer_rounds_it(client) -> None:
    """A review's run: a close of 26.005 (a split-adjusted one) was printed "close of 26.00"
    by the refusal (the decimal context's half-even) and "26.01" by the preview (half up)."""
    from tests.portfolio.seed import seed_market

    seed_market(client[0], {"HALF": {"close": 26.005, "volume": 20_000}})
    with pytest.raises(TradeRejected, match=r"around the 2026-11-20 close of 26\.01\)"):
        trade(client, "buy", "HALF", 1, 40)


def test_a_sell_of_more_than_held_after_buys(client) -> None:
    trade(client, "buy", "BBB", 100, 10)
    with pytest.raises(TradeRejected, match="holds 100"):
        trade(client, "sell", "BBB", 101, 10)
    assert trade(client, "sell", "BBB", 100, 10).position_after == 0


def test_idempotency_key_replays_and_refuses_a_different_request(client) -> None:
    engine, _, portfolio_id = client
    first = trade(client, "buy", "AAA", 10, 100, key="k-1")
    again = trade(client, "buy", "AAA", 10, 100, key="k-1")
    assert again.replayed is True and first.replayed is False
    assert replace(again, replayed=False) == first  # the stored answer, read back whole
    with pytest.raises(ConflictError, match="different request"):
        trade(client, "buy", "AAA", 11, 100, key="k-1")
    with engine.connect() as conn:
        assert len(ledger.trade_rows(conn, portfolio_id)) == 1


def test_withdrawals_cannot_overdraw_and_unknown_portfolios_are_404(client) -> None:
    engine, _, portfolio_id = client
    with pytest.raises(TradeRejected, match="would leave cash at -0.01"):
        move_cash(engine, portfolio_id, "-10000.01", now=NOW)
    assert move_cash(engine, portfolio_id, "-10000", now=NOW) == 0
    with pytest.raises(NotFoundError):
        move_cash(engine, "client:nobody", "5", now=NOW)


def test_history_is_append_only_for_trades_and_cash(client) -> None:
    engine, _, _ = client
    trade(client, "buy", "AAA", 1, 100)
    with pytest.raises(Exception, match="(?i)append-only|permission denied"):
        with engine.begin() as conn:
            conn.execute(tables.cash_entries.delete())


def test_portfolio_view_values_positions_at_the_latest_close(client) -> None:
    from tests.portfolio.seed import DAY
    from views.valuation import portfolio_view

    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 20, 90, fees=10)  # cost 1,810
    trade(client, "sell", "AAA", 10, 110)  # releases 905, realises 1,100 - 905 = 195
    trade(client, "buy", "BBB", 100, 10)
    with engine.connect() as conn:
        view = portfolio_view(conn, portfolio_id, DAY)
    assert [(p.symbol, p.quantity, p.price, p.market_value, p.unrealized_pnl) for p in view.positions] == [
        ("AAA", 10, Decimal("100.0"), Decimal("1000.00"), Decimal("95.00")),
        ("BBB", 100, Decimal("10.0"), Decimal("1000.00"), Decimal("0.00")),
    ]
    assert view.cash == Decimal("10000") - 1810 + 1100 - 1000
    assert view.equity == view.cash + 2000 and view.liquid_equity == view.equity
    assert view.realized_pnl == Decimal("195.00") and view.unrealized_pnl == Decimal("95.00")
    assert view.positions[0].purchase_date.isoformat() == "2026-11-20" and view.positions[0].flags == ()


def test_the_cash_shown_is_the_cash_held_and_can_all_be_withdrawn(client) -> None:
    """Issue 39, defect 6: a fee of 294.7825 was stored as it was; the balance showed
    21,520.93, the ledger held 21,520.9275 and withdrawing 21,520.93 was refused."""
    from views.portfolio import cash_page

    def cash_history(conn, portfolio_id):  # every movement: one page larger than the book
        return [row for _, row in cash_page(conn, portfolio_id, None, 10_000)]

    engine, _, portfolio_id = client
    with pytest.raises(TradeRejected, match="whole number of cents"):  # a client's own money is never rounded
        trade(client, "buy", "BBB", 3, "10.333333", fees="0.7825")
    # a price and fee the service computes itself (a suggestion's limit, the fee schedule) keep their digits
    computed = ledger.TradeRequest(
        portfolio_id, NOW.date(), NOW, "BBB", "BUY", 3, Decimal("10.333333"), Decimal("0.7825"), "SUGGESTION"
    )
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        bought = ledger.record_trade(conn, replace(computed, trade_id="T-computed"))
    assert bought["fees"] == Decimal("0.78")  # cents, half up; the gross 30.999999 is stored as 31.00
    with engine.connect() as conn:
        held = ledger.cash_balance(conn, portfolio_id)
        shown = cash_history(conn, portfolio_id)[-1]["balance"]
    assert held == shown == Decimal("9968.22")
    assert move_cash(engine, portfolio_id, f"-{held}", now=NOW) == 0


def test_a_trade_of_a_delisted_name_says_it_was_delisted_and_when(settings: Settings) -> None:
    """A trade of a delisted name was refused with "price cannot be checked: no price for
    NGP in the 60 days up to ...", as if the store knew nothing of it. Where the store knows
    the name was delisted (the exchange's DELISTING notice, or the delisting rule's sessions
    without a row: portfolio/delisting.py) the refusal says so and when; a listed name that
    merely has no recent price keeps the old reason."""
    from portfolio.trading import open_client_portfolio
    from store.engine import service_engine
    from tests.portfolio.seed import CALENDAR, DAY, seed_market

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}}, history=90)
    ngp_last, off_last = CALENDAR.add_trading_days(DAY, -70), CALENDAR.add_trading_days(DAY, -50)
    seed_market(engine, {"NGP": {"close": 12.5, "volume": 20_000}}, day=ngp_last)  # 70 sessions without a row
    seed_market(engine, {"OFF": {"close": 8.0, "volume": 20_000}, "QUI": {"close": 3.0, "volume": 900}}, off_last)
    notice = CALENDAR.next_trading_day(off_last)  # the exchange's notice the session after OFF's last
    clients.announce_action(engine, "OFF", "DELISTING", None, notice, "last trading day was the previous session")
    client = (engine, settings, open_client_portfolio(engine, "acme"))
    move_cash(engine, client[2], "10000", now=NOW)
    refusals = {}
    for symbol in ("NGP", "OFF", "QUI"):
        with pytest.raises(TradeRejected) as refused:
            trade(client, "buy", symbol, 1, 10)
        refusals[symbol] = refused.value.detail
    rule_day = CALENDAR.add_trading_days(ngp_last, 60)
    assert refusals == {
        "NGP": f"NGP was delisted on {rule_day} (no row for 60 sessions after its last close, 12.50 on {ngp_last}: "
        "the delisting rule); a delisted name cannot be traded",
        "OFF": f"OFF was delisted on {notice} (the exchange's delisting notice; its last close was 8.00 on "
        f"{off_last}); a delisted name cannot be traded",
        "QUI": "price cannot be checked: no price for QUI in the 60 days up to 2026-11-20",  # 50 sessions: not yet
    }


def test_a_halted_name_is_refused_and_its_preview_fills_nothing(client, settings: Settings) -> None:
    """The exchange halted AAA the day before and has not resumed it: a client's trade is
    refused naming the halt (it was booked), and the preview says nothing fills (it said
    the whole order filled, at the normal day's volume), still showing the fees the order
    pays booked at its price; once it resumes, it trades."""
    from datetime import date

    from portfolio.trading import preview_trade
    from tests.portfolio.seed import CALENDAR

    engine, _, portfolio_id = client
    clients.announce_action(engine, "AAA", "HALT", None, date(2026, 11, 19), "trading halted pending announcement")
    with pytest.raises(TradeRejected, match=r"AAA is halted since 2026-11-19 \(the exchange's HALT notice\)"):
        trade(client, "buy", "AAA", 10, 100)
    with engine.connect() as conn:
        preview = preview_trade(conn, settings, CALENDAR, "buy", "AAA", 10, NOW)
        assert ledger.trade_rows(conn, portfolio_id) == []
    assert preview.fillable_in_one_session == 0 and preview.impact is None
    # what the order would cost booked at its price (once the name resumes): its fees on all of it
    assert preview.fees > 0 and preview.booking_total == preview.price * 10 + preview.fees
    assert preview.lapse_reason == (
        "AAA is halted since 2026-11-19 (the exchange's HALT notice); a halted name cannot be traded until it resumes"
    )
    clients.announce_action(engine, "AAA", "RESUME", None, date(2026, 11, 20), "trading resumed")
    assert trade(client, "buy", "AAA", 10, 100).position_after == 10


def test_an_order_past_one_sessions_fill_is_charged_the_fees_and_price_its_preview_showed(settings: Settings) -> None:
    """A preview of 8,000 AAA, past the 5,000 one session of 20,000 shares fills, showed the
    fees, spread and impact of the 5,000 while a trade of the 8,000 at its price, booked
    without fees, is charged the schedule's fees on all 8,000. The preview prices the whole
    order as a booking books it (saying how much one session fills), so the same order booked
    without fees is charged its `fees`, and its price x quantity plus fees is the cash moved."""
    from portfolio.trading import preview_trade
    from tests.portfolio.seed import CALENDAR

    client = clients.open_funded_client(settings, "1000000", NOW)
    engine, _, portfolio_id = client
    with engine.connect() as conn:
        preview = preview_trade(conn, settings, CALENDAR, "buy", "AAA", 8_000, NOW)
    assert preview.fillable_in_one_session == 5_000 and "25%" in preview.lapse_reason
    placed = clients.trade(client, "buy", "AAA", 8_000, preview.price, NOW, None)
    assert (placed.fees, placed.fees_from) == (preview.fees, "SCHEDULE")
    assert preview.total_cost == preview.spread_cost + preview.impact_cost + preview.fees
    assert placed.cash_after == Decimal("1000000") - preview.price * 8_000 - preview.fees


def test_a_halt_resumed_the_same_day_or_ended_by_a_delisting_is_no_halt(client, settings: Settings) -> None:
    """A HALT and a RESUME of one day left the name halted for good (the RESUME had to be
    dated after the HALT), and a name halted then delisted was refused as "halted ...
    until it resumes", which it never will: the notices apply in their order, and a
    DELISTING ends a halt (its own refusal then says so)."""
    from datetime import date

    from portfolio.trading import move_cash, open_client_portfolio
    from store.engine import service_engine
    from tests.portfolio.seed import CALENDAR, DAY, seed_market

    engine, _, _ = client
    clients.announce_action(engine, "AAA", "HALT", None, date(2026, 11, 18), "trading halted pending announcement")
    clients.announce_action(engine, "AAA", "RESUME", None, date(2026, 11, 18), "trading resumed")
    assert trade(client, "buy", "AAA", 10, 100).position_after == 10
    # the HALT re-sent with corrected text keeps its place before the RESUME
    clients.announce_action(engine, "AAA", "HALT", None, date(2026, 11, 18), "trading halted (corrected)")
    assert trade(client, "buy", "AAA", 10, 100).position_after == 20
    gone = CALENDAR.add_trading_days(DAY, -50)
    seed_market(service_engine(settings), {"OFF": {"close": 8.0, "volume": 20_000}}, gone)
    clients.announce_action(engine, "OFF", "HALT", None, CALENDAR.add_trading_days(gone, -2), "trading halted")
    clients.announce_action(engine, "OFF", "DELISTING", None, CALENDAR.next_trading_day(gone), "delisted")
    other = (engine, settings, open_client_portfolio(engine, "other"))
    move_cash(engine, other[2], "10000", now=NOW)
    with pytest.raises(TradeRejected, match="OFF was delisted on"):
        trade(other, "buy", "OFF", 1, 8)


def test_a_name_the_exchange_delisted_is_refused_though_its_last_close_is_recent(client, settings: Settings) -> None:
    """The exchange's DELISTING notice for Monday, after AAA's Friday close: a trade on Monday
    was booked within 15% of that close (the notice was read only when no close was left to
    check against), a name halted then delisted traded again, and the preview said the whole
    order filled. Now each is refused naming the delisting, and the preview fills nothing with
    the same sentence; a notice older than the name's rows since (a ticker reused) refuses
    nothing."""
    from datetime import date

    from portfolio.trading import preview_trade
    from tests.portfolio.clients import MONDAY

    engine, _, portfolio_id = client
    clients.announce_action(engine, "BBB", "DELISTING", None, date(2026, 10, 1), "the ticker's former company")
    assert trade(client, "buy", "BBB", 10, 10).position_after == 10  # rows since the notice: trading again
    clients.announce_action(engine, "AAA", "DELISTING", None, date(2026, 11, 23), "last trading day was Friday")
    clients.announce_action(engine, "BBB", "HALT", None, date(2026, 11, 19), "trading halted pending announcement")
    clients.announce_action(engine, "BBB", "DELISTING", None, date(2026, 11, 23), "delisted while halted")
    said = {
        "AAA": "AAA was delisted on 2026-11-23 (the exchange's delisting notice; its last close was 100.00 on "
        "2026-11-20); a delisted name cannot be traded",
        "BBB": "BBB was delisted on 2026-11-23 (the exchange's delisting notice; its last close was 10.00 on "
        "2026-11-20); a delisted name cannot be traded",
    }
    for symbol, price in (("AAA", 100), ("BBB", 10)):
        for side in ("buy", "sell"):
            with pytest.raises(TradeRejected) as refused:
                clients.trade(client, side, symbol, 10, price, MONDAY)
            assert refused.value.detail == said[symbol]
        with engine.connect() as conn:
            preview = preview_trade(conn, settings, clients.CALENDAR, "buy", symbol, 10, MONDAY)
        assert (preview.fillable_in_one_session, preview.lapse_reason) == (0, said[symbol])
    with engine.connect() as conn:
        assert len(ledger.trade_rows(conn, portfolio_id)) == 1
    assert trade(client, "buy", "AAA", 1, 100).position_after == 1  # Friday: before the notice


def test_the_ai_portfolio_takes_no_manual_trade_cash_movement_or_statement(client, settings: Settings) -> None:
    """The CLI names a portfolio by its id, so `portfolio trade AI buy ...` booked a MANUAL
    trade into the autonomous book, and a statement synced into it planned to sell every
    position it held. The AI portfolio is written by its own executor only: each write path
    refuses it with one sentence (InvalidInputError) and books nothing."""
    from market.errors import InvalidInputError
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement
    from portfolio.statements import import_statement
    from tests.portfolio.seed import DAY

    engine, _, _ = client
    with ledger.portfolio_transaction(engine, ledger.AI_PORTFOLIO) as conn:
        ledger.ensure_portfolio(conn, ledger.AI_PORTFOLIO, "AI")
        ledger.record_cash(conn, ledger.AI_PORTFOLIO, "C-ai-opening", Decimal("10000"), "DEPOSIT", NOW, None)
        pdf = sample_holdings_statement(market_days(conn, DAY), DAY, count=2)
    said = (
        "portfolio 'AI' is the AI book's own, written only by its executor: trade, move cash or "
        "sync a statement in a client's portfolio or the house portfolio"
    )
    attempts = (
        lambda: trade((engine, settings, ledger.AI_PORTFOLIO), "buy", "AAA", 1, 100),
        lambda: move_cash(engine, ledger.AI_PORTFOLIO, "500", now=NOW),
        lambda: move_cash(engine, ledger.AI_PORTFOLIO, "-500", now=NOW),
        lambda: import_statement(engine, settings, ledger.AI_PORTFOLIO, pdf, now=NOW, preview=True),
        lambda: import_statement(engine, settings, ledger.AI_PORTFOLIO, pdf, now=NOW),
    )
    for attempt in attempts:
        with pytest.raises(InvalidInputError) as refused:
            attempt()
        assert refused.value.detail == said
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, ledger.AI_PORTFOLIO) == []
        assert ledger.cash_balance(conn, ledger.AI_PORTFOLIO) == Decimal("10000")
        assert conn.execute(select(func.count()).select_from(tables.statement_imports)).scalar_one() == 0
