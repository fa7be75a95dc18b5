"""The HTTP API: FastAPI app factory, error handlers, routers."""
