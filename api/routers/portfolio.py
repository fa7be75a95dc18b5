"""The caller's portfolio: positions, summary, trades, cash, statement and research uploads.
A client key acts on its client's portfolio, the admin key on the house portfolio."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, File, Header, Query, Request, UploadFile, status
from fastapi.responses import Response
from sqlalchemy import Connection
from starlette.concurrency import run_in_threadpool

from api import paging
from api.deps import CallerDep, ConnDep, ServicesDep, UploaderDep
from api.jsonbody import StrictJSONRoute
from api.schemas.common import KEYED, CursorPage, IdempotencyKeyIn, problems, whole_query
from api.schemas.portfolio import (
    CashIn,
    CashOut,
    CashPage,
    ManualTradeIn,
    PortfolioPositions,
    PortfolioSummary,
    ResearchResult,
    StatementResult,
    TrackRecord,
    TradeOut,
    TradePage,
    TradePreview,
    TradeSide,
)
from api.security import Principal, caller_portfolio, caller_portfolio_on, held_since_check, recheck_due
from api.services import Services, written
from api.uploads import read_upload
from desk import Versioned
from market.money import MAX_ORDER_SHARES

router = APIRouter(prefix="/api/portfolio", tags=["portfolio"], route_class=StrictJSONRoute)
IDEMPOTENCY = Header(
    None,
    alias="Idempotency-Key",
    description="Retrying with the same key returns the first result and books once; 1 to 200 printable "
    "ASCII characters.",
)


@router.get("", response_model=PortfolioPositions, responses=problems(*KEYED))
async def positions(svc: ServicesDep, caller: CallerDep, conn: ConnDep) -> Response:
    """Open positions at the latest close with market value, PnL and exit flags."""
    pid = await svc.portfolio_on(conn, caller.account)
    return await svc.answer(conn, lambda c: svc.desk.positions(c, pid), PortfolioPositions)


@router.get("/summary", response_model=PortfolioSummary, responses=problems(*KEYED))
async def summary(svc: ServicesDep, caller: CallerDep, conn: ConnDep) -> Response:
    """Equity, cash, liquid equity, PnL and the allocation breakdown."""
    pid = await svc.portfolio_on(conn, caller.account)
    return await svc.answer(conn, lambda c: svc.desk.portfolio_summary(c, pid), PortfolioSummary)


@router.get("/trade", response_model=TradePage, responses=problems(*KEYED))
async def trades(svc: ServicesDep, caller: CallerDep, conn: ConnDep, page: paging.TradesQuery) -> Response:
    """The portfolio's trades in pages of `limit`, in the order the book recorded them
    (oldest first; a statement's earlier trade comes where it was recorded), `next_cursor`
    leading to the later ones. Keyed by ledger row: a trade placed between two pages is
    never repeated nor skipped."""
    return await _ledger_page(svc, caller, conn, page, TradePage, svc.desk.trades)


async def _ledger_page(
    svc: Services,
    caller: Principal,
    conn: Connection,
    page: paging.PageQuery,
    model: type[CursorPage],
    read: Callable[[Connection, str, int | None, int], Versioned[list]],
) -> Response:
    """A page of the caller's book's ledger (`read`: the desk's read of its trades or cash
    movements, keyed by ledger row), rendered once per page asked and version of the book."""
    pid = await svc.portfolio_on(conn, caller.account)
    return await svc.answer(conn, lambda c: read(c, pid, page.after(), page.limit), model, page.body)


PreviewQuantity = whole_query(
    Query(gt=0, le=MAX_ORDER_SHARES, description="Shares: the digits of a whole number (a trade's bound)."), shares=True
)


@router.get("/trade/preview", response_model=TradePreview, responses=problems(*KEYED, 404))
def trade_preview(
    svc: ServicesDep,
    caller: CallerDep,
    conn: ConnDep,
    side: Annotated[TradeSide, Query(description="buy or sell (BUY, SELL), as the trade takes it")],
    symbol: Annotated[str, Query(min_length=1, max_length=20, description="A listed symbol.")],
    quantity: PreviewQuantity,
) -> TradePreview:
    """What the cost model says `quantity` shares would cost in a session like the latest:
    the touch (ask or bid, else half the day's range from the close), square-root impact,
    fees, the price per share with all of them, and how much one session would fill. The
    same model prices the AI portfolio's fills and the morning suggestions; and whether the
    caller's portfolio would book the order at that price now (`bookable`), else the
    booking's refusal (`refusal`), beside the shares it holds and its cash. Nothing is
    stored."""
    preview = svc.desk.preview_trade(conn, side, symbol, quantity, caller_portfolio_on(conn, svc, caller))
    return TradePreview.model_validate(preview, from_attributes=True)


@router.post("/trade", response_model=TradeOut, status_code=status.HTTP_201_CREATED, responses=problems(*KEYED, 409))
def trade(
    order: ManualTradeIn, svc: ServicesDep, caller: CallerDep, idempotency_key: IdempotencyKeyIn | None = IDEMPOTENCY
) -> Response:
    """A manual trade at the given price, checked against the listing, the day's price
    band around the latest close, holdings and cash; refused with the reason (422).
    The same Idempotency-Key with a different order is 409."""
    pid = caller_portfolio(svc, caller)
    return svc.desk.place_trade(
        pid, order.order(), idempotency_key, written(TradeOut, 201, lambda placed: placed.to_json())
    )


@router.get("/track-record", response_model=TrackRecord, responses=problems(*KEYED))
async def track_record(svc: ServicesDep, caller: CallerDep, conn: ConnDep) -> Response:
    """The portfolio's record valued at every market day's close since its first movement:
    return, volatility, Sharpe, Sortino, drawdown, Calmar, turnover and fees, beside the
    equal-weighted liquid universe and the service's index (fractions; deposits,
    withdrawals and statement syncs are flows, not performance; dividends count)."""
    pid = await svc.portfolio_on(conn, caller.account)
    return await svc.answer(conn, lambda c: svc.desk.track_record(c, pid), TrackRecord)


@router.get("/cash", response_model=CashPage, responses=problems(*KEYED))
async def cash_movements(svc: ServicesDep, caller: CallerDep, conn: ConnDep, page: paging.CashQuery) -> Response:
    """The portfolio's cash movements in pages of `limit`, in the order the book recorded
    them (oldest first), with the balance after each: deposits, withdrawals, trades and
    fees, dividends, statement reconciliations; `next_cursor` leads to the later ones."""
    return await _ledger_page(svc, caller, conn, page, CashPage, svc.desk.cash_movements)


@router.post("/cash", response_model=CashOut, status_code=status.HTTP_201_CREATED, responses=problems(*KEYED, 409))
def cash(
    movement: CashIn, svc: ServicesDep, caller: CallerDep, idempotency_key: IdempotencyKeyIn | None = IDEMPOTENCY
) -> Response:
    """A deposit (positive amount) or withdrawal (negative); cash never goes below zero, and
    a withdrawal may not take dividends credited but not yet paid (422 naming the amount
    and its payment date; the summary's `dividends_receivable`). A retry with the same
    Idempotency-Key returns the first balance and books nothing; the same key with another
    movement is 409."""
    pid = caller_portfolio(svc, caller)
    shown = written(CashOut, 201, lambda balance: {"portfolio_id": pid, "balance": balance})
    return svc.desk.move_cash(pid, movement.amount, movement.note, shown, idempotency_key)


# The uploads hold no database slot while their body streams in and their PDF is read
# (UploaderDep, not CallerDep); each runs under the process's upload gate
# (api/services.py UploadGate: 429 past the client's share, 503 past the process's), and
# takes a slot only to store what it read.
@router.post("/upload-pdf", response_model=StatementResult, responses=problems(*KEYED, 409, 413, 415, 503))
async def upload_pdf(
    request: Request,
    svc: ServicesDep,
    caller: UploaderDep,
    file: UploadFile = File(description="An account statement PDF."),
    preview: bool = Query(
        False,
        description="Only say what the sync would change (status PREVIEW, with a confirm_token); nothing is stored.",
    ),
    confirm: str | None = Query(
        None,
        min_length=1,
        max_length=64,
        description="A preview's confirm_token: apply exactly what it showed (409 if the book changed since; "
        "422 if no preview of this file issued it).",
    ),
) -> Response:
    """Synchronise the portfolio from a broker statement (holdings or transactions
    layout): positions and cash as the statement says at its date, with what the ledger
    records after that date kept on top (`carried`); the same file twice changes nothing
    (ALREADY_IMPORTED). `preview=true` runs the same sync and rolls it back; `confirm` applies
    a preview only while the book is as it saw it."""
    data = await read_upload(request, file, svc.settings.pdf_max_bytes, pdf_only=True)
    with svc.uploads.turn(caller.portfolio_id):
        read = await run_in_threadpool(svc.desk.read_statement, data, file.filename or "statement.pdf")
        await _held_through_read(request)
        async with svc.slots():
            pid = await run_in_threadpool(caller_portfolio, svc, caller)
            shown = written(StatementResult)
            return await run_in_threadpool(svc.desk.sync_statement, pid, read, preview, confirm, shown)


@router.post("/upload-research", response_model=ResearchResult, responses=problems(*KEYED, 413, 415, 503))
async def upload_research(
    request: Request,
    svc: ServicesDep,
    caller: UploaderDep,
    file: UploadFile = File(description="A research note: PDF or UTF-8 text."),
) -> Response:
    """Read, tag and score a research note; the instruments it names and its sentiment."""
    data = await read_upload(request, file, svc.settings.pdf_max_bytes, pdf_only=False)
    with svc.uploads.turn(caller.portfolio_id):
        note = await run_in_threadpool(svc.desk.read_note, data, file.filename, file.content_type)
        await _held_through_read(request)
        async with svc.slots():
            return await run_in_threadpool(svc.desk.file_note, note, caller.client_id, written(ResearchResult))


async def _held_through_read(request: Request) -> None:
    """An upload's key checked again before it stores anything, when its file took a while
    to read (a PDF: up to `pdf_timeout_seconds` in its sandbox, after waiting as long for
    one): 401 and nothing stored when the key was revoked or rotated out meanwhile
    (api/security.py `held_since_check`)."""
    if recheck_due(request):
        await run_in_threadpool(held_since_check, request, "its file was read")
