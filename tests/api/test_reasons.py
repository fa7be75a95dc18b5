"""The reasons behind a prediction (models/reasons.py) where it is served: REST's latest
quote and symbol statistics, GraphQL's latestPrediction, predictions and latestQuote, and
in the AI portfolio's rationale and a client's suggestion built from it. The world stores
LIQ's prediction with its reasons (tests/api/world.py) and MID's without (as before 0015)."""

from __future__ import annotations

from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import DAY, LIQ_REASONS
from tests.conftest import ADMIN_KEY

# What is served: the stored reasons with each input by its label (written here, not read
# from models/features.py), in the stored order (largest contribution first), signs kept.
LABELS = {"return_1d": "Last day's return", "momentum_5": "Momentum, 5 days", "market_breadth": "Market breadth"}
SERVED = {
    "base_value": LIQ_REASONS["base_value"],
    "inputs": [{"input": LABELS[r["feature"]], "contribution": r["contribution"]} for r in LIQ_REASONS["top"]],
}
REASONS = "reasons { baseValue inputs { input contribution } }"


def _graph(reasons: dict) -> dict:
    return {"baseValue": reasons["base_value"], "inputs": reasons["inputs"]}


def test_rest_serves_the_reasons_of_a_scored_symbol(api: Api) -> None:
    assert [r["feature"] for r in LIQ_REASONS["top"]] == ["return_1d", "momentum_5", "market_breadth"]
    latest = api.acme("GET", "/api/market/latest").json()
    assert latest["LIQ"]["reasons"] == SERVED
    assert latest["MID"]["reasons"] is None and latest["MID"]["score"] == 55.0  # scored, stored without reasons
    assert latest["DRY"]["reasons"] is None  # not scored

    statistics = api.acme("GET", "/api/market/symbol/liq").json()
    assert statistics["prediction_date"] == DAY.isoformat() and statistics["reasons"] == SERVED
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
    assert liq["latestPrediction"] == {"tradingDate": DAY.isoformat(), "reasons": _graph(SERVED)}
    assert liq["predictions"]["nodes"] and all(n["reasons"] == _graph(SERVED) for n in liq["predictions"]["nodes"])
    assert liq["latestQuote"]["reasons"] == _graph(SERVED)
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
