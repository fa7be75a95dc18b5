"""The one-day readers (the instrument liquidity view) show the spread estimated from the
stored bars where the day has no quotes, the quotes where it has them, and read no bar
after the day."""

from __future__ import annotations

import pytest

from market.settings import Settings
from store.engine import service_engine
from tests.market.stored_spreads import last_estimates, store_estimated_and_quoted
from tests.portfolio.seed import DAY
from views.instrument import liquidity
from views.spreads import stored_estimates


def test_the_liquidity_view_shows_the_stored_estimate_and_quotes_where_they_exist(settings: Settings) -> None:
    engine = service_engine(settings)
    expected = last_estimates(store_estimated_and_quoted(engine))
    with engine.connect() as conn:
        estimates = stored_estimates(conn, DAY, ["EST", "QTD"])
        view = liquidity(conn, DAY, ["EST", "QTD"])
    # the estimate from the stored bars up to the day (the bar after it is not read)
    assert estimates["EST"] == (
        pytest.approx(expected.loc["EST", "spread_estimate"]),
        expected.loc["EST", "spread_source"],
    )
    assert view["EST"]["spread"] == pytest.approx(expected.loc["EST", "spread_estimate"], abs=1e-6)
    assert view["EST"]["spread_source"] == "abdi_ranaldo"
    assert 0.01 < view["EST"]["spread"] < 0.03  # the bars' spread is 2%; their range is far wider
    # quotes win
    assert view["QTD"]["spread"] == pytest.approx(0.04) and view["QTD"]["spread_source"] == "quotes"
