"""A statement whose figures add up but whose holdings no account could have: more shares
than the company has, a name that had not traded, a price far from any it traded at
(portfolio/statement_checks.py). The first two are refused naming the line and kept as
REJECTED; the last is booked as stated with a warning, in the preview too."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from portfolio import ledger
from portfolio.statement_pdfs import Activity, Holding, Ledger, holdings_statement, ledger_statement
from portfolio.statements import StatementRejected, import_statement
from portfolio.trading import open_client_portfolio
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.pdf_samples import text_pdf
from tests.portfolio.seed import days_up_to, price_row, seed_market

NOW = datetime(2026, 11, 20, 21, 30, tzinfo=UTC)  # 16:30 exchange time: after the Friday's close
AS_OF = date(2026, 11, 20)
OLD_DAY = date(2026, 7, 1)  # OLD's last session: more than 60 days before AS_OF


@pytest.fixture
def client(settings):
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 52.0, "volume": 40_000}, "DRY": {"close": 12.0, "volume": 0}})
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
                for s in ("NEW", "OLD")
            ],
        )
        append_history(
            conn, tables.eod_prices, [price_row("OLD", d, 7.5, 1_000, None, None) for d in days_up_to(OLD_DAY, 5)]
        )
        append_history(
            conn,
            tables.fundamentals,
            [
                {"symbol": "LIQ", "report_date": date(2026, 6, 30), "shares_outstanding": 1_000_000, "source": "test"},
                {"symbol": "LIQ", "report_date": date(2026, 12, 31), "shares_outstanding": 10, "source": "test"},
            ],
        )
    return engine, settings, open_client_portfolio(engine, "acme")


def _book(engine, portfolio_id):
    with engine.connect() as conn:
        held = {s: (p.quantity, p.average_cost) for s, p in ledger.holdings(conn, portfolio_id).items()}
        return held, ledger.cash_balance(conn, portfolio_id)


def _last_attempt(engine) -> dict:
    with engine.connect() as conn:
        return max(current_rows(conn, tables.statement_imports), key=lambda r: r["id"])


def _valuation(*holdings: Holding, as_of: date = AS_OF) -> bytes:
    return holdings_statement("KC-10042", "Acme Ltd", as_of, list(holdings), Decimal("1000"))


def _imported(client, pdf: bytes) -> dict:
    """The statement synced into the client's portfolio now: what the sync answered."""
    engine, settings, portfolio_id = client
    return import_statement(engine, settings, portfolio_id, pdf, now=NOW)


def _refused(client, pdf: bytes, *parts: str) -> None:
    engine, settings, portfolio_id = client
    before = _book(engine, portfolio_id)
    for preview in (True, False):
        with pytest.raises(StatementRejected) as refused:
            import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=preview)
        for part in parts:
            assert part in str(refused.value), str(refused.value)
    assert _book(engine, portfolio_id) == before
    attempt = _last_attempt(engine)
    assert attempt["status"] == "REJECTED" and parts[0] in attempt["reason"]


def test_more_shares_than_the_company_has_are_refused_naming_the_line(client) -> None:
    """1,000,001 LIQ of a company with 1,000,000 shares outstanding was synced; the report
    of a later date (10 shares) is not yet known on the statement's date."""
    _refused(
        client,
        _valuation(Holding("LIQ", "Liquid", 1_000_001, Decimal("50"), Decimal("52"))),
        "holds 1,000,001 LIQ, more than the 1,000,000 shares LIQ has outstanding (reported 2026-06-30",
    )
    whole = _imported(client, _valuation(Holding("LIQ", "Liquid", 1_000_000, Decimal("50"), Decimal("52"))))
    assert whole["status"] == "SYNCED" and whole["warnings"] == []


def test_a_split_after_the_report_raises_the_shares_a_statement_may_hold(client) -> None:
    engine, settings, portfolio_id = client
    with engine.begin() as conn:
        append_history(
            conn,
            tables.corporate_actions,
            [{"symbol": "LIQ", "action_date": date(2026, 11, 2), "kind": "SPLIT", "amount": 2.0, "source": "test"}],
        )
    result = _imported(client, _valuation(Holding("LIQ", "Liquid", 1_500_000, Decimal("26"), Decimal("52"))))
    assert result["status"] == "SYNCED"
    _refused(
        client,
        _valuation(Holding("LIQ", "Liquid", 2_000_001, Decimal("26"), Decimal("52"))),
        "more than the 2,000,000 shares LIQ has outstanding",
    )


