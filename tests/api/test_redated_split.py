"""A split the store holds on the wrong day, corrected by a later import (docs/pipeline.md,
"A split is applied from the name's first row on the new count").

A client holds 1,000 OUT bought at Friday's close of 20.00 and 80,000 cash. OUT's 2-for-1
split goes ex Tuesday, but OUT does not trade that day: the file lists it untraded at the
old close, and it first trades on the new count on Wednesday at 10.10. An actions file
imported ahead of OUT's rows stored the split on Tuesday, and the later files (imported
without their actions file) left it there: on Tuesday the client's 2,000 shares were valued
at 20.00 (equity 120,000 for 100,000), the market read +100% on a day nothing traded, and
the store had no way out (append-only). Imported again with the actions file, the later
files re-date it: the Tuesday split is withdrawn by a new version without a factor (the
store keeps the row it replaces) and the split is stored on Wednesday; every reader of the
splits, kept reads included, reads Wednesday's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pandas as pd
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from desk import Desk
from market.errors import InvalidInputError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from store.panels import price_panel
from store.splits import stored_splits
from tests.api.conftest import Clock, client_served
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import CALENDAR, DAY, price_row, seed_long_and_avoid
from views.book_record import BookState, book_version, catch_up

MONDAY = CALENDAR.next_trading_day(DAY)
TUESDAY = CALENDAR.next_trading_day(MONDAY)  # the ex-date: OUT untraded at the old close
WEDNESDAY = CALENDAR.next_trading_day(TUESDAY)  # OUT's first trade on the new count
THURSDAY = CALENDAR.next_trading_day(WEDNESDAY)
FRIDAY_NOON = datetime(2026, 11, 20, 17, 0, tzinfo=UTC)
FRIDAY_AFTER = datetime(2026, 11, 27, 23, 0, tzinfo=UTC)
WEDNESDAY_NOON = datetime(2026, 11, 25, 17, 0, tzinfo=UTC)
ACTIONS = f"symbol,ex_date,kind,ratio\nOUT,{TUESDAY.isoformat()},split,2 for 1\n"
LATER = [(TUESDAY, 20.00, 0), (WEDNESDAY, 10.10, 30_000), (THURSDAY, 10.20, 30_000)]


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[httpx.Client, Clock, Settings]]:
    """Acme's portfolio over REST holding 1,000 OUT bought at 20 and 80,000 cash."""
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000})
    seed_long_and_avoid(service_engine(settings))
    with client_served(settings, "Acme Ltd", FRIDAY_NOON) as (http, clock):
        assert http.post("/api/portfolio/cash", json={"amount": "100000.00"}).status_code == 201
        order = {"side": "buy", "symbol": "OUT", "quantity": 1000, "price": "20", "fees": "0"}  # no broker fee
        assert http.post("/api/portfolio/trade", json=order).status_code == 201
        yield http, clock, settings


def _folder(path: Path, rows: list[tuple[date, float, int]], actions: bool) -> Path:
    path.mkdir()
    lines = [f"OUT,{d.isoformat()},{close:.2f},{volume}" for d, close, volume in rows]
    lines += [f"LIQ,{d.isoformat()},50.00,40000" for d, _, _ in rows]
    (path / "prices.csv").write_text("symbol,date,close,volume\n" + "\n".join(lines) + "\n")
    if actions:
        (path / "corporate_actions.csv").write_text(ACTIONS)
    return path


def _read(http: httpx.Client, settings: Settings, state: BookState, portfolio_id: str) -> dict:
    """What the readers say of Tuesday: the book's equity (the track record's valued days,
    caught up from `state`, the kept read), OUT's quantity held, its served change on
    Tuesday and the largest daily move of the model's adjusted history."""
    with service_engine(settings).connect() as conn:
        catch_up(conn, portfolio_id, state, book_version(conn, portfolio_id))
        panel = price_panel(conn, THURSDAY)
    days = dict(zip(state.days.dates, state.days.equity, strict=True))
    (out,) = [p for p in http.get("/api/portfolio").json()["positions"] if p["symbol"] == "OUT"]
    latest = http.get("/api/market/latest", params={"date": TUESDAY.isoformat()}).json()["OUT"]
    closes = panel[panel["symbol"] == "OUT"].sort_values("date")["close"].astype(float)
    return {
        "equity": (round(days[TUESDAY]), round(days[WEDNESDAY])),
        "quantity": out["quantity"],
        "change_pct": latest["change_pct"],
        "largest_move": round(float(pd.Series(closes.to_numpy()).pct_change().abs().max()), 2),
    }


