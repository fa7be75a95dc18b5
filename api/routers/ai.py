"""The autonomous AI portfolio and the model's live record."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import AdminDep, CallerDep, ServicesDep
from api.schemas.common import KEYED, problems
from api.schemas.portfolio import AIHistory, AIPosition, AISummary, Performance
from views import portfolio as portfolio_views
from views.performance import performance

router = APIRouter(tags=["ai"])


@router.get("/api/ai-portfolio/positions", response_model=list[AIPosition], responses=problems(*KEYED))
def positions(svc: ServicesDep, _: CallerDep) -> list[AIPosition]:
    """Open AI positions at the latest close, each with the rationale and exchange-time
    timestamp (ISO 8601, no offset) of the trade that opened it."""
    day = svc.valuation_day()
    with svc.engine.connect() as conn:
        return [AIPosition.model_validate(p) for p in portfolio_views.ai_positions(conn, day)]


@router.get("/api/ai-portfolio/summary", response_model=AISummary, responses=problems(*KEYED))
def summary(svc: ServicesDep, _: CallerDep) -> AISummary:
    """Total value, PnL, liquid equity, allocation breakdown and flagged positions."""
    day = svc.valuation_day()
    with svc.engine.connect() as conn:
        return AISummary.model_validate(portfolio_views.ai_summary(conn, day, svc.settings.ai_starting_cash))


@router.get("/api/ai-portfolio/history", response_model=AIHistory, responses=problems(*KEYED, 403))
def history(svc: ServicesDep, _: AdminDep) -> AIHistory:
    """Admin only: every executed day (orders, what the rails blocked or cut) and every
    AI trade with its rationale."""
    with svc.engine.connect() as conn:
        return AIHistory.model_validate(portfolio_views.ai_record(conn))


@router.get("/api/ai/performance", response_model=Performance, responses=problems(*KEYED))
def model_performance(svc: ServicesDep, _: CallerDep) -> Performance:
    """The model's two out-of-sample records side by side, each labelled: `validation`
    (the walk-forward over the history before the first live day) and `live` (from the
    first live day). Each has binary, 3-class and movers accuracy, average error, IC and
    the tercile spread with base rates, baselines and sample sizes; the top level names
    the latest live model and its layer-1 backend (fallback named)."""
    with svc.engine.connect() as conn:
        return Performance.model_validate(performance(conn))
