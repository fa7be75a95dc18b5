"""Account-statement import on real PDFs drawn by the project: both layouts round-trip to
exactly their holdings and cash, a second import changes nothing, and every bad file is
refused with its reason and leaves the portfolio as it was."""

from __future__ import annotations

import re
import time
from datetime import UTC, date, datetime
from decimal import Decimal
from hashlib import sha256

import pytest

from ingest.pdf_text import PdfExtractor
from market.errors import ConflictError, InvalidInputError, PayloadTooLargeError
from market.settings import Settings
from portfolio import ledger
from portfolio.statement_pdfs import Activity, Holding, Ledger, holdings_statement, ledger_statement
from portfolio.statements import HOLDINGS_TITLE, LEDGER_TITLE, StatementRejected, import_statement, parse_text
from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.pdf_samples import long_line_pdf, relabelled_pdf, text_pdf
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import CALENDAR, price_row, seed_market

NOW = datetime(2026, 11, 20, 21, 30, tzinfo=UTC)  # 16:30 exchange time: after the Friday's close
AS_OF = date(2026, 11, 20)
HOLDINGS = [
    Holding("LIQ", "Liquid Holdings Ltd", 6_000, Decimal("50.25"), Decimal("52")),
    Holding("OUT", "Outer Co", 100, Decimal("20"), Decimal("19.5")),
]


@pytest.fixture
def client(settings: Settings):
    engine = service_engine(settings)
    seed_market(
        engine,
        {
            "LIQ": {"close": 52.0, "volume": 40_000},
            "OUT": {"close": 19.5, "volume": 40_000},
            "GONE": {"close": 5.0, "volume": 40_000},
        },
    )
    return engine, settings, open_client_portfolio(engine, "acme")


def _state(engine, portfolio_id):
    with engine.connect() as conn:
        held = {s: (p.quantity, p.average_cost) for s, p in ledger.holdings(conn, portfolio_id).items()}
        return held, ledger.cash_balance(conn, portfolio_id), len(ledger.trade_rows(conn, portfolio_id))


def test_holdings_statement_round_trip_then_nothing_changes(client) -> None:
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "1000", now=NOW)
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "GONE", 10, 5, 0), now=NOW)
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, HOLDINGS, Decimal("10000"))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert result["status"] == "SYNCED" and result["statement"]["layout"] == "holdings-table"
    assert {(c.get("symbol"), c.get("side"), c.get("quantity")) for c in result["changes"]} == {
        ("GONE", "SELL", 10),
        ("LIQ", "BUY", 6000),
        ("OUT", "BUY", 100),
        (None, None, None),
    }
    held, cash, trades = _state(engine, portfolio_id)
    assert held == {"LIQ": (6000, Decimal("50.25")), "OUT": (100, Decimal("20"))} and cash == Decimal("10000")
    again = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert again["status"] == "ALREADY_IMPORTED" and again["changes"] == []
    assert _state(engine, portfolio_id) == (held, cash, trades)


def test_ledger_statement_round_trip(client) -> None:
    engine, settings, portfolio_id = client
    pdf = ledger_statement(
        Ledger(
            "IT-77",
            "Acme Ltd",
            date(2026, 11, 2),
            AS_OF,
            Decimal("100000"),
            {"OUT": 100},
            [
                Activity(date(2026, 11, 3), "BUY", "LIQ", 1_000, Decimal("50"), Decimal("-50000")),
                Activity(date(2026, 11, 5), "SELL", "LIQ", 200, Decimal("52"), Decimal("10400")),
                Activity(date(2026, 11, 6), "DEPOSIT", None, None, None, Decimal("5000")),
                Activity(date(2026, 11, 9), "FEE", None, None, None, Decimal("-25")),
            ],
        )
    )
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert result["statement"] == {
        "layout": "transactions-ledger",
        "as_of": "2026-11-20",
        "cash": "65375.00",
        "holdings": {"LIQ": 800, "OUT": 100},
        "account": "IT-77",
    }
    held, cash, _ = _state(engine, portfolio_id)
    assert {s: q for s, (q, _) in held.items()} == {"LIQ": 800, "OUT": 100} and cash == Decimal("65375")
    assert import_statement(engine, settings, portfolio_id, pdf, now=NOW)["changes"] == []


def _refused(client, pdf: bytes, match: str, error=InvalidInputError) -> None:
    engine, settings, portfolio_id = client
    before = _state(engine, portfolio_id)
    with pytest.raises(error, match=match):
        import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert _state(engine, portfolio_id) == before
    with engine.connect() as conn:  # this file's attempt (the rows come in their key's order)
        this_file = tables.statement_imports.c.file_sha256 == sha256(pdf).hexdigest()
        rows = current_rows(conn, tables.statement_imports, where=[this_file])
    assert [(row["status"], bool(row["reason"])) for row in rows] == [("REJECTED", True)]


def test_numbers_that_do_not_add_up(client) -> None:
    _refused(
        client,
        holdings_statement("KC", "Acme", AS_OF, HOLDINGS, Decimal("10000"), total_value=Decimal("1")),
        "numbers do not add up: 313,950.00 \\+ cash 10,000.00 is not the total 1.00",
    )
    _refused(
        client,
        ledger_statement(
            Ledger(
                "IT",
                "Acme",
                AS_OF,
                AS_OF,
                Decimal("10"),
                {},
                [Activity(AS_OF, "DEPOSIT", None, None, None, Decimal("5"))],
                closing_cash=Decimal("16"),
            )
        ),
        "the last balance is 15.00, the closing cash balance 16.00",
    )


