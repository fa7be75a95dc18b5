"""GraphQL over real HTTP: every type reachable, results equal to REST's for the same data,
filters, pagination and mutations with typed failures; on SQLite and Postgres."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from store import tables
from store.history import append_history
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data, gql, snake
from tests.api.world import DAY, HISTORY_DAYS, price_rows
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import CALENDAR
from views.bars import refresh_bars

POSITION = (
    "symbol quantity costBasis averageCost purchaseDate price marketValue unrealizedPnl realizedPnl flags "
    "pendingQuantity pendingUntil stopped"
)
TRADE = "tradeId tradingDate timestamp symbol side quantity price fees value origin rationale"
BAR = (
    "tradingDate open high low close volume bid ask rsi14 bollingerPctB bollingerBandwidth momentum5 momentum20 "
    "volatility20 volumeRatio20 spreadPct"
)
METRIC = "{ value baseRate sampleSize baselines { name value } }"
BENCHMARK = "{ totalReturn annualReturn excessAnnualReturn trackingError informationRatio beta alpha note }"
SPREAD = "{ mean lowest highest }"
FAMILY = f"{{ family books informationRatio {SPREAD} excessAnnualReturn {SPREAD} modelPercentile modelBeats note }}"
NULLS = (
    "{ days modelTotalReturn modelExcessAnnualReturn modelInformationRatio "
    f"families {{ dailyRandom {FAMILY} fixedRandom {FAMILY} size {FAMILY} boughtAndHeld {FAMILY} inverted {FAMILY} }} "
    f"fixedRandomMean {BENCHMARK} note }}"
)
STATISTICS = (
    "days first last totalReturn annualReturn annualVolatility sharpe sortino maxDrawdown calmar annualTurnover "
    "costs { fees spread impact total shareOfEquityPerYear } "
    f"benchmarks {{ equalWeightLiquid {BENCHMARK} index {BENCHMARK} }} "
    f"indexSource trades fillCount averageExposure mostlyCash note reason nulls {NULLS}"
)
# Every field of the track record, the validation and live records' too (theirs have no records: null).
PART = f"{{ {STATISTICS} records {{ live {{ days }} }} }}"
TRACK_RECORD = f"{STATISTICS} records {{ validation {PART} live {PART} }}"
EVERYTHING = (
    """{
  instruments { nodes { __typename symbol name board sector currency listedOn
    latestQuote { __typename close reason }
    latestPrediction { __typename score action weight tercile predictedReturn """
    """probabilityUp layer1Probability layer1Backend }
    liquidity { __typename adv20 passesEntryGates failedGates }
    fundamentals { __typename reportDate eps }
    history(first: 2) { nodes { __typename close } }
    recentBars(first: 2) { nodes { __typename close } }
    predictions { nodes { __typename score } }
    news { nodes { __typename title sentiment } }
    sentiment { nodes { __typename score } } } }
  portfolio { __typename positions { nodes { __typename symbol instrument { symbol } latestPrediction { score } } }
    trades { nodes { __typename tradeId } } suggestions { nodes { __typename suggestionId } } }
  aiPortfolio { __typename positions { nodes { __typename symbol } } trades { nodes { __typename tradeId } }
    days { nodes { __typename tradingDate } } }
  modelPerformance { __typename modelId }
}"""
)
REQUIRED_TYPES = {
    "Instrument",
    "DailyBar",
    "Prediction",
    "Fundamentals",
    "NewsItem",
    "SentimentScore",
    "AIPosition",
    "AITrade",
    "Portfolio",
    "Position",
    "Trade",
    "Suggestion",
    "ModelPerformance",
}


def as_rest(record: dict) -> dict:
    """A GraphQL track record (snake_cased) keyed as REST keys it: a benchmark or record
    that REST has no key for is a null field in GraphQL."""
    out = {**record, "benchmarks": {k: v for k, v in record["benchmarks"].items() if v is not None}}
    if record["records"] is not None:
        out["records"] = {k: as_rest(v) for k, v in record["records"].items() if v is not None}
    return out


def _typenames(value: object) -> set[str]:
    if isinstance(value, dict):
        found = {value["__typename"]} if "__typename" in value else set()
        return found.union(*(_typenames(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_typenames(v) for v in value))
    return set()


def _buy(api: Api, key: str, symbol: str = "LIQ", quantity: int = 100, price: str = "52.00") -> dict:
    result = data(
        api,
        """mutation($order: ManualTradeInput!) { placeTrade(order: $order) {
        __typename ... on TradePlaced { tradeId symbol quantity price cashAfter replayed } """
        """... on UserError { message } } }""",
        key,
        {"order": {"side": "BUY", "symbol": symbol, "quantity": quantity, "price": price, "fees": "0"}},
    )["placeTrade"]
    assert result["__typename"] == "TradePlaced", result
    return result


def test_every_type_is_reachable_and_returned(api: Api) -> None:
    data(api, 'mutation { moveCash(amount: "100000") { __typename } }', ADMIN_KEY)
    _buy(api, ADMIN_KEY)  # the house portfolio gets a position and a trade
    returned = _typenames(data(api, EVERYTHING, ADMIN_KEY))
    returned |= _typenames(data(api, "{ portfolio { suggestions { nodes { __typename } } } }", api.world.acme_key))
    assert REQUIRED_TYPES <= returned, REQUIRED_TYPES - returned
    schema = data(api, "{ __schema { types { name } } }", api.world.acme_key)["__schema"]["types"]
    # returned: test_macro_api
    assert REQUIRED_TYPES | {"MacroIndicator", "MacroInsights"} <= {t["name"] for t in schema}


def test_market_fields_equal_rest(api: Api) -> None:
    key = api.world.acme_key
    rest_latest = api.acme("GET", "/api/market/latest").json()
    graph = data(
        api,
        """{ instruments { nodes { symbol latestQuote { tradingDate close volume haltedSince changePct rsi14
        predictedReturn score action weight tercile modelId layer1Backend heldEdge roundTripCost decisionReason
        reasons { baseValue inputs { input contribution } rawScore otherInputs missingInputs } reason } } } }""",
        key,
    )["instruments"]["nodes"]
    assert {n["symbol"]: snake(n["latestQuote"]) for n in graph} == rest_latest

    rest_page = api.acme("GET", "/api/market/history/LIQ", params={"limit": 25, "start": "2026-09-01"}).json()
    page = data(
        api,
        f"""{{ instrument(symbol: "liq") {{ history(first: 25, start: "2026-09-01") {{
        nodes {{ {BAR} }} pageInfo {{ endCursor hasNextPage }} }} }} }}""",
        key,
    )["instrument"]["history"]
    assert snake(page["nodes"]) == rest_page["items"] and page["pageInfo"]["hasNextPage"]
    rest_next = api.acme(
        "GET",
        "/api/market/history/LIQ",
        params={"limit": 25, "start": "2026-09-01", "cursor": rest_page["next_cursor"]},
    ).json()
    following = data(
        api,
        f"""query($after: String) {{ instrument(symbol: "LIQ") {{
        history(first: 25, start: "2026-09-01", after: $after) {{ nodes {{ {BAR} }} """
        f"""pageInfo {{ hasNextPage }} }} }} }}""",
        key,
        {"after": page["pageInfo"]["endCursor"]},
    )["instrument"]["history"]
    assert snake(following["nodes"]) == rest_next["items"]
    assert following["pageInfo"]["hasNextPage"] == (rest_next["next_cursor"] is not None)

    recent = data(api, f'{{ instrument(symbol: "MID") {{ recentBars(first: 20) {{ nodes {{ {BAR} }} }} }} }}', key)[
        "instrument"
    ]["recentBars"]["nodes"]
    assert len(recent) == 20 and recent[-1]["tradingDate"] == DAY.isoformat()
    rest_recent = api.acme("GET", "/api/market/history/MID", params={"start": recent[0]["tradingDate"]}).json()
    assert snake(recent) == rest_recent["items"]

    prediction = data(
        api,
        '{ instrument(symbol: "LIQ") { latestPrediction { tradingDate score action tercile '
        "predictedReturn layer1Backend modelId heldEdge roundTripCost decisionReason } } }",
        key,
    )["instrument"]["latestPrediction"]
    liq = rest_latest["LIQ"]
    assert (prediction["tradingDate"], prediction["score"], prediction["action"], prediction["tercile"]) == (
        liq["trading_date"],
        liq["score"],
        liq["action"],
        liq["tercile"],
    )
    assert (prediction["predictedReturn"], prediction["layer1Backend"], prediction["modelId"]) == (
        liq["predicted_return"],
        liq["layer1_backend"],
        liq["model_id"],
    )
    assert (prediction["heldEdge"], prediction["roundTripCost"], prediction["decisionReason"]) == (
        liq["held_edge"],
        liq["round_trip_cost"],
        liq["decision_reason"],
    )


def test_portfolio_and_ai_fields_equal_rest(api: Api) -> None:
    key = api.world.acme_key
    _buy(api, key)
    graph = data(
        api,
        f"""{{ portfolio {{ portfolioId asOf cash marketValue equity liquidEquity illiquidDiscounts
        unrealizedPnl realizedPnl positionsCount dividendsReceivable cashWeight
        positions {{ nodes {{ {POSITION} weight }} }}
        trades {{ nodes {{ {TRADE} }} }}
        cashMovements {{ nodes {{ entryId timestamp kind amount balance tradeId note }} }}
        suggestions {{ nodes {{ suggestionId tradingDate symbol side quantity limitPrice fees reason expiresAt """
        f"""state tradeId }} }} }} }}""",
        key,
    )["portfolio"]
    summary = api.acme("GET", "/api/portfolio/summary").json()
    assert {k: v for k, v in snake(graph).items() if k in summary} == {
        k: v for k, v in summary.items() if k not in ("allocation", "flags")
    }
    weights = {a["symbol"]: a["weight"] for a in summary["allocation"]}
    assert graph["cashWeight"] == weights["CASH"]
    positions = api.acme("GET", "/api/portfolio").json()["positions"]
    assert [{k: v for k, v in p.items() if k != "weight"} for p in snake(graph["positions"]["nodes"])] == positions
    assert [p["weight"] for p in graph["positions"]["nodes"]] == [weights[p["symbol"]] for p in positions]
    assert snake(graph["trades"]["nodes"]) == api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert snake(graph["cashMovements"]["nodes"]) == api.acme("GET", "/api/portfolio/cash").json()["items"]
    assert [m["kind"] for m in graph["cashMovements"]["nodes"]][-1:] == ["TRADE"]
    mine = snake(data(api, f"{{ portfolio {{ trackRecord {{ {TRACK_RECORD} }} }} }}", key)["portfolio"]["trackRecord"])
    assert as_rest(mine) == api.acme("GET", "/api/portfolio/track-record").json()
    rest_suggestions = api.acme("GET", "/api/suggestions").json()["items"]
    for mine, theirs in zip(snake(graph["suggestions"]["nodes"]), rest_suggestions, strict=True):
        assert datetime.fromisoformat(mine.pop("expires_at")) == datetime.fromisoformat(theirs.pop("expires_at"))
        assert mine == theirs

    ai = data(
        api,
        f"""{{ aiPortfolio {{ asOf started startingCash totalReturnPct cash marketValue equity liquidEquity
        illiquidDiscounts unrealizedPnl realizedPnl positionsCount dividendsReceivable
        positions {{ nodes {{ {POSITION} direction enteredAs rationale timestamp }} }}
        trades {{ nodes {{ {TRADE} }} }} """
        f"""days {{ nodes {{ tradingDate modelId equity liquidEquity cash summary }} }} }} }}""",
        ADMIN_KEY,
    )["aiPortfolio"]
    rest_ai = api.admin("GET", "/api/ai-portfolio/summary").json()
    assert {k: v for k, v in snake(ai).items() if k in rest_ai} == {
        k: v for k, v in rest_ai.items() if k not in ("allocation", "flags", "portfolio_id")
    }
    assert snake(ai["positions"]["nodes"]) == api.admin("GET", "/api/ai-portfolio/positions").json()
    days = api.admin("GET", "/api/ai-portfolio/history").json()["items"]  # REST nests each day's trades in it
    assert snake(ai["trades"]["nodes"]) == [t for d in days for t in d["trades"]]
    assert snake(ai["days"]["nodes"]) == [{k: v for k, v in d.items() if k != "trades"} for d in days]
    track = data(api, f"{{ aiPortfolio {{ trackRecord {{ {TRACK_RECORD} }} }} }}", key)["aiPortfolio"]["trackRecord"]
    track = snake(track)
    rest_track = api.acme("GET", "/api/ai-portfolio/track-record").json()
    assert rest_track["benchmarks"] and rest_track["records"]  # the comparison below covers both keyed fields
    assert as_rest(track) == rest_track

    record = f"""record label periodStart periodEnd evaluatedThrough predictions models layer1Backend
        binaryAccuracy {METRIC} threeClassAccuracy {METRIC} moversAccuracy {METRIC} averageError {METRIC}
        rankIc {METRIC} tercileSpread {METRIC} reason"""
    performance = snake(
        data(
            api,
            f"""{{ modelPerformance {{ modelId trainedThrough trainingRows horizonDays layer1Backend
        layer1IsFallback validation {{ {record} }} live {{ {record} }} """
            f"""monitor {{ state tradingDate reason latestPredicted unmonitoredDays checks {{ check
        kind state level figure measure watchThreshold alertThreshold worseWhen since note }} }} }} }}""",
            key,
        )["modelPerformance"]
    )
    rest = api.acme("GET", "/api/ai/performance").json()
    for name in ("validation", "live"):
        metrics = rest[name].pop("metrics")
        assert {k: v for k, v in performance[name].items() if k in rest[name]} == rest[name]
        assert {m: performance[name][m] for m in metrics} == {
            m: None if v is None else {**v, "baselines": [{"name": b, "value": x} for b, x in v["baselines"].items()]}
            for m, v in metrics.items()
        }
    assert {k: v for k, v in performance.items() if k not in ("validation", "live")} == {
        k: v for k, v in rest.items() if k not in ("validation", "live")
    }


def test_position_carries_its_latest_prediction_and_instrument(api: Api) -> None:
    _buy(api, api.world.acme_key)
    node = data(
        api,
        "{ portfolio { positions { nodes { symbol instrument { name board } latestPrediction { score action } } } } }",
        api.world.acme_key,
    )["portfolio"]["positions"]["nodes"][0]
    assert node == {
        "symbol": "LIQ",
        "instrument": {"name": "LIQ Holdings Ltd", "board": "MAIN"},
        "latestPrediction": {"score": 72.0, "action": "LONG"},
    }


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_instrument_filters(api: Api) -> None:
    def symbols(arguments: str) -> list[str]:
        query = f"{{ instruments{arguments} {{ nodes {{ symbol }} }} }}"
        return [n["symbol"] for n in data(api, query, api.world.acme_key)["instruments"]["nodes"]]

    assert symbols("") == ["DRY", "LIQ", "MID", "SLOW"]
    assert symbols("(tercile: TOP)") == ["LIQ"]
    assert symbols("(action: AVOID)") == ["SLOW"]
    assert symbols("(tercile: MIDDLE, action: LONG)") == []
    assert symbols("(liquid: true)") == ["LIQ", "MID"]
    assert symbols("(liquid: false)") == ["DRY", "SLOW"]
    assert symbols('(board: "main", liquid: true, action: HOLD)') == ["MID"]
    assert symbols('(board: "JUNIOR")') == [] and symbols('(sector: "Banking")') == []
    response = gql(api, "{ instruments(tercile: BEST) { nodes { symbol } } }", api.world.acme_key)
    assert response.status_code == 200 and "BEST" in response.json()["errors"][0]["message"]


REFUSED_CONNECTIONS = (  # (root, the refused field, a sibling asked beside it, the key)
    ('instrument(symbol: "LIQ")', 'predictions(start: "2026-11-20", end: "2026-11-01")', "symbol", "acme"),
    ('instrument(symbol: "LIQ")', 'history(start: "2026-10-01", end: "2026-09-01")', "symbol", "acme"),
    ('instrument(symbol: "LIQ")', "history(first: 0)", "name", "acme"),
    ('instrument(symbol: "LIQ")', 'news(after: "garbage")', "symbol", "acme"),
    ('instrument(symbol: "LIQ")', "recentBars(first: 0)", "symbol", "acme"),
    ('instrument(symbol: "LIQ")', 'sentiment(after: "garbage")', "symbol", "acme"),
    ("portfolio", "trades(first: -1)", "cash", "acme"),
    ("portfolio", 'cashMovements(after: "garbage")', "cash", "acme"),
    ("portfolio", "positions(first: 0)", "equity", "acme"),
    ("portfolio", "suggestions(first: 0)", "cash", "acme"),
    ("aiPortfolio", "positions(first: 0)", "cash", "admin"),
    ("aiPortfolio", "days(first: 0)", "cash", "admin"),
)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_connection_whose_arguments_are_refused_is_null_alone_and_its_siblings_arrive(api: Api) -> None:
    """A refused argument of a list field (`first` out of bounds, a cursor not issued, start
    after end) nulled the whole parent: `instrument { predictions(start > end) symbol }`
    answered `instrument: null`, and `portfolio { trades(first: -1) cash }` lost the cash.
    Every connection field that takes arguments is nullable, saying so, and the error
    nulls that field alone, its path naming it."""
    keys = {"acme": api.world.acme_key, "admin": ADMIN_KEY}
    for root, field, sibling, key in REFUSED_CONNECTIONS:
        name, alias = root.split("(")[0], field.split("(")[0]
        body = gql(api, f"{{ {root} {{ {sibling} {field} {{ pageInfo {{ endCursor }} }} }} }}", keys[key]).json()
        assert body["data"][name][alias] is None and body["data"][name][sibling] is not None, (field, body)
        assert [(e["path"], e["extensions"]["code"]) for e in body["errors"]] == [([name, alias], "BAD_USER_INPUT")], (
            body
        )
    fields = gql(
        api,
        "{ __schema { types { name fields { name description args { name } type { kind name ofType { name } } } } } }",
        ADMIN_KEY,
    ).json()["data"]["__schema"]["types"]
    refusable = [
        (t["name"], f["name"], f["type"]["kind"], f["description"])
        for t in fields
        if not t["name"].startswith("__")
        for f in t["fields"] or []
        if f["args"] and (f["type"]["name"] or f["type"]["ofType"]["name"] or "").endswith("Connection")
    ]
    assert len(refusable) >= 14, refusable
    for owner, field, kind, description in refusable:
        said = "null with a bad_user_input error" in description.lower()
        assert kind != "NON_NULL" and said, (owner, field, description)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_refused_cursor_on_a_ledger_list_names_graphqls_field_not_rests(api: Api) -> None:
    """The portfolios' ledger lists page as their REST routes do (api/paging.py PageQuery);
    a cursor they refuse told a GraphQL client to pass `next_cursor` unchanged, REST's
    field, where it has pageInfo.endCursor (as instruments and news already said)."""
    lists = (
        ("portfolio", "trades", api.world.acme_key),
        ("portfolio", "cashMovements", api.world.acme_key),
        ("aiPortfolio", "trades", ADMIN_KEY),
        ("aiPortfolio", "days", ADMIN_KEY),
    )
    for root, field, key in lists:
        for cursor in ("garbage!", "x" * 2000):
            query = f'{{ {root} {{ {field}(after: "{cursor}") {{ pageInfo {{ endCursor }} }} }} }}'
            message = gql(api, query, key).json()["errors"][0]["message"]
            assert "pass pageInfo.endCursor unchanged" in message and "next_cursor" not in message, (field, message)
    for path in ("/api/portfolio/trade", "/api/portfolio/cash"):  # REST names its own field
        assert_problem(api.acme("GET", path, params={"cursor": "garbage!"}), 422, "pass next_cursor unchanged")
    refused = api.admin("GET", "/api/ai-portfolio/history", params={"cursor": "garbage!"})
    assert_problem(refused, 422, "pass next_cursor unchanged")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("field", ["history", "predictions", "news", "sentiment"])
def test_an_instrument_list_refuses_another_instrument_s_cursor(api: Api, field: str) -> None:
    """A cursor of LIQ's list pages LIQ's list only: passed to MID's it was read as a
    position in MID's (a date or a timestamp) and paged it silently; it is refused with
    BAD_USER_INPUT naming both, as another list's cursor is, and keeps paging LIQ's."""
    key = api.world.acme_key
    ask = 'query($after: String) {{ instrument(symbol: "{symbol}") {{ %s(first: 1, after: $after) {{ %s }} }} }}'
    liq = data(api, ask.format(symbol="LIQ") % (field, "pageInfo { endCursor }"), key)["instrument"][field]
    cursor = liq["pageInfo"]["endCursor"]
    assert cursor is not None, "the world has a page of LIQ's list"
    body = gql(api, ask.format(symbol="MID") % (field, "nodes { __typename }"), key, {"after": cursor}).json()
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT", body
    assert f"that cursor belongs to LIQ's {field}, not MID's" in body["errors"][0]["message"]
    assert body["data"]["instrument"][field] is None
    again = gql(api, ask.format(symbol="LIQ") % (field, "nodes { __typename }"), key, {"after": cursor}).json()
    assert "errors" not in again, again


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_cursor_pagination(api: Api) -> None:
    key = api.world.acme_key
    query = (
        "query($after: String) { instruments(first: 3, after: $after) { nodes { symbol } "
        "pageInfo { endCursor hasNextPage } } }"
    )
    first = data(api, query, key)["instruments"]
    assert [n["symbol"] for n in first["nodes"]] == ["DRY", "LIQ", "MID"] and first["pageInfo"]["hasNextPage"]
    second = data(api, query, key, {"after": first["pageInfo"]["endCursor"]})["instruments"]
    assert [n["symbol"] for n in second["nodes"]] == ["SLOW"] and not second["pageInfo"]["hasNextPage"]

    news_cursor = data(api, '{ instrument(symbol: "LIQ") { news { pageInfo { endCursor } } } }', key)
    foreign = news_cursor["instrument"]["news"]["pageInfo"]["endCursor"]
    body = gql(api, query, key, {"after": foreign}).json()
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "belongs to news, not instruments" in body["errors"][0]["message"]
    body = gql(api, query, key, {"after": "garbage!"}).json()
    assert "was not issued by this API; pass pageInfo.endCursor unchanged" in body["errors"][0]["message"]
    for cursor in ("%%%", "eyJhIjogMX0="):  # REST names its own field (it said pageInfo.endCursor)
        refused = api.acme("GET", "/api/portfolio/trade", params={"cursor": cursor})
        assert_problem(refused, 422, "was not issued by this API; pass next_cursor unchanged")
    for size in (0, 201):
        body = gql(api, f"{{ instruments(first: {size}) {{ nodes {{ symbol }} }} }}", key).json()
        assert "`first` must be between 1 and 200" in body["errors"][0]["message"]

    two = data(
        api,
        '{ instrument(symbol: "LIQ") { sentiment(first: 1) { nodes { tradingDate } pageInfo { endCursor } } } }',
        key,
    )
    after = two["instrument"]["sentiment"]["pageInfo"]["endCursor"]
    rest = data(
        api,
        'query($a: String) { instrument(symbol: "LIQ") { sentiment(after: $a) { nodes { tradingDate } '
        "pageInfo { hasNextPage } } } }",
        key,
        {"a": after},
    )["instrument"]["sentiment"]
    assert rest["nodes"] == [{"tradingDate": DAY.isoformat()}] and not rest["pageInfo"]["hasNextPage"]

    # predictions read their page (first + 1 after the cursor's day), not the range: LIQ has two days
    paged = 'query($a: String) { instrument(symbol: "LIQ") { predictions(first: 1, after: $a) { nodes { tradingDate } '
    paged += "pageInfo { endCursor hasNextPage } } } }"
    whole = data(api, '{ instrument(symbol: "LIQ") { predictions { nodes { tradingDate } } } }', key)
    walked, after, more = [], None, True
    while more:
        page = data(api, paged, key, {"a": after})["instrument"]["predictions"]
        walked += page["nodes"]
        after, more = page["pageInfo"]["endCursor"], page["pageInfo"]["hasNextPage"]
    assert walked == whole["instrument"]["predictions"]["nodes"] and len(walked) == 2
    assert walked[-1] == {"tradingDate": DAY.isoformat()}


def test_unknown_instrument_is_not_found_and_bad_range_says_why(api: Api) -> None:
    unknown = gql(api, '{ instrument(symbol: "nope") { symbol } }', api.world.acme_key).json()
    assert unknown["data"] == {"instrument": None}
    assert unknown["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert unknown["errors"][0]["message"] == "no instrument 'NOPE' is listed; `instruments` lists the symbols"
    assert api.acme("GET", "/api/market/symbol/NOPE").status_code == 404  # REST says the same
    body = gql(
        api,
        '{ instrument(symbol: "LIQ") { history(start: "2026-11-20", end: "2026-11-01") { nodes { close } } } }',
        api.world.acme_key,
    ).json()
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "start 2026-11-20 is after end 2026-11-01" in body["errors"][0]["message"]


TRADE_MUTATION = (
    """mutation($order: ManualTradeInput!, $key: String) { """
    """placeTrade(order: $order, idempotencyKey: $key) {
    __typename ... on TradePlaced { tradeId replayed cashAfter } ... on UserError { message }
    ... on InvalidInput { fields { field message } } } }"""
)
SUGGESTION_MUTATION = """mutation($id: ID!) { %s(suggestionId: $id) {
    __typename ... on Suggestion { suggestionId state tradeId } ... on UserError { message } } }"""


def test_manual_trade_mutation_and_its_typed_failures(api: Api) -> None:
    key = api.world.acme_key
    order = {"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.00"}
    placed = data(api, TRADE_MUTATION, key, {"order": order, "key": "k-1"})["placeTrade"]
    assert placed["__typename"] == "TradePlaced" and not placed["replayed"]
    assert Decimal(placed["cashAfter"]) == Decimal(api.acme("GET", "/api/portfolio/summary").json()["cash"])
    again = data(api, TRADE_MUTATION, key, {"order": order, "key": "k-1"})["placeTrade"]
    assert again["replayed"] and again["tradeId"] == placed["tradeId"]
    rest_retry = api.acme(
        "POST", "/api/portfolio/trade", json={**order, "side": "buy"}, headers={"Idempotency-Key": "k-1"}
    )
    assert rest_retry.json()["trade_id"] == placed["tradeId"]  # one idempotency store for REST and GraphQL
    assert len(api.acme("GET", "/api/portfolio/trade").json()["items"]) == 1

    conflict = data(api, TRADE_MUTATION, key, {"order": {**order, "quantity": 5}, "key": "k-1"})["placeTrade"]
    assert conflict["__typename"] == "Conflict" and "already used with a different request" in conflict["message"]
    invalid = data(api, TRADE_MUTATION, key, {"order": {**order, "quantity": -3, "side": "HOLD"}})["placeTrade"]
    assert invalid["__typename"] == "InvalidInput"
    assert {f["field"] for f in invalid["fields"]} == {"quantity", "side"}
    band = data(api, TRADE_MUTATION, key, {"order": {**order, "price": "90.00"}})["placeTrade"]
    rest_band = api.acme("POST", "/api/portfolio/trade", json={**order, "price": "90.00"}).json()
    assert band["__typename"] == "InvalidInput" and band["message"] == rest_band["detail"]
    broke = data(api, TRADE_MUTATION, key, {"order": {**order, "quantity": 1_000_000}})["placeTrade"]
    assert broke["__typename"] == "InvalidInput" and "cash" in broke["message"]
    overdraw = data(api, 'mutation { moveCash(amount: "-99999999") { __typename ... on UserError { message } } }', key)
    assert overdraw["moveCash"]["__typename"] == "InvalidInput"
    deposit = data(
        api, 'mutation { moveCash(amount: "100.50", note: "top up") { __typename ... on CashMoved { balance } } }', key
    )
    assert Decimal(deposit["moveCash"]["balance"]) == Decimal(api.acme("GET", "/api/portfolio/summary").json()["cash"])


def test_suggestion_mutations_and_their_typed_failures(api: Api) -> None:
    key, pending = api.world.acme_key, api.world.pending_suggestion
    unknown = data(api, SUGGESTION_MUTATION % "confirmSuggestion", key, {"id": "S-unknown"})["confirmSuggestion"]
    assert unknown["__typename"] == "NotFound"
    long = "S" * 300  # refused as REST's path refuses it, and not echoed back (it was, as NotFound)
    refused = data(api, SUGGESTION_MUTATION % "confirmSuggestion", key, {"id": long})["confirmSuggestion"]
    assert refused["__typename"] == "InvalidInput" and "at most 200 characters" in refused["message"], refused
    assert long not in refused["message"]
    assert api.acme("POST", f"/api/suggestions/{long}/confirm").status_code == 422
    beta = data(api, SUGGESTION_MUTATION % "rejectSuggestion", api.world.beta_key, {"id": pending})["rejectSuggestion"]
    assert beta["__typename"] == "NotFound"  # another client's suggestion is not in the caller's portfolio
    confirmed = data(api, SUGGESTION_MUTATION % "confirmSuggestion", key, {"id": pending})["confirmSuggestion"]
    assert confirmed["__typename"] == "Suggestion" and confirmed["state"] == "CONFIRMED" and confirmed["tradeId"]
    retried = data(api, SUGGESTION_MUTATION % "confirmSuggestion", key, {"id": pending})["confirmSuggestion"]
    assert retried == confirmed  # the first answer was lost: the same trade, booked once
    rest = api.acme("POST", f"/api/suggestions/{pending}/confirm")  # REST's retry answers it too
    assert rest.status_code == 200 and snake({k: v for k, v in confirmed.items() if k != "__typename"}) == {
        k: rest.json()[k] for k in ("suggestion_id", "state", "trade_id")
    }
    assert [t["trade_id"] for t in api.acme("GET", "/api/portfolio/trade").json()["items"]] == [confirmed["tradeId"]]
    twice = data(api, SUGGESTION_MUTATION % "rejectSuggestion", key, {"id": pending})["rejectSuggestion"]
    assert twice["__typename"] == "Conflict" and "CONFIRMED" in twice["message"]
    assert api.acme("GET", "/api/suggestions").json()["items"] == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_unexpected_errors_are_masked(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(conn):
        raise RuntimeError("SELECT secret FROM internals")

    monkeypatch.setattr("desk.market_reads.performance", broken)
    response = gql(
        api, "{ modelPerformance { modelId } instruments(first: 1) { nodes { symbol } } }", api.world.acme_key
    )
    body = response.json()
    assert response.status_code == 200 and "secret" not in response.text
    assert body["errors"][0]["message"].startswith("Unexpected error")
    assert body["errors"][0]["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}  # the service's fault, said in code
    assert body["errors"][0]["path"] == ["modelPerformance"] and response.headers["X-Request-ID"]
    assert body["data"] == {"modelPerformance": None, "instruments": {"nodes": [{"symbol": "DRY"}]}}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_clients_mistake_is_one_log_line_and_the_services_fault_keeps_its_traceback(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 42: each expected user error (unknown field, unknown symbol, bad date,
    FORBIDDEN) was logged as ERROR strawberry.execution with a 20-line traceback."""
    import logging

    caplog.set_level(logging.INFO)
    key = api.world.acme_key
    mistakes = [
        '{ instrument(symbol: "LIQ") { histroy { nodes { close } } } }',
        '{ instrument(symbol: "NOPE") { symbol } }',
        '{ marketBreadth(date: "2026-13-40") { advancers } }',
        "{ aiPortfolio { trades { nodes { tradeId } } } }",
    ]
    for document in mistakes:
        assert gql(api, document, key).json()["errors"], document
    mine = [r for r in caplog.records if r.name.startswith(("strawberry", "api."))]
    assert mine and all(r.levelno == logging.INFO and r.exc_info is None for r in mine), [
        (r.name, r.levelname, r.getMessage()) for r in mine
    ]
    assert all("\n" not in r.getMessage() for r in mine)
    caplog.clear()

    def broken(conn):
        raise RuntimeError("SELECT secret FROM internals")

    monkeypatch.setattr("desk.market_reads.performance", broken)
    gql(api, "{ modelPerformance { modelId } }", key)
    faults = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(faults) == 1 and faults[0].exc_info is not None, [(r.name, r.getMessage()) for r in caplog.records]


