"""The application layer: one `Desk` per process, one method per use case, reads included.
REST, GraphQL, the CLI and the stage adapters call it and add only their transport's
concerns (see desk/desk.py); they import nothing else of the project but market/, so the
domain's types, texts and constants they name are re-exported here (desk/domain.py), as
is what a transport needs of the store's connection discipline: a key check riding on a
request's connection (`KeyCheck`, `settle`, `VersionMoved`: store/history.py `Rider`)."""

from desk import domain
from desk.cache import Versioned
from desk.desk import Desk, ReportOrder, keep_books
from desk.domain import (
    AI_PORTFOLIO,
    HORIZON,
    ILLIQUID_DISCOUNTS,
    INSIGHTS_REFUSAL,
    INSIGHTS_SWITCHED_OFF,
    MOSTLY_CASH_EXPOSURE,
    NO_AI_DAYS,
    PENDING_QUANTITY,
    PENDING_UNTIL,
    SUGGESTION_FEES,
    Account,
    BarMark,
    ExecutedDay,
    MacroInsights,
    ManualTrade,
    MorningSuggestions,
    PlacedTrade,
    PortfolioValuation,
    PositionValue,
    Report,
    ServedPrediction,
    Suggestion,
    TickerChange,
    TickerChanges,
    TrackRecord,
    TradePreview,
    counted,
    statistic_pct,
    week_start,
)
from desk.keys import KeyCheck, KeyRecord, is_client_key
from store.history import VersionMoved, settle

__all__ = [
    "AI_PORTFOLIO",
    "HORIZON",
    "ILLIQUID_DISCOUNTS",
    "INSIGHTS_REFUSAL",
    "INSIGHTS_SWITCHED_OFF",
    "MOSTLY_CASH_EXPOSURE",
    "NO_AI_DAYS",
    "PENDING_QUANTITY",
    "PENDING_UNTIL",
    "SUGGESTION_FEES",
    "Account",
    "BarMark",
    "Desk",
    "ExecutedDay",
    "KeyCheck",
    "KeyRecord",
    "MacroInsights",
    "ManualTrade",
    "MorningSuggestions",
    "PlacedTrade",
    "PortfolioValuation",
    "PositionValue",
    "Report",
    "ReportOrder",
    "ServedPrediction",
    "TickerChange",
    "TickerChanges",
    "Suggestion",
    "TrackRecord",
    "TradePreview",
    "VersionMoved",
    "Versioned",
    "domain",
    "is_client_key",
    "keep_books",
    "counted",
    "settle",
    "statistic_pct",
    "week_start",
]
