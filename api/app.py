"""The FastAPI application factory (`uvicorn api.app:create_app --factory`)."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Callable

from fastapi import FastAPI, Request
from pydantic import BaseModel, ConfigDict

from api.graphql.schema import graphql_router
from api.openapi import install_openapi
from api.problems import install_problem_handlers, problem
from api.routers import ai, analysis, keys, macro, market, portfolio, reports, suggestions
from api.services import build_services
from market.logging import configure_logging
from market.settings import Settings, get_settings

UPLOAD_PATHS = ("/api/portfolio/upload-pdf", "/api/portfolio/upload-research")
MULTIPART_OVERHEAD = 1 << 16
WITH_BODY = ("POST", "PUT", "PATCH")


class Health(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"status": "ok", "database": "sqlite", "schema_current": True}]})

    status: str
    database: str
    schema_current: bool


def create_app(settings: Settings | None = None, now: Callable[[], datetime] | None = None) -> FastAPI:
    """Build the app; a missing or malformed admin key stops start-up with a clear error.
    `now` pins the clock (tests); by default it is the real UTC time."""
    settings = settings or get_settings()
    settings.checked_admin_key()
    configure_logging(settings.log_level)
    app = FastAPI(title="Market Intelligence Service", version="3.0.0",
                  description="Market data, two-layer predictions, the AI portfolio and client portfolios for one "
                              "small stock exchange. Every request but /healthz carries `X-API-Key`; every error is "
                              "RFC 9457 application/problem+json.")
    app.state.settings = settings
    app.state.services = build_services(settings, now)
    install_problem_handlers(app)
    for router in (market.router, ai.router, portfolio.router, suggestions.router, macro.router, analysis.router, reports.router,
                   keys.router):
        app.include_router(router)
    app.include_router(graphql_router(settings), prefix="/graphql")
    install_openapi(app)

    @app.middleware("http")
    async def _edge(request: Request, call_next):  # noqa: ANN001, ANN202
        request.state.request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        refused = _refuse_body(request, settings)
        if refused is not None:
            status, detail = refused
            return problem(request, status, detail)
        response = await call_next(request)
        response.headers["X-Request-ID"] = request.state.request_id
        decision = getattr(request.state, "rate_limit", None)
        if decision is not None:
            response.headers.update(decision.headers())
        return response

    @app.get("/healthz", response_model=Health, tags=["operations"])
    def healthz() -> Health:
        """Liveness and schema state for load balancers; needs no key."""
        from market.errors import SchemaNotReadyError
        from store.engine import service_engine
        from store.migrations import require_current_schema

        engine = service_engine(settings)
        try:
            require_current_schema(engine)
            current = True
        except SchemaNotReadyError:
            current = False
        return Health(status="ok" if current else "degraded", database=engine.dialect.name, schema_current=current)

    return app


def _refuse_body(request: Request, settings: Settings) -> tuple[int, str] | None:
    """415 and 413 decided from the headers alone, before a byte of the body is read."""
    if request.method not in WITH_BODY or not request.url.path.startswith("/api/"):
        return None
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    length = request.headers.get("content-length")
    has_body = (length is not None and length != "0") or "transfer-encoding" in request.headers
    if request.url.path in UPLOAD_PATHS:
        if media != "multipart/form-data":
            return 415, f"uploads are multipart/form-data with a `file` part, not {media or 'no content type'}"
        if length and length.isdigit() and int(length) > settings.pdf_max_bytes + MULTIPART_OVERHEAD:
            return 413, f"the upload is {int(length):,} bytes, over the limit of {settings.pdf_max_bytes:,}"
        return None
    if has_body and media != "application/json" and not media.endswith("+json"):
        return 415, f"request bodies are application/json, not {media or 'no content type'}"
    return None