def test_bad_files_say_why(client, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    _refused(client, b"GIF89a not a statement", "not a PDF")
    _refused(client, text_pdf(["hello"], password="secret"), "encrypted")
    _refused(client, text_pdf(["Monthly newsletter", "Nothing to see"]), "no recognisable statement layout")
    _refused(
        client,
        text_pdf(["Portfolio Valuation Statement", "Statement date: 2026-11-20"]),
        "no recognisable holdings table",
    )
    _refused(
        client,
        holdings_statement(
            "KC", "Acme", AS_OF, [Holding("ZZZ", "Nobody", 1, Decimal("1"), Decimal("1"))], Decimal("0")
        ),
        "symbols the exchange does not list: ZZZ",
    )
    engine, _, portfolio_id = client
    small = settings.model_copy(update={"pdf_max_bytes": 1_000, "pdf_max_pages": 1})
    with pytest.raises(PayloadTooLargeError, match="more than the limit of 1,000"):
        import_statement(engine, small, portfolio_id, holdings_statement("KC", "Acme", AS_OF, HOLDINGS, Decimal("0")))
    _refused(
        (engine, small.model_copy(update={"pdf_max_bytes": 10_000_000}), portfolio_id),
        text_pdf(["Portfolio Valuation Statement"], pages=3),
        "3 pages, more than the limit of 1",
    )


@pytest.mark.parametrize(
    "as_of, holdings, cash, reason",
    [
        (date(1, 1, 1), HOLDINGS, Decimal("10000"), "outside the supported dates"),
        (date(9999, 12, 31), HOLDINGS, Decimal("10000"), "outside the supported dates"),
        (
            AS_OF,
            [Holding("LIQ", "Liquid Holdings Ltd", 10**20, Decimal("50"), Decimal("0.01"))],
            Decimal("10000"),
            "over the limit of 1,000,000,000,000 shares",
        ),
        (
            AS_OF,
            [Holding("LIQ", "Liquid Holdings Ltd", 2**63, Decimal("50"), Decimal("0.01"))],
            Decimal("10000"),
            "over the limit of 1,000,000,000,000 shares",
        ),
        (AS_OF, HOLDINGS, Decimal("1000000000000000"), "cash balance 1,000,000,000,000,000.00 is over the limit"),
        (
            AS_OF,
            [Holding("LIQ", "Liquid Holdings Ltd", 1, Decimal("99999999999999999"), Decimal("52"))],
            Decimal("10000"),
            "average cost of LIQ 99,999,999,999,999,999.00 is over the limit of 1,000,000,000,000",
        ),
    ],
)
def test_a_statement_past_the_ranges_of_trades_and_deposits_is_refused(client, as_of, holdings, cash, reason) -> None:
    """Issue 39, defect 5: 10^20 or 2^63 shares answered 500; 10^15 of cash answered 500 on
    Postgres and was stored as 1e20 on SQLite; statements dated 0001-01-01 or 9999-12-31
    were synced."""
    _refused(client, holdings_statement("KC-10042", "Acme Ltd", as_of, holdings, cash), reason, error=StatementRejected)


@pytest.mark.parametrize(
    "held, stated, cost",
    [(1_000_000, 1_000_001, "999999999999"), (10**12 - 1, 10**12, "1000000000000")],
    ids=["past-the-price-column", "past-decimal-precision"],
)
def test_a_sync_price_past_the_ledgers_range_is_refused_naming_the_line(client, held, stated, cost) -> None:
    """An average cost within the range can still price the shares a sync brings in past it
    (the statement's cost basis less the book's, over the few shares added): that answered
    500 on Postgres (numeric overflow) and was stored on SQLite, or, past 28 digits, was a
    decimal error (500) on both; refused naming the line."""
    engine, settings, portfolio_id = client
    first = [Holding("LIQ", "Liquid Holdings Ltd", held, Decimal("0.01"), Decimal("0.01"))]
    synced = holdings_statement("KC", "Acme", AS_OF, first, Decimal(0))
    assert import_statement(engine, settings, portfolio_id, synced, now=NOW)["status"] == "SYNCED"
    more = [Holding("LIQ", "Liquid Holdings Ltd", stated, Decimal(cost), Decimal("0.01"))]
    pdf = holdings_statement("KC", "Acme", AS_OF, more, Decimal(0))
    _refused(client, pdf, "the statement's LIQ line cannot be booked: price .* is over the limit", StatementRejected)


def _valuation(*figures: str, as_of: str = AS_OF.isoformat()) -> bytes:
    """A holdings statement of one AIS-free line set: `figures` replace the totals' lines."""
    from portfolio.statement_pdfs import HOLDINGS_TITLE

    header = ["KINGSTON CAPITAL SECURITIES LIMITED", HOLDINGS_TITLE, f"Statement date: {as_of}"]
    return text_pdf([*header, "Symbol Description Quantity Avg Cost Market Price Market Value", *figures])


def _activity(row: str) -> bytes:
    from portfolio.statement_pdfs import LEDGER_TITLE

    lines = [LEDGER_TITLE, f"Period: 2026-11-01 to {AS_OF.isoformat()}", "Transactions"]
    return text_pdf([*lines, "2026-11-02 OPENING - - - 0.00 100.00", row, "Closing Cash Balance: 100.00"])


@pytest.mark.parametrize(
    "pdf, reason",
    [
        (_valuation("Total Market Value: 0.00", "Cash Balance: abc", "Total Portfolio Value: 0.00"), "'abc' is not"),
        (_valuation("Total Market Value: 0.00", "Cash Balance: NaN", "Total Portfolio Value: NaN"), "'NaN' is not"),
        (_valuation("Total Market Value: 0.00", "Cash Balance: Infinity", "Total Portfolio Value: 1"), "'Infinity'"),
        (_valuation("Total Market Value: 0.00", "Cash Balance: 1e5", "Total Portfolio Value: 1e5"), "'1e5' is not"),
        (_valuation("Total Market Value: 0.00", "Cash Balance: ,", "Total Portfolio Value: 0.00"), "',' is not"),
        # a decimal comma is not read as a thousands separator (1250)
        (
            _valuation("Total Market Value: 0.00", "Cash Balance: 12,50", "Total Portfolio Value: 12,50"),
            "'12,50' is not",
        ),
        (_activity("2026-11-03 BUY LIQ 1,0 1.00 -1.00 99.00"), "BUY quantity '1,0' is not a whole number"),
        (
            _valuation(
                "Total Market Value: 0", "Cash Balance: 5.00", "Total Portfolio Value: 5.00", as_of="2026-02-30"
            ),
            "'Statement date' 2026-02-30 is not a date",
        ),
        (_activity("2026-11-03 BUY LIQ 1 xx -1.00 99.00"), "BUY price 'xx' is not a number"),
        (_activity("2026-11-03 BUY LIQ zz 1.00 -1.00 99.00"), "BUY quantity 'zz' is not a whole number"),
    ],
)
def test_a_statement_whose_figures_are_not_numbers_is_refused_with_the_figure(client, pdf, reason) -> None:
    """An adversarial run: these answered 500 (decimal.InvalidOperation, a ValueError of
    date or int) and kept no REJECTED attempt; each is a refusal naming the figure."""
    _refused(client, pdf, reason, error=StatementRejected)


def test_a_statement_dated_after_today_is_refused(client) -> None:
    """An adversarial run: a statement dated next year was synced, its cash reconciled at
    its date while the client could spend it today, and its holdings pending until then."""
    engine, settings, portfolio_id = client
    later = date(2027, 6, 1)
    _refused(client, holdings_statement("KC", "Acme", later, HOLDINGS, Decimal("1000000")), "after today's exchange")
    today = import_statement(
        engine, settings, portfolio_id, holdings_statement("KC", "Acme", AS_OF, HOLDINGS, Decimal("10")), now=NOW
    )
    assert today["status"] == "SYNCED"


def test_a_statement_dated_today_is_refused_before_the_close_and_synced_after(client) -> None:
    """A review's run: the client bought 100 LIQ at 09:00; the broker's morning statement
    dated today, which does not show it yet, was synced at 13:00 as the end of the day and
    sold them. Before the 16:00 close it is refused saying when it can be synced, nothing
    booked (a preview neither); from the close it is synchronised as today's."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "100000", now=datetime(2026, 11, 20, 13, 0, tzinfo=UTC))
    morning = ManualTrade("buy", "LIQ", 100, 52, 0)
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, morning, now=datetime(2026, 11, 20, 14, 0, tzinfo=UTC))
    pdf = holdings_statement("KC", "Acme", AS_OF, [], Decimal("100000"))
    before, imports = _state(engine, portfolio_id), _imports(engine)
    said = (
        "the statement is dated 2026-11-20, today, before the exchange's close: a statement is read as the end of "
        "its day, so it can be synced from 2026-11-20T16:00:00 (exchange time), the close of 2026-11-20"
    )
    for preview in (True, False):
        with pytest.raises(StatementRejected, match=re.escape(said)):
            import_statement(
                engine, settings, portfolio_id, pdf, now=datetime(2026, 11, 20, 18, 0, tzinfo=UTC), preview=preview
            )
    assert _state(engine, portfolio_id) == before and _imports(engine) == imports + 1  # the refusal, kept
    at_close = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)  # 16:00 exchange time
    assert import_statement(engine, settings, portfolio_id, pdf, now=at_close)["status"] == "SYNCED"
    assert _state(engine, portfolio_id)[:2] == ({}, Decimal("100000"))


def test_the_statement_shown_keeps_money_to_the_cent(client) -> None:
    """The answer's `statement.cash` is money: two decimals, as `changes` shows the balance."""
    engine, settings, portfolio_id = client
    pdf = _valuation("Total Market Value: 0.00", "Cash Balance: 1,000.125", "Total Portfolio Value: 1,000.125")
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert result["statement"]["cash"] == "1000.13" == result["changes"][0]["cash_after"]


EARLIER = date(2026, 11, 18)
ON_EARLIER = datetime(2026, 11, 18, 15, 0, tzinfo=UTC)


def _imports(engine) -> int:
    with engine.connect() as conn:
        return len(current_rows(conn, tables.statement_imports))


def test_a_statement_keeps_what_happened_after_its_date_and_its_preview_changes_nothing(client) -> None:
    """Issue 42: the demo client bought after the statement's date, then synced it: cash was
    set to the statement's 250,000 (-4,746,840 lost), the shares bought since were kept but
    not their cost. The book after a sync is the statement plus what happened since."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "10000", now=ON_EARLIER)  # on the statement's day: the statement replaces it
    move_cash(engine, portfolio_id, "1000000", now=NOW)  # after it: kept on top
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "LIQ", 100, 52, 0), now=NOW)
    pdf = holdings_statement("KC-10042", "Acme Ltd", EARLIER, HOLDINGS, Decimal("250000"))
    before, imports = _state(engine, portfolio_id), _imports(engine)

    preview = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    assert preview["status"] == "PREVIEW" and "nothing was changed" in preview["detail"]
    assert _state(engine, portfolio_id) == before and _imports(engine) == imports

    move_cash(engine, portfolio_id, "1", now=NOW)  # the book moves after the preview: its token no longer applies
    with pytest.raises(ConflictError, match="the book changed since the preview"):
        import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=preview["confirm_token"])
    move_cash(engine, portfolio_id, "-1", now=NOW)
    preview = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=preview["confirm_token"])
    assert result["status"] == "SYNCED"
    assert result["changes"] == preview["changes"]  # what was applied is what was previewed
    carried = result["changes"][-1]["carried"]
    assert carried["trades_after"] == 1 and carried["cash_movements_after"] == 4
    held, cash, _ = _state(engine, portfolio_id)
    assert {s: q for s, (q, _) in held.items()} == {"LIQ": 6100, "OUT": 100}
    assert cash == Decimal("250000") + Decimal("1000000") - Decimal("5200") == Decimal(carried["cash_now"])
    # shown as every cash figure is (cash_before, cash_after: market.money.money_display), not "1244800.000000"
    assert carried["cash_now"] == "1244800.00" and result["changes"][-2]["cash_after"] == "250000.00"
    assert import_statement(engine, settings, portfolio_id, pdf, now=NOW)["status"] == "ALREADY_IMPORTED"


def test_a_preview_confirmed_after_a_price_it_books_at_moved_is_refused(client) -> None:
    """An adversarial run: a preview showed GONE sold at its last close, 5.00; the close was
    corrected to 5.50 before the client confirmed, and the confirmation booked the sale at
    5.50 (another cost basis and realised PnL than the ones shown). The token names what
    the preview showed, not only the book it saw, so the confirmation is a 409 instead."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "1000", now=ON_EARLIER)
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "GONE", 10, 5, 0), now=ON_EARLIER)
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, HOLDINGS, Decimal("10000"))
    preview = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    assert _sold(preview, "GONE") == {"symbol": "GONE", "side": "SELL", "price": "5.000000"}
    with engine.begin() as conn:  # the day's close corrected after the preview
        append_history(conn, tables.eod_prices, [price_row("GONE", AS_OF, 5.5, 40_000, None, None)])
    before, imports = _state(engine, portfolio_id), _imports(engine)
    with pytest.raises(ConflictError, match="the book changed since the preview"):
        import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=preview["confirm_token"])
    assert _state(engine, portfolio_id) == before and _imports(engine) == imports
    again = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    assert _sold(again, "GONE")["price"] == "5.500000"
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=again["confirm_token"])
    assert result["status"] == "SYNCED" and result["changes"] == again["changes"]


