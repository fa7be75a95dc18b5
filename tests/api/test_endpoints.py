"""Every endpoint's success body over real HTTP, on SQLite and Postgres."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from api import paging
from models.features import rsi_14
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data
from tests.api.world import DAY, HISTORY_DAYS, HOLD_REASON, SYMBOLS, close_of
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import CALENDAR


def test_market_latest_keys_every_ticker_with_prediction_or_reason(api: Api) -> None:
    response = api.acme("GET", "/api/market/latest")
    assert response.status_code == 200
    body = response.json()
    assert sorted(body) == sorted(SYMBOLS)
    liq = body["LIQ"]
    expected_change = (close_of("LIQ", HISTORY_DAYS - 1) / close_of("LIQ", HISTORY_DAYS - 2) - 1) * 100
    assert liq["trading_date"] == DAY.isoformat() and liq["close"] == close_of("LIQ", HISTORY_DAYS - 1)
    assert liq["change_pct"] == round(expected_change, 2)  # percent, two decimals (docs/api.md)
    assert (liq["score"], liq["action"], liq["tercile"], liq["predicted_return"]) == (72.0, "LONG", "TOP", 0.012)
    assert liq["reason"] is None and liq["layer1_backend"] == "fallback-empirical-v1"
    import pandas as pd

    closes = pd.DataFrame({"close": [close_of("LIQ", i) for i in range(HISTORY_DAYS)]})
    assert liq["rsi_14"] == pytest.approx(float(rsi_14(closes).iloc[-1]), abs=1e-4)
    dry = body["DRY"]
    assert dry["score"] is None and dry["action"] is None and "no prediction" in dry["reason"]
    assert dry["volume"] == 0


def test_market_latest_rows_carry_the_position_weight_graphql_serves(api: Api) -> None:
    """Issue 64: the Position Weight is a prediction output (Score, Action, Position Weight,
    Ranking Tercile); GraphQL's latestPrediction had it, the REST rows did not."""
    body = api.acme("GET", "/api/market/latest").json()
    graph = data(api, "{ instruments { nodes { symbol latestPrediction { weight } } } }", api.world.acme_key)
    served = {n["symbol"]: (n["latestPrediction"] or {}).get("weight") for n in graph["instruments"]["nodes"]}
    assert (body["LIQ"]["weight"], body["MID"]["weight"], body["DRY"]["weight"]) == (0.2, 0.0, None)
    assert {symbol: row["weight"] for symbol, row in body.items()} == served


def test_market_latest_for_a_day_not_delivered_is_503(api: Api) -> None:
    assert_problem(api.acme("GET", "/api/market/latest", params={"date": "2026-11-23"}), 422, "has not closed yet")
    api.clock.moment = datetime(2026, 11, 23, 21, 5, tzinfo=UTC)  # 16:05 exchange time: closed, T0 not done
    assert_problem(api.acme("GET", "/api/market/latest", params={"date": "2026-11-23"}), 503, "not delivered yet")
    assert_problem(api.acme("GET", "/api/market/latest", params={"date": "2026-11-21"}), 422, "not a trading day")
    assert_problem(
        api.acme("GET", "/api/market/latest", params={"date": "2025-01-06"}), 404, "no prices for 2025-01-06"
    )
    assert api.acme("GET", "/api/market/latest", params={"date": DAY.isoformat()}).status_code == 200


def test_symbol_statistics_variance_and_zscores(api: Api) -> None:
    body = api.acme("GET", "/api/market/symbol/liq").json()
    import numpy as np

    closes = np.array([close_of("LIQ", i) for i in range(HISTORY_DAYS)])
    log_returns = np.diff(np.log(closes))
    assert body["symbol"] == "LIQ" and body["as_of"] == DAY.isoformat() and body["observations"] == HISTORY_DAYS
    assert body["variance"]["20d"]["variance"] == pytest.approx(np.var(log_returns[-20:], ddof=1), rel=1e-4)
    twenty = body["variance"]["20d"]  # annualised on the sessions a year every figure counts (market.clock)
    assert twenty["annualised_volatility"] == pytest.approx(np.sqrt(twenty["variance"] * 250), rel=1e-5)
    assert body["variance"]["60d"]["variance"] is None  # 59 returns: shorter than the window
    assert (twenty["observations"], twenty["traded_returns"]) == (20, 20)
    returns = closes[1:] / closes[:-1] - 1
    z = body["normalised"]["return_1d"]
    assert z["z"] == pytest.approx((returns[-1] - returns[:-1].mean()) / returns[:-1].std(ddof=1), abs=1e-3)
    # issue 42: `_pct` is percent everywhere; the day's range was a fraction here (0.02 for 2%)
    last = closes[-1]
    day_range = body["normalised"]["day_range_pct"]
    assert day_range["value"] == pytest.approx(100 * (round(last * 1.01, 2) - round(last * 0.99, 2)) / last, abs=0.01)
    assert_problem(api.acme("GET", "/api/market/symbol/NOPE"), 404, "no instrument 'NOPE'")


