"""The day's written analysis (T1 step 5) and its notifications."""

from __future__ import annotations

from fastapi import APIRouter, Query

from api.deps import CallerDep, ConnDep, ServicesDep
from api.schemas.analysis import DayAnalysis
from api.schemas.common import KEYED, SupportedDate, problems
from api.security import KeyCheckedRoute

router = APIRouter(tags=["analysis"], route_class=KeyCheckedRoute)


@router.get("/api/analysis", response_model=DayAnalysis, responses=problems(*KEYED, 404, 503))
def analysis(
    svc: ServicesDep,
    _: CallerDep,
    conn: ConnDep,
    date_: SupportedDate | None = Query(
        None, alias="date", description="A trading date; default: the latest analysed."
    ),
) -> DayAnalysis:
    """The day's analysis as written (writer named, fallback reason when the language model
    failed), the facts it was written from, and the day's notifications with whether the
    webhook acknowledged each. 503 before any analysis exists, 404 for a date without one."""
    return DayAnalysis.model_validate(svc.desk.analysis(conn, date_))
