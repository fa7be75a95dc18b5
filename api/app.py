"""The FastAPI application factory (`uvicorn api.app:create_app --factory`)."""
from __future__ import annotations

import uuid

from fastapi import FastAPI, Request
from pydantic import BaseModel

from market.logging import configure_logging
from market.settings import Settings, get_settings
from api.problems import install_problem_handlers


class Health(BaseModel):
    status: str
    database: str
    schema_current: bool


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; a missing or malformed admin key stops start-up with a clear error."""
    settings = settings or get_settings()
    settings.checked_admin_key()
    configure_logging(settings.log_level)
    app = FastAPI(title="Market Intelligence Service", version="3.0.0")
    app.state.settings = settings
    install_problem_handlers(app)

    @app.middleware("http")
    async def _request_id(request: Request, call_next):  # noqa: ANN001, ANN202
        request.state.request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        response = await call_next(request)
        response.headers["X-Request-ID"] = request.state.request_id
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
