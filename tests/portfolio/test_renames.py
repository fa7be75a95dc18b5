"""A ticker change on a running store, in the ledger (store/splits.py `renamed_on`,
portfolio/ledger.py `_apply_rename`; docs/portfolio.md, "A name whose ticker changed"): a
stored RENAME of AAA to ZZZ carries the holding on under ZZZ from the ex-date, with its
shares, cost and purchase date; a trade under AAA from then is refused naming ZZZ, but one
entered before the rename was stored is the company's and replays under ZZZ, and a
statement line under AAA from then is refused so too; ZZZ's dividends are paid on the
holding, and a kept track record revalues from the ex-date (SQLite and Postgres)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine

from market.errors import InvalidInputError
from market.settings import Settings
from portfolio import ledger
from portfolio.dividends import credit_dividends
from portfolio.trading import open_client_portfolio
from store import tables
from store.engine import service_engine
from store.history import append_history
from store.splits import TickerChange, stored_splits, ticker_changes
from tests.portfolio.clients import EX_DATE, FRIDAY, MONDAY, Client, announce_action, open_funded_client, trade
from tests.portfolio.seed import CALENDAR, DAY, price_row
from views.book_record import TrackRecords, portfolio_track_record
from views.valuation import portfolio_view

TUESDAY = CALENDAR.add_trading_days(DAY, 2)


def rename(engine: Engine, old: str, new: str) -> None:
    """The RENAME action as the importer stores it (ingest/importers/files.py `_action_rows`)."""
    row = {"symbol": old, "action_date": EX_DATE, "kind": "RENAME", "amount": None, "source": "import:ohlcv"}
    with engine.begin() as conn:
        append_history(conn, tables.corporate_actions, [{**row, "detail": {"new_symbol": new, "text": "test"}}])


def zzz_trades(engine: Engine, *closes: float) -> None:
    with engine.begin() as conn:
        rows = [
            price_row("ZZZ", CALENDAR.add_trading_days(DAY, 1 + i), c, 20_000, None, None) for i, c in enumerate(closes)
        ]
        append_history(conn, tables.eod_prices, rows)


@pytest.fixture
def client(settings: Settings) -> Client:
    return open_funded_client(settings, "10000", FRIDAY)


def test_a_renamed_holding_carries_on_under_the_new_symbol_and_is_valued_at_its_closes(client) -> None:
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY, fees="1.50")
    rename(engine, "AAA", "ZZZ")
    zzz_trades(engine, 101.0, 102.0)
    with engine.connect() as conn:
        friday, now = ledger.holdings(conn, portfolio_id, DAY), ledger.holdings(conn, portfolio_id)
        view = portfolio_view(conn, portfolio_id, TUESDAY)
    assert list(friday) == ["AAA"] and friday["AAA"].quantity == 50  # before the ex-date: the old symbol
    (carried,) = now.values()
    assert (carried.symbol, carried.quantity, carried.cost_basis, carried.opened_on) == (
        "ZZZ",
        50,
        Decimal("5001.50"),
        DAY,
    )
    (position,) = view.positions
    assert (position.symbol, position.price, position.market_value) == ("ZZZ", Decimal("102.00"), Decimal("5100.00"))
    assert "DELISTED" not in position.flags and "UNPRICED" not in position.flags
    assert view.equity == Decimal("10098.50")  # 4,998.50 cash and 50 at ZZZ's close: no trade, no fee


def test_a_trade_under_the_old_symbol_is_refused_from_the_ex_date_but_one_entered_before_replays(client) -> None:
    """The client sold 20 AAA on the ex-date before the rename was stored (its shares were
    the company's): it replays under ZZZ. From then a trade under AAA is refused, naming
    ZZZ and the ex-date; on Friday, before the ex-date, AAA was AAA."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    trade(client, "sell", "AAA", 20, 100, MONDAY)
    rename(engine, "AAA", "ZZZ")
    zzz_trades(engine, 101.0)
    with engine.connect() as conn:
        (held,) = ledger.holdings(conn, portfolio_id).values()
    assert (held.symbol, held.quantity) == ("ZZZ", 30)
    with pytest.raises(ledger.TradeRejected, match=f"AAA trades as ZZZ from {EX_DATE}.*enter the trade under ZZZ"):
        trade(client, "sell", "AAA", 10, 100, MONDAY + timedelta(hours=1))
    with engine.connect() as conn:
        trades = ledger.trade_rows(conn, portfolio_id)
        splits = stored_splits(conn, None, {"AAA"})
        request = ledger.TradeRequest(portfolio_id, DAY, FRIDAY, "AAA", "BUY", 1, Decimal("100"), trade_id="T-x")
        assert ledger.check_trade(request, trades, splits, Decimal("5000")).row["symbol"] == "AAA"  # before it: AAA's


@pytest.mark.parametrize(
    ("named", "ex_date"),
    [("ZZZ", TUESDAY), ("ZZZ", EX_DATE), ("AAA", EX_DATE), ("AAA", TUESDAY)],
    ids=["new, after", "new, on the rename's ex-date", "old, on it", "old, after"],
)
def test_the_companys_dividend_is_paid_on_the_renamed_holding(client, named, ex_date) -> None:
    """The 50 shares held under AAA the night before are owed the company's dividend under
    either ticker: one of the rename's own ex-date named under ZZZ, and one a notice still
    names under AAA after it, were paid nothing (the shares were looked up under the ticker
    the notice named, at the close before, where there were none)."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    rename(engine, "AAA", "ZZZ")
    zzz_trades(engine, 101.0, 102.0)
    announce_action(engine, named, "DIVIDEND", 0.5, ex_date, "test")
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        before = ledger.cash_balance(conn, portfolio_id)
        paid = credit_dividends(conn, portfolio_id, TUESDAY)
    assert [(p["symbol"], p["shares"], p["amount"]) for p in paid] == [(named, 50, "25.00")]
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        assert credit_dividends(conn, portfolio_id, TUESDAY) == []  # paid once
        assert ledger.cash_balance(conn, portfolio_id) == before + Decimal("25.00")


def test_a_kept_track_record_revalues_from_a_rename_stored_after_it_was_read(client) -> None:
    """The desk keeps a book's daily record and revalues it from the earliest day a new row
    touches (views/book_record.py `_first_changed`): a rename stored after the record was
    read (ZZZ's closes already stored) revalues it from the ex-date, the holding at ZZZ's
    closes, as the record read from nothing has it."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    zzz_trades(engine, 110.0, 120.0)
    kept = TrackRecords()
    with engine.connect() as conn:
        before = kept.client(conn, portfolio_id).as_dict()
    rename(engine, "AAA", "ZZZ")
    with engine.connect() as conn:
        after, afresh = kept.client(conn, portfolio_id).as_dict(), portfolio_track_record(conn, portfolio_id).as_dict()
    assert before["total_return"] == pytest.approx(0.0, abs=1e-9)  # AAA carried at its last close
    assert after["total_return"] == pytest.approx(1000 / 10_000, abs=1e-6)  # 50 shares 100 -> 120
    assert after["total_return"] == afresh["total_return"] and after["last"] == TUESDAY


def test_a_statement_line_under_the_old_symbol_after_the_ex_date_is_refused_naming_the_new_one(
    settings: Settings,
) -> None:
    """A broker's statement dated from the ex-date that still lists the old ticker: its
    sync would book a trade under it, refused as any trade is, the line naming the new
    symbol; nothing is booked."""
    from portfolio.statement_pdfs import Holding, holdings_statement
    from portfolio.statements import import_statement
    from tests.portfolio.seed import seed_market

    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    portfolio_id = open_client_portfolio(engine, "acme")
    rename(engine, "AAA", "ZZZ")
    zzz_trades(engine, 101.0)
    pdf = holdings_statement(
        "KC-1", "Acme Ltd", EX_DATE, [Holding("AAA", "A Co", 10, Decimal("100"), Decimal("101"))], Decimal("0")
    )
    with pytest.raises(InvalidInputError, match=f"AAA trades as ZZZ from {EX_DATE}"):
        import_statement(engine, settings, portfolio_id, pdf, now=MONDAY.replace(hour=21))  # after its close
    with engine.connect() as conn:
        assert ledger.trade_rows(conn, portfolio_id) == []


@pytest.mark.parametrize(("old", "new"), [("AAA", "ZZZ"), ("ZZZ", "AAA")], ids=["old first", "new first"])
@pytest.mark.parametrize("named", ["old", "new"])
def test_a_split_on_the_renames_ex_date_applies_to_the_holding_carried_on(old: str, new: str, named: str) -> None:
    """A 2-for-1 split of the rename's ex-date, its notice under either symbol (and either
    symbol first in the alphabet): the renames of an ex-date apply first, and a split named
    under the old symbol follows the holding, so the 10 shares carried on are 20."""
    from datetime import UTC, datetime

    from store.splits import Split

    bought = {
        "id": 1,
        "trade_id": "T-1",
        "portfolio_id": "p",
        "trading_date": DAY,
        "executed_at": datetime(2026, 11, 20, 18, tzinfo=UTC),
        "symbol": old,
        "side": "BUY",
        "quantity": 10,
        "price": Decimal("100"),
        "fees": Decimal("0"),
        "recorded_at": None,
    }
    split = Split(old if named == "old" else new, EX_DATE, 2.0)
    book = ledger.open_positions([bought], [split, Split(old, EX_DATE, 1.0, None, new)], None)
    assert {s: (p.quantity, p.cost_basis) for s, p in book.items()} == {new: (20, Decimal("1000"))}


def test_an_order_decided_before_a_rename_fills_under_the_new_symbol() -> None:
    """The AI book decided on Friday to buy AAA; from Monday the company trades as ZZZ: the
    pending order is for ZZZ (AAA has no session any more, and a trade under it is refused)."""
    from portfolio.executor import Order, split_adjusted
    from store.splits import Split

    buy = Order("AAA", "BUY", 100, Decimal("10.00"), Decimal("0"), {})
    renames = [Split("AAA", EX_DATE, 1.0, None, "ZZZ")]
    (pending,) = split_adjusted([buy], renames, DAY.isoformat(), EX_DATE)
    assert (pending.symbol, pending.quantity, pending.price) == ("ZZZ", 100, Decimal("10.00"))
    assert split_adjusted([buy], renames, EX_DATE.isoformat(), EX_DATE) == [buy]  # decided under the new one


def test_an_old_ticker_another_company_listed_after_the_rename_is_that_companys(client) -> None:
    """AAA trades as ZZZ from Monday; on Tuesday another company lists under AAA (the
    exchange's LISTING notice). A buy of AAA on Tuesday is that company's: booked under AAA,
    beside the 50 ZZZ carried on, not refused as the renamed company's nor added to ZZZ; a
    trade under AAA on Monday is still refused naming ZZZ."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    rename(engine, "AAA", "ZZZ")
    zzz_trades(engine, 101.0, 102.0)
    announce_action(engine, "AAA", "LISTING", None, TUESDAY, "a new company")
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("AAA", TUESDAY, 20.0, 20_000, 19.95, 20.05)])
    trade(client, "buy", "AAA", 10, 20, MONDAY + timedelta(days=1))
    with engine.connect() as conn:
        held = {s: p.quantity for s, p in ledger.holdings(conn, portfolio_id).items() if p.quantity}
    assert held == {"ZZZ": 50, "AAA": 10}
    with engine.connect() as conn:  # what the reads of AAA and ZZZ say of it (REST's renamed_to, GraphQL's)
        assert ticker_changes(conn, ["AAA"])["AAA"].renamed_to == TickerChange("ZZZ", EX_DATE, TUESDAY)
    with pytest.raises(ledger.TradeRejected, match=f"AAA trades as ZZZ from {EX_DATE}"):
        trade(client, "sell", "AAA", 10, 100, MONDAY + timedelta(hours=1))


def test_a_kept_track_record_books_a_trade_of_the_relisted_ticker_as_the_record_read_afresh(client) -> None:
    """The desk's kept record of a book that held AAA through its rename to ZZZ, read
    before another company listed under AAA: once the LISTING notice and a buy of the new
    AAA arrive, it is revalued from the rename on (the position carried on learns until
    when AAA was its), so the kept record is the one read from nothing: 10 AAA beside the
    50 ZZZ, not 60 ZZZ."""
    engine, _, portfolio_id = client
    trade(client, "buy", "AAA", 50, 100, FRIDAY)
    rename(engine, "AAA", "ZZZ")
    zzz_trades(engine, 101.0, 102.0)
    kept = TrackRecords()
    with engine.connect() as conn:
        kept.client(conn, portfolio_id)
    announce_action(engine, "AAA", "LISTING", None, TUESDAY, "a new company")
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("AAA", TUESDAY, 20.0, 20_000, 19.95, 20.05)])
    trade(client, "buy", "AAA", 10, 20, MONDAY + timedelta(days=1))
    with engine.connect() as conn:
        after, afresh = kept.client(conn, portfolio_id).as_dict(), portfolio_track_record(conn, portfolio_id).as_dict()
    assert after["total_return"] == pytest.approx(afresh["total_return"], abs=1e-12)
    assert afresh["total_return"] == pytest.approx(100 / 10_000, abs=1e-6)  # 50 ZZZ 100 -> 102; 10 AAA at 20, flat