def test_committed_sdl_is_current() -> None:
    """api/graphql/schema.graphql is the schema reviewers and client generators read."""
    from pathlib import Path

    from api.graphql.schema import build_schema
    from market.settings import Settings

    committed = (Path(__file__).parents[2] / "api" / "graphql" / "schema.graphql").read_text()
    assert build_schema(Settings()).as_str() + "\n" == committed, (
        "the schema changed: run `python -m api.graphql.schema > api/graphql/schema.graphql`"
    )


@pytest.mark.parametrize("page", ["README.md", "docs/api.md"])
def test_documented_example_queries_are_valid(page: str) -> None:
    """The GraphQL examples of the README and docs/api.md parse and validate against the
    schema (tests/docs/test_examples.py also runs them against a demo store)."""
    from pathlib import Path

    from graphql import parse, validate

    from api.graphql.schema import build_schema
    from market.settings import Settings

    text = (Path(__file__).parents[2] / page).read_text()
    blocks = [b.split("```")[0] for b in text.split("```graphql")[1:]]
    assert blocks, f"{page} has no GraphQL examples"
    schema = build_schema(Settings())._schema
    for block in blocks:
        assert validate(schema, parse(block)) == [], block


def test_market_breadth_and_the_days_analysis_equal_rest(api: Api) -> None:
    from pipeline.runner import run_stage

    key = api.world.acme_key
    fields = (
        "tradingDate instruments traded advancers decliners unchanged notTraded indexChangePct indexMarketCap "
        "indexConstituents indexExcluded"
    )
    breadth = data(api, f"{{ marketBreadth {{ {fields} }} }}", key)["marketBreadth"]
    assert snake(breadth) == api.acme("GET", "/api/market/breadth").json()
    dated = data(api, f'{{ marketBreadth(date: "{DAY.isoformat()}") {{ advancers }} }}', key)["marketBreadth"]
    assert dated["advancers"] == breadth["advancers"]

    missing = gql(api, "{ analysis { body } }", key).json()
    assert missing["data"]["analysis"] is None and missing["errors"][0]["extensions"]["code"] == "NOT_READY"
    run_stage("t1_analysis", DAY, settings=api.world.settings)
    analysis = data(
        api,
        """{ analysis { tradingDate writer fallbackReason body facts writtenAt
        notifications { notificationId kind severity title delivered } } }""",
        key,
    )["analysis"]
    assert snake(analysis) == api.acme("GET", "/api/analysis").json()


