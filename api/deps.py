"""The request dependencies every route declares, as `Annotated` aliases (the FastAPI
full-stack template's `deps.py` pattern): a handler writes `svc: ServicesDep, caller:
CallerDep` and FastAPI resolves them; the rule behind each lives once, in api/services.py
(the app's services) and api/security.py (authentication, rate limits, the admin check).

`CallerDep` is the one authentication dependency: always the caller's `Principal` (the
route checked the key before validation: api/security.py `KeyCheckedRoute`); `AdminDep`
and `UploaderDep` are the same check, the first then refusing a client key (403).

`ConnDep` is the request's one database connection: every read the handler makes, and
every function it calls (valuation day, valuations, the caller's portfolio), use it;
nothing below a handler opens another. A key check answered from memory rides on its
first version read (api/security.py `request_connection`). It is given back when the
handler returns, before the response is sent. A request waits for it on the event loop
(api/services.py, `Services.connection`), holding nothing, so a pool of any size queues
requests but cannot deadlock them."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Security
from sqlalchemy import Connection

from api.security import Principal, admin, api_key_header, principal, report_reader, request_connection
from api.services import Services, services

ServicesDep = Annotated[Services, Depends(services)]
CallerDep = Annotated[Principal, Depends(principal)]  # any valid key
UploaderDep = Annotated[Principal, Depends(principal)]  # any valid key (an upload's, checked at the edge); no slot held
AdminDep = Annotated[Principal, Depends(admin)]  # the admin key
ReportReaderDep = Annotated[Principal | None, Depends(report_reader)]  # a key, or none while reports are public
PresentedKey = Annotated[str | None, Security(api_key_header)]  # the raw X-API-Key header
ConnDep = Annotated[Connection, Depends(request_connection, scope="function")]  # the request's one connection
