"""The reasons behind a prediction (models/reasons.py) where it is served: REST's latest
quote and symbol statistics, GraphQL's latestPrediction, predictions and latestQuote, and
in the AI portfolio's rationale and a client's suggestion built from it. The world stores
LIQ's prediction with its reasons (tests/api/world.py) and MID's without (as before 0015)."""

from __future__ import annotations

from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import DAY, LIQ_RAW_SCORE, LIQ_REASONS
from tests.conftest import ADMIN_KEY

# What is served: the stored reasons with each input by its label (written here, not read
# from models/features.py), in the stored order (largest contribution first), signs kept.
LABELS = {"return_1d": "Last day's return", "momentum_5": "Momentum, 5 days", "market_breadth": "Market breadth"}
SERVED = {
    "base_value": LIQ_REASONS["base_value"],
    "inputs": [{"input": LABELS[r["feature"]], "contribution": r["contribution"]} for r in LIQ_REASONS["top"]],
    "missing_inputs": ["Volatility, 60 days (daily)"],  # the input LIQ had no value for
}
# Where the prediction itself is served, its raw score too, and the other 11 inputs' share:
# base value + the three listed + other inputs = raw score (0.012345 - 0.02 - 0.012345 = -0.02)
SERVED_WITH_RAW = {**SERVED, "raw_score": LIQ_RAW_SCORE, "other_inputs": -0.012345}
REASONS = "reasons { baseValue inputs { input contribution } rawScore otherInputs missingInputs }"


def _graph(reasons: dict) -> dict:
    return {
        "baseValue": reasons["base_value"],
        "inputs": reasons["inputs"],
        "rawScore": reasons.get("raw_score"),
        "otherInputs": reasons.get("other_inputs"),
        "missingInputs": reasons.get("missing_inputs"),
    }


def test_the_served_reasons_add_up_to_the_served_raw_score() -> None:
    listed = SERVED_WITH_RAW["base_value"] + sum(i["contribution"] for i in SERVED_WITH_RAW["inputs"])
    assert round(listed + SERVED_WITH_RAW["other_inputs"], 6) == SERVED_WITH_RAW["raw_score"]


def test_rest_serves_the_reasons_of_a_scored_symbol(api: Api) -> None:
    assert [r["feature"] for r in LIQ_REASONS["top"]] == ["return_1d", "momentum_5", "market_breadth"]
    latest = api.acme("GET", "/api/market/latest").json()
    assert latest["LIQ"]["reasons"] == SERVED_WITH_RAW
    assert latest["MID"]["reasons"] is None and latest["MID"]["score"] == 55.0  # scored, stored without reasons
    assert latest["DRY"]["reasons"] is None  # not scored

    statistics = api.acme("GET", "/api/market/symbol/liq").json()
    assert statistics["prediction_date"] == DAY.isoformat() and statistics["reasons"] == SERVED_WITH_RAW
    mid = api.acme("GET", "/api/market/symbol/MID").json()
    assert mid["prediction_date"] == DAY.isoformat() and mid["reasons"] is None
    dry = api.acme("GET", "/api/market/symbol/DRY").json()
    assert dry["prediction_date"] is None and dry["reasons"] is None


def test_graphql_serves_the_reasons_of_a_scored_symbol(api: Api) -> None:
    key = api.world.acme_key
    liq = data(
        api,
        f'{{ instrument(symbol: "LIQ") {{ latestPrediction {{ tradingDate {REASONS} }} '
        f"predictions(first: 5) {{ nodes {{ tradingDate {REASONS} }} }} latestQuote {{ {REASONS} }} }} }}",
        key,
    )["instrument"]
    assert liq["latestPrediction"] == {"tradingDate": DAY.isoformat(), "reasons": _graph(SERVED_WITH_RAW)}
    assert liq["predictions"]["nodes"] and all(
        n["reasons"] == _graph(SERVED_WITH_RAW) for n in liq["predictions"]["nodes"]
    )
    assert liq["latestQuote"]["reasons"] == _graph(SERVED_WITH_RAW)
    mid = data(api, f'{{ instrument(symbol: "MID") {{ latestPrediction {{ score {REASONS} }} }} }}', key)
    assert mid["instrument"]["latestPrediction"] == {"score": 55.0, "reasons": None}


def test_the_ai_rationale_and_the_suggestion_carry_the_reasons(api: Api) -> None:
    (position,) = api.acme("GET", "/api/ai-portfolio/positions").json()  # LIQ, bought on its LONG
    assert position["symbol"] == "LIQ" and position["rationale"]["reasons"] == SERVED
    trades = data(api, "{ aiPortfolio { trades { nodes { symbol rationale } } } }", ADMIN_KEY)  # the trade log: admin
    (trade,) = trades["aiPortfolio"]["trades"]["nodes"]
    assert trade["symbol"] == "LIQ" and trade["rationale"]["reasons"] == SERVED
    (suggestion,) = api.acme("GET", "/api/suggestions").json()["items"]
    assert suggestion["symbol"] == "LIQ" and suggestion["reason"]["reasons"] == SERVED


def test_a_name_without_a_price_on_the_day_is_told_so_not_too_little_history(api: Api) -> None:
    """LIQ has months of history; without a bar on the day it has no prediction because no
    price was delivered for it that day, and its quote says that (naming its last bar)."""
    from store import tables
    from store.history import append_history
    from tests.portfolio.seed import CALENDAR, price_row

    before = CALENDAR.previous_trading_day(DAY)
    with api.world.engine.begin() as conn:  # a listed name (the day's market is the listed names) priced the day before
        listed = {"symbol": "GONE", "name": "Gone Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
        append_history(conn, tables.instruments, [listed])
        append_history(conn, tables.eod_prices, [price_row("GONE", d, 9.0, 500, None, None) for d in (before,)])
    latest = api.acme("GET", "/api/market/latest").json()
    gone = latest["GONE"]  # the day's no-trade row (tests/api/test_untraded_quote.py); the reason names its last bar
    assert (gone["trading_date"], gone["volume"], gone["score"]) == (DAY.isoformat(), 0, None)
    assert latest["GONE"]["reason"] == (
        f"GONE has no prediction for {DAY.isoformat()}: no price was delivered for it that day (its latest bar is "
        f"of {before.isoformat()}), and the model scores the names priced on the day"
    )
    assert "too little history" in latest["DRY"]["reason"]  # priced on the day, not scored