def test_rest_and_graphql_serve_a_day_from_the_same_record(api: Api) -> None:
    """A day before the first live day is served from the validation record by REST's
    /api/market/latest?date= and by GraphQL's predictions alike, each saying which record;
    a live day from the live record only, whatever the validation record holds for it."""
    from store import tables
    from tests.portfolio.seed import CALENDAR, seed_predictions

    first_live = CALENDAR.previous_trading_day(DAY)  # the world's live record: that day and DAY
    before = CALENDAR.previous_trading_day(first_live)
    walk = {"LIQ": {"score": 61.5, "action": "LONG", "tercile": "TOP", "weight": 0.2}}
    for day in (before, first_live):  # the record ends where the live one begins, and past it
        seed_predictions(api.world.engine, day, walk, model_id="wf-test-h1", table=tables.validation_predictions)
    rest = api.acme("GET", "/api/market/latest", params={"date": before.isoformat()}).json()["LIQ"]
    assert rest["score"] == 61.5 and rest["model_id"] == "wf-test-h1" and "validation record" in rest["reason"]
    nodes = data(
        api,
        f'{{ instrument(symbol: "LIQ") {{ predictions(start: "{before.isoformat()}") '
        "{ nodes { tradingDate score modelId record } } } }",
        api.world.acme_key,
    )["instrument"]["predictions"]["nodes"]
    assert nodes == [
        {"tradingDate": before.isoformat(), "score": 61.5, "modelId": "wf-test-h1", "record": "validation"},
        {"tradingDate": first_live.isoformat(), "score": 72.0, "modelId": "test-model", "record": "live"},
        {"tradingDate": DAY.isoformat(), "score": 72.0, "modelId": "test-model", "record": "live"},
    ]