def test_a_confirm_token_no_preview_of_the_file_issued_is_refused_as_such(client) -> None:
    """`--confirm bogus` (and a token a preview of another file answered) was refused as "the
    book changed since the preview": nothing had changed, and previewing again was the
    fix only by luck. A token that is not one a preview of this file issued is bad input
    naming it and how to get one (422 over REST); a token of this file's preview that the
    book no longer matches stays the conflict (409). Nothing is booked or recorded."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "1000", now=ON_EARLIER)
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, HOLDINGS, Decimal("10000"))
    other = holdings_statement("KC-10042", "Acme Ltd", AS_OF, HOLDINGS, Decimal("10001"))
    elsewhere = import_statement(engine, settings, portfolio_id, other, now=NOW, preview=True)["confirm_token"]
    preview = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    assert re.fullmatch(r"[0-9a-f]{32}", preview["confirm_token"])
    before, imports = _state(engine, portfolio_id), _imports(engine)
    for token in ("bogus", "", preview["confirm_token"].upper(), preview["confirm_token"][:24], elsewhere):
        with pytest.raises(InvalidInputError) as refused:
            import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=token)
        assert refused.value.detail == (
            f"the confirm token {token!r} is not one a preview of this file issued; preview the file "
            "(CLI --preview, REST ?preview=true) and confirm with the confirm_token it answers"
        )
    assert _state(engine, portfolio_id) == before and _imports(engine) == imports
    move_cash(engine, portfolio_id, "1", now=NOW)
    with pytest.raises(ConflictError, match=r"^the book changed since the preview \(a trade or cash movement"):
        import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=preview["confirm_token"])


def _sold(result: dict, symbol: str) -> dict:
    (change,) = [c for c in result["changes"] if c.get("symbol") == symbol]
    return {"symbol": symbol, "side": change["side"], "price": change["price"]}


def test_a_statement_whose_cash_cannot_pay_for_what_happened_since_is_refused(client) -> None:
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "10000", now=ON_EARLIER)
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "LIQ", 100, 52, 0), now=NOW)
    before = _state(engine, portfolio_id)
    pdf = holdings_statement("KC-10042", "Acme Ltd", EARLIER, HOLDINGS, Decimal("1000"))
    for preview in (True, False):
        with pytest.raises(
            StatementRejected,
            match=r"cannot pay for what the ledger records since: the balance would reach -4,200.00 at "
            r"2026-11-20T16:30:00 \(exchange time\)$",  # the trade's moment as the contract shows times
        ):
            import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=preview)
    assert _state(engine, portfolio_id) == before


def test_a_sub_cent_cash_balance_is_recorded_as_the_ledger_stores_it(client) -> None:
    """An adversarial run: `Cash Balance: 1,000.125` left a RECONCILIATION entry of 1000.13
    while `statement_imports.changes` said cash_after "1000.125" (and cash_before "0"). The
    balance is taken rounded to the cent, half up, as every cash entry is stored, and the
    audit record says what the ledger holds."""
    from portfolio.statement_pdfs import HOLDINGS_TITLE

    engine, settings, portfolio_id = client
    lines = [
        "KINGSTON CAPITAL SECURITIES LIMITED",
        HOLDINGS_TITLE,
        f"Statement date: {AS_OF.isoformat()}",
        "Symbol Description Quantity Avg Cost Market Price Market Value",
        "Total Market Value: 0.00",
        "Cash Balance: 1,000.125",
        "Total Portfolio Value: 1,000.125",
    ]
    pdf = text_pdf(lines)
    preview = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=preview["confirm_token"])
    assert result["changes"] == preview["changes"] == [{"cash_before": "0.00", "cash_after": "1000.13"}]
    with engine.connect() as conn:
        (entry,) = [e for e in current_rows(conn, tables.cash_entries) if e["kind"] == "RECONCILIATION"]
        (imported,) = current_rows(conn, tables.statement_imports)
        balance = ledger.cash_balance(conn, portfolio_id)
    (change,) = imported["changes"]
    assert change == {"cash_before": "0.00", "cash_after": "1000.13"}
    assert Decimal(change["cash_after"]) - Decimal(change["cash_before"]) == Decimal(entry["amount"]) == balance

    # another statement of the same balance finds the ledger in step: no entry, no change
    # (compared unrounded, 1000.13 against 1000.125 moved another -0.01)
    again = text_pdf([*lines, "Account: KC-2"])
    assert import_statement(engine, settings, portfolio_id, again, now=NOW)["changes"] == []
    assert _state(engine, portfolio_id)[1] == Decimal("1000.13")


def test_a_statement_of_one_endless_line_is_read_in_linear_time(client) -> None:
    """An adversarial run: a 2 KB PDF whose one text line repeats "Period 2026-11-01 "
    (54,000 characters) held the API process, GIL and all, for 3 s in the search for the
    statement's date (restarted at every "Period", 4x the time per doubling of the line),
    and only then was refused. The search is linear: the refusal comes at once."""
    engine, settings, portfolio_id = client
    lines = [LEDGER_TITLE, "2026-11-02 OPENING - - - 0.00 100.00", "Closing Cash Balance: 100.00"]
    pdf = long_line_pdf(lines, "Period 2026-11-01 " * 3_000 + "x")
    assert len(pdf) < 3_000
    with PdfExtractor.from_settings(settings) as extractor:
        text = extractor.extract(pdf, "endless.pdf").text
    started = time.perf_counter()
    with pytest.raises(StatementRejected, match="the statement has no 'Period' date"):
        parse_text(text)
    assert time.perf_counter() - started < 0.5
    period = "Period: 2026-11-01 " * 3_000 + "to 2026-11-20"  # the same line ending in a date is still read
    assert parse_text("\n".join([*lines, period])).as_of == AS_OF


@pytest.mark.parametrize(
    "digit", ["\u09ea", "\uff18", "\u0668"], ids=["bengali-four", "full-width-eight", "arabic-indic-eight"]
)
def test_a_figure_in_other_digits_is_refused_not_read_by_their_value(client, digit: str) -> None:
    """An adversarial run: a statement whose page shows "Cash Balance: 1,800.00" while its
    text layer says "1,\u09ea00.00" (a Bengali four, drawn as an eight) was synced with
    1,400.00 of cash; full-width and Arabic-Indic digits were read by their value too,
    though money comes in as ASCII digits everywhere else (market/money.py). A printed
    figure is ASCII digits: any other is refused naming it, and nothing is booked."""
    lines = [
        HOLDINGS_TITLE,
        f"Statement date: {AS_OF.isoformat()}",
        "Symbol Description Quantity Avg Cost Market Price Market Value",
        "Total Market Value: 0.00",
        "Cash Balance: 1,800.00",
        "Total Portfolio Value: 1,800.00",
    ]
    figure = re.escape(f"the statement's 'Cash Balance' '1,{digit}00.00' is not a number like 1,234.50")
    _refused(client, relabelled_pdf(lines, {"8": digit}), figure, error=StatementRejected)


SUSPENDED = [
    HOLDINGS_TITLE,
    f"Statement date: {AS_OF.isoformat()}",
    "Symbol Description Quantity Avg Cost Market Price Market Value",
    "LIQ Liquid Holdings Ltd 6,000 50.25 52.00 312,000.00",
    "OUT Outer Co 100 20.00 N/A N/A",
    "Total Market Value: 312,000.00",
    "Cash Balance: 100.00",
    "Total Portfolio Value: 312,100.00",
]
IN_WORDS = [
    LEDGER_TITLE,
    f"Period: 2026-11-01 to {AS_OF.isoformat()}",
    "Opening Holdings",
    "LIQ 6,000",
    "OUT one hundred",
    "Transactions",
    "2026-11-02 OPENING - - - 0.00 100.00",
    "Closing Cash Balance: 100.00",
    "Closing Holdings",
    "LIQ 6,000",
    "OUT one hundred",
]


@pytest.mark.parametrize(
    "lines, line",
    [(SUSPENDED, "OUT Outer Co 100 20.00 N/A N/A"), (IN_WORDS, "OUT one hundred")],
    ids=["table", "ledger"],
)
def test_a_holding_line_that_cannot_be_read_is_refused_not_sold(client, lines: list[str], line: str) -> None:
    """An adversarial run: a valuation statement listing a suspended name as "OUT Outer Co
    100 20.00 N/A N/A" (no price, so left out of the total, which still added up) was
    synced with that line skipped: the 100 OUT the book held were sold by the sync, and
    the account's statement says it holds them. A line naming a listed symbol that is not
    a holding row is refused, naming it; the book keeps its holding."""
    engine, settings, portfolio_id = client
    held = holdings_statement("KC", "Acme", AS_OF, HOLDINGS, Decimal("100"))
    assert import_statement(engine, settings, portfolio_id, held, now=NOW)["status"] == "SYNCED"
    assert _state(engine, portfolio_id)[0]["OUT"][0] == 100
    said = f"the statement's line '{line}' names OUT but is not a holding line the statement can be read by"
    _refused(client, text_pdf(lines), re.escape(said), error=StatementRejected)
    assert _state(engine, portfolio_id)[0]["OUT"][0] == 100


@pytest.mark.parametrize("layout", ["table", "ledger"])
def test_a_holding_whose_ticker_has_a_hyphen_or_opens_with_a_digit_is_read_and_kept(client, layout: str) -> None:
    """An adversarial run: the statement reader's symbol was `[A-Z][A-Z0-9.]{0,11}`, narrower
    than the tickers the service lists (a hyphen: KPLC-P4, the NSE's preference shares; a
    digit first; up to 20 characters). An activity statement listing the 500 KPLC-P4 the
    book held was synced as not holding them: the sync sold all 500. Every listed ticker is
    read (market/text.py's one ticker rule, in capitals)."""
    engine, settings, portfolio_id = client
    seed_market(engine, {"KPLC-P4": {"close": 5.0, "volume": 40_000}, "3MCO": {"close": 5.0, "volume": 40_000}})
    move_cash(engine, portfolio_id, "10000", now=NOW)
    for symbol, quantity in (("KPLC-P4", 500), ("3MCO", 100)):
        place_manual_trade(
            engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", symbol, quantity, 5, 0), now=NOW
        )
    held = [Holding("KPLC-P4", "Kenya Power 4% Pref", 500, Decimal("5"), Decimal("5")), *HOLDINGS[:1]]
    held.append(Holding("3MCO", "Three M Co", 100, Decimal("5"), Decimal("5")))
    if layout == "table":
        pdf = holdings_statement("KC", "Acme", AS_OF, held, Decimal("100"))
    else:
        quantities = ["KPLC-P4 500", "LIQ 6,000", "3MCO 100"]
        pdf = text_pdf(_ledger_lines([], "100,000.00", quantities, quantities))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert result["status"] == "SYNCED", result
    sold = {c.get("symbol") for c in result["changes"] if c.get("side") == "SELL"}
    assert sold == set(), result["changes"]
    held_now = _state(engine, portfolio_id)[0]
    assert (held_now["KPLC-P4"][0], held_now["3MCO"][0], held_now["LIQ"][0]) == (500, 100, 6000)


def _ledger_lines(rows: list[str], closing_cash: str, opening: list[str], closing: list[str]) -> list[str]:
    """An activity statement's lines, as a broker prints them, around `rows`."""
    head = [LEDGER_TITLE, f"Period: 2026-11-01 to {AS_OF.isoformat()}", "Opening Holdings", *opening]
    rows = ["Transactions", "2026-11-02 OPENING - - - - 100,000.00", *rows]
    return [*head, *rows, f"Closing Cash Balance: {closing_cash}", "Closing Holdings", *closing]


OWED = [
    "2026-11-03 BUY LIQ 1,000 50.00 (50,000.00) 50,000.00",
    "2026-11-09 FEE - - - (25.00) 49,975.00",
    "2026-11-10 WITHDRAWAL - - - (50,000.00) (25.00)",
    "2026-11-11 DEPOSIT - - - 1,025.00 1,000.00",
]


@pytest.mark.parametrize("minus", ["({})", "~{}"], ids=["parentheses", "minus-sign"])
def test_a_ledger_printing_negatives_as_accountants_do_is_read(client, minus: str) -> None:
    """An adversarial run: a row whose balance was printed "(25.00)" was skipped, and the
    statement refused as "numbers do not add up: on 2026-11-11 ..." (the row after it);
    an amount printed "(25.00)" was "not a number". Parentheses and the minus sign U+2212
    (drawn here as "~", read as U+2212 from the page's text layer) are read as a minus by
    the one printed-number rule (market.money.printed_number)."""
    engine, settings, portfolio_id = client
    rows = [re.sub(r"\((.+?)\)", lambda m: minus.format(m.group(1)), row) for row in OWED]
    lines = _ledger_lines(rows, "1,000.00", ["OUT 100"], ["LIQ 1,000", "OUT 100"])
    result = import_statement(engine, settings, portfolio_id, relabelled_pdf(lines, {"~": "\u2212"}), now=NOW)
    assert result["statement"]["holdings"] == {"LIQ": 1000, "OUT": 100} and result["statement"]["cash"] == "1000.00"
    held, cash, _ = _state(engine, portfolio_id)
    assert {s: q for s, (q, _) in held.items()} == {"LIQ": 1000, "OUT": 100} and cash == Decimal("1000")


@pytest.mark.parametrize(
    "row, said",
    [
        (
            "2026-11-10 DEPOSIT - - - 25.00 50,025.00 CR",
            "the statement's line '2026-11-10 DEPOSIT - - - 25.00 50,025.00 CR' is not a transaction row",
        ),
        (
            "2026-11-10 INTEREST - - - 25.00 50,025.00",
            "the statement's line '2026-11-10 INTEREST - - - 25.00 50,025.00' is not a transaction row",
        ),
        (
            "2026-11-10 SELL LIQ 1 (25.00) (25.00) 49,975.00",
            "the statement's 2026-11-10 SELL price '(25.00)' is negative",
        ),
    ],
    ids=["a-column-more", "an-unknown-kind", "a-negative-price"],
)
def test_a_ledger_row_that_cannot_be_read_is_refused_naming_it(client, row: str, said: str) -> None:
    """A line that opens with a date but is not a row the ledger is read by was skipped, and
    the statement refused as "the last balance is 50,000.00, the closing cash balance
    50,025.00" (or the next row's balance named); it is refused naming the line itself. A
    price is never negative: printed so, it is refused naming it, not read into the sums."""
    bought = "2026-11-03 BUY LIQ 1,000 50.00 -50,000.00 50,000.00"
    lines = _ledger_lines([bought, row], "50,025.00", [], ["LIQ 1,000"])
    _refused(client, text_pdf(lines), re.escape(said), error=StatementRejected)


@pytest.mark.parametrize(
    "opening, closing, said",
    [
        (["OUT 100", "OUT 50"], ["OUT 50"], "OUT appears twice in the opening holdings: 'OUT 100' and 'OUT 50'"),
        (["OUT 100"], ["OUT 50", "OUT 100"], "OUT appears twice in the closing holdings: 'OUT 50' and 'OUT 100'"),
    ],
    ids=["opening", "closing"],
)
def test_a_symbol_twice_in_a_ledgers_holdings_is_refused_naming_both_lines(client, opening, closing, said) -> None:
    """An adversarial run: an activity statement listing OUT twice in its opening (or
    closing) holdings was read by its last line, and synced with the holdings that line
    said. Both lines are named, as the valuation table names a symbol it lists twice."""
    engine, settings, portfolio_id = client
    held = holdings_statement("KC", "Acme", AS_OF, HOLDINGS, Decimal("100"))
    assert import_statement(engine, settings, portfolio_id, held, now=NOW)["status"] == "SYNCED"
    _refused(client, text_pdf(_ledger_lines([], "100,000.00", opening, closing)), re.escape(said), StatementRejected)
    assert _state(engine, portfolio_id)[0]["OUT"][0] == 100


def test_a_symbol_twice_in_the_holdings_table_is_refused_naming_both_lines(client) -> None:
    twice = [*HOLDINGS, Holding("OUT", "Outer Co", 50, Decimal("20"), Decimal("19.5"))]
    said = "OUT appears twice in the holdings table: 'OUT Outer Co 100 20.00 19.50 1,950.00' and 'OUT Outer Co 50"
    _refused(client, holdings_statement("KC", "Acme", AS_OF, twice, Decimal("100")), re.escape(said), StatementRejected)


@pytest.mark.parametrize(
    "row, said",
    [
        ("2026-13-45 DEPOSIT - - - 1.00 100,001.00", "is dated 2026-13-45, which is not a date"),
        ("2026-02-30 DEPOSIT - - - 1.00 100,001.00", "is dated 2026-02-30, which is not a date"),
        ("2026-11-21 DEPOSIT - - - 1.00 100,001.00", "is dated 2026-11-21, after the statement's date 2026-11-20"),
        ("2026-11-01 DEPOSIT - - - 1.00 100,001.00", "is dated 2026-11-01, before the OPENING row's 2026-11-02"),
    ],
    ids=["no-such-month", "no-such-day", "after-the-period", "before-the-opening"],
)
def test_a_ledger_row_dated_outside_the_statement_is_refused_naming_it(client, row: str, said: str) -> None:
    """An adversarial run: "2026-13-45 DEPOSIT ..." was synced (a row's date was only used
    in messages), as was a deposit dated after the statement's date. A row's date is a day
    from the OPENING row's to the statement's; any other is refused naming the line."""
    lines = _ledger_lines([row], "100,001.00", [], [])
    _refused(client, text_pdf(lines), re.escape(f"the statement's line '{row}' {said}"), StatementRejected)


@pytest.mark.parametrize(
    "opened, said",
    [
        ("2026-11-22", "is dated 2026-11-22, after the statement's date 2026-11-20"),
        ("2026-10-15", "is dated 2026-10-15, before the statement's period, which starts 2026-11-01"),
    ],
    ids=["after-the-period", "before-the-period"],
)
def test_an_opening_row_dated_outside_the_period_is_refused_naming_it(client, opened: str, said: str) -> None:
    """The OPENING row's date bounds every other row's, so it is held to the Period the
    statement prints: an OPENING row of October on a statement "Period: 2026-11-01 to
    2026-11-20" was read, its rows before the period with it."""
    lines = _ledger_lines([], "100,000.00", [], [])
    lines[lines.index("2026-11-02 OPENING - - - - 100,000.00")] = f"{opened} OPENING - - - - 100,000.00"
    _refused(
        client,
        text_pdf(lines),
        re.escape(f"the statement's line '{opened} OPENING - - - - 100,000.00' {said}"),
        StatementRejected,
    )


def test_a_statement_older_than_the_last_one_synchronised_is_refused_and_a_correction_is_applied(client) -> None:
    """A review's run: synced to 11-20's statement (LIQ 6,000), bought 100, then synced to
    an older statement (11-18: LIQ 2,000): the older sync booked +2,000 against the book of
    11-18, and 11-20's sync, booked against the book it had seen, replayed on top: LIQ
    8,100, matching neither statement. The later statement stands: the older one is refused
    with the reason and changes nothing; one of the same day (a correction) is applied."""
    engine, settings, portfolio_id = client
    newer = holdings_statement("KC", "Acme", AS_OF, HOLDINGS, Decimal("100000"))
    assert import_statement(engine, settings, portfolio_id, newer, now=NOW)["status"] == "SYNCED"
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", "LIQ", 100, 52, 0), now=NOW)
    before = _state(engine, portfolio_id)
    older = [Holding("LIQ", "Liquid Holdings Ltd", 2_000, Decimal("50"), Decimal("51"))]
    for preview in (True, False):
        with pytest.raises(StatementRejected, match="before 2026-11-20, the day of the last statement"):
            pdf = holdings_statement("KC", "Acme", EARLIER, older, Decimal("0"))
            import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=preview)
        assert _state(engine, portfolio_id) == before
    corrected = holdings_statement("KC", "Acme", AS_OF, older, Decimal("90000"))  # 11-20 again, corrected
    assert import_statement(engine, settings, portfolio_id, corrected, now=NOW)["status"] == "SYNCED"
    held, cash, _ = _state(engine, portfolio_id)
    assert {s: q for s, (q, _) in held.items()} == {"LIQ": 2_000}  # the correction (the buy was on its day)
    assert cash == Decimal("90000")


