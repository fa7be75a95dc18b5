"""Serve an ASGI app on a free loopback port from a background thread: the demo's
simulated exchange and the tests' real-HTTP servers use it."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG
from uvicorn.logging import AccessFormatter, DefaultFormatter

from market.logging import OneLineFormatter


class OneLineDefaultFormatter(OneLineFormatter, DefaultFormatter):
    """uvicorn's formatter of its own events, each record one line."""


class OneLineAccessFormatter(OneLineFormatter, AccessFormatter):
    """uvicorn's access-log formatter, each record one line."""


def uvicorn_log_options() -> dict[str, Any]:
    """uvicorn's own logging set-up (its loggers, handlers, formats and colours) with each
    record one line (market/logging.py `OneLineFormatter`): its "Exception in ASGI
    application" record holds the exception's traceback, whose message a client may write.
    "uvicorn.error" propagates to "uvicorn"'s handler, said outright: uvicorn's set-up leaves
    a logger's `propagate` as it found it, and Airflow's (imported in the same process by a
    DAG or a test) turns it off, so the server's errors went to no handler."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["default"]["()"] = OneLineDefaultFormatter
    config["formatters"]["access"]["()"] = OneLineAccessFormatter
    config["loggers"]["uvicorn.error"]["propagate"] = True
    return {"log_config": config}


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
            **uvicorn_log_options(),
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