def test_a_name_without_trades_reads_no_volatility_not_zero(api: Api) -> None:
    """DRY has closes but no trade in its history: no return was observed, so no window
    has a variance (0 would read as the calmest name of the market)."""
    variance = api.acme("GET", "/api/market/symbol/DRY").json()["variance"]
    assert variance["20d"] == {"variance": None, "annualised_volatility": None, "observations": 20, "traded_returns": 0}


def test_history_pages_with_a_cursor_and_indicators(api: Api) -> None:
    # By default the newest bars, oldest first inside the page; the cursor leads backward.
    first = api.acme("GET", "/api/market/history/LIQ", params={"limit": 25}).json()
    assert len(first["items"]) == 25 and first["items"][-1]["trading_date"] == DAY.isoformat()
    assert first["next_cursor"] == paging.OLDER_HISTORY.on("LIQ").cursor(first["items"][0]["trading_date"])
    pages = [first["items"]]
    cursor = first["next_cursor"]
    while cursor:
        page = api.acme("GET", "/api/market/history/LIQ", params={"limit": 25, "cursor": cursor}).json()
        pages.insert(0, page["items"])
        cursor = page["next_cursor"]
    seen = [bar for page in pages for bar in page]
    assert [b["close"] for b in seen] == [close_of("LIQ", i) for i in range(HISTORY_DAYS)]
    dates = [b["trading_date"] for b in seen]
    assert dates == sorted(dates) and len(set(dates)) == HISTORY_DAYS
    whole = api.acme("GET", "/api/market/history/LIQ", params={"limit": 2000}).json()["items"]
    assert [b["rsi_14"] for b in seen] == [b["rsi_14"] for b in whole]  # stored once: pages agree
    # With `start` pages run forward from it, the cursor leading to newer bars.
    forward, cursor = [], None
    while True:
        params = {"limit": 25, "start": "1900-01-01", **({"cursor": cursor} if cursor else {})}
        page = api.acme("GET", "/api/market/history/LIQ", params=params).json()
        forward += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert cursor == paging.HISTORY.on("LIQ").cursor(page["items"][-1]["trading_date"])
    assert forward == whole
    # A short page of the newest bars has every indicator warmed up (LIQ has 60 days).
    short = api.acme("GET", "/api/market/history/LIQ", params={"limit": 5}).json()["items"]
    assert short == whole[-5:] and all(value is not None for bar in short for value in bar.values())
    window = api.acme("GET", "/api/market/history/LIQ", params={"start": "2026-11-16", "end": "2026-11-19"}).json()
    assert [b["trading_date"] for b in window["items"]] == ["2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19"]
    assert window["items"][-1]["rsi_14"] == whole[-2]["rsi_14"]
    assert_problem(api.acme("GET", "/api/market/history/LIQ", params={"cursor": "garbage"}), 422, "cursor")
    assert_problem(api.acme("GET", "/api/market/history/LIQ", params={"cursor": "before:garbage"}), 422, "cursor")
    assert_problem(api.acme("GET", "/api/market/history/LIQ", params={"start": "2026-11-20", "end": "2026-11-01"}), 422)


