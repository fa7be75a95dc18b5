"""Market data: the latest day per ticker, a symbol's statistics, its history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from api.deps import CallerDep, ConnDep, ServicesDep
from api.graphql.pagination import CURSOR_LENGTH
from api.paging import bars_after, bars_page
from api.schemas.common import KEYED, SupportedDate, problems, whole_query
from api.schemas.market import (
    LATEST_EXAMPLE,
    Breadth,
    History,
    LatestQuote,
    SymbolStatistics,
)
from api.security import KeyCheckedRoute
from market.text import STORED_SYMBOL, STORED_SYMBOL_LENGTH

router = APIRouter(prefix="/api/market", tags=["market"], route_class=KeyCheckedRoute)
# /latest's and /breadth's `date`: the same days, the same errors.
DeliveredDay = Annotated[
    SupportedDate | None, Query(alias="date", description="A trading date already delivered; default: the latest.")
]
# what the store can hold (market.text): a ticker, or an earlier company's on a reused one
SYMBOL = Path(
    min_length=1,
    max_length=STORED_SYMBOL_LENGTH,
    pattern=STORED_SYMBOL,
    description="Ticker, e.g. NCBFG; the earlier company on a reused ticker is the ticker, `~` and its last day "
    "(ABC~2025-09-30, as the importer stored it).",
)


@router.get(
    "/latest",
    response_model=dict[str, LatestQuote],
    responses={**problems(*KEYED, 404, 503), 200: {"content": {"application/json": {"example": LATEST_EXAMPLE}}}},
)
async def latest(svc: ServicesDep, _: CallerDep, conn: ConnDep, date_: DeliveredDay = None) -> Response:
    """Every ticker's latest close, volume and change with its prediction (score, action,
    Position Weight, tercile, predicted return) and RSI. With `date`: 503 when that day's session has closed
    but its data is not delivered yet, 404 for a gap in the history, 422 for a date that is
    not a trading day or has not closed. A day before the first live day carries the
    validation record's out-of-sample scores (what the AI portfolio's replay traded on),
    `model_id` the walk-forward model and `reason` naming the record."""
    return await svc.answer(conn, lambda c: svc.desk.latest_market(c, date_), dict[str, LatestQuote])


@router.get("/breadth", response_model=Breadth, responses=problems(*KEYED, 404, 503))
async def breadth(svc: ServicesDep, _: CallerDep, conn: ConnDep, date_: DeliveredDay = None) -> Response:
    """The day's advancers, decliners, unchanged and untraded stocks and the change of the
    service's capitalisation-weighted index; same dates and errors as /latest."""
    # A read model like the other reads: built once per (date, data version, latest closed
    # day) and shared with GraphQL's marketBreadth (the desk keeps one entry).
    return await svc.answer(conn, lambda c: svc.desk.breadth(c, date_), Breadth)


@router.get("/symbol/{symbol}", response_model=SymbolStatistics, responses=problems(*KEYED, 404, 503))
async def symbol_statistics(svc: ServicesDep, _: CallerDep, conn: ConnDep, symbol: str = SYMBOL) -> Response:
    """Variance of daily log returns over 20, 60, 120 and 250 days, and the latest day's
    statistics as z-scores against the instrument's own history (read from the stored
    daily bars and indicators), with the reasons behind the symbol's latest prediction."""
    return await svc.answer(conn, lambda c: svc.desk.symbol_statistics(c, symbol), SymbolStatistics)


BarsLimit = whole_query(Query(ge=1, le=2000, description="Bars per page: 250 by default, at most 2000."))


@router.get("/history/{symbol}", response_model=History, responses=problems(*KEYED, 404))
async def history(
    svc: ServicesDep,
    _: CallerDep,
    conn: ConnDep,
    symbol: str = SYMBOL,
    start: SupportedDate | None = Query(
        None, description="First trading date (inclusive); given, pages run forward from it."
    ),
    end: SupportedDate | None = Query(None, description="Last trading date (inclusive)."),
    limit: BarsLimit = 250,
    cursor: str | None = Query(
        None,
        min_length=1,
        max_length=CURSOR_LENGTH,
        description="`next_cursor` of the previous page of this symbol's history, unchanged (another symbol's, "
        "another list's or a bare date is 422); absent: the first page. Forward from `start`, it is the cursor "
        "GraphQL's `instrument { history }` gives as pageInfo.endCursor.",
    ),
) -> Response:
    """Daily bars with RSI, Bollinger %B and bandwidth, momentum, volatility, volume ratio
    and spread, in pages of `limit` bars; inside a page the bars are oldest first.

    By default a page is the newest `limit` bars (up to `end` when given) and `next_cursor`
    leads to the page of older bars before it. With `start` pages run forward: the first
    holds the oldest `limit` bars from `start`, and `next_cursor` leads to the newer ones.
    A cursor is opaque and pages this symbol's bars only (api/paging.py `bars_after`).
    Indicators are stored when prices arrive, computed over the instrument's whole
    history, so every page (even `limit=5`) has them warmed up."""
    span, after = (start, end), bars_after(symbol, cursor)
    read = lambda c: svc.desk.history(c, symbol, span, limit, after)  # noqa: E731
    return await svc.answer(conn, read, History, bars_page)
