"""Serve an ASGI app on a free loopback port from a background thread: the demo's
simulated exchange and the tests' real-HTTP servers use it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def uvicorn_stop_options(grace_seconds: float) -> dict[str, Any]:
    """A bounded stop (settings.shutdown_grace_seconds): after SIGTERM uvicorn waits this long
    for the requests in flight, then cancels them and closes their connections. Without
    it uvicorn waits for as long as a client keeps a request open."""
    return {"timeout_graceful_shutdown": grace_seconds}


def uvicorn_proxy_options(trusted_proxies: str) -> dict[str, Any]:
    """X-Forwarded-For is read only from the proxies named (MARKETINTEL_TRUSTED_PROXIES);
    uvicorn's own default trusts it from 127.0.0.1, so any local client could choose the
    address its failed logins are counted against."""
    return {"proxy_headers": bool(trusted_proxies), "forwarded_allow_ips": trusted_proxies or None}


@contextmanager
def serve_in_thread(
    app: Any, host: str = "127.0.0.1", port: int = 0, trusted_proxies: str = "", grace_seconds: float = 10.0
) -> Iterator[str]:
    """Yield the base URL (http://127.0.0.1:PORT) while `app` is being served.
    `trusted_proxies`: see `uvicorn_proxy_options`; `grace_seconds`: `uvicorn_stop_options`."""
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            **uvicorn_proxy_options(trusted_proxies),
            **uvicorn_stop_options(grace_seconds),
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not (server.started and server.servers):
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the server on {host} did not start")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=grace_seconds + 2)