def test_a_trade_preview_prices_the_order_with_the_cost_model(api: Api) -> None:
    liq = api.acme("GET", "/api/market/latest").json()["LIQ"]
    buy = api.acme(
        "GET", "/api/portfolio/trade/preview", params={"side": "buy", "symbol": "liq", "quantity": 1000}
    ).json()
    ask = Decimal(str(liq["close"])) + Decimal("0.05")  # the world's half-spread
    assert buy["touch"] == f"{ask:.2f}" and buy["touch_source"] == "quotes" and Decimal(buy["price"]) > ask
    assert Decimal(buy["total_cost"]) == pytest.approx(
        Decimal(buy["spread_cost"]) + Decimal(buy["impact_cost"]) + Decimal(buy["fees"]), abs=Decimal("0.02")
    )
    sell = api.acme(
        "GET", "/api/portfolio/trade/preview", params={"side": "sell", "symbol": "LIQ", "quantity": 1000}
    ).json()
    assert Decimal(sell["price"]) < Decimal(str(liq["close"])) - Decimal("0.05")
    huge = api.acme(
        "GET", "/api/portfolio/trade/preview", params={"side": "buy", "symbol": "LIQ", "quantity": 10**9}
    ).json()
    assert huge["fillable_in_one_session"] < 10**9 and "25%" in huge["lapse_reason"]
    assert_problem(
        api.acme("GET", "/api/portfolio/trade/preview", params={"side": "buy", "symbol": "NOPE", "quantity": 1}),
        404,
        "NOPE",
    )
    assert_problem(
        api.acme("GET", "/api/portfolio/trade/preview", params={"side": "buy", "symbol": "LIQ", "quantity": 0}), 422
    )
    # the preview's bound is the trade's (an adversarial run: 10^12 shares were priced, a trade caps at 10^9)
    too_many = {"side": "buy", "symbol": "LIQ", "quantity": 10**9 + 1}
    assert_problem(api.acme("GET", "/api/portfolio/trade/preview", params=too_many), 422)
    order = {**too_many, "price": "52.00"}
    assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_quantity_follows_one_rule_in_a_query_string_and_a_body(api: Api) -> None:
    """The digits of a whole number and nothing else: "1000.0" in a query string is refused
    as 1000.0 is in a JSON body (market.money.parse_quantity)."""
    preview = {"side": "buy", "symbol": "LIQ"}
    for text in ("1000.0", "1e3", "+1000", " 1000", "1_000", "0x10"):
        refused = api.acme("GET", "/api/portfolio/trade/preview", params={**preview, "quantity": text})
        assert_problem(refused, 422, "whole number of shares")
    body = {"side": "buy", "symbol": "LIQ", "quantity": 1000.0, "price": "52.00"}
    assert_problem(api.acme("POST", "/api/portfolio/trade", json=body), 422, "whole number of shares")
    assert api.acme("GET", "/api/portfolio/trade/preview", params={**preview, "quantity": "1000"}).status_code == 200


def test_a_score_at_the_long_line_that_is_not_long_says_why(api: Api) -> None:
    mid = api.acme("GET", "/api/market/latest").json()["MID"]
    assert (mid["score"], mid["action"]) == (55.0, "HOLD")
    assert (mid["held_edge"], mid["round_trip_cost"], mid["decision_reason"]) == (0.002, 0.014, HOLD_REASON)


