"""A split imported after a client traded past its ex-date on the old count: a client buys
100 LIQ on Monday and sells 60 on Wednesday; a 1-for-10 consolidation ex Tuesday, imported
afterwards, was stored, and from then on the client's summary was a 422 "ledger of ...
sells 60 LIQ holding 10" (GraphQL BAD_USER_INPUT), for good: the store is append-only. The
import is refused on one line naming the portfolio, the symbol and the trade, and nothing
of it is stored."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from desk import Desk
from ingest.replay import ReplayMarket
from ingest.simulator.site import SimulatorSite
from market.errors import InvalidInputError, StageFailedError
from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from store import tables
from store.history import current_rows
from tests.api import world
from tests.api.conftest import Api

WEDNESDAY = datetime(2026, 11, 25, 15, 0, tzinfo=UTC)


def test_a_consolidation_that_would_break_a_clients_book_is_refused(api: Api, tmp_path: Path) -> None:
    portfolio, trade = _buy_monday_sell_wednesday(api)
    folder = tmp_path / "late"
    folder.mkdir()
    (folder / "prices.csv").write_text(
        # on the new count from the ex-date: a 1-for-10 consolidation multiplies the price by 10
        "symbol,date,close,volume\nLIQ,2026-11-23,52.00,1000\nLIQ,2026-11-24,520.00,100\nLIQ,2026-11-25,500.00,90\n"
    )
    (folder / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nLIQ,2026-11-24,consolidation,1 for 10\n")
    with api.world.engine.connect() as conn:
        before = {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in _TABLES}
    with pytest.raises(InvalidInputError) as refused:
        Desk.from_settings(api.world.settings).import_files(folder)
    assert refused.value.detail == (
        "the splits of LIQ to be stored come after trades on the old count: "
        f"{portfolio}'s SELL of 60 LIQ on 2026-11-25 ({trade}) would sell more than the 10 held on the new count "
        "(the book would no longer replay; check the ex-date, or record the client's trades on the new count "
        "first): nothing was imported (the import is one transaction)"
    )
    with api.world.engine.connect() as conn:
        assert {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in _TABLES} == before
    assert api.acme("GET", "/api/portfolio/summary").status_code == 200


_TABLES = (tables.eod_prices, tables.corporate_actions, tables.instruments)


TUESDAY = date(2026, 11, 24)


def test_a_late_t0_day_whose_consolidation_would_break_a_clients_book_is_refused(api: Api, tmp_path: Path) -> None:
    """The same consolidation reaching the store through T0: Tuesday's day, delivered late
    (after the client's Wednesday sale), carries the 1-for-10 notice ex Tuesday. The day is
    refused and recorded as a FAILED delivery naming the portfolio, the symbol and the
    trade; none of it is stored, and the client's summary still reads."""
    portfolio, trade = _buy_monday_sell_wednesday(api)
    exchange = _late_tuesday(tmp_path)
    with serve_in_thread(exchange.asgi_app()) as url:
        settings = api.world.settings.model_copy(update={"exchange_base_url": url, "exchange_retries": 0})
        with api.world.engine.connect() as conn:
            before = {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in _TABLES}
        with pytest.raises(StageFailedError) as refused:
            run_stage("t0_scrape", TUESDAY, settings=settings)
    said = (
        "the splits of LIQ to be stored come after trades on the old count: "
        f"{portfolio}'s SELL of 60 LIQ on 2026-11-25 ({trade}) would sell more than the 10 held on the new count"
    )
    assert refused.value.detail.startswith(
        "stage 't0_scrape' for 2026-11-24 failed: T0 data for 2026-11-24 refused, nothing stored: " + said
    ), refused.value.detail
    with api.world.engine.connect() as conn:
        assert {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in _TABLES} == before
        deliveries = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == TUESDAY])
    assert [d["status"] for d in deliveries] == ["FAILED"]
    assert deliveries[0]["manifest"]["errors"][0].startswith(said)
    assert api.acme("GET", "/api/portfolio/summary").status_code == 200


def _buy_monday_sell_wednesday(api: Api) -> tuple[str, str]:
    """The client's 100 LIQ bought on Monday and 60 sold on Wednesday: its portfolio and the sale's id."""
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    api.clock.moment = WEDNESDAY
    sold = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "SELL", "symbol": "LIQ", "quantity": 60, "price": "49.95"}
    )
    assert sold.status_code == 201, sold.text
    return sold.json()["portfolio_id"], sold.json()["trade_id"]


def _late_tuesday(tmp_path: Path) -> SimulatorSite:
    """The exchange's site serving the world's Friday and Monday, then Tuesday with LIQ on the
    new count and the consolidation's SPLIT notice (a replay of files: ingest/replay.py)."""
    folder = tmp_path / "exchange"
    folder.mkdir()
    days = [world.DAY, world.MONDAY, TUESDAY]
    rows = ["symbol,date,close,volume"]
    for symbol, (_, volume, _) in world.SYMBOLS.items():
        for i, d in enumerate(days, start=world.HISTORY_DAYS - 1):
            close = world.close_of(symbol, i) * (10 if symbol == "LIQ" and d == TUESDAY else 1)
            rows.append(f"{symbol},{d.isoformat()},{close:.2f},{volume}")
    (folder / "prices.csv").write_text("\n".join(rows) + "\n")
    (folder / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nLIQ,2026-11-24,consolidation,1 for 10\n")
    return SimulatorSite(ReplayMarket(folder, currency="JMD"), published_through=TUESDAY)
