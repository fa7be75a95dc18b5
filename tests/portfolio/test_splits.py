"""Stock splits, bonus issues and consolidations from the exchange's SPLIT notices: a
holding changes count from the ex-date on and keeps its cost, so the split is neither a
gain nor a loss in the portfolio, and the model's price history reads no crash on the
ex-date (SQLite and Postgres)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine

from market.errors import InvalidInputError
from market.settings import Settings
from portfolio import ledger
from portfolio.dividends import credit_dividends
from portfolio.market import market_days
from store import tables
from store.engine import service_engine
from store.history import append_history
from store.panels import price_panel
from tests.portfolio.clients import EX_DATE, FRIDAY, MONDAY, Client, announce_action, open_funded_client, trade
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_market
from views.valuation import portfolio_view


def announce(engine: Engine, symbol: str, kind: str, amount: float, day: date = EX_DATE) -> None:
    announce_action(engine, symbol, kind, amount, day, "test")


def price(engine: Engine, symbol: str, day: date, close: float, volume: int) -> None:
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row(symbol, day, close, volume, None, None)])


@pytest.fixture
def client(settings: Settings) -> Client:
    return open_funded_client(settings, "10000", FRIDAY)


def test_a_two_for_one_split_doubles_the_holding_and_halves_its_cost(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", "SPLIT", 2.0)
    price(engine, "AAA", EX_DATE, 50.5, 30_000)
    with engine.connect() as conn:
        before, after = ledger.holdings(conn, portfolio_id, DAY)["AAA"], ledger.holdings(conn, portfolio_id)["AAA"]
        friday, monday = portfolio_view(conn, portfolio_id, DAY), portfolio_view(conn, portfolio_id, EX_DATE)
    assert (before.quantity, before.average_cost) == (50, Decimal("100"))
    assert (after.quantity, after.average_cost, after.cost_basis) == (100, Decimal("50"), Decimal("5000"))
    assert after.opened_on == DAY  # still the position bought on Friday
    assert friday.equity == Decimal("10000.00")
    assert monday.equity == Decimal("10050.00") and monday.positions[0].unrealized_pnl == Decimal("50.00")
    with pytest.raises(ledger.TradeRejected, match="the portfolio holds 100"):
        trade(client, "sell", "AAA", 101, 50.5, MONDAY)
    sold = trade(client, "sell", "AAA", 100, 50.5, MONDAY)
    assert sold.position_after == 0
    with engine.connect() as conn:
        assert ledger.holdings(conn, portfolio_id) == {}
        view = portfolio_view(conn, portfolio_id, EX_DATE)
        with pytest.raises(InvalidInputError, match="sells 100 AAA holding 50"):  # the same trades without the split
            ledger.replay(ledger.trade_rows(conn, portfolio_id))
    assert view.positions == () and view.realized_pnl == Decimal("50.00")


def test_a_name_not_traded_since_its_split_is_valued_on_the_new_count(client) -> None:
    """The ex-date passes without a trade (a thin market's usual day): the holding is on the
    new count, so its last close is read on it too (halved), and the book is worth what it
    was, not twice its position; once it trades, the split reads as no return in the
    volatility the cost model's impact is sized with."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", "SPLIT", 2.0)
    with engine.connect() as conn:
        (untraded,) = market_days(conn, EX_DATE, ["AAA"]).values()
        monday = portfolio_view(conn, portfolio_id, EX_DATE)
    assert untraded.close == 50.0 and untraded.volume == 0
    assert monday.positions[0].quantity == 100 and monday.positions[0].market_value == Decimal("5000.00")
    assert monday.equity == Decimal("10000.00")
    price(engine, "AAA", EX_DATE, 50.5, 30_000)
    with engine.connect() as conn:
        (traded,) = market_days(conn, EX_DATE, ["AAA"]).values()
    assert traded.volatility is not None and traded.volatility < 0.05


def test_a_preview_on_a_known_ex_date_is_priced_on_the_new_count(client, settings: Settings) -> None:
    """During the ex-date, before its close is stored, a client's preview reads Friday's close
    on Monday's count (halved), as the price band a trade then passes does."""
    from portfolio.trading import preview_trade

    engine, _, _ = client
    announce(engine, "AAA", "SPLIT", 2.0)
    with engine.connect() as conn:
        preview = preview_trade(conn, settings, CALENDAR, "buy", "AAA", 10, MONDAY)
    assert preview.as_of == DAY.isoformat() and preview.close == Decimal("50.00")


def test_a_book_traded_on_a_known_ex_date_is_valued_on_the_new_count(client) -> None:
    """During the ex-date, before its close is stored (the latest priced day is Friday), a
    sale on the new count is accepted, and the book the client is then shown holds what
    the trade left on that count at Friday's close halved; it failed 'sells 75 AAA holding
    50' and a buy on the new count was priced at the old close (twice its worth)."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", "SPLIT", 2.0)
    assert trade(client, "sell", "AAA", 75, 50, MONDAY).position_after == 25
    trade(client, "buy", "AAA", 100, 50, MONDAY)
    with engine.connect() as conn:
        view = portfolio_view(conn, portfolio_id, DAY, session=EX_DATE)
    (position,) = view.positions
    assert view.as_of == DAY and (position.quantity, position.price) == (125, Decimal("50"))
    assert position.market_value == Decimal("6250.00") and position.cost_basis == Decimal("6250.00")
    assert view.equity == Decimal("10000.00")  # 10,000 deposited; every trade at the halved close


def test_bonus_issues_and_consolidations_keep_whole_shares_and_realise_the_fraction_dropped(client) -> None:
    """A fraction of a share a split drops takes its share of the cost basis with it, booked
    as a realised loss (no cash in lieu is modelled): a 1-for-10 consolidation of 5 BBB
    erased their 50 of cost with realised PnL still 0, so equity fell by what no PnL said.
    Equity's change is now the realised change plus the unrealised one."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 53, 100, FRIDAY)
    trade(client, "buy", "BBB", 5, 10, FRIDAY)
    with engine.connect() as conn:
        friday = portfolio_view(conn, portfolio_id, DAY)
    announce(engine, "AAA", "SPLIT", 1.2)  # one bonus share for every five: 63.6 -> 63
    announce(engine, "BBB", "SPLIT", 0.1)  # one for ten: less than one share is left
    price(engine, "AAA", EX_DATE, 85.0, 30_000)
    with engine.connect() as conn:
        held = ledger.holdings(conn, portfolio_id)
        monday = portfolio_view(conn, portfolio_id, EX_DATE)
    assert held["AAA"].quantity == 63 and "BBB" not in held
    assert held["AAA"].cost_basis == Decimal("5250")  # 0.6 of 63.6 shares dropped: 50 of 5,300
    assert (friday.equity, friday.realized_pnl, friday.unrealized_pnl) == (Decimal("10000.00"), 0, 0)
    assert monday.realized_pnl == Decimal("-100.00")  # AAA's 50 and all of BBB's 50
    assert monday.unrealized_pnl == Decimal("105.00")  # 63 x 85 - 5,250
    assert monday.equity - friday.equity == Decimal("5.00") == monday.realized_pnl + monday.unrealized_pnl


def test_the_cost_a_split_drops_is_its_fraction_of_the_basis_exactly(client) -> None:
    """7 BBB costing 100 (fees included) consolidated 1-for-3: 2 shares of 2 1/3 are left,
    so 1/7 of the cost is realised and 6/7 stays, adding up to the 100 paid to the last
    digit; selling the 2 then realises the rest."""
    engine, _, portfolio_id = client
    trade(client, "buy", "BBB", 7, 10, FRIDAY, fees=30)
    announce(engine, "BBB", "SPLIT", 1 / 3)
    with engine.connect() as conn:
        splits = ledger.stored_splits(conn, None, {"BBB"})
        (position,) = ledger.replay(ledger.trade_rows(conn, portfolio_id), splits).values()
    assert position.quantity == 2
    assert position.cost_basis - position.realized_pnl == Decimal("100")
    assert position.realized_pnl.quantize(ledger.CENT) == Decimal("-14.285714")
    trade(client, "sell", "BBB", 2, 30, MONDAY)
    with engine.connect() as conn:
        view = portfolio_view(conn, portfolio_id, EX_DATE)
    assert view.positions == () and view.realized_pnl == Decimal("-40.00")  # 60 for 100 paid


def test_whole_shares_are_counted_exactly_and_liquidity_on_the_new_count(client) -> None:
    assert ledger.split_quantity(11_000_000, 30 / 11) == 30_000_000  # not 29,999,999
    assert ledger.split_quantity(100_000_000, 1.15) == 115_000_000
    engine, _, _ = client
    announce(engine, "BBB", "SPLIT", 10.0)
    price(engine, "BBB", EX_DATE, 1.0, 500_000)
    with engine.connect() as conn:
        (before,), (after,) = market_days(conn, DAY, ["BBB"]).values(), market_days(conn, EX_DATE, ["BBB"]).values()
    assert before.adv_20 == 50_000 and after.adv_20 == 500_000  # 19 old days x 10 and the new one


def test_a_dividend_after_a_split_is_paid_on_the_new_count(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    announce(engine, "AAA", "SPLIT", 2.0)
    announce(engine, "AAA", "DIVIDEND", 0.5, CALENDAR.add_trading_days(DAY, 2))
    announce(engine, "AAA", "DIVIDEND", 1.0, EX_DATE)  # same ex-date as the split: per share held the night before
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        paid = credit_dividends(conn, portfolio_id, CALENDAR.add_trading_days(DAY, 2))
    assert [(p["ex_date"], p["shares"], p["amount"]) for p in paid] == [
        ("2026-11-23", 50, "50.00"),
        ("2026-11-24", 100, "50.00"),
    ]


def test_the_models_prices_are_split_adjusted_from_the_day_it_is_known(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    price(engine, "AAA", EX_DATE, 51.0, 30_000)
    announce(engine, "AAA", "SPLIT", 2.0)
    with engine.connect() as conn:
        known = price_panel(conn, EX_DATE).set_index("date")
        before = price_panel(conn, DAY).set_index("date")
    assert known.loc[DAY, "close"] == 50.0 and known.loc[DAY, "volume"] == 40_000 and known.loc[DAY, "high"] == 50.5
    assert known.loc[EX_DATE, "close"] / known.loc[DAY, "close"] - 1 == pytest.approx(0.02)  # not -49%
    assert before.loc[DAY, "close"] == 100.0  # on Friday the split was not known, and it did not apply


def test_a_trade_of_the_ex_date_entered_before_the_notice_is_on_the_old_count(client) -> None:
    """A client sells their 50 shares on the ex-date before T0 stores the 2-for-1 notice:
    the sale was checked and priced on the old count, so it sold the whole position; the
    split must not turn it into 50 shares still held (50 more to sell, cash from nothing)."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    trade(client, "sell", "AAA", 50, 100, MONDAY)  # entered during Monday's session
    announce(engine, "AAA", "SPLIT", 2.0)  # Monday's T0 stores the notice at the close
    price(engine, "AAA", EX_DATE, 50.0, 30_000)
    with engine.connect() as conn:
        assert ledger.holdings(conn, portfolio_id) == {}
    with pytest.raises(ledger.TradeRejected, match="the portfolio holds 0"):
        trade(client, "sell", "AAA", 50, 50, MONDAY + timedelta(hours=1))
    trade(client, "buy", "AAA", 10, 50, MONDAY + timedelta(hours=1))  # entered after the notice: the new count
    with engine.connect() as conn:
        assert ledger.holdings(conn, portfolio_id)["AAA"].quantity == 10
        assert ledger.cash_balance(conn, portfolio_id) == Decimal("9500")


def test_trades_replay_in_trading_date_order_and_a_back_dated_sell_cannot_break_the_book(client) -> None:
    """A statement's trades are dated the statement's day but entered when it is uploaded:
    the ledger replays them on their date, and a back-dated sale that a later sale would
    then oversell is refused, not stored."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    trade(client, "sell", "AAA", 50, 100, MONDAY)
    with engine.connect() as conn:
        assert ledger.holdings(conn, portfolio_id, DAY)["AAA"].quantity == 50  # Friday's close: before Monday's sale
    with pytest.raises(ledger.TradeRejected, match="the ledger would not hold: ledger of .* sells 50 AAA holding 40"):
        with ledger.portfolio_transaction(engine, portfolio_id) as conn:  # as a statement of Friday would
            ledger.record_trade(
                conn,
                ledger.TradeRequest(
                    portfolio_id,
                    DAY,
                    MONDAY + timedelta(hours=1),
                    "AAA",
                    "SELL",
                    10,
                    Decimal("100"),
                    origin="STATEMENT_SYNC",
                    trade_id="T-late",
                ),
                moves_cash=False,
            )
    with engine.connect() as conn:
        assert [t["side"] for t in ledger.trade_rows(conn, portfolio_id)] == ["BUY", "SELL"]  # nothing stored


def test_split_ratios_are_counted_exactly() -> None:
    assert ledger.split_quantity(1_000, 1 / 1_000) == 1  # the deepest consolidation T0 accepts
    assert ledger.split_quantity(11_000_000, 30 / 11) == 30_000_000
    assert ledger.split_quantity(300, 1.333333) == 400  # a ratio published rounded is the fraction it rounds
    assert ledger.split_quantity(3_000, 0.333333) == 1_000


def test_a_corrected_split_notice_does_not_move_when_the_split_was_known(client) -> None:
    """T0 re-run with a corrected detail appends a new version of the notice: the split
    was still known from the first, so the ex-date's trades entered after it stay on the
    new count (no shares appear, the book still replays)."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 40, 100, FRIDAY)
    announce(engine, "AAA", "SPLIT", 2.0)
    price(engine, "AAA", EX_DATE, 50.0, 30_000)
    trade(client, "sell", "AAA", 60, 50, MONDAY + timedelta(hours=1))  # 80 held on the new count
    announce_action(engine, "AAA", "SPLIT", 2.0, EX_DATE, "2-for-1 share split")
    with engine.connect() as conn:
        assert ledger.holdings(conn, portfolio_id)["AAA"].quantity == 20


def test_an_order_decided_before_a_split_fills_on_the_new_count() -> None:
    """A sell the AI book planned before a 1:2 consolidation asks the next session for half
    the shares at twice the price (it asked for the old count, and the day failed: 'cannot
    sell 11064 S6: the portfolio holds 5532'); an order of another name or of a split
    already known when it was decided is left as it is."""
    from datetime import date
    from decimal import Decimal

    from portfolio.executor import Order, split_adjusted
    from store.splits import Split

    sell = Order("S6", "SELL", 11064, Decimal("2.50"), Decimal("0"), {"reason": "turned AVOID"})
    other = Order("S7", "BUY", 100, Decimal("4.00"), Decimal("0"), {})
    splits = [Split("S6", date(2026, 11, 20), 0.5), Split("S7", date(2026, 11, 18), 2.0)]
    adjusted, kept = split_adjusted([sell, other], splits, "2026-11-19", date(2026, 11, 20))
    assert (adjusted.quantity, adjusted.price) == (5532, Decimal("5.000000"))
    assert "split" in adjusted.rationale["split_adjustment"] and adjusted.rationale["reason"] == "turned AVOID"
    assert kept == other
    assert split_adjusted([sell], splits, None, date(2026, 11, 20)) == [sell]


def test_a_name_consolidated_while_suspended_keeps_its_value_once_carried_and_delisted(
    client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BBB has no row after Friday and consolidates 1-for-10 on Monday, during the
    suspension: the 100 shares are 10, at the last close on the new count (100). Once its
    last bar is older than the market days' 60 calendar days the delisting rule carries it,
    and then values it at its last close (MARKETINTEL_DELISTED_VALUE=last_close): on the
    new count too, not the close undivided (10, 90% of the holding gone overnight). A split
    of the current session applies to the carried close as to the holding."""
    from market.settings import get_settings

    monkeypatch.setenv("MARKETINTEL_DELISTED_VALUE", "last_close")
    get_settings.cache_clear()
    engine, _, portfolio_id = client
    trade(client, "buy", "BBB", 100, 10, FRIDAY)
    later = [CALENDAR.add_trading_days(DAY, i) for i in range(1, 62)]
    with engine.begin() as conn:  # AAA trades on; BBB has no row after Friday
        append_history(conn, tables.eod_prices, [price_row("AAA", d, 100.0, 20_000, None, None) for d in later])
    announce(engine, "BBB", "SPLIT", 0.1)
    announce(engine, "BBB", "SPLIT", 2.0, later[42])
    with engine.connect() as conn:
        values = {n: portfolio_view(conn, portfolio_id, later[n - 1]).positions for n in (30, 42, 60)}
        (session,) = portfolio_view(conn, portfolio_id, later[41], session=later[42]).positions
    for n, flag in ((30, "TRAPPED"), (42, "TRAPPED"), (60, "DELISTED")):
        (held,) = values[n]
        shares = 10 if n < 43 else 20
        assert (held.quantity, held.price * shares, flag in held.flags) == (shares, 1000, True), n
    assert (session.quantity, session.price, session.market_value) == (20, 50, 1000)
