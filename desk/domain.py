"""The domain's names a transport uses without calling the domain: the types its answers
are annotated with or built from (a track record, a valuation, a served prediction, a
suggestion, a placed trade, the macro insights, an executed AI day), the texts its
schemas describe their fields with, and the constants and formats its messages use (a
track-record statistic as the reports print it, the label's horizon, T3's week). Re-exported
here (and from `desk`) so that no transport imports portfolio/, models/, views/ or store/
(pyproject.toml's import contracts); each is declared once, where the domain declares it.

`stats`, as REST's schemas and GraphQL's types name the track record's module, is this
module: its shapes (`TrackRecord`, `BenchmarkComparison`, `NullSpread`, `NullFamily`,
`NullRecord`), their names (`BENCHMARKS`, `NULL_FAMILIES`, `NULL_FAMILY_RANKINGS`,
`RECORDS`) and `description`, a field's description as the domain writes it."""

from models.decisions import HORIZON
from models.macro_model import INSIGHTS_REFUSAL, MacroInsights, week_start
from models.scoring import ServedPrediction
from portfolio.accounts import Account
from portfolio.ai import ExecutedDay
from portfolio.ledger import AI_PORTFOLIO
from portfolio.suggestions import SUGGESTION_FEES, MorningSuggestions, Suggestion
from portfolio.track_record import (
    BENCHMARKS,
    MOSTLY_CASH_EXPOSURE,
    NULL_FAMILIES,
    NULL_FAMILY_RANKINGS,
    RECORDS,
    BenchmarkComparison,
    NullFamily,
    NullRecord,
    NullSpread,
    TrackRecord,
    description,
)
from portfolio.trading import ManualTrade, PlacedTrade, TradePreview
from reports import Report
from reports.format import statistic_pct
from views.valuation import PENDING_QUANTITY, PENDING_UNTIL, PortfolioValuation, PositionValue

__all__ = [
    "AI_PORTFOLIO",
    "BENCHMARKS",
    "HORIZON",
    "INSIGHTS_REFUSAL",
    "MOSTLY_CASH_EXPOSURE",
    "NULL_FAMILIES",
    "NULL_FAMILY_RANKINGS",
    "PENDING_QUANTITY",
    "PENDING_UNTIL",
    "RECORDS",
    "SUGGESTION_FEES",
    "Account",
    "BenchmarkComparison",
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
    "Report",
    "ServedPrediction",
    "Suggestion",
    "TrackRecord",
    "TradePreview",
    "description",
    "statistic_pct",
    "week_start",
]
