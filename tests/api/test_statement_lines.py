"""A statement whose figures add up but holds what no account could, over REST: 422
problem+json naming the line (kept as REJECTED), or, for a price far from any the name
traded at, the sync with the warning shown (portfolio/statement_checks.py)."""

from __future__ import annotations

from decimal import Decimal
from hashlib import sha256

import pytest

from portfolio.statement_pdfs import Holding, holdings_statement
from portfolio.statements import LEDGER_TITLE
from store import tables
from store.history import current_rows
from tests.api.conftest import Api, assert_problem
from tests.pdf_samples import text_pdf
from tests.portfolio.seed import DAY

pytestmark = pytest.mark.parametrize(
    "database_url", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _statement(*holdings: Holding) -> bytes:
    return holdings_statement("KC-1", "Acme Ltd", DAY, list(holdings), Decimal("1000"))


def _upload(api: Api, pdf: bytes, **params: str):
    return api.acme(
        "POST", "/api/portfolio/upload-pdf", files={"file": ("s.pdf", pdf, "application/pdf")}, params=params
    )


def test_a_statement_line_no_account_could_hold_is_422_naming_it(api: Api) -> None:
    before = api.acme("GET", "/api/portfolio").json()
    too_many = _upload(api, _statement(Holding("LIQ", "Liquid", 2_000_001, Decimal("50"), Decimal("50"))))
    assert_problem(too_many, 422, "2,000,001 LIQ, more than the 2,000,000 shares LIQ has outstanding")
    assert_problem(
        _upload(api, _statement(Holding("DRY", "Dry", 10, Decimal("12"), Decimal("12")))),
        422,
        "10 DRY, which has no traded",
    )
    assert api.acme("GET", "/api/portfolio").json() == before


def test_a_price_far_from_any_traded_is_synced_with_the_warning_shown(api: Api) -> None:
    far = _statement(Holding("LIQ", "Liquid", 100, Decimal("5000"), Decimal("50")))
    preview = _upload(api, far, preview="true")
    assert preview.status_code == 200, preview.text
    (warning,) = preview.json()["warnings"]
    assert "average cost 5,000.00 is far from any price LIQ traded at" in warning
    synced = _upload(api, far, confirm=preview.json()["confirm_token"])
    assert synced.status_code == 200 and synced.json()["warnings"] == [warning]
    (position,) = api.acme("GET", "/api/portfolio").json()["positions"]
    assert (position["symbol"], position["quantity"], position["average_cost"]) == ("LIQ", 100, "5000.00")


def _activity(*rows: str, closing: tuple[str, ...] = ()) -> bytes:
    """An activity statement of DAY's period whose transactions are `rows` after its OPENING row."""
    lines = [LEDGER_TITLE, f"Period: 2026-11-01 to {DAY.isoformat()}", "Transactions"]
    lines += ["2026-11-02 OPENING - - - - 1,000.00", *rows, "Closing Cash Balance: 1,000.00"]
    return text_pdf([*lines, "Closing Holdings", *closing])


@pytest.mark.parametrize(
    "pdf, said",
    [
        (_activity("2026-13-45 FEE - - - (25.00) 975.00", "2026-11-05 DEPOSIT - - - 25.00 1,000.00"), "2026-13-45 FEE"),
        (_activity("2026-11-04 FEE - - - (25.00) (25.00) DR", "2026-11-05 DEPOSIT - - - 25.00 1,000.00"), "DR' is not"),
        (_activity(closing=("LIQ 10", "LIQ 10")), "LIQ appears twice in the closing holdings: 'LIQ 10' and 'LIQ 10'"),
    ],
    ids=["no-such-date", "a-row-not-read", "a-symbol-twice"],
)
def test_a_ledger_line_that_cannot_be_read_is_422_naming_it_and_kept(api: Api, pdf: bytes, said: str) -> None:
    """A ledger row that could not be read (or was dated no day) was skipped or taken as it
    stood, and a holdings line listed twice was read by the last: each is 422 problem+json
    naming the line, the book unchanged, the attempt kept as REJECTED."""
    before = api.acme("GET", "/api/portfolio").json()
    assert_problem(_upload(api, pdf), 422, said)
    assert api.acme("GET", "/api/portfolio").json() == before
    with api.world.engine.connect() as conn:
        kept = current_rows(
            conn, tables.statement_imports, where=[tables.statement_imports.c.file_sha256 == sha256(pdf).hexdigest()]
        )
    assert [(row["status"], said in row["reason"]) for row in kept] == [("REJECTED", True)]
