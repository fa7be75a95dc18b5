"""Macro indicators (any key) and the tier-gated macro insights."""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import Response

from api.deps import CallerDep, ConnDep, ServicesDep
from api.schemas.common import KEYED, SupportedDate, problems
from api.schemas.macro import MacroIndicators, MacroInsights
from api.security import KeyCheckedRoute
from market.errors import PermissionDeniedError

router = APIRouter(tags=["macro"], route_class=KeyCheckedRoute)


@router.get("/api/v1/macro/indicators", response_model=MacroIndicators, responses=problems(*KEYED))
async def indicators(
    svc: ServicesDep,
    _: CallerDep,
    conn: ConnDep,
    source: str | None = Query(None, max_length=20, description="BOJ, STATIN or PIOJ."),
    category: str | None = Query(
        None, max_length=20, description="rates, fx, reserves, money, prices, output, labour or outlook."
    ),
    currency: str | None = Query(None, max_length=3, description="Convert money values to this ISO 4217 code."),
    as_of: SupportedDate | None = Query(
        None, description="YYYY-MM-DD: values as known at the end of that day (left out: as known today)."
    ),
) -> Response:
    """The latest value of every indicator from the central bank, the statistics institute
    and the planning institute, optionally filtered; `as_of` gives the values as they were
    known at the end of a day (releases on or before it, as recorded by then), `currency` converts money values with
    the FX rate of each value's period and names the rate."""
    read = lambda c: svc.desk.macro_indicators(c, source, category, currency, as_of)  # noqa: E731
    return await svc.answer(conn, read, MacroIndicators)


@router.get("/api/macro_insights", response_model=MacroInsights, responses=problems(*KEYED, 403, 503))
def insights(svc: ServicesDep, caller: CallerDep, conn: ConnDep) -> MacroInsights:
    """The macro parameters (rates regime, FX pressure, macro risk) of the latest week starting
    on or before today, with their inputs (all released before that week's Monday) and the
    three sources. PRO and INSTITUTIONAL keys, and keys whose macro access is on."""
    refusal = caller.macro_insights_refusal
    if refusal is not None:
        raise PermissionDeniedError(refusal)
    return MacroInsights.model_validate(svc.desk.macro_insights(conn), from_attributes=True)
