"""A name without a row on the market day (a thin name the delivery left out, as the NSE
files before 2009 did) was quoted on GET /api/market/latest with its last bar's date beside
the market day's volume 0 and change 0.0: a date from one day, a volume and change from
another. Its latest quote is the market day's no-trade row, as the exchange states an
untraded name and as a stored no-trade row reads: the market day's date, its last close,
volume 0, change 0.0 (the same on GraphQL's `latestQuote`)."""

from __future__ import annotations

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data
from tests.portfolio.seed import CALENDAR, DAY, days_up_to, price_row

LAST = CALENDAR.add_trading_days(DAY, -2)  # THIN's last row: it traded 4,000 shares at 31.40
QUOTES = '{ instrument(symbol: "THIN") { latestQuote { tradingDate close volume changePct } } }'


def test_an_untraded_names_quote_is_the_market_days_no_trade_row(api: Api) -> None:
    with api.world.engine.begin() as conn:
        listing = {"symbol": "THIN", "name": "Thin Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
        append_history(conn, tables.instruments, [listing])
        rows = [price_row("THIN", d, 31.0, 3_000, 30.9, 31.1) for d in days_up_to(LAST, 30)[:-1]]
        append_history(conn, tables.eod_prices, [*rows, price_row("THIN", LAST, 31.4, 4_000, 31.3, 31.5)])
    thin = api.acme("GET", "/api/market/latest").json()["THIN"]
    day = DAY.isoformat()
    assert (thin["trading_date"], thin["close"], thin["volume"], thin["change_pct"]) == (day, 31.4, 0, 0.0)
    assert str(LAST) in thin["reason"]  # why it has no prediction: its latest bar is older
    graph = data(api, QUOTES, api.world.acme_key)["instrument"]["latestQuote"]
    assert graph == {"tradingDate": day, "close": 31.4, "volume": 0, "changePct": 0.0}
