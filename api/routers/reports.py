"""The two PDF reports, generated on demand from current data (reports/), each a heavy
request (`Services.run_heavy`): at most `heavy_requests_per_client` of one caller's
(its key's client; requests without a key together) built at once, the rest queued; one
whose client has left by its turn is not built. HEAD is answered without building one
(`_head`). A report is built in a worker process
(`Services.apart`, the desk's `report_order`), so the server's interpreter is not held
while it is."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request
from fastapi.responses import Response

from api.deps import ReportReaderDep, ServicesDep
from api.schemas.common import KEYED, problems
from api.security import KeyCheckedRoute, Principal, asked_head, still_held
from api.services import Services, heavy_client

router = APIRouter(tags=["reports"], route_class=KeyCheckedRoute)
PDF = {
    200: {
        "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
        "description": "The report; `X-Data-SHA256` carries the digest of the data snapshot it was built from.",
    }
}


async def _built(request: Request, svc: Services, caller: Principal | None, kind: str) -> Response:
    """The report built in its caller's heavy turn, unbuilt when its client has left by
    then, and refused (401) when its key was revoked or rotated out while it waited
    (`still_held`)."""
    return await svc.run_heavy(
        heavy_client(caller), _pdf, kind, svc, gone=request.is_disconnected, held=partial(still_held, request)
    )


def _pdf(kind: str, svc: Services) -> Response:
    report = svc.apart(svc.desk.report_order(kind))
    return Response(
        report.pdf,
        media_type="application/pdf",
        headers={
            "Content-Disposition": f'inline; filename="{report.filename}"',
            "X-Data-SHA256": report.sha256,
            "Cache-Control": "no-store",
        },
    )


def _head() -> Response:
    """A HEAD's answer, after the key check and count the GET's takes: the GET's status,
    content type and caching, no report built and no heavy turn taken. What only the build
    knows (the length, the filename's market day, the data's digest) is left out, as RFC
    9110 9.3.2 lets a server do; a HEAD built the whole PDF to send none of it."""
    response = Response(media_type="application/pdf", headers={"Cache-Control": "no-store"})
    del response.headers["content-length"]
    return response


@router.get("/api/quant-briefing.pdf", response_class=Response, responses={**PDF, **problems(*KEYED)})
async def quant_briefing(request: Request, svc: ServicesDep, caller: ReportReaderDep) -> Response:
    """System performance, market breadth, top signals by Score, the AI portfolio, its
    equity curve and the Score distribution. Needs a key unless `public_reports` is on."""
    if asked_head(request):
        return _head()
    return await _built(request, svc, caller, "quant-briefing")


@router.get("/api/compliance-report.pdf", response_class=Response, responses={**PDF, **problems(*KEYED)})
async def compliance_report(request: Request, svc: ServicesDep, caller: ReportReaderDep) -> Response:
    """Risk disclosures, model metrics, the AI portfolio's recent trade audit trail,
    regulatory notices and a certification with the data snapshot's SHA-256. Needs a key
    unless `public_reports` is on."""
    if asked_head(request):
        return _head()
    return await _built(request, svc, caller, "compliance")