def test_a_sync_leaves_the_cost_basis_the_statement_states(client) -> None:
    """The book bought 500 LIQ at 45; the broker says 1,000 at an average cost of 50.25: the
    500 more are booked at the price that makes the book's cost the broker's (55.50), not
    at 50.25 for a book average of 47.63. OUT's quantity agrees and its cost does not (the
    broker's 20 against the book's 22), and GONE's 5 bought at 5 are 10 at 0.10, which a
    difference could not be priced to: both are adjusted. The cash is the statement's."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "100000", now=NOW)
    for symbol, quantity, price in (("LIQ", 500, 45), ("OUT", 100, 22), ("GONE", 5, 5)):
        place_manual_trade(
            engine, settings, CALENDAR, portfolio_id, ManualTrade("buy", symbol, quantity, price, 0), now=NOW
        )
    holdings = [
        Holding("LIQ", "Liquid Holdings Ltd", 1_000, Decimal("50.25"), Decimal("52")),
        Holding("OUT", "Outer Co", 100, Decimal("20"), Decimal("19.5")),
        Holding("GONE", "Gone Ltd", 10, Decimal("0.10"), Decimal("5")),
    ]
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, holdings, Decimal("10000"))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert result["status"] == "SYNCED"
    assert {"symbol": "LIQ", "side": "BUY", "quantity": 500, "price": "55.500000", "before": 500, "after": 1000} in (
        result["changes"]
    )
    with engine.connect() as conn:
        book = ledger.holdings(conn, portfolio_id)
        cash = ledger.cash_balance(conn, portfolio_id)
    figures = {s: (p.quantity, p.average_cost, p.cost_basis.quantize(Decimal("0.01"))) for s, p in book.items()}
    assert figures == {
        "LIQ": (1000, Decimal("50.25"), Decimal("50250.00")),
        "OUT": (100, Decimal("20.00"), Decimal("2000.00")),
        "GONE": (10, Decimal("0.10"), Decimal("1.00")),
    }
    assert cash == Decimal("10000")
    assert import_statement(engine, settings, portfolio_id, pdf, now=NOW)["status"] == "ALREADY_IMPORTED"


def _synced(client, held: list[tuple[str, int, int]], holding: Holding) -> tuple[dict, ledger.Position]:
    engine, settings, pid = client
    move_cash(engine, pid, "100000", now=NOW)
    for symbol, quantity, price in held:
        place_manual_trade(engine, settings, CALENDAR, pid, ManualTrade("buy", symbol, quantity, price, 0), now=NOW)
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, [holding], Decimal("10000"))
    result = import_statement(engine, settings, pid, pdf, now=NOW)
    with engine.connect() as conn:
        return result, ledger.holdings(conn, pid)[holding.symbol]


def test_a_statements_sale_far_from_any_traded_price_is_warned_of(client) -> None:
    """1,000 LIQ held at 52, a statement of 500 at a market price of 520: the 500 sold are
    booked at 520 (the statement's), and the warning says the sale price is far from any
    traded (the cost-basis work checked the stated average cost instead and said nothing)."""
    result, position = _synced(
        client, [("LIQ", 1000, 52)], Holding("LIQ", "Liquid Holdings Ltd", 500, Decimal("52"), Decimal("520"))
    )
    assert [(c["side"], c["price"]) for c in result["changes"] if "side" in c] == [("SELL", "520.00")]
    assert len(result["warnings"]) == 1 and "the statement's sale price 520.00 is far from" in result["warnings"][0]
    assert position.quantity == 500


def test_a_stated_average_cost_of_zero_is_no_cost_basis_and_is_said(client) -> None:
    """Bonus shares stated at an average cost of 0.00: the sync was refused ("price must be
    positive"); the 500 are booked at the last close, as before the cost-basis work, and the
    warning says the stated cost was not used."""
    result, position = _synced(
        client, [("LIQ", 500, 52)], Holding("LIQ", "Liquid Holdings Ltd", 1_000, Decimal("0"), Decimal("52"))
    )
    assert result["status"] == "SYNCED" and position.quantity == 1_000
    assert [(c["side"], c["quantity"]) for c in result["changes"] if "side" in c] == [("BUY", 500)]
    assert any("average cost 0.00 is no cost basis; the shares bought in were booked" in w for w in result["warnings"])


def test_a_stated_average_cost_of_zero_with_nothing_bought_keeps_the_cost_basis_and_says_so(client) -> None:
    result, position = _synced(
        client, [("LIQ", 500, 52)], Holding("LIQ", "Liquid Holdings Ltd", 500, Decimal("0"), Decimal("52"))
    )
    assert [c for c in result["changes"] if "side" in c] == [] and position.cost_basis == Decimal("26000")
    assert result["warnings"] == [
        "LIQ: the statement's average cost 0.00 is no cost basis; the cost basis the book holds was kept: check the "
        "cost basis with your broker"
    ]


@pytest.mark.parametrize("weekend_trade", [False, True], ids=["deposit-only", "deposit-and-trade"])
def test_a_weekend_deposit_is_kept_on_top_of_the_fridays_statement(client, weekend_trade: bool) -> None:
    """200,000 deposited on Thursday, 100,000 on Saturday, the broker's Friday statement (cash
    200,000, no holdings) synced on Monday: 300,000. A BUY entered on the Saturday too (dated
    Friday's session) pulled the Saturday deposit into Friday (`ledger.cash_days`, the track
    record's rule), so the statement's balance replaced it: 200,000, the deposit gone. A
    statement states the account's balance on its day: a deposit, withdrawal or dividend is
    of the day it took effect, a trade's gross and fee of its trading date."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "200000", now=datetime(2026, 11, 19, 14, 0, tzinfo=UTC))  # Thursday
    saturday = datetime(2026, 11, 21, 14, 0, tzinfo=UTC)
    move_cash(engine, portfolio_id, "100000", now=saturday)
    if weekend_trade:
        order = ManualTrade("buy", "LIQ", 10, 52, 0)
        placed = place_manual_trade(engine, settings, CALENDAR, portfolio_id, order, now=saturday)
        assert placed.trading_date == AS_OF  # Friday's session
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, [], Decimal("200000"))
    result = import_statement(engine, settings, portfolio_id, pdf, now=datetime(2026, 11, 23, 14, 0, tzinfo=UTC))
    assert result["status"] == "SYNCED", result
    assert result["changes"][-1]["carried"]["cash_movements_after"] == 1  # the Saturday deposit
    held, cash, _ = _state(engine, portfolio_id)
    assert held == {} and cash == Decimal("300000")


def test_a_ledger_printed_out_of_date_order_prices_what_it_brings_in_at_its_latest_trade(client) -> None:
    """An activity statement prints its 11-10 buy at 52 above its 11-03 buy at 40 (the running
    balance follows the print). The 2,000 LIQ it brings in were booked at 40, the last row in
    print order: a cost basis of 80,000 at a week-old price, where the latest trade says 52."""
    engine, settings, portfolio_id = client
    rows = [
        Activity(date(2026, 11, 10), "BUY", "LIQ", 1_000, Decimal("52"), Decimal("-52000")),
        Activity(date(2026, 11, 3), "BUY", "LIQ", 1_000, Decimal("40"), Decimal("-40000")),
    ]
    pdf = ledger_statement(Ledger("IT-77", "Acme Ltd", date(2026, 11, 2), AS_OF, Decimal("100000"), {}, rows))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert [(c["symbol"], c["quantity"], Decimal(c["price"])) for c in result["changes"] if "symbol" in c] == [
        ("LIQ", 2000, Decimal("52"))
    ]
    assert _state(engine, portfolio_id)[0] == {"LIQ": (2000, Decimal("52"))}


def test_a_cost_basis_restated_before_a_later_sale_is_synced_not_refused(client) -> None:
    """The book holds 1,000 LIQ at 50 (a statement of 11-12) and sold 500 on 11-19. The
    broker's statement of 11-17 holds the same 1,000 at an average cost of 51. Its rebase
    (a sale at the book's cost, a buy back at the statement's) was checked a trade at a
    time: the holding of none between them could not carry the 11-19 sale, and the
    statement was refused ("sells 500 LIQ holding 0") though it carries it."""
    engine, settings, portfolio_id = client
    held = [Holding("LIQ", "Liquid Holdings Ltd", 1_000, Decimal("50"), Decimal("52"))]
    statement = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 12), held, Decimal("5000"))
    import_statement(engine, settings, portfolio_id, statement, now=datetime(2026, 11, 12, 21, 30, tzinfo=UTC))
    sale = ManualTrade("sell", "LIQ", 500, 52, 0)
    place_manual_trade(engine, settings, CALENDAR, portfolio_id, sale, now=datetime(2026, 11, 19, 15, 0, tzinfo=UTC))
    restated = [Holding("LIQ", "Liquid Holdings Ltd", 1_000, Decimal("51"), Decimal("52"))]
    pdf = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 17), restated, Decimal("5000"))
    assert import_statement(engine, settings, portfolio_id, pdf, now=NOW)["status"] == "SYNCED"
    assert _state(engine, portfolio_id)[:2] == ({"LIQ": (500, Decimal("51"))}, Decimal("31000"))


