"""A statement of another account is refused, not synced over the book (the review's
other_account run).

Both statement layouts print `Account: <number>    Client: <name>` under their title
(portfolio/statement_pdfs.py `_heading`). Nothing read it: uploading KC-7777's statement
over a portfolio synchronised to KC-0001's sold every holding and reconciled the cash to
the other account's. Now the account is read, shown in the answer (the preview too) and
kept with the import; a statement of an account other than that of the portfolio's last
synchronised statement is 422 problem+json naming both, kept as REJECTED, the book
unchanged. Once a synchronised statement named an account, a statement that prints no
account line is refused as well (it cannot be shown to be of that account: the review's
cut-off-header run); a portfolio none of whose statements named one takes it as before."""

from __future__ import annotations

from decimal import Decimal
from hashlib import sha256

import pytest

from portfolio.statement_pdfs import Holding, holdings_statement
from portfolio.statements import HOLDINGS_TITLE
from store import tables
from store.history import current_rows
from tests.api.conftest import Api, assert_problem
from tests.pdf_samples import text_pdf
from tests.portfolio.seed import DAY

pytestmark = pytest.mark.parametrize(
    "database_url", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _statement(account: str, client: str, holding: Holding, cash: str) -> bytes:
    return holdings_statement(account, client, DAY, [holding], Decimal(cash))


MINE = _statement("KC-0001", "Acme Ltd", Holding("LIQ", "Liquid", 100, Decimal("50"), Decimal("50")), "1000")
THEIRS = _statement("KC-7777", "Somebody Else", Holding("MID", "Middle", 10, Decimal("20"), Decimal("20")), "5")


def _upload(api: Api, pdf: bytes, **params: str):
    return api.acme(
        "POST", "/api/portfolio/upload-pdf", files={"file": ("s.pdf", pdf, "application/pdf")}, params=params
    )


def _kept(api: Api, pdf: bytes) -> list[tuple[str, str | None, dict]]:
    with api.world.engine.connect() as conn:
        rows = current_rows(
            conn, tables.statement_imports, where=[tables.statement_imports.c.file_sha256 == sha256(pdf).hexdigest()]
        )
    return [(row["status"], row["reason"], row["parsed"]) for row in rows]


def test_a_statement_of_another_account_is_refused_naming_both(api: Api) -> None:
    preview = _upload(api, MINE, preview="true")
    assert preview.status_code == 200 and preview.json()["statement"]["account"] == "KC-0001", preview.text
    synced = _upload(api, MINE, confirm=preview.json()["confirm_token"])
    assert synced.status_code == 200 and synced.json()["statement"]["account"] == "KC-0001", synced.text
    assert _kept(api, MINE)[0][2]["account"] == "KC-0001"
    book = api.acme("GET", "/api/portfolio").json()

    said = "the statement is of account KC-7777, not KC-0001, the account of the statement this portfolio was last"
    assert_problem(_upload(api, THEIRS, preview="true"), 422, said)
    body = assert_problem(_upload(api, THEIRS), 422, said)
    assert body["type"].endswith("/problems/invalid-input"), body
    assert api.acme("GET", "/api/portfolio").json() == book  # nothing sold, no cash reconciled
    ((status, reason, _),) = _kept(api, THEIRS)
    assert status == "REJECTED" and "KC-7777" in reason and "KC-0001" in reason

    # a statement that prints no account line cannot be shown to be KC-0001's: refused alike
    unnamed = text_pdf(
        [
            HOLDINGS_TITLE,
            f"Statement date: {DAY.isoformat()}",
            "Symbol Description Quantity Avg Cost Price Value",
            "LIQ Liquid 200 50.00 50.00 10,000.00",
            "Total Market Value: 10,000.00",
            "Cash Balance: 500.00",
            "Total Portfolio Value: 10,500.00",
        ]
    )
    unshown = "the statement is of no account: it prints no account line, not KC-0001, the account of the statement"
    assert_problem(_upload(api, unnamed, preview="true"), 422, unshown, "that shows its account line")
    assert_problem(_upload(api, unnamed), 422, unshown, "upload a statement of account KC-0001")
    assert api.acme("GET", "/api/portfolio").json() == book  # nothing sold, no cash reconciled
    assert [status for status, _, _ in _kept(api, unnamed)] == ["REJECTED"]
    assert_problem(_upload(api, THEIRS), 422, said)
    again = _statement("KC-0001", "Acme Ltd", Holding("LIQ", "Liquid", 300, Decimal("50"), Decimal("50")), "0")
    assert _upload(api, again).status_code == 200  # the same account's next statement is synchronised
    positions = api.acme("GET", "/api/portfolio").json()["positions"]
    assert [(p["symbol"], p["quantity"]) for p in positions] == [("LIQ", 300)]


def test_a_portfolio_whose_statements_named_no_account_takes_one_that_names_none(api: Api) -> None:
    first, later = (
        text_pdf(
            [
                HOLDINGS_TITLE,
                f"Statement date: {DAY.isoformat()}",
                "Symbol Description Quantity Avg Cost Price Value",
                f"LIQ Liquid {quantity} 50.00 50.00 {quantity * 50:,}.00",
                f"Total Market Value: {quantity * 50:,}.00",
                "Cash Balance: 500.00",
                f"Total Portfolio Value: {quantity * 50 + 500:,}.00",
            ]
        )
        for quantity in (100, 200)
    )
    assert _upload(api, first).status_code == 200
    synced = _upload(api, later)
    assert synced.status_code == 200 and synced.json()["statement"]["account"] is None, synced.text