def test_ai_portfolio_positions_summary_and_history(api: Api) -> None:
    (position,) = api.acme("GET", "/api/ai-portfolio/positions").json()
    assert position["symbol"] == "LIQ" and position["direction"] == "LONG"
    assert position["entered_as"] == "slot" == position["rationale"]["entry"]  # the book's first name: a slot
    assert position["timestamp"] == "2026-11-20T16:00:00"  # exchange time, no offset
    assert position["rationale"]["tercile"] == "TOP" and position["rationale"]["gates"]["passed"] is True
    assert position["quantity"] > 0 and Decimal(position["cost_basis"]) > 0
    summary = api.acme("GET", "/api/ai-portfolio/summary").json()
    assert summary["started"] is True and summary["positions_count"] == 1
    assert Decimal(summary["equity"]) == Decimal(summary["cash"]) + Decimal(summary["market_value"])
    assert [a["symbol"] for a in summary["allocation"]] == ["LIQ", "CASH"]
    assert sum(a["weight"] for a in summary["allocation"]) == pytest.approx(1.0, abs=1e-5)
    history = api.admin("GET", "/api/ai-portfolio/history").json()
    decided_on = CALENDAR.previous_trading_day(DAY).isoformat()
    assert [d["trading_date"] for d in history["items"]] == [decided_on, DAY.isoformat()]
    assert history["next_cursor"] is None and history["items"][0]["trades"] == []
    (trade,) = history["items"][1]["trades"]  # each day holds the trades executed on it
    assert (trade["symbol"], trade["side"], trade["origin"], trade["quantity"]) == (
        "LIQ",
        "BUY",
        "AI",
        position["quantity"],
    )
    assert trade["trading_date"] == DAY.isoformat() and trade["rationale"]["decided_on"] == decided_on
    costs = trade["rationale"]["fill"]["costs"]
    assert Decimal(costs["total"]) == Decimal(costs["spread"]) + Decimal(costs["impact"]) + Decimal(costs["fees"])
    assert Decimal(trade["fees"]) == Decimal(costs["fees"]).quantize(Decimal("0.01"))
    record = api.acme("GET", "/api/ai-portfolio/track-record").json()
    assert record["days"] == 2 and record["trades"] == 1
    assert list(record["records"]) == ["live"] and record["records"]["live"]["trades"] == 1  # no validation replay here
    assert Decimal(record["costs"]["total"]) == pytest.approx(Decimal(costs["total"]), abs=Decimal("0.01"))
    assert set(record["benchmarks"]["equal_weight_liquid"]) >= {"information_ratio", "tracking_error", "beta", "alpha"}


def test_ai_performance_says_why_each_record_is_empty(api: Api) -> None:
    body = api.acme("GET", "/api/ai/performance").json()
    assert body["model_id"] is None
    assert body["live"]["record"] == "live" and "no model" in body["live"]["reason"]
    assert body["validation"]["record"] == "validation" and "marketintel bootstrap" in body["validation"]["reason"]
    for record in (body["live"], body["validation"]):
        assert set(record["metrics"]) == {
            "binary_accuracy",
            "three_class_accuracy",
            "movers_accuracy",
            "average_error",
            "rank_ic",
            "tercile_spread",
        }
        assert record["predictions"] == 0 and record["evaluated_through"] is None


def test_a_retried_cash_movement_books_once(api: Api) -> None:
    """A deposit or withdrawal retried with its Idempotency-Key (an answer lost on the way)
    gets the first balance back and moves the cash once, over REST and GraphQL alike (one
    store); the same key with another movement is a conflict that books nothing."""
    keyed = {"Idempotency-Key": "cash-1"}
    first = api.acme("POST", "/api/portfolio/cash", json={"amount": "-1.00", "note": "fee"}, headers=keyed)
    assert first.status_code == 201, first.text
    again = api.acme("POST", "/api/portfolio/cash", json={"amount": "-1.0", "note": "fee"}, headers=keyed)
    assert again.status_code == 201 and again.json() == first.json()
    moved = data(
        api,
        'mutation { moveCash(amount: "-1.00", note: "fee", idempotencyKey: "cash-1") '
        "{ __typename ... on CashMoved { balance } } }",
        api.world.acme_key,
    )["moveCash"]
    assert moved == {"__typename": "CashMoved", "balance": first.json()["balance"]}
    assert_problem(
        api.acme("POST", "/api/portfolio/cash", json={"amount": "-2.00", "note": "fee"}, headers=keyed),
        409,
        "different request",
    )
    conflict = data(
        api,
        'mutation { moveCash(amount: "5", idempotencyKey: "cash-1") { __typename ... on UserError { message } } }',
        api.world.acme_key,
    )["moveCash"]
    assert conflict["__typename"] == "Conflict"
    movements = api.acme("GET", "/api/portfolio/cash").json()["items"]
    assert [(m["kind"], m["amount"]) for m in movements if m["kind"] == "WITHDRAWAL"] == [("WITHDRAWAL", "-1.00")]
    assert Decimal(api.acme("GET", "/api/portfolio/summary").json()["cash"]) == Decimal(first.json()["balance"])
    # another client's same key is its own
    other = api.call("POST", "/api/portfolio/cash", api.world.beta_key, json={"amount": "3.00"}, headers=keyed)
    assert other.status_code == 201 and other.json()["portfolio_id"] != first.json()["portfolio_id"]


