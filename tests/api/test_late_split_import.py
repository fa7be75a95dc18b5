"""A split imported after a client traded past its ex-date on the old count: a client buys
100 LIQ on Monday and sells 60 on Wednesday; a 1-for-10 consolidation ex Tuesday, imported
afterwards, was stored, and from then on the client's summary was a 422 "ledger of ...
sells 60 LIQ holding 10" (GraphQL BAD_USER_INPUT), for good: the store is append-only. The
import is refused on one line naming the portfolio, the symbol and the trade, and nothing
of it is stored."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from desk import Desk
from market.errors import InvalidInputError
from store import tables
from tests.api.conftest import Api

WEDNESDAY = datetime(2026, 11, 25, 15, 0, tzinfo=UTC)


def test_a_consolidation_that_would_break_a_clients_book_is_refused(api: Api, tmp_path: Path) -> None:
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    api.clock.moment = WEDNESDAY
    sold = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "SELL", "symbol": "LIQ", "quantity": 60, "price": "49.95"}
    )
    assert sold.status_code == 201, sold.text
    folder = tmp_path / "late"
    folder.mkdir()
    (folder / "prices.csv").write_text(
        "symbol,date,close,volume\nLIQ,2026-11-23,52.00,1000\nLIQ,2026-11-24,5.20,10000\nLIQ,2026-11-25,5.00,9000\n"
    )
    (folder / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nLIQ,2026-11-24,consolidation,1 for 10\n")
    with api.world.engine.connect() as conn:
        before = {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in _TABLES}
    with pytest.raises(InvalidInputError) as refused:
        Desk.from_settings(api.world.settings).import_files(folder)
    portfolio, trade = sold.json()["portfolio_id"], sold.json()["trade_id"]
    assert refused.value.detail == (
        "the splits of LIQ this import would store come after trades on the old count: "
        f"{portfolio}'s SELL of 60 LIQ on 2026-11-25 ({trade}) would sell more than the 10 held on the new count "
        "(the book would no longer replay; check the ex-date, or record the client's trades on the new count "
        "first): nothing was imported (the import is one transaction)"
    )
    with api.world.engine.connect() as conn:
        assert {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in _TABLES} == before
    assert api.acme("GET", "/api/portfolio/summary").status_code == 200


_TABLES = (tables.eod_prices, tables.corporate_actions, tables.instruments)