def test_a_statement_whose_holding_cannot_carry_a_later_sale_is_refused_naming_the_sale(client) -> None:
    """The book bought 1,000 LIQ on 11-18 and sold them on 11-20; the broker's statement of
    11-19 lists no LIQ. Refused (it cannot carry the sale), but as "the statement's LIQ line
    cannot be booked: ... sells 1000 LIQ holding 0", a line the statement does not have and
    no day or sale to take up: now the sale, its day, and the statement that would carry it."""
    engine, settings, portfolio_id = client
    move_cash(engine, portfolio_id, "100000", now=datetime(2026, 11, 16, 18, 0, tzinfo=UTC))
    for side, day in (("buy", 18), ("sell", 20)):
        order = ManualTrade(side, "LIQ", 1_000, 52, 0)
        place_manual_trade(
            engine, settings, CALENDAR, portfolio_id, order, now=datetime(2026, 11, day, 18, 0, tzinfo=UTC)
        )
    pdf = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 19), [], Decimal("48000"))
    said = (
        "the statement holds 0 LIQ on 2026-11-19, too few for the sale of 1,000 LIQ the ledger records on "
        "2026-11-20 after it: .* upload a statement dated 2026-11-20 or later"
    )
    _refused(client, pdf, said)


def test_a_sync_settles_the_dividends_going_ex_after_it_on_the_statements_holdings(client) -> None:
    """LIQ's dividend of 1.00 goes ex on Wednesday 11-18 and is credited on the 1,000 shares
    the book held (6,100). The broker's statement of Tuesday 11-17 holds none: the sync sold
    them before the ex-date but kept the 1,000 the book was credited for them, shown in the
    answer's cash_now and the balance until the next trade or cash movement took it back
    unasked. A correction of that day holding them again is owed it again."""
    engine, settings, portfolio_id = client
    held = [Holding("LIQ", "Liquid Holdings Ltd", 1_000, Decimal("50"), Decimal("52"))]
    statement = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 12), held, Decimal("5000"))
    import_statement(engine, settings, portfolio_id, statement, now=datetime(2026, 11, 12, 21, 30, tzinfo=UTC))
    announce_action(engine, "LIQ", "DIVIDEND", 1.0, date(2026, 11, 18), "dividend of 1.00")
    move_cash(engine, portfolio_id, "100", now=datetime(2026, 11, 19, 18, 0, tzinfo=UTC))  # credits it
    assert _state(engine, portfolio_id)[1] == Decimal("6100")
    tuesday = date(2026, 11, 17)
    result = import_statement(
        engine,
        settings,
        portfolio_id,
        holdings_statement("KC-10042", "Acme Ltd", tuesday, [], Decimal("57000")),
        now=NOW,
    )
    assert Decimal(result["changes"][-1]["carried"]["cash_now"]) == Decimal("57100")
    assert _state(engine, portfolio_id)[:2] == ({}, Decimal("57100"))
    corrected = holdings_statement("KC-10042", "Acme Ltd", tuesday, held, Decimal("5000"))
    assert import_statement(engine, settings, portfolio_id, corrected, now=NOW)["status"] == "SYNCED"
    assert _state(engine, portfolio_id)[1] == Decimal("6100")