def test_a_later_import_re_dates_a_split_stored_on_an_untraded_ex_date(served, tmp_path: Path) -> None:
    http, clock, settings = served
    portfolio_id = http.get("/api/portfolio/summary").json()["portfolio_id"]
    desk = Desk.from_settings(settings)
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("OUT", MONDAY, 20.0, 40_000, 19.9, 20.1)])
    desk.import_files(_folder(tmp_path / "ahead", [(MONDAY, 20.00, 40_000)], actions=True))
    desk.import_files(_folder(tmp_path / "later", LATER, actions=False))
    desk.refresh_bars()
    clock.moment = WEDNESDAY_NOON  # on the new count, as the store holds the split from Tuesday
    bought = http.post(
        "/api/portfolio/trade", json={"side": "buy", "symbol": "OUT", "quantity": 200, "price": "10.10", "fees": "0"}
    )
    assert bought.status_code == 201, bought.text
    clock.moment = FRIDAY_AFTER
    state = BookState()
    wrong = _read(http, settings, state, portfolio_id)
    assert wrong == {"equity": (120_000, 100_200), "quantity": 2200, "change_pct": 100.0, "largest_move": 1.0}

    report = desk.import_files(_folder(tmp_path / "corrected", LATER, actions=True))
    desk.refresh_bars()
    assert any(
        line.startswith(f"re-dated: OUT {TUESDAY.isoformat()} SPLIT 2 as stored: withdrawn")
        and line.endswith(f"applied from {WEDNESDAY.isoformat()}")
        for line in report.capital_changes
    ), report.capital_changes
    assert _read(http, settings, state, portfolio_id) == {
        "equity": (100_000, 100_200),
        "quantity": 2200,
        "change_pct": 0.0,
        "largest_move": 0.01,
    }
    with service_engine(settings).connect() as conn:
        assert [(s.ex_date, s.factor) for s in stored_splits(conn, symbols=["OUT"])] == [(WEDNESDAY, 2.0)]
        c = tables.corporate_actions.c
        versions = select(c.amount).where(c.symbol == "OUT", c.action_date == TUESDAY, c.kind == "SPLIT")
        kept = conn.execute(versions.order_by(c.id)).scalars().all()
    assert kept == [2.0, None]  # the wrong row is kept, an earlier version
    again = desk.import_files(_folder(tmp_path / "again", LATER, actions=True))
    assert again.corporate_actions_inserted == 0 and not any("re-dated" in x for x in again.capital_changes)


def test_a_re_dating_that_would_break_a_book_is_refused_saying_the_client_traded_on_the_stored_count(
    served, tmp_path: Path
) -> None:
    """The client sold 1,500 OUT on Tuesday, on the count the store held then (the split
    stored from Tuesday: 2,000 held). Re-dated to Wednesday, the sale sells more than the
    1,000 held on Tuesday: the import is refused, nothing of it stored, and the refusal says
    the client traded on the stored split and how to leave it standing (not that the
    trades were on the old count, to be recorded again on the new one)."""
    http, clock, settings = served
    desk = Desk.from_settings(settings)
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("OUT", MONDAY, 20.0, 40_000, 19.9, 20.1)])
    desk.import_files(_folder(tmp_path / "ahead", [(MONDAY, 20.00, 40_000)], actions=True))
    desk.import_files(_folder(tmp_path / "later", LATER, actions=False))
    clock.moment = datetime(2026, 11, 24, 17, 0, tzinfo=UTC)
    order = {"side": "sell", "symbol": "OUT", "quantity": 1500, "price": "20.00", "fees": "0"}
    sold = http.post("/api/portfolio/trade", json=order).json()
    with pytest.raises(InvalidInputError) as refused:
        desk.import_files(_folder(tmp_path / "corrected", LATER, actions=True))
    assert refused.value.detail == (
        "the splits of OUT to be stored re-date a split clients traded on: "
        f"{sold['portfolio_id']}'s SELL of 1500 OUT on {TUESDAY.isoformat()} ({sold['trade_id']}) was recorded on "
        f"the count the store held then (OUT's split 2 from {TUESDAY.isoformat()}) and would sell more than the "
        f"1000 held with the split from {WEDNESDAY.isoformat()} (the book would no longer replay; the trades stand "
        "as recorded: to leave the split where it is stored, import the files without its row in the actions "
        "file): nothing was imported (the import is one transaction)"
    )
    with service_engine(settings).connect() as conn:
        assert [(s.ex_date, s.factor) for s in stored_splits(conn, symbols=["OUT"])] == [(TUESDAY, 2.0)]
    assert http.get("/api/portfolio/summary").status_code == 200
    desk.import_files(_folder(tmp_path / "without", LATER, actions=False))  # what the refusal says to do
