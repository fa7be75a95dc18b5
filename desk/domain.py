"""The domain's names a transport uses without calling the domain: the types its answers
are annotated with or built from (a track record, a valuation, a served prediction, a
suggestion, a placed trade, the macro insights, an executed AI day), the texts its
schemas describe their fields with, and the constants and formats its messages use (a
track-record statistic as the reports print it, the label's horizon, T3's week). Re-exported
here (and from `desk`) so that no transport imports portfolio/, models/, views/ or store/
(pyproject.toml's import contracts); each is declared once, where the domain declares it.

REST's schemas and GraphQL's types derive from the shapes here (the track record's
`TrackRecord`, `CostsPaid`, `BenchmarkComparison`, `NullSpread`, `NullFamily`,
`NullRecord`, with their names `BENCHMARKS`, `NULL_FAMILIES`, `NULL_FAMILY_RANKINGS`,
`RECORDS`; a `PositionValue`, a `PlacedTrade`, a `Suggestion`, a `ServedPrediction`) and
print the documents they carry by the types these declare (a trade's `TradeRationale`, an
order's `Rationale`, an `ExecutedDay`'s record, a statement's `Change`s, the day's
`DayFacts`)."""

from analysis.day_facts import DayFacts
from models.decisions import HORIZON
from models.macro_model import INSIGHTS_REFUSAL, INSIGHTS_SWITCHED_OFF, MacroInsights, week_start
from models.scoring import ServedPrediction
from portfolio.accounts import Account
from portfolio.ai import ExecutedDay
from portfolio.executor import Rationale
from portfolio.ledger import AI_PORTFOLIO
from portfolio.statements import Change, StatementResult
from portfolio.suggestions import SUGGESTION_FEES, MorningSuggestions, Suggestion
from portfolio.track_record import (
    BENCHMARKS,
    MOSTLY_CASH_EXPOSURE,
    NULL_FAMILIES,
    NULL_FAMILY_RANKINGS,
    RECORDS,
    BenchmarkComparison,
    CostsPaid,
    NullFamily,
    NullRecord,
    NullSpread,
    TrackRecord,
)
from portfolio.trading import ManualTrade, PlacedTrade, TradePreview
from reports import Report
from reports.format import counted, statistic_pct
from store.splits import ShareSplit, TickerChange, TickerChanges
from views.market import BarMark
from views.performance import said_apart
from views.portfolio import AIDay, AIPosition, TradeRationale, TradeView
from views.track_record import NO_AI_DAYS
from views.valuation import ILLIQUID_DISCOUNTS, PENDING_QUANTITY, PENDING_UNTIL, PortfolioValuation, PositionValue

__all__ = [
    "AI_PORTFOLIO",
    "BENCHMARKS",
    "HORIZON",
    "ILLIQUID_DISCOUNTS",
    "INSIGHTS_REFUSAL",
    "INSIGHTS_SWITCHED_OFF",
    "MOSTLY_CASH_EXPOSURE",
    "NO_AI_DAYS",
    "NULL_FAMILIES",
    "NULL_FAMILY_RANKINGS",
    "PENDING_QUANTITY",
    "PENDING_UNTIL",
    "RECORDS",
    "SUGGESTION_FEES",
    "AIDay",
    "AIPosition",
    "Account",
    "BarMark",
    "BenchmarkComparison",
    "Change",
    "CostsPaid",
    "DayFacts",
    "ExecutedDay",
    "MacroInsights",
    "ManualTrade",
    "MorningSuggestions",
    "NullFamily",
    "NullRecord",
    "NullSpread",
    "PlacedTrade",
    "PortfolioValuation",
    "PositionValue",
    "Rationale",
    "Report",
    "ServedPrediction",
    "ShareSplit",
    "TickerChange",
    "TickerChanges",
    "StatementResult",
    "Suggestion",
    "TrackRecord",
    "TradePreview",
    "TradeRationale",
    "TradeView",
    "counted",
    "said_apart",
    "statistic_pct",
    "week_start",
]