def test_a_stated_average_cost_past_six_places_is_the_cost_basis_to_the_cent(client) -> None:
    """A broker prints LIQ's average cost as 50.1234567 on 2,000,000 shares: a cost basis of
    100,246,913.40. The sync booked its buy at the ledger's six decimals, 50.123457, a cost
    basis of 100,246,914.00: 0.60 more than the statement, and an unrealised PnL 0.60 less.
    What the client is shown is the statement's figure, to the cent."""
    from views.valuation import portfolio_view

    engine, settings, portfolio_id = client
    rows = ["LIQ Liquid Holdings Ltd 2,000,000 50.1234567 52.00 104,000,000.00"]
    totals = ["Total Market Value: 104,000,000.00", "Cash Balance: 0.00", "Total Portfolio Value: 104,000,000.00"]
    pdf = _valuation(*rows, *totals)
    assert import_statement(engine, settings, portfolio_id, pdf, now=NOW)["status"] == "SYNCED"
    with engine.connect() as conn:
        (position,) = portfolio_view(conn, portfolio_id, AS_OF).positions
    assert position.cost_basis == Decimal("100246913.40")
    assert position.unrealized_pnl == Decimal("104000000.00") - Decimal("100246913.40")
    # the broker restates the cost (50.7654321): rebased to it, and the rebase realises nothing
    pdf = _valuation(rows[0].replace("50.1234567", "50.7654321"), *totals)
    assert import_statement(engine, settings, portfolio_id, pdf, now=NOW)["status"] == "SYNCED"
    with engine.connect() as conn:
        (position,) = portfolio_view(conn, portfolio_id, AS_OF).positions
    assert (position.cost_basis, position.realized_pnl) == (Decimal("101530864.20"), 0)


