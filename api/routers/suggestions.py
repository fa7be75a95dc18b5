"""Morning suggestions for the caller's portfolio: list, confirm, reject."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Path
from fastapi.responses import Response

from api import paging
from api.deps import CallerDep, ConnDep, ServicesDep
from api.schemas.common import KEYED, problems
from api.schemas.portfolio import Suggestion, SuggestionPage
from api.security import KeyCheckedRoute, caller_portfolio_on
from api.services import written
from market.contract import MAX_SUGGESTION_ID

router = APIRouter(prefix="/api/suggestions", tags=["suggestions"], route_class=KeyCheckedRoute)
SUGGESTION_ID = Path(
    min_length=1, max_length=MAX_SUGGESTION_ID, description="A suggestion id from GET /api/suggestions."
)


@router.get("", response_model=SuggestionPage, responses=problems(*KEYED))
async def pending(svc: ServicesDep, caller: CallerDep, conn: ConnDep, page: paging.SuggestionsQuery) -> Response:
    """The caller's pending suggestions in pages of `limit` (expired ones are not listed: a
    suggestion for trading day D expires at D's close on the service's clock, the replayed
    market's on a replay), oldest trading day first, sells before buys, then by symbol:
    the page's key, so `next_cursor` holds even when a suggestion before it is decided."""
    pid = await svc.portfolio_on(conn, caller.account)
    shown = partial(page.slice, key=paging.suggestion_key)
    read = lambda c: svc.desk.pending_suggestions(c, pid)  # noqa: E731
    return await svc.answer(conn, read, SuggestionPage, shown, (page.limit, page.cursor))


@router.post("/{suggestion_id}/confirm", response_model=Suggestion, responses=problems(*KEYED, 404, 409))
def confirm(svc: ServicesDep, caller: CallerDep, conn: ConnDep, suggestion_id: str = SUGGESTION_ID) -> Response:
    """Execute the suggestion as a trade after re-checking cash, holdings and the rails;
    404 for an id not in the caller's portfolio, 409 when it is no longer pending. A retry of
    a confirmation already made (its answer lost) gets that answer again, the same trade,
    and books nothing."""
    pid = caller_portfolio_on(conn, svc, caller)
    conn.release()  # the write takes its own locked transaction: one connection at a time
    return svc.desk.confirm_suggestion(pid, suggestion_id, written(Suggestion))


@router.post("/{suggestion_id}/reject", response_model=Suggestion, responses=problems(*KEYED, 404, 409))
def reject(svc: ServicesDep, caller: CallerDep, conn: ConnDep, suggestion_id: str = SUGGESTION_ID) -> Response:
    """Decline the suggestion; 404 for an id not in the caller's portfolio, 409 when it is no longer pending."""
    pid = caller_portfolio_on(conn, svc, caller)
    conn.release()  # the write takes its own locked transaction: one connection at a time
    return svc.desk.reject_suggestion(pid, suggestion_id, written(Suggestion))
