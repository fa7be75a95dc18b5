"""A record that crosses the API is declared twice, as a Pydantic schema (REST) and a
Strawberry type (GraphQL), because Strawberry's Pydantic bridge is experimental (see
docs/architecture.md). This keeps the two lists from drifting: each pair has the same
fields, apart from the differences written here on purpose; where the domain declares the
record as a dataclass (a placed trade), the pair shows its fields."""

from __future__ import annotations

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
from portfolio.trading import PlacedTrade

RELATIONS = {"instrument", "latest_prediction"}  # GraphQL resolves the instrument and its prediction on demand
PAIRS = [
    (ai_day.AIDay, s_portfolio.AIDay, set(), set()),
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
            "information_coefficient",
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
]


@pytest.mark.parametrize("graph, rest, only_graph, only_rest", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_graphql_type_and_rest_schema_declare_the_same_fields(graph, rest, only_graph, only_rest) -> None:
    graph_fields = {f.python_name for f in graph.__strawberry_definition__.fields}
    rest_fields = set(rest.model_fields)
    assert graph_fields - rest_fields == only_graph
    assert rest_fields - graph_fields == only_rest


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
    assert trade_placed.TradePlaced.from_placed(placed).price == "101.50"