PLAIN_HEADING = "Symbol Description Quantity Avg Cost Market Price Market Value"


def _valued_in(*named: str) -> bytes:
    """A valuation statement of 10 LIQ and 1,000.00 cash with `named` lines after its date
    (a table heading among them replaces the plain one)."""
    header = ["KINGSTON CAPITAL SECURITIES LIMITED", HOLDINGS_TITLE, f"Statement date: {AS_OF.isoformat()}"]
    heading = [] if any(n.startswith("Symbol") for n in named) else [PLAIN_HEADING]
    rows = ["LIQ Liquid Holdings Ltd 10 50.00 52.00 520.00", "Total Market Value: 520.00"]
    return text_pdf([*header, *named, *heading, *rows, "Cash Balance: 1,000.00", "Total Portfolio Value: 1,520.00"])


@pytest.mark.parametrize(
    "named",
    ["Currency: USD", "Symbol Description Quantity Avg Cost (USD) Market Price (USD) Market Value (USD)"],
    ids=["currency-line", "column-headings"],
)
def test_a_statement_in_another_currency_is_refused_not_booked_as_the_trading_one(client, named) -> None:
    """A review's run: a valuation statement of a USD account (its amounts in US dollars)
    was read as JMD: 1,000 USD of cash booked as 1,000 JMD, its prices as JMD prices.
    Nothing is converted: it is refused naming the currency, and nothing is booked; one
    that names the trading currency is synchronised."""
    _refused(client, _valued_in(named), re.escape("the statement's amounts are in USD, not JMD"), StatementRejected)
    engine, settings, portfolio_id = client
    synced = import_statement(engine, settings, portfolio_id, _valued_in("Currency: JMD"), now=NOW)
    assert synced["status"] == "SYNCED" and _state(engine, portfolio_id)[1] == Decimal("1000")


PAID_LATER = "dividend of 1.00, ex-date 2026-11-18, payment 2026-12-01"


@pytest.mark.parametrize("credited_first", [True, False], ids=["credited-before-the-sync", "credited-by-the-sync"])
def test_a_dividend_gone_ex_before_a_statement_and_paid_after_it_stays_the_books(client, credited_first) -> None:
    """LIQ's dividend of 1.00 goes ex on 11-18 and is paid on 12-01; the book holds 1,000 LIQ.
    The broker's statement of 11-20 has not received it: cash 5,000. The sync took the
    statement's balance as holding every dividend gone ex by its date: the 1,000 credited
    was reconciled away (cash 5,000, no receivable) and shown again only by a statement
    after the payment, though the company pays it on 12-01. It stays: cash 6,000 with
    1,000 receivable until 12-01 (a withdrawal may take 5,000), and the statement of 12-02,
    which holds it, changes no cash."""
    from views.portfolio import summary

    engine, settings, portfolio_id = client
    held = [Holding("LIQ", "Liquid Holdings Ltd", 1_000, Decimal("50"), Decimal("52"))]
    statement = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 12), held, Decimal("5000"))
    import_statement(engine, settings, portfolio_id, statement, now=datetime(2026, 11, 12, 21, 30, tzinfo=UTC))
    announce_action(engine, "LIQ", "DIVIDEND", 1.0, date(2026, 11, 18), PAID_LATER)
    if credited_first:
        move_cash(engine, portfolio_id, "0.01", now=datetime(2026, 11, 19, 18, 0, tzinfo=UTC))  # credits it
        move_cash(engine, portfolio_id, "-0.01", now=datetime(2026, 11, 19, 18, 5, tzinfo=UTC))
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, held, Decimal("5000"))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert result["status"] == "SYNCED" and not [c for c in result["changes"] if "cash_after" in c], result
    assert _state(engine, portfolio_id)[:2] == ({"LIQ": (1000, Decimal("50"))}, Decimal("6000"))
    with engine.connect() as conn:
        assert summary(conn, portfolio_id, AS_OF)["dividends_receivable"] == Decimal("1000")
    with pytest.raises(ledger.CashRejected, match="at most 5,000.00 can be withdrawn"):
        move_cash(engine, portfolio_id, "-5000.01", now=datetime(2026, 11, 23, 18, 0, tzinfo=UTC))
    paid = holdings_statement("KC-10042", "Acme Ltd", date(2026, 12, 2), held, Decimal("6000"))
    result = import_statement(engine, settings, portfolio_id, paid, now=datetime(2026, 12, 2, 21, 30, tzinfo=UTC))
    assert result["status"] == "SYNCED" and not [c for c in result["changes"] if "cash_after" in c], result
    assert _state(engine, portfolio_id)[1] == Decimal("6000")
    with engine.connect() as conn:
        assert summary(conn, portfolio_id, date(2026, 12, 2))["dividends_receivable"] == 0


