"""A ticker change on a store that is already running (docs/pipeline.md, "A rename on a
running store"; docs/portfolio.md, "A name whose ticker changed"): a client holds LIQ,
the company trades on as LQX from the ex-date, and the operator imports the rename row.
The holding carries on under LQX (same shares, same cost), valued at LQX's closes, never
UNPRICED or DELISTED; a trade under LIQ from the ex-date is refused naming LQX; the old
instrument's reads name the new symbol."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from ingest.importers import import_path
from store import tables
from store.history import append_history, current_rows
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data
from tests.api.world import MORNING
from tests.portfolio.seed import CALENDAR, price_row

SESSIONS = [CALENDAR.add_trading_days(MORNING.date(), i) for i in range(1, 66)]
EX = SESSIONS[0]  # the first session under LQX


def _lqx_close(i: int) -> float:
    return round(53.0 + 0.05 * (i % 5), 2)


def _market_after(api: Api, folder: Path, through: int, *, rename: bool) -> None:
    """The sessions to SESSIONS[through]: the operator imports the company's first three
    sessions under LQX from a file with, when `rename`, the rename row beside them; T0's
    rows follow (MID every session, LQX after those three)."""
    days = SESSIONS[: through + 1]
    folder.mkdir(parents=True, exist_ok=True)
    rows = [f"LQX,{d.isoformat()},{_lqx_close(i):.2f},{40_000 + i},Liquid Holdings" for i, d in enumerate(days[:3])]
    (folder / "prices.csv").write_text("symbol,date,close,volume,name\n" + "\n".join(rows) + "\n")
    actions = f"LIQ,{EX.isoformat()},rename,,,LQX,ticker change\n" if rename else ""
    (folder / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio,price,new_symbol,note\n" + actions)
    report = import_path(api.world.engine, folder)
    assert report.rows_inserted == 3, report
    with api.world.engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("MID", d, 20.0, 10_000, 19.96, 20.04) for d in days])
        later = [(i, d) for i, d in enumerate(days) if i >= 3]
        append_history(
            conn, tables.eod_prices, [price_row("LQX", d, _lqx_close(i), 40_000, None, None) for i, d in later]
        )
    api.clock.moment = datetime.combine(days[-1] + timedelta(days=1), datetime.min.time(), UTC) + timedelta(hours=13)


def _bought(api: Api) -> dict:
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    (position,) = [p for p in api.acme("GET", "/api/portfolio").json()["positions"] if p["symbol"] == "LIQ"]
    return position


def test_a_holding_renamed_on_a_running_store_carries_on_under_the_new_symbol(api: Api, tmp_path: Path) -> None:
    held = _bought(api)
    _market_after(api, tmp_path / "renamed", 64, rename=True)
    positions, summary = api.acme("GET", "/api/portfolio"), api.acme("GET", "/api/portfolio/summary")
    assert (positions.status_code, summary.status_code) == (200, 200), (positions.text, summary.text)
    (carried,) = [p for p in positions.json()["positions"] if p["symbol"] in ("LIQ", "LQX")]
    assert (carried["symbol"], carried["quantity"]) == ("LQX", 100)
    assert carried["average_cost"] == held["average_cost"]  # the same position: no trade, no fee
    assert not {"UNPRICED", "DELISTED"} & set(carried["flags"])
    assert Decimal(carried["price"]) == Decimal(f"{_lqx_close(64):.2f}")
    graph = data(api, "{ portfolio { equity } }", api.world.acme_key)["portfolio"]
    assert Decimal(graph["equity"]) == Decimal(summary.json()["equity"])
    # a trade under the old symbol from the ex-date is refused naming the new one; under it, booked
    sell = {"side": "SELL", "symbol": "LIQ", "quantity": 40, "price": f"{_lqx_close(64):.2f}"}
    assert_problem(api.acme("POST", "/api/portfolio/trade", json=sell), 422, "LIQ", "LQX", EX.isoformat())
    sold = api.acme("POST", "/api/portfolio/trade", json={**sell, "symbol": "LQX"})
    assert sold.status_code == 201, sold.text
    (left,) = [p for p in api.acme("GET", "/api/portfolio").json()["positions"] if p["symbol"] == "LQX"]
    assert left["quantity"] == 60
    # the old instrument stops at the ex-date (T1's pre-flight expects no row of it) and is read by its symbol
    with api.world.engine.connect() as conn:
        (liq,) = current_rows(conn, tables.instruments, where=[tables.instruments.c.symbol == "LIQ"])
    assert liq["delisted_on"] == EX
    listed = data(api, "{ instruments(first: 60) { nodes { symbol } } }", api.world.acme_key)["instruments"]
    assert "LIQ" not in {n["symbol"] for n in listed["nodes"]} and "LQX" in {n["symbol"] for n in listed["nodes"]}
    # the old instrument's preview names the new symbol (it answered "no price for LIQ in the 60 days")
    preview = {"side": "buy", "symbol": "LIQ", "quantity": 10}
    assert_problem(api.acme("GET", "/api/portfolio/trade/preview", params=preview), 404, "LIQ trades as LQX")


def test_without_the_rename_row_the_old_symbol_stops(api: Api, tmp_path: Path) -> None:
    """What the rename row changes: without it LIQ is a name that stops, DELISTED after the
    rule's sessions and worth nothing by default."""
    _bought(api)
    _market_after(api, tmp_path / "plain", 64, rename=False)
    (stopped,) = [p for p in api.acme("GET", "/api/portfolio").json()["positions"] if p["symbol"] == "LIQ"]
    assert stopped["flags"] == ["DELISTED"] and Decimal(stopped["market_value"]) == 0