def test_portfolio_trade_cash_and_summary(api: Api) -> None:
    order = {"side": "buy", "symbol": "LIQ", "quantity": 100, "price": "52.00", "fees": "0"}  # no broker fee
    first = api.acme("POST", "/api/portfolio/trade", json=order, headers={"Idempotency-Key": "order-1"})
    assert first.status_code == 201, first.text
    assert first.json()["replayed"] is False and first.json()["trading_date"] == "2026-11-23"
    again = api.acme("POST", "/api/portfolio/trade", json=order, headers={"Idempotency-Key": "order-1"})
    assert again.status_code == 201 and again.json()["replayed"] is True
    assert again.json()["trade_id"] == first.json()["trade_id"]
    assert_problem(
        api.acme("POST", "/api/portfolio/trade", json={**order, "quantity": 5}, headers={"Idempotency-Key": "order-1"}),
        409,
        "different request",
    )
    assert_problem(
        api.acme("POST", "/api/portfolio/trade", json={**order, "price": "80.00"}), 422, "outside the day's band"
    )
    assert_problem(
        api.acme("POST", "/api/portfolio/trade", json={**order, "side": "sell", "quantity": 500}), 422, "holds 100"
    )
    (trade,) = api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert (trade["symbol"], trade["side"], trade["quantity"], Decimal(trade["price"])) == (
        "LIQ",
        "BUY",
        100,
        Decimal("52"),
    )
    assert trade["timestamp"] == "2026-11-23T07:30:00"
    positions = api.acme("GET", "/api/portfolio").json()
    (held,) = positions["positions"]
    assert held["quantity"] == 100 and Decimal(positions["cash"]) == Decimal("200000") - Decimal("5200")
    withdrawal = api.acme("POST", "/api/portfolio/cash", json={"amount": "-1000000"})
    assert assert_problem(withdrawal, 422, "would leave cash at")["type"].endswith("/problems/invalid-input")
    deposit = api.acme("POST", "/api/portfolio/cash", json={"amount": "1000.50", "note": "top-up"})
    assert deposit.status_code == 201 and Decimal(deposit.json()["balance"]) == Decimal("195800.50")
    summary = api.acme("GET", "/api/portfolio/summary").json()
    assert Decimal(summary["cash"]) == Decimal("195800.50") and summary["positions_count"] == 1
    movements = api.acme("GET", "/api/portfolio/cash").json()["items"]
    assert [(m["kind"], Decimal(m["amount"]), m["trade_id"]) for m in movements[-2:]] == [
        ("TRADE", Decimal("-5200"), trade["trade_id"]),
        ("DEPOSIT", Decimal("1000.50"), None),
    ]
    assert movements[-1]["note"] == "top-up" and Decimal(movements[-1]["balance"]) == Decimal("195800.50")
    assert sum(Decimal(m["amount"]) for m in movements) == Decimal("195800.50")
    # another client sees none of it
    assert api.call("GET", "/api/portfolio/trade", api.world.beta_key).json()["items"] == []
    assert api.call("GET", "/api/portfolio/cash", api.world.beta_key).json()["items"] == []


