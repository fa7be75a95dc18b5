"""A record that crosses the API has one declaration. Where the domain declares it as a
dataclass (a track record, a placed trade, a suggestion, a position, a served prediction),
REST's Pydantic schema and GraphQL's Strawberry type are derived from it
(api/schemas/derived.py, api/graphql/types/derived.py; docs/architecture.md, "Declared
once"): a dataclass given one more field shows it in the OpenAPI document and in the SDL,
with its type and its description. The records still declared on each side keep the same
fields, apart from the differences written here on purpose."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from datetime import date
from decimal import Decimal

import pytest

from api.graphql.types import (
    ai_day,
    ai_portfolio,
    ai_position,
    ai_trade,
    cash_movement,
    daily_bar,
    day_analysis,
    macro_indicator,
    macro_insights,
    market_breadth,
    model_performance,
    portfolio,
    position,
    prediction,
    quote,
    suggestion,
    track_record,
    trade,
    trade_placed,
)
from api.schemas import analysis as s_analysis
from api.schemas import macro as s_macro
from api.schemas import market as s_market
from api.schemas import portfolio as s_portfolio
from api.services import json_body
from market.contract import described, description
from market.money import Fraction, Money
from models.scoring import ServedPrediction
from portfolio import track_record as statistics
from portfolio.trading import PlacedTrade
from tests.api.conftest import Api
from views.market import QUOTED, quoted
from views.valuation import PortfolioValuation, PositionValue

RELATIONS = {"instrument", "latest_prediction"}  # GraphQL resolves the instrument and its prediction on demand
PAIRS = [
    (ai_day.AIDay, s_portfolio.AIDay, set(), {"trades"}),  # GraphQL: aiPortfolio { trades }, a list of its own
    (ai_trade.AITrade, s_portfolio.Trade, set(), set()),
    (trade.Trade, s_portfolio.Trade, set(), set()),
    (cash_movement.CashMovement, s_portfolio.CashEntry, set(), set()),
    (trade_placed.TradePlaced, s_portfolio.TradeOut, set(), set()),
    (daily_bar.DailyBar, s_market.Bar, set(), set()),
    (quote.Quote, s_market.LatestQuote, set(), set()),
    (market_breadth.MarketBreadth, s_market.Breadth, set(), set()),
    (day_analysis.AnalysisNotification, s_analysis.NotificationSummary, set(), set()),
    (day_analysis.DayAnalysis, s_analysis.DayAnalysis, set(), set()),
    (macro_indicator.FxRate, s_macro.FxRate, set(), set()),
    (macro_indicator.OriginalValue, s_macro.Original, set(), set()),
    # a GraphQL indicator carries its data generation; REST says it once per response
    (macro_indicator.MacroIndicator, s_macro.MacroIndicator, {"generation"}, set()),
    (macro_insights.MacroParameter, s_macro.MacroParameter, set(), set()),
    (macro_insights.MacroSource, s_macro.MacroSource, set(), set()),
    (macro_insights.MacroInsights, s_macro.MacroInsights, set(), set()),
    (model_performance.Metric, s_portfolio.Metric, set(), set()),
    (model_performance.ModelPerformance, s_portfolio.Performance, set(), set()),
    (model_performance.ModelMonitor, s_portfolio.ModelMonitor, set(), set()),
    (model_performance.MonitorCheck, s_portfolio.MonitorCheck, set(), set()),
    # REST returns the metrics as a map; GraphQL as one typed field per metric
    (
        model_performance.PerformanceRecord,
        s_portfolio.Record,
        {
            "binary_accuracy",
            "movers_accuracy",
            "three_class_accuracy",
            "rank_ic",
            "tercile_spread",
            "average_error",
        },
        {"metrics"},
    ),
    (suggestion.Suggestion, s_portfolio.Suggestion, set(), set()),
    (position.Position, s_portfolio.Position, RELATIONS | {"weight"}, set()),
    (ai_position.AIPosition, s_portfolio.AIPosition, RELATIONS | {"weight"}, set()),
    # GraphQL nests positions, trades, cash movements, suggestions and the track record as fields; REST has
    # them as endpoints
    (
        portfolio.Portfolio,
        s_portfolio.PortfolioSummary,
        {"cash_weight", "open_positions", "positions", "suggestions", "trades", "cash_movements", "track_record"},
        {"allocation", "flags"},
    ),
    (
        ai_portfolio.AIPortfolio,
        s_portfolio.AISummary,
        {"days", "open_positions", "positions", "trades", "track_record"},
        {"allocation", "flags", "portfolio_id"},
    ),
    (track_record.TrackRecord, s_portfolio.TrackRecord, set(), set()),
    (track_record.CostsPaid, s_portfolio.CostsPaid, set(), set()),
    (track_record.BenchmarkComparison, s_portfolio.BenchmarkComparison, set(), set()),
    (track_record.NullRecord, s_portfolio.NullRecord, set(), set()),
    (track_record.NullFamily, s_portfolio.NullFamily, set(), set()),
    (track_record.NullSpread, s_portfolio.NullSpread, set(), set()),
]


@pytest.mark.parametrize("graph, rest, only_graph, only_rest", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_graphql_type_and_rest_schema_declare_the_same_fields(graph, rest, only_graph, only_rest) -> None:
    graph_fields = {f.python_name for f in graph.__strawberry_definition__.fields}
    rest_fields = set(rest.model_fields)
    assert graph_fields - rest_fields == only_graph
    assert rest_fields - graph_fields == only_rest


@pytest.mark.parametrize(
    "domain, rest, graph",
    [
        (statistics.TrackRecord, s_portfolio.TrackRecord, track_record.TrackRecord),
        (statistics.CostsPaid, s_portfolio.CostsPaid, track_record.CostsPaid),
        (statistics.BenchmarkComparison, s_portfolio.BenchmarkComparison, track_record.BenchmarkComparison),
        (statistics.NullRecord, s_portfolio.NullRecord, track_record.NullRecord),
        (statistics.NullFamily, s_portfolio.NullFamily, track_record.NullFamily),
        (statistics.NullSpread, s_portfolio.NullSpread, track_record.NullSpread),
    ],
    ids=["TrackRecord", "CostsPaid", "BenchmarkComparison", "NullRecord", "NullFamily", "NullSpread"],
)
def test_the_track_record_is_declared_once_in_the_domain(domain, rest, graph) -> None:
    """portfolio/track_record.py's dataclasses are the track record's one shape: REST shows
    their fields in their order, GraphQL the same names in camelCase, and both key the
    benchmarks and the records by the same names."""
    declared = [f.name for f in fields(domain)]
    assert list(rest.model_fields) == declared
    assert [f.python_name for f in graph.__strawberry_definition__.fields] == declared
    names = {f.python_name: f.graphql_name for f in graph.__strawberry_definition__.fields}
    assert all(camel is None or camel == _camel(name) for name, camel in names.items())


def test_the_track_records_keyed_fields_are_the_domains_keys() -> None:
    benchmarks = [f.python_name for f in track_record.Benchmarks.__strawberry_definition__.fields]
    records = [f.python_name for f in track_record.TrackRecords.__strawberry_definition__.fields]
    families = [f.python_name for f in track_record.NullFamilies.__strawberry_definition__.fields]
    assert benchmarks == list(statistics.BENCHMARKS) and records == list(statistics.RECORDS)
    assert families == list(statistics.NULL_FAMILIES)


@pytest.mark.parametrize(
    "domain, rest, graph",
    [
        (statistics.NullRecord, s_portfolio.NullRecord, track_record.NullRecord),
        (statistics.NullFamily, s_portfolio.NullFamily, track_record.NullFamily),
        (statistics.NullSpread, s_portfolio.NullSpread, track_record.NullSpread),
    ],
    ids=["NullRecord", "NullFamily", "NullSpread"],
)
def test_the_null_books_are_described_once_in_the_domain(domain, rest, graph) -> None:
    """Each field of the null books' shapes is described in the domain (market.contract
    `described`), and REST and GraphQL show that text, not one of their own (GraphQL names
    a field it quotes as its own, `model_beats` as modelBeats: `graphql_text`)."""
    from api.graphql.types.derived import graphql_text

    written = {f.name: f.metadata["description"] for f in fields(domain)}
    assert all(written.values())
    assert {name: f.description for name, f in rest.model_fields.items()} == written
    shown = {name: graphql_text(text) for name, text in written.items()}
    assert {f.python_name: f.description for f in graph.__strawberry_definition__.fields} == shown
    assert (
        track_record.TrackRecord.__strawberry_definition__.get_field("nulls").description
        == (s_portfolio.TrackRecord.model_fields["nulls"].description)
        == description(statistics.TrackRecord, "nulls")
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def test_a_placed_trade_is_declared_once_in_the_domain() -> None:
    """portfolio/trading.py `PlacedTrade` is the placed trade's one declaration: the REST
    and GraphQL shapes of the pair above show exactly its API fields, in its order."""
    declared = PlacedTrade.api_fields()
    assert declared[:2] == ["trade_id", "portfolio_id"] and "replayed" in declared and "gross" not in declared
    assert list(s_portfolio.TradeOut.model_fields) == declared
    graphql = [f.python_name for f in trade_placed.TradePlaced.__strawberry_definition__.fields]
    assert graphql == declared


def test_a_placed_trades_json_form_reads_back_whole() -> None:
    """What a retry gets back (the stored response) is the trade placed, and both shapes read it."""
    from datetime import UTC, date, datetime
    from decimal import Decimal

    placed = PlacedTrade(
        trade_id="T-1",
        portfolio_id="client:c-1",
        trading_date=date(2026, 11, 20),
        executed_at=datetime(2026, 11, 20, 15, 31, 5, tzinfo=UTC),
        symbol="NCBFG",
        side="BUY",
        quantity=100,
        price=Decimal("101.50"),
        fees=Decimal("0.00"),
        fees_from="STATED",
        origin="MANUAL",
        rationale={},
        idempotency_key="k-1",
        gross=Decimal("10150.00"),
        position_after=100,
        cash_after=Decimal("89850.000000"),
    )
    shown = placed.to_json()
    assert shown["price"] == "101.50" and shown["executed_at"] == "2026-11-20T15:31:05+00:00"
    assert PlacedTrade.from_json(shown, replayed=True) == PlacedTrade(**{**vars(placed), "replayed": True})
    s_portfolio.TradeOut.model_validate(shown)  # the REST body validates from it
    # GraphQL's answer carries the typed values its scalars serialise (a date, not the JSON form's text)
    answer = trade_placed.TradePlaced.from_placed(placed)
    assert (answer.trading_date, answer.price) == (date(2026, 11, 20), Decimal("101.50"))


# What the valuation's readers add to it or leave out, on purpose:
GRAPHQL_POSITION_ADDS = RELATIONS | {"weight"}  # GraphQL: the position's share of equity and its relations
# the opening trade's (views.portfolio.ai_positions)
AI_POSITION_ADDS = ["direction", "entered_as", "rationale", "timestamp"]
POSITIONS_BODY_LEAVES = {"market_value", "liquid_equity", "illiquid_discounts", "unrealized_pnl", "realized_pnl"}
# what views.portfolio.summarise derives
SUMMARY_ADDS = ["positions_count", "allocation", "flags", "dividends_receivable"]


def test_a_valuation_is_declared_once_in_the_domain() -> None:
    """views/valuation.py `PortfolioValuation` (what `portfolio_view` returns) and its
    `PositionValue`s are the valuation's one declaration: the REST schemas that render it
    and GraphQL's `Position` show exactly their fields, in their order, apart from the
    differences above. A field added to the dataclass and not to a schema, or taken from a
    schema, fails here."""
    position_fields = [f.name for f in fields(PositionValue)]
    valuation_fields = [f.name for f in fields(PortfolioValuation)]
    assert position_fields[0] == "symbol" and valuation_fields[-1] == "positions"
    # GET /api/portfolio's positions: exactly a valued position; the AI portfolio's add the opening trade
    assert list(s_portfolio.Position.model_fields) == position_fields
    assert list(s_portfolio.AIPosition.model_fields) == position_fields + AI_POSITION_ADDS
    graphql = [f.python_name for f in position.Position.__strawberry_definition__.fields]
    assert set(graphql) - set(position_fields) == GRAPHQL_POSITION_ADDS
    assert [name for name in graphql if name not in GRAPHQL_POSITION_ADDS] == position_fields
    # GET /api/portfolio: the valuation less the totals its summary shows
    positions_body = [name for name in valuation_fields if name not in POSITIONS_BODY_LEAVES]
    assert list(s_portfolio.PortfolioPositions.model_fields) == positions_body
    # GET /api/portfolio/summary (and, through the pairs above, GraphQL's Portfolio): every total, as
    # summarise copies them, and what it derives
    summary_body = [name for name in valuation_fields if name != "positions"] + SUMMARY_ADDS
    assert list(s_portfolio.PortfolioSummary.model_fields) == summary_body


# A valued position, as views/valuation.py values one (the REST example's)
_VALUED = PositionValue(
    symbol="NCBFG",
    quantity=1000,
    cost_basis=Decimal("101500.00"),
    average_cost=Decimal("101.5"),
    purchase_date=date(2026, 11, 18),
    price=Decimal("103.2"),
    market_value=Decimal("103200.00"),
    unrealized_pnl=Decimal("1700.00"),
    realized_pnl=Decimal("0.00"),
    flags=(),
)


def test_a_valuation_renders_as_its_fields() -> None:
    """REST validates the valuation from its attributes (api/services.py `json_body`): the
    body equals the one its fields as a dict render (what `portfolio_view` returned before
    it was typed), here the schema's own example. GraphQL's Position is built from every
    field of a valued position."""
    valued = _VALUED
    valuation = PortfolioValuation(
        portfolio_id="client:c-1a2b3c4d5e6f",
        as_of=date(2026, 11, 20),
        cash=Decimal("96800.00"),
        market_value=Decimal("103200.00"),
        equity=Decimal("200000.00"),
        liquid_equity=Decimal("199500.00"),
        illiquid_discounts={"NCBFG": 500.0},
        unrealized_pnl=Decimal("1700.00"),
        realized_pnl=Decimal("0.00"),
        positions=(valued,),
    )
    body = json_body(s_portfolio.PortfolioPositions, valuation)
    assert body == json_body(s_portfolio.PortfolioPositions, asdict(valuation))
    assert json.loads(body) == s_portfolio.PortfolioPositions.model_config["json_schema_extra"]["examples"][0]
    shown = position.Position.from_value(valued, valuation.equity)
    assert (shown.average_cost, shown.flags, shown.weight) == (Decimal("101.5"), [], 0.516)


# What the served prediction's readers call otherwise, add to it or leave out, on purpose:
GRAPHQL_PREDICTION_NAMES = {"p_up": "probability_up", "layer1_p_up": "layer1_probability"}
# the quote's own bar (and whether the exchange has halted it), before its prediction
QUOTE_BAR = ["trading_date", "close", "volume", "halted_since", "change_pct", "rsi_14"]
QUOTE_ADDS = ["reason"]  # why the prediction fields are null, or which record they are from
# A quote is keyed by its symbol and dated by its bar (a quote's `trading_date`); it shows the
# day's decision and the AI book's weight for it, not layer 1's and layer 2's probabilities or the horizon;
# its `reason` says which record a prediction is from (`record`).
QUOTE_LEAVES = {"symbol", "trading_date", "horizon_days", "p_up", "layer1_p_up", "record"}


def test_a_served_prediction_is_declared_once_in_the_domain() -> None:
    """models/scoring.py `ServedPrediction` (what views/instrument.py hands to the API and
    views/market.py builds the latest quotes from) is the served prediction's one
    declaration: GraphQL's `Prediction` shows exactly its fields in its order, renamed as
    above; REST's `LatestQuote` (and, through the pairs above, GraphQL's `Quote`) its bar,
    then the prediction fields views/market.py `QUOTED` takes from it (all but
    `QUOTE_LEAVES`, in the quote's order), then its reason. A
    field added to the dataclass and not to `Prediction` and to `QUOTED` or `QUOTE_LEAVES`,
    or taken from a schema, fails here."""
    served = [f.name for f in fields(ServedPrediction)]
    assert served[:2] == ["symbol", "trading_date"] and "reasons" in served and "raw_score" not in served
    graphql = [f.python_name for f in prediction.Prediction.__strawberry_definition__.fields]
    assert graphql == [GRAPHQL_PREDICTION_NAMES.get(name, name) for name in served]
    assert list(s_market.LatestQuote.model_fields) == QUOTE_BAR + list(QUOTED) + QUOTE_ADDS
    assert set(served) - QUOTE_LEAVES == set(QUOTED)  # in the quote's own order (the REST schema's)
    assert "reasons" in s_market.SymbolStatistics.model_fields  # GET /api/market/symbol: the latest one's reasons


def test_a_served_prediction_reads_as_its_fields() -> None:
    """A stored row is served as the dataclass (reasons in their served form), and both
    shapes read it: the quote's prediction fields rounded as GET /api/market/latest shows
    them, GraphQL's `Prediction` every field."""
    row = {
        "id": 7,
        "symbol": "NCBFG",
        "trading_date": date(2026, 11, 20),
        "model_id": "risk-2026-11-20-h1-warm",
        "horizon_days": 1,
        "predicted_return": 0.00212345678,
        "p_up": 0.61,
        "score": 58.412345,
        "action": "HOLD",
        "weight": 0.0,
        "tercile": "TOP",
        "layer1_p_up": 0.52,
        "layer1_backend": "fallback-empirical-v2",
        "raw_score": 0.1,
        "held_edge": 0.0016,
        "round_trip_cost": 0.0273,
        "decision_reason": "edge +0.16% over 1 sessions below round-trip cost 2.73% (spread 1.73%, fees 1.00%)",
        "reasons": {"base_value": 0.021537, "top": [{"feature": "return_1d", "contribution": -0.184213}]},
    }
    served = ServedPrediction.from_row(row)
    assert served.reasons == {
        "base_value": 0.021537,
        "inputs": [{"input": "Last day's return", "contribution": -0.184213}],
        "raw_score": 0.1,
        "other_inputs": 0.262676,  # 0.1 - 0.021537 + 0.184213: the inputs not listed
    }
    shown = quoted(served)
    assert (shown["predicted_return"], shown["score"], shown["model_id"]) == (0.002123, 58.4123, row["model_id"])
    s_market.PredictionReasons.model_validate(shown["reasons"])
    graph = prediction.Prediction.from_row(served)
    assert (graph.probability_up, graph.layer1_probability, graph.action.value) == (0.61, 0.52, "HOLD")
    assert graph.reasons.inputs[0].input == "Last day's return"


# A position with one more money field and one more fraction: what a change to the domain's
# declaration looks like (the only place it is made).
@dataclass(frozen=True)
class WiderPosition(PositionValue):
    paid_to_spread: Money = described("What the position paid to the spread.", default=Decimal(0))
    drift: Fraction | None = described("How far `price` moved from `average_cost`, a fraction.", default=None)


def test_a_field_added_to_a_dataclass_is_in_the_openapi_document_and_the_sdl() -> None:
    """REST's schema and GraphQL's type derived from a dataclass (as every read model of
    the API is) carry a field added to it, in its place, with its type's rule (money as
    decimal text to the cent, `Decimal` in the SDL; a fraction as a number, `Float`) and
    its description, written once in the dataclass."""
    import strawberry
    from fastapi import FastAPI

    from api.contract import ApiModel
    from api.graphql.scalars import SCALAR_OVERRIDES
    from api.graphql.types.derived import derived as derived_type
    from api.graphql.types.derived import from_domain
    from api.schemas.derived import derived as derived_schema

    @derived_schema(WiderPosition)
    class WiderBody(ApiModel):
        """A wider position."""

    app = FastAPI()
    app.get("/wider", response_model=WiderBody)(lambda: None)
    body = app.openapi()["components"]["schemas"]["WiderBody"]
    assert list(body["properties"]) == [f.name for f in fields(WiderPosition)]
    paid, drift = body["properties"]["paid_to_spread"], body["properties"]["drift"]
    assert paid["pattern"] == r"^-?[0-9]+\.[0-9]{2}$" and paid["description"] == "What the position paid to the spread."
    assert drift["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert drift["description"] == "How far `price` moved from `average_cost`, a fraction."

    @derived_type(WiderPosition, "A wider position.")
    class WiderType:
        pass

    query = strawberry.type(type("Query", (), {"__annotations__": {"wider": WiderType | None}, "wider": None}))
    sdl = strawberry.Schema(query=query, scalar_overrides=SCALAR_OVERRIDES).as_str()
    assert '  """What the position paid to the spread."""\n  paidToSpread: Decimal!\n' in sdl
    assert '  """How far price moved from averageCost, a fraction."""\n  drift: Float\n' in sdl
    assert sdl.index("pendingUntil: Date") < sdl.index("paidToSpread") < sdl.index("drift: Float")

    wider = WiderPosition(**{f.name: getattr(_VALUED, f.name) for f in fields(PositionValue)}, drift=0.0123456789)
    wider = replace(wider, paid_to_spread=Decimal("12.345"))
    rendered = json.loads(json_body(WiderBody, wider))
    assert (rendered["paid_to_spread"], rendered["drift"], rendered["price"]) == ("12.35", 0.012346, "103.20")
    assert from_domain(WiderType, wider).paid_to_spread == Decimal("12.345")  # the scalar prints it


def test_the_served_read_models_show_the_domains_descriptions() -> None:
    """The OpenAPI document's and the SDL's descriptions of the derived read models are
    the domain's (GraphQL names a field it mentions in camelCase)."""
    from api.graphql.types.derived import graphql_text

    for domain, rest, graph in [
        (statistics.TrackRecord, s_portfolio.TrackRecord, track_record.TrackRecord),
        (statistics.CostsPaid, s_portfolio.CostsPaid, track_record.CostsPaid),
        (PositionValue, s_portfolio.Position, position.Position),
        (PlacedTrade, s_portfolio.TradeOut, trade_placed.TradePlaced),
    ]:
        served = {f.name: f.metadata.get("description") for f in fields(domain) if f.metadata.get("served", True)}
        assert {name: f.description for name, f in rest.model_fields.items()} == served
        shown = {f.python_name: f.description for f in graph.__strawberry_definition__.fields}
        reshaped = {"benchmarks", "records"} if domain is statistics.TrackRecord else set()
        assert {n: shown[n] for n in served if n not in reshaped} == {
            n: graphql_text(text) for n, text in served.items() if n not in reshaped
        }
    assert s_market.LatestQuote.model_fields["held_edge"].description == description(ServedPrediction, "held_edge")
    assert prediction.Prediction.__strawberry_definition__.get_field("probability_up").description == description(
        ServedPrediction, "p_up"
    )


def test_the_position_weight_says_it_is_not_what_the_book_holds(api: Api) -> None:
    """The book keeps HOLD names it bought earlier and may hold a LONG at 0: the weight is the
    slot a book starting from cash would give, and the description sends to the positions."""
    weight = api.acme("GET", "/openapi.json").json()["components"]["schemas"]["LatestQuote"]["properties"]["weight"]
    assert "starting from cash" in weight["description"] and "/api/ai-portfolio/positions" in weight["description"]
    assert "share of the AI book's equity a LONG name gets" not in weight["description"]
