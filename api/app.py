"""The FastAPI application factory (`uvicorn api.app:create_app --factory`)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ConfigDict

from api.docs_pages import install_docs
from api.edge import OPEN_PATHS, Edge
from api.graphql.schema import graphql_router
from api.openapi import install_openapi
from api.problems import install_problem_handlers
from api.routers import ai, analysis, keys, macro, market, portfolio, reports, suggestions
from api.security import HeadAsGet
from api.services import build_services
from market.logging import configure_logging
from market.settings import Settings, get_settings


class Health(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"status": "ok", "database": "sqlite", "schema_current": True}]}
    )

    status: str
    database: str
    schema_current: bool


@asynccontextmanager
async def _started(app: FastAPI) -> AsyncIterator[None]:
    """Once the server has started: what start-up built (the modules, the schemas, the
    routes: about 190,000 objects) is collected once and frozen (`gc.freeze()`), so a full
    collection under load walks only what requests made since. Those objects live as long
    as the process anyway; a full collection of the whole heap held the process 170-192 ms
    under heavy work (docs/benchmarks.md), every request waiting. The test processes do the
    same (conftest.py); a stage kernel does it after each reset (pipeline/notebooks.py)."""
    gc.collect()
    gc.freeze()
    yield


def create_app(settings: Settings | None = None, now: Callable[[], datetime] | None = None) -> FastAPI:
    """Build the app; a missing or malformed admin key stops start-up with a clear error.
    `now` pins the clock (tests); by default it is the real UTC time."""
    settings = settings or get_settings()
    settings.checked_admin_key()
    configure_logging(settings.log_level)
    # docs_url/redoc_url None: FastAPI's own pages load Swagger UI and ReDoc from a CDN; ours
    # (api/docs_pages.py) serve them from installed packages.
    app = FastAPI(
        title="Market Intelligence Service",
        version="3.0.0",
        docs_url=None,
        redoc_url=None,
        lifespan=_started,
        description="Market data, two-layer predictions, the AI portfolio and client portfolios for one "
        "small stock exchange. Every request but /healthz carries `X-API-Key`; every error is "
        "RFC 9457 application/problem+json.",
    )
    app.router.route_class = HeadAsGet  # the app's own routes (/healthz) answer HEAD; the routers' are KeyCheckedRoute
    app.state.settings = settings
    app.state.services = build_services(settings, now)
    install_problem_handlers(app, OPEN_PATHS)
    for router in (
        market.router,
        ai.router,
        portfolio.router,
        suggestions.router,
        macro.router,
        analysis.router,
        reports.router,
        keys.router,
    ):
        app.include_router(router)
    app.include_router(graphql_router(settings), prefix="/graphql")
    install_openapi(app)
    install_docs(app)

    app.add_middleware(Edge, settings=settings)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        """A first visit lands on the interactive docs (no key needed there), not a 404."""
        return RedirectResponse("/docs", status_code=307)

    @app.get("/healthz", response_model=Health, tags=["operations"])
    def healthz() -> Health:
        """Liveness and schema state for load balancers; needs no key."""
        desk = app.state.services.desk
        current = desk.schema_current()
        return Health(status="ok" if current else "degraded", database=desk.engine.dialect.name, schema_current=current)

    return app