def test_the_old_symbols_reads_name_the_new_one_and_the_new_ones_name_the_old(api: Api, tmp_path: Path) -> None:
    """GET of LIQ after the rename answers its bars (what traded under LIQ) saying the ticker
    changed, to what and from when; LQX's answers name LIQ as its earlier ticker, over REST
    and GraphQL alike. Before, LIQ's answers read as a name that had stopped."""
    _market_after(api, tmp_path / "renamed", 5, rename=True)
    changed = {"symbol": "LQX", "as_of": EX.isoformat(), "relisted_on": None}
    old, new = api.acme("GET", "/api/market/history/LIQ"), api.acme("GET", "/api/market/history/LQX")
    assert (old.status_code, new.status_code) == (200, 200), (old.text, new.text)
    assert old.json()["renamed_to"] == changed and old.json()["renamed_from"] == []
    assert old.json()["items"][-1]["trading_date"] < EX.isoformat()  # what traded under LIQ, as it traded
    assert new.json()["renamed_to"] is None and new.json()["renamed_from"] == [
        {"symbol": "LIQ", "as_of": EX.isoformat(), "relisted_on": None}
    ]
    statistics = api.acme("GET", "/api/market/symbol/LIQ")
    assert statistics.status_code == 200, statistics.text
    assert statistics.json()["renamed_to"] == changed
    query = '{ a: instrument(symbol: "LIQ") { renamedTo { symbol asOf } renamedFrom { symbol } } '
    query += 'b: instrument(symbol: "LQX") { renamedTo { symbol } renamedFrom { symbol asOf } } }'
    graph = data(api, query, api.world.acme_key)
    assert graph["a"] == {"renamedTo": {"symbol": "LQX", "asOf": EX.isoformat()}, "renamedFrom": []}
    assert graph["b"] == {"renamedTo": None, "renamedFrom": [{"symbol": "LIQ", "asOf": EX.isoformat()}]}


def test_the_ai_portfolios_renamed_holding_keeps_its_opening_trade(api: Api, tmp_path: Path) -> None:
    """The AI portfolio holds LIQ (bought under LIQ); after the rename its position is LQX's,
    and its rationale and timestamp are still the opening buy's, found under LIQ, over REST
    and GraphQL alike. The read looked for a buy under LQX, found none and raised
    StopIteration in a worker thread: the request was never answered (the client timed out)."""
    (before,) = [p for p in api.acme("GET", "/api/ai-portfolio/positions").json() if p["symbol"] == "LIQ"]
    _market_after(api, tmp_path / "renamed", 64, rename=True)
    answered = api.acme("GET", "/api/ai-portfolio/positions")
    assert answered.status_code == 200, answered.text
    (carried,) = [p for p in answered.json() if p["symbol"] in ("LIQ", "LQX")]
    assert carried["symbol"] == "LQX" and carried["quantity"] == before["quantity"]
    opening = {k: carried[k] for k in ("purchase_date", "entered_as", "rationale", "timestamp")}
    assert opening == {k: before[k] for k in opening}
    graph = data(api, "{ aiPortfolio { positions { nodes { symbol quantity timestamp } } } }", api.world.acme_key)
    nodes = graph["aiPortfolio"]["positions"]["nodes"]
    assert {"symbol": "LQX", "quantity": before["quantity"], "timestamp": before["timestamp"]} in nodes
