"""Market data: the latest day per ticker, a symbol's statistics, its history."""
from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from api.deps import CallerDep, ServicesDep
from api.schemas.common import KEYED, SupportedDate, problems
from api.schemas.market import (
    LATEST_EXAMPLE,
    Breadth,
    History,
    LatestQuote,
    SymbolStatistics,
)
from market.clock import latest_closed_trading_day, supported_date
from market.errors import InvalidInputError
from views import market as market_views
from views.breadth import market_breadth

router = APIRouter(prefix="/api/market", tags=["market"])
SYMBOL = Path(min_length=1, max_length=20, pattern=r"^[A-Za-z0-9.\-]+$", description="Ticker, e.g. NCBFG.")


@router.get("/latest", response_model=dict[str, LatestQuote], responses={
    **problems(*KEYED, 404, 503), 200: {"content": {"application/json": {"example": LATEST_EXAMPLE}}}})
def latest(svc: ServicesDep, _: CallerDep,
           date_: SupportedDate | None = Query(None, alias="date", description="A trading date already delivered; default: the latest.")) -> Response:
    """Every ticker's latest close, volume and change with its prediction (score, action,
    tercile, predicted return) and RSI. With `date`: 503 when that day's session has closed
    but its data is not delivered yet, 404 for a gap in the history, 422 for a date that is
    not a trading day or has not closed."""
    def render() -> bytes:
        with svc.engine.connect() as conn:
            body = market_views.latest_market(conn, svc.calendar, latest_closed_trading_day(svc.now(), svc.calendar), date_)
        return _json(dict[str, LatestQuote], body)

    with svc.engine.connect() as conn:
        version = market_views.data_version(conn)
    return Response(svc.cached(("latest", date_), version, render), media_type="application/json")


@router.get("/breadth", response_model=Breadth, responses=problems(*KEYED, 404, 503))
def breadth(svc: ServicesDep, _: CallerDep,
            date_: SupportedDate | None = Query(None, alias="date", description="A trading date already delivered; default: the latest.")) -> Breadth:
    """The day's advancers, decliners, unchanged and untraded stocks and the change of the
    service's capitalisation-weighted index; same dates and errors as /latest."""
    with svc.engine.connect() as conn:
        body = market_breadth(conn, svc.calendar, latest_closed_trading_day(svc.now(), svc.calendar), date_)
    return Breadth.model_validate(body)


@router.get("/symbol/{symbol}", response_model=SymbolStatistics, responses=problems(*KEYED, 404, 503))
def symbol_statistics(svc: ServicesDep, _: CallerDep, symbol: str = SYMBOL) -> SymbolStatistics:
    """Variance of daily log returns over 20, 60, 120 and 250 days, and the latest day's
    statistics as z-scores against the instrument's own history."""
    with svc.engine.connect() as conn:
        return SymbolStatistics.model_validate(market_views.symbol_statistics(conn, symbol))


@router.get("/history/{symbol}", response_model=History, responses=problems(*KEYED, 404))
def history(svc: ServicesDep, _: CallerDep, symbol: str = SYMBOL,
            start: SupportedDate | None = Query(None, description="First trading date (inclusive)."),
            end: SupportedDate | None = Query(None, description="Last trading date (inclusive)."),
            limit: int = Query(250, ge=1, le=2000, description="Bars per page."),
            cursor: str | None = Query(None, max_length=40, description="`next_cursor` of the previous page.")) -> History:
    """Daily bars oldest first with RSI, Bollinger %B and bandwidth, momentum, volatility,
    volume ratio and spread; pages of `limit` bars."""
    after = _cursor(cursor)
    with svc.engine.connect() as conn:
        page = market_views.history(conn, symbol, start, end, limit, after)
    cursor_out = page["next_cursor"]
    return History.model_validate({**page, "next_cursor": cursor_out.isoformat() if cursor_out else None})


def _cursor(cursor: str | None) -> date | None:
    if cursor is None:
        return None
    try:
        return supported_date(cursor, "cursor")
    except InvalidInputError:
        raise InvalidInputError(f"cursor '{cursor}' was not issued by this endpoint; pass next_cursor unchanged") from None


def _json(model: object, body: object) -> bytes:
    from pydantic import TypeAdapter

    adapter = TypeAdapter(model)
    return adapter.dump_json(adapter.validate_python(body))
