"""The autonomous AI portfolio and the model's live record."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from api import paging
from api.deps import AdminDep, CallerDep, ConnDep, ServicesDep
from api.schemas.common import KEYED, problems
from api.schemas.portfolio import AIHistory, AIPosition, AISummary, Performance, TrackRecord
from api.security import KeyCheckedRoute

router = APIRouter(tags=["ai"], route_class=KeyCheckedRoute)


@router.get("/api/ai-portfolio/positions", response_model=list[AIPosition], responses=problems(*KEYED))
async def positions(svc: ServicesDep, _: CallerDep, conn: ConnDep) -> Response:
    """Open AI positions at the latest close, each with the rationale and exchange-time
    timestamp (ISO 8601, no offset) of the trade that opened it."""
    return await svc.answer(conn, svc.desk.ai_positions, list[AIPosition])


@router.get("/api/ai-portfolio/summary", response_model=AISummary, responses=problems(*KEYED))
async def summary(svc: ServicesDep, _: CallerDep, conn: ConnDep) -> Response:
    """Total value, PnL, liquid equity, allocation breakdown and flagged positions."""
    return await svc.answer(conn, svc.desk.ai_summary, AISummary)


@router.get("/api/ai-portfolio/history", response_model=AIHistory, responses=problems(*KEYED, 403))
async def history(svc: ServicesDep, _: AdminDep, conn: ConnDep, page: paging.AIDaysQuery) -> Response:
    """Admin only: the executed days in pages of `limit`, oldest first (orders, what the
    rails blocked or cut), each with the AI trades executed that day and their rationale;
    `next_cursor` leads to the later days."""
    return await svc.answer(conn, lambda c: svc.desk.ai_days(c, page.after(), page.limit), AIHistory, page.body)


@router.get("/api/ai-portfolio/track-record", response_model=TrackRecord, responses=problems(*KEYED))
async def track_record(svc: ServicesDep, _: CallerDep, conn: ConnDep) -> Response:
    """The AI portfolio's record as a quant reads it: total and annual return, volatility,
    Sharpe, Sortino, maximum drawdown, Calmar, annual turnover, costs paid by part (fees,
    spread, impact), and beside each benchmark over the same days (`equal_weight_liquid`:
    the names that passed the entry gates at the month's start, held equally; `index`: the
    service's capitalisation-weighted index) its return, the excess return, tracking error,
    information ratio, beta and alpha (empyrical-reloaded; fractions, not percent; 250
    trading days a year). `nulls`: the same days replayed for the model's book and for books
    that obey its mandate by chance (random rankings drawn daily and fixed for the span, the
    size ranking, the first month's book held, the ranking inverted), each family's
    information ratio and excess against the equal-weighted liquid universe with the
    replayed model book's percentile in it, and the replayed model book against the mean
    of the fixed random books."""
    return await svc.answer(conn, svc.desk.ai_track_record, TrackRecord)


@router.get("/api/ai/performance", response_model=Performance, responses=problems(*KEYED))
async def model_performance(svc: ServicesDep, _: CallerDep, conn: ConnDep) -> Response:
    """The model's two out-of-sample records side by side, each labelled: `validation`
    (the walk-forward over the history before the first live day) and `live` (from the
    first live day). Each has, on the model's label (the excess return over horizon_days),
    binary, 3-class and movers accuracy, average error, rank IC and the TOP-minus-BOTTOM
    tercile spread with base rates, baselines and sample sizes; the top level names
    the latest live model and its layer-1 backend (fallback named), and `monitor` the model
    monitor's latest day: the overall state and each check's state (OK / WATCH / ALERT),
    figure, thresholds and the day its breach began (docs/monitoring.md)."""
    return await svc.answer(conn, svc.desk.performance, Performance)