def test_suggestions_confirm_reject_and_isolation(api: Api) -> None:
    sid = api.world.pending_suggestion
    (listed,) = api.acme("GET", "/api/suggestions").json()["items"]
    assert listed["suggestion_id"] == sid and listed["state"] == "PENDING" and listed["side"] == "BUY"
    assert api.call("GET", "/api/suggestions", api.world.beta_key).json()["items"] == []
    assert_problem(api.call("POST", f"/api/suggestions/{sid}/confirm", api.world.beta_key), 404, "no suggestion")
    assert_problem(api.admin("POST", f"/api/suggestions/{sid}/reject"), 404)  # not in the house portfolio either
    confirmed = api.acme("POST", f"/api/suggestions/{sid}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "CONFIRMED" and confirmed.json()["trade_id"]
    retried = api.acme("POST", f"/api/suggestions/{sid}/confirm")  # the first answer was lost: the same trade
    assert retried.status_code == 200 and retried.json() == confirmed.json()
    assert_problem(api.acme("POST", f"/api/suggestions/{sid}/reject"), 409, "CONFIRMED")
    assert api.acme("GET", "/api/suggestions").json()["items"] == []
    (trade,) = api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert trade["origin"] == "SUGGESTION" and trade["quantity"] == listed["quantity"]


def test_admin_key_acts_on_the_house_portfolio(api: Api) -> None:
    api.admin("POST", "/api/portfolio/cash", json={"amount": "5000"})
    assert api.admin("GET", "/api/portfolio").json()["portfolio_id"] == "HOUSE"
    assert Decimal(api.admin("GET", "/api/portfolio").json()["cash"]) == Decimal("5000")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_statement_and_research_uploads(api: Api) -> None:
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement

    with api.world.engine.connect() as conn:
        pdf = sample_holdings_statement(market_days(conn, DAY), DAY)
    files = {"file": ("statement.pdf", pdf, "application/pdf")}
    before = api.acme("GET", "/api/portfolio").json()
    preview = api.acme("POST", "/api/portfolio/upload-pdf", files=files, params={"preview": "true"})
    assert preview.status_code == 200 and preview.json()["status"] == "PREVIEW" and preview.json()["changes"], (
        preview.text
    )
    assert api.acme("GET", "/api/portfolio").json() == before  # the preview changed nothing
    # a token no preview of this file issued is named as such (it said "the book changed since the preview")
    bogus = api.acme("POST", "/api/portfolio/upload-pdf", files=files, params={"confirm": "0" * 32})
    assert_problem(bogus, 422, "the confirm token '" + "0" * 32 + "' is not one a preview of this file issued")
    stale = preview.json()["confirm_token"][:8] + "0" * 24  # this file's, of a book it no longer matches
    assert_problem(
        api.acme("POST", "/api/portfolio/upload-pdf", files=files, params={"confirm": stale}),
        409,
        "the book changed since the preview",
    )
    synced = api.acme(
        "POST", "/api/portfolio/upload-pdf", files=files, params={"confirm": preview.json()["confirm_token"]}
    )
    assert synced.status_code == 200, synced.text
    assert synced.json()["status"] == "SYNCED" and synced.json()["changes"] == preview.json()["changes"]
    assert api.acme("POST", "/api/portfolio/upload-pdf", files=files).json()["status"] == "ALREADY_IMPORTED"
    positions = {p["symbol"]: p["quantity"] for p in api.acme("GET", "/api/portfolio").json()["positions"]}
    assert positions  # the statement's holdings are now the portfolio's
    note = b"LIQ Holdings reported record profit and strong growth; analysts upgrade the outlook."
    research = api.acme("POST", "/api/portfolio/upload-research", files={"file": ("note.txt", note, "text/plain")})
    assert research.status_code == 200, research.text
    body = research.json()
    assert [i["symbol"] for i in body["instruments"]] == ["LIQ"] and body["sentiment"]["score"] > 0
    assert body["already_stored"] is False
    assert_problem(
        api.acme("POST", "/api/portfolio/upload-pdf", files={"file": ("x.png", b"\x89PNG....", "image/png")}),
        415,
        "not a PDF",
    )
    assert_problem(
        api.acme("POST", "/api/portfolio/upload-research", files={"file": ("x.png", b"\x89PNG", "image/png")}), 415
    )
    assert_problem(
        api.acme("POST", "/api/portfolio/upload-pdf", json={"file": "statement"}), 415, "multipart/form-data"
    )


def test_keys_generate_list_never_show_secrets(api: Api) -> None:
    created = api.admin("POST", "/api/keys/generate", json={"client_name": "Gamma Partners", "tier": "INSTITUTIONAL"})
    assert created.status_code == 201
    body = created.json()
    assert body["api_key"].startswith("svc-sk-") and len(body["api_key"]) == len("svc-sk-") + 40
    assert (body["client_name"], body["tier"]) == ("Gamma Partners", "INSTITUTIONAL") and body["created_at"]
    assert api.call("GET", "/api/portfolio", body["api_key"]).status_code == 200
    listing = api.admin("GET", "/api/keys")
    assert body["api_key"] not in listing.text and "svc-sk-" not in listing.text
    mine = next(k for k in listing.json()["items"] if k["key_id"] == body["key_id"])
    assert mine["status"] == "ACTIVE" and mine["tier"] == "INSTITUTIONAL" and mine["client_name"] == "Gamma Partners"
    assert ADMIN_KEY not in listing.text