def test_a_name_that_stopped_trading_shows_the_day_its_liquidity_figures_are_as_of(api: Api) -> None:
    """SLOW stops trading after DAY while LIQ trades on for 15 sessions: SLOW's ADV_20 and
    spread are read from its last rows, weeks old, and were shown dated the latest market
    day as if they were today's. `asOf` names the session they are read through: DAY for
    SLOW (its ADV_20 what it was on DAY, its volume today 0), the latest day for LIQ."""
    query = '{ instrument(symbol: "%s") { liquidity { tradingDate asOf adv20 volume spread failedGates } } }'
    before = data(api, query % "SLOW", api.world.acme_key)["instrument"]["liquidity"]
    assert before["asOf"] == before["tradingDate"] == DAY.isoformat()
    later = [CALENDAR.add_trading_days(DAY, i) for i in range(1, 16)]
    with api.world.engine.begin() as conn:
        append_history(conn, tables.eod_prices, [r for r in price_rows(later, HISTORY_DAYS) if r["symbol"] == "LIQ"])
        refresh_bars(conn)
    liq, slow = (data(api, query % s, api.world.acme_key)["instrument"]["liquidity"] for s in ("LIQ", "SLOW"))
    assert liq["asOf"] == liq["tradingDate"] == later[-1].isoformat()
    assert slow["tradingDate"] == later[-1].isoformat()
    assert slow["asOf"] == DAY.isoformat()
    assert (slow["adv20"], slow["volume"]) == (before["adv20"], 0)  # ADV_20 through DAY; nothing traded today
    assert "volume_today" in slow["failedGates"]
