"""A client's holding whose rows stopped was written off by the delisting rule in its
positions and summary (worth nothing once delisted), but the client's track record went on
valuing it at its last close every day: 1,000 LIQ delisted took 26% off the equity the
summary showed and 0.02% off the record's total return. The record's days read the same rule
(portfolio/book_days.py, portfolio/delisting.py), from the session it delists the holding,
and a DELISTING notice stored later revalues the days from its date."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.world import MORNING
from tests.portfolio.seed import CALENDAR, price_row


def _record_on(api: Api, day: date) -> tuple[dict, dict]:
    api.clock.moment = datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC) + timedelta(hours=13)
    summary, record = api.acme("GET", "/api/portfolio/summary"), api.acme("GET", "/api/portfolio/track-record")
    assert (summary.status_code, record.status_code) == (200, 200), (summary.text, record.text)
    return summary.json(), record.json()


def test_the_track_record_writes_a_delisted_holding_off_as_its_positions_do(api: Api) -> None:
    before = _record_on(api, MORNING.date())[0]
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 1000, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    later = [CALENDAR.add_trading_days(MORNING.date(), i) for i in range(1, 66)]
    with api.world.engine.begin() as conn:  # MID trades on; LIQ has no row
        append_history(conn, tables.eod_prices, [price_row("MID", d, 20.0, 10_000, None, None) for d in later[:30]])
    summary, record = _record_on(api, later[29])  # carried at its last close: the record agrees
    assert summary["flags"] == {"LIQ": ["TRAPPED"]}
    assert record["total_return"] == pytest.approx(float(summary["equity"]) / float(before["equity"]) - 1, abs=1e-4)
    with api.world.engine.begin() as conn:  # the exchange's notice, stored after the record was read
        notice = {"symbol": "LIQ", "action_date": later[9], "kind": "DELISTING", "amount": None, "source": "test"}
        append_history(conn, tables.corporate_actions, [notice])
        append_history(conn, tables.eod_prices, [price_row("MID", d, 20.0, 10_000, None, None) for d in later[30:]])
    summary, record = _record_on(api, later[-1])
    assert summary["flags"] == {"LIQ": ["DELISTED"]} and float(summary["market_value"]) == 0
    assert record["total_return"] == pytest.approx(float(summary["equity"]) / float(before["equity"]) - 1, abs=1e-4)