@pytest.mark.parametrize("symbol", ["NEW", "DRY"])  # listed with no bar; listed with bars but never a trade
def test_a_name_that_had_not_traded_is_refused(client, symbol: str) -> None:
    _refused(
        client,
        _valuation(Holding(symbol, "Listed", 100, Decimal("10"), Decimal("12"))),
        f"holds 100 {symbol}, which has no traded session on record on or before 2026-11-20",
    )


def test_an_opening_holding_without_a_price_is_refused_not_a_404(client) -> None:
    """An activity statement with an opening holding of NEW (listed, never traded) and no
    trade of it answered 404 "no price for NEW" and kept no attempt."""
    ledger_pdf = ledger_statement(
        Ledger(
            "IT-77",
            "Acme Ltd",
            date(2026, 11, 2),
            AS_OF,
            Decimal("100"),
            {"NEW": 100},
            [Activity(date(2026, 11, 3), "DEPOSIT", None, None, None, Decimal("5"))],
        )
    )
    _refused(client, ledger_pdf, "holds 100 NEW, which has no traded session on record")


def test_a_holding_of_a_name_that_stopped_trading_is_sold_at_its_last_close(client) -> None:
    """The book held OLD, whose last session was months before the statement; a statement
    without it answered 404 ("no price for OLD in the 60 days") and could never be synced."""
    engine, settings, portfolio_id = client
    earlier = _valuation(Holding("OLD", "Old", 300, Decimal("7.50"), Decimal("7.50")), as_of=OLD_DAY)
    assert import_statement(engine, settings, portfolio_id, earlier, now=NOW)["status"] == "SYNCED"
    later = import_statement(engine, settings, portfolio_id, _valuation(), now=NOW)
    assert later["status"] == "SYNCED"
    (sale,) = [c for c in later["changes"] if c.get("symbol") == "OLD"]
    assert (sale["side"], sale["quantity"], sale["price"]) == ("SELL", 300, "7.500000")
    assert "OLD" not in _book(engine, portfolio_id)[0]


def test_a_price_far_from_any_traded_is_booked_with_a_warning(client) -> None:
    """An average cost of 99,999 for a name that traded between 51.48 and 52.52 was synced
    silently; it is booked as the broker states it, and the client is told to check it."""
    engine, settings, portfolio_id = client
    pdf = _valuation(Holding("LIQ", "Liquid", 10, Decimal("99999"), Decimal("52")))
    preview = import_statement(engine, settings, portfolio_id, pdf, now=NOW, preview=True)
    (warning,) = preview["warnings"]
    assert warning.startswith("LIQ: the statement's average cost 99,999.00 is far from any price LIQ traded at")
    assert "(51.48 to 52.52)" in warning
    synced = import_statement(engine, settings, portfolio_id, pdf, now=NOW, confirm=preview["confirm_token"])
    assert synced["status"] == "SYNCED" and synced["warnings"] == preview["warnings"]
    assert _book(engine, portfolio_id)[0] == {"LIQ": (10, Decimal("99999"))}
    assert _last_attempt(engine)["reason"] == warning
    again = import_statement(engine, settings, portfolio_id, pdf, now=NOW)
    assert again["status"] == "ALREADY_IMPORTED" and again["warnings"] == []
    within = _valuation(Holding("LIQ", "Liquid", 20, Decimal("30"), Decimal("52")))  # within half the lowest
    assert import_statement(engine, settings, portfolio_id, within, now=NOW + timedelta(seconds=1))["warnings"] == []


def test_a_negative_average_cost_is_refused_and_kept(client) -> None:
    """A holdings row at an average cost of -5.00 answered 422 from the ledger ("price must
    be positive") with no REJECTED attempt kept, unlike every other refusal."""
    from portfolio.statement_pdfs import HOLDINGS_TITLE

    pdf = text_pdf(
        [
            HOLDINGS_TITLE,
            f"Statement date: {AS_OF.isoformat()}",
            "Symbol Description Quantity Avg Cost Market Price Market Value",
            "LIQ Liquid 100 -5.00 52.00 5,200.00",
            "Total Market Value: 5,200.00",
            "Cash Balance: 0.00",
            "Total Portfolio Value: 5,200.00",
        ]
    )
    _refused(client, pdf, "the statement's LIQ line cannot be booked: price must be positive")
