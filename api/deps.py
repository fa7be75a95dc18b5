"""The request dependencies every route declares, as `Annotated` aliases (the FastAPI
full-stack template's `deps.py` pattern): a handler writes `svc: ServicesDep, caller:
CallerDep` and FastAPI resolves them; the rule behind each lives once, in api/services.py
(the app's services) and api/security.py (authentication, rate limits, the admin check)."""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Security

from api.security import Principal, admin, api_key_header, principal, report_reader
from api.services import Services, services

ServicesDep = Annotated[Services, Depends(services)]
CallerDep = Annotated[Principal, Depends(principal)]  # any valid key
AdminDep = Annotated[Principal, Depends(admin)]  # the admin key
ReportReaderDep = Annotated[Principal | None, Depends(report_reader)]  # a key, or none while reports are public
PresentedKey = Annotated[str | None, Security(api_key_header)]  # the raw X-API-Key header
