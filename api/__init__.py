"""The HTTP API: the FastAPI app factory, edge middleware, authentication and rate limits,
error handlers (RFC 9457), the REST routers and the Strawberry GraphQL schema. Routers and
resolvers are thin adapters over views/ (reads) and the domain packages (writes).

May import: market, store, ingest, models, portfolio, views, analysis, reports, pipeline."""