def test_a_settled_delisted_holding_the_statement_drops_is_sold_at_the_value_paid(client) -> None:
    """The book holds 1,000 DEAD at 5.00 (cost 5,000); DEAD's rows end on 11-10 at 6.00 and
    the exchange's DELISTING of 11-16 pays 7.50 a share. The broker's statement of 11-20
    holds no DEAD and the 7,500 paid in its cash. The sync sold the 1,000 at the last close,
    6.00: a realised PnL of 1,000 where the holder was paid 2,500 over cost, the other 1,500
    put in the cash's RECONCILIATION. It sells them at 7.50: the summary's realised PnL is
    the 2,500 its unrealised PnL showed before, equity 12,500 before and after."""
    from views.portfolio import summary

    engine, settings, portfolio_id = client
    seed_market(engine, {"DEAD": {"close": 6.0, "volume": 40_000}}, day=date(2026, 11, 10))
    held = [Holding("DEAD", "Dead Co", 1_000, Decimal("5"), Decimal("6"))]
    statement = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 6), held, Decimal("5000"))
    import_statement(engine, settings, portfolio_id, statement, now=datetime(2026, 11, 6, 21, 30, tzinfo=UTC))
    announce_action(engine, "DEAD", "DELISTING", 7.5, date(2026, 11, 16), "delisted: a cash offer of 7.50 a share")
    with engine.connect() as conn:
        before = summary(conn, portfolio_id, AS_OF)
    assert (before["equity"], before["unrealized_pnl"], before["realized_pnl"]) == (12500, 2500, 0)
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, [], Decimal("12500"))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert _sold(result, "DEAD")["price"] == "7.500000"
    with engine.connect() as conn:
        after = summary(conn, portfolio_id, AS_OF)
    assert (after["cash"], after["equity"], after["realized_pnl"], after["unrealized_pnl"]) == (12500, 12500, 2500, 0)


ACROSS_THE_SPLIT = ["2026-11-03 BUY LIQ 10 52.00 (520.00) 99,480.00"]


@pytest.mark.parametrize(
    "rows, closing, bought_at",
    [
        (ACROSS_THE_SPLIT, "LIQ 2,020", Decimal("26")),
        ([*ACROSS_THE_SPLIT, "2026-11-17 SELL LIQ 4 25.00 100.00 99,580.00"], "LIQ 2,016", Decimal("25")),
    ],
    ids=["last-trade-before-the-split", "last-trade-after-it"],
)
def test_an_activity_statement_across_a_split_adds_up_on_its_dates_count(client, rows, closing, bought_at) -> None:
    """LIQ splits 2-for-1 on 11-16. The broker's activity statement of 11-01 to 11-20 opens
    with 1,000 LIQ, buys 10 on 11-03 and closes with 2,020 (2,016 after a sale of 4 on
    11-17): it was refused, "numbers do not add up: opening holdings and trades give
    {'LIQ': 1010}", the broker's statement of any period across a split of a held name.
    It is synced, the shares brought in priced at the last trade on the statement date's
    count (52.00 on 11-03 is 26.00 after the split), not at 52.00 a share on the new count."""
    engine, settings, portfolio_id = client
    announce_action(engine, "LIQ", "SPLIT", 2.0, date(2026, 11, 16), "2 for 1")
    cash = rows[-1].split()[-1]
    lines = _ledger_lines(rows, cash, ["LIQ 1,000"], [closing])
    result = import_statement(engine, settings, portfolio_id, text_pdf(lines), now=NOW)
    assert result["status"] == "SYNCED", result
    quantity = int(closing.split()[1].replace(",", ""))
    assert _state(engine, portfolio_id)[:2] == ({"LIQ": (quantity, bought_at)}, Decimal(cash.replace(",", "")))


def test_an_activity_statement_that_does_not_add_up_on_its_dates_count_is_refused(client) -> None:
    """The same ledger closing with the 1,010 the old count gives is refused, naming the
    splits' count, and books nothing."""
    engine, _, _ = client
    announce_action(engine, "LIQ", "SPLIT", 2.0, date(2026, 11, 16), "2 for 1")
    lines = _ledger_lines(ACROSS_THE_SPLIT, "99,480.00", ["LIQ 1,000"], ["LIQ 1,010"])
    said = r"opening holdings and trades give \{'LIQ': 2020\} on the count of the splits in its period"
    _refused(client, text_pdf(lines), said)


def _delisted_dead(client, amount: float | None, on: date = date(2026, 11, 16)) -> tuple:
    """The book holds 1,000 DEAD at 5.00 (cost 5,000) and 5,000 cash; DEAD's rows end on
    11-10 at 6.00 and the exchange delists it by a notice dated `on` (11-16), paying `amount`
    a share (None: a notice without one, holders paid nothing)."""
    engine, settings, portfolio_id = client
    seed_market(engine, {"DEAD": {"close": 6.0, "volume": 40_000}}, day=date(2026, 11, 10))
    held = [Holding("DEAD", "Dead Co", 1_000, Decimal("5"), Decimal("6"))]
    statement = holdings_statement("KC-10042", "Acme Ltd", date(2026, 11, 6), held, Decimal("5000"))
    import_statement(engine, settings, portfolio_id, statement, now=datetime(2026, 11, 6, 21, 30, tzinfo=UTC))
    announce_action(engine, "DEAD", "DELISTING", amount, on, "delisted")
    return engine, settings, portfolio_id


def _reconciliations(engine, portfolio_id) -> list:
    with engine.connect() as conn:
        c = tables.cash_entries.c
        where = [c.portfolio_id == portfolio_id, c.kind == "RECONCILIATION"]
        return current_rows(conn, tables.cash_entries, where=where)


def test_a_worthless_delisted_holding_the_statement_drops_leaves_at_nothing_its_cost_a_loss(client) -> None:
    """DEAD is delisted with nothing paid to holders; the broker's statement of 11-20 holds
    no DEAD and the 5,000 cash it held. The sync sold the 1,000 at the last close, 6.00: a
    realised PnL of +1,000 never received. They leave the book at nothing: the summary's
    realised PnL is the whole cost basis lost, -5,000, cash and equity the statement's
    5,000 before and after, and no RECONCILIATION entry."""
    from views.portfolio import summary

    engine, settings, portfolio_id = _delisted_dead(client, None)
    with engine.connect() as conn:
        before = summary(conn, portfolio_id, AS_OF)
    assert (before["cash"], before["equity"], before["realized_pnl"]) == (5000, 5000, 0)
    reconciled = _reconciliations(engine, portfolio_id)  # the first statement's 5,000
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, [], Decimal("5000"))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert _sold(result, "DEAD") == {"symbol": "DEAD", "side": "SELL", "price": "0.000000"}
    assert result["warnings"] == []  # the 0 is the exchange's, not a sale price the broker states
    with engine.connect() as conn:
        after = summary(conn, portfolio_id, AS_OF)
    assert (after["cash"], after["equity"], after["realized_pnl"], after["unrealized_pnl"]) == (5000, 5000, -5000, 0)
    assert _state(engine, portfolio_id)[:2] == ({}, Decimal("5000"))
    assert _reconciliations(engine, portfolio_id) == reconciled


def test_a_worthless_delisted_holding_the_statement_still_lists_is_untouched(client) -> None:
    """The statement of 11-20 still holds the 1,000 DEAD: nothing is booked for it."""
    engine, settings, portfolio_id = _delisted_dead(client, None)
    before = _state(engine, portfolio_id)
    held = [Holding("DEAD", "Dead Co", 1_000, Decimal("5"), Decimal("6"))]
    result = import_statement(
        engine,
        settings,
        portfolio_id,
        holdings_statement("KC-10042", "Acme Ltd", AS_OF, held, Decimal("5000")),
        now=NOW,
    )
    assert [c for c in result["changes"] if c.get("symbol") == "DEAD"] == []
    assert _state(engine, portfolio_id) == before


@pytest.mark.parametrize("amount, price", [(None, "0.000000"), (7.5, "7.500000")])
def test_a_holding_delisted_by_the_notice_of_its_last_trading_day_leaves_at_the_notices_value(
    client, amount: float | None, price: str
) -> None:
    """The exchange's DELISTING notice of DEAD came with its last session, 11-10 (T0 stores
    a notice under the session it came with), paying `amount` a share or nothing. The
    statement of 11-20 no longer holds DEAD: the sync read only a notice dated after the
    last bar and sold the 1,000 at the last close, 6.00, a realised gain of 1,000 never
    received (or 1,500 short of the 7.50 paid). They leave the book at the notice's value,
    as a notice dated after the last bar makes them."""
    engine, settings, portfolio_id = _delisted_dead(client, amount, on=date(2026, 11, 10))
    pdf = holdings_statement("KC-10042", "Acme Ltd", AS_OF, [], Decimal("5000") + Decimal(str((amount or 0) * 1000)))
    result = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert _sold(result, "DEAD")["price"] == price
