"""`marketintel portfolio preview` answers what GET /api/portfolio/trade/preview answers, by
the one rule its booking follows (portfolio/trading.py `price_band`): the CLI's trade help
pointed at a preview the CLI did not have. A sell past the day's band is priced at the
band's edge and says so; a name with no close in the 60 days is refused with the one line
`portfolio trade` refuses it with, exit status 1."""

import json

from market.clock import exchange_now, latest_closed_trading_day
from market.settings import Settings
from store.engine import service_engine
from tests.pipeline.test_cli import cli
from tests.portfolio.seed import CALENDAR, seed_market


def test_the_cli_previews_an_order_and_refuses_it_as_its_booking_is(settings: Settings) -> None:
    engine = service_engine(settings)
    today = latest_closed_trading_day(exchange_now())
    seed_market(engine, {"AAA": {"close": 52.0, "volume": 20_000}}, day=today)
    seed_market(engine, {"OLD": {"close": 8.0, "volume": 20_000}}, day=CALENDAR.add_trading_days(today, -50))
    shown = cli("portfolio", "preview", "sell", "AAA", "1000000000")
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert (body["price"], body["price_bound"]) == (body["band_low"], "BAND_LOW") and body["band_low"] == "44.20"
    assert body["price_note"].startswith("the cost model cannot price the whole order")
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    previewed = cli("portfolio", "preview", "buy", "OLD", "1")
    booked = cli("portfolio", "trade", "client:acme", "buy", "OLD", "1", "8.00")
    for refused in (previewed, booked):
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stdout
    (line,) = previewed.stderr.strip().splitlines()
    assert line == booked.stderr.strip() and "price cannot be checked: no price for OLD in the 60 days" in line


def test_the_cli_refuses_a_preview_of_no_shares_as_its_booking_is(settings: Settings) -> None:
    """`portfolio preview buy AAA 0` printed a priced preview of 0 shares (fees and costs of
    0.00, a `booking_total` of 0.00): an order the booking refuses. It is refused with the
    booking's one line, exit status 1, as REST and GraphQL refuse it."""
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 52.0, "volume": 20_000}}, day=latest_closed_trading_day(exchange_now()))
    assert cli("portfolio", "open", "acme", "--cash", "5000").returncode == 0
    previewed = cli("portfolio", "preview", "buy", "AAA", "0")
    booked = cli("portfolio", "trade", "client:acme", "buy", "AAA", "0", "52.00")
    for refused in (previewed, booked):
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stdout
    (line,) = previewed.stderr.strip().splitlines()
    assert line == booked.stderr.strip() and "quantity must be a positive whole number of shares, not 0" in line
