"""RFC 9457 problem details for every non-2xx response.

Domain errors (market/errors.py) map to statuses here and only here, one class each.
"""
from __future__ import annotations

import logging
import uuid
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from market import errors

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"

STATUS_BY_ERROR: dict[type[errors.MarketIntelError], int] = {
    errors.InvalidInputError: 422,
    errors.NotFoundError: 404,
    errors.ConflictError: 409,
    errors.NotReadyError: 503,
    errors.AuthenticationError: 401,
    errors.PermissionDeniedError: 403,
    errors.PayloadTooLargeError: 413,
    errors.UnsupportedMediaTypeError: 415,
    errors.RateLimitedError: 429,
}


def problem(request: Request, status: int, detail: str, *, title: str | None = None,
            headers: dict[str, str] | None = None, **extra: object) -> JSONResponse:
    request_id = getattr(request.state, "request_id", None) or uuid.uuid4().hex
    body = {
        "type": "about:blank",
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "instance": request.url.path,
        "request_id": request_id,
        **extra,
    }
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON,
                        headers={**(headers or {}), "X-Request-ID": request_id})


def problem_for(request: Request, error: errors.MarketIntelError) -> JSONResponse:
    """The problem response of a domain error (the exception handler and the edge share it)."""
    status = status_for(error)
    if status == 500:
        log.exception("unmapped domain error", exc_info=error)
        return problem(request, 500, "internal error; quote the request id to the operator")
    return problem(request, status, error.detail, title=error.title, headers=error.context.get("headers"))  # type: ignore[arg-type]


def status_for(error: errors.MarketIntelError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


def install_problem_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.MarketIntelError)
    async def _domain(request: Request, exc: errors.MarketIntelError) -> JSONResponse:
        return problem_for(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return problem(request, exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        # Name each failing field and why (pydantic's messages do not repeat the input).
        named = "; ".join(f"{'.'.join(str(p) for p in f['loc'][1:]) or f['loc'][0]}: {f['msg']}" for f in fields)
        return problem(request, 422, f"the request does not match the schema: {named}", errors=fields)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return problem(request, 500, "internal error; quote the request id to the operator")
