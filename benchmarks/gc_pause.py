"""What a full garbage collection of a started API process costs, before and after the
start-up objects are frozen (api/app.py `_started`: `gc.freeze()` once the server has
started). A full collection walks every tracked object and holds the whole process,
every request waiting; under heavy work one took 170-192 ms (docs/benchmarks.md, "Load:
another client beside a heavy neighbour").

The app is built over a fresh migrated SQLite store (a temporary folder), answers four
requests that build what a first visit builds (health, the OpenAPI document, the docs
page, a GraphQL operation), then `gc.collect()` is timed five times, the heap frozen as
the lifespan freezes it, and timed five times again. The last line printed is one JSON
object.

    python benchmarks/gc_pause.py
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COLLECTIONS = 5
ADMIN_KEY = "svc-admin-" + "b" * 40


def _full_ms() -> float:
    started = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - started) * 1e3


def _figures(times: list[float]) -> dict:
    return {
        "median_ms": round(statistics.median(times), 2),
        "min_ms": round(min(times), 2),
        "max_ms": round(max(times), 2),
    }


def main() -> None:
    folder = tempfile.mkdtemp(prefix="gc-pause-")
    os.environ.update(MARKETINTEL_ADMIN_KEY=ADMIN_KEY, MARKETINTEL_DATABASE_URL=f"sqlite:///{folder}/store.db")
    from fastapi.testclient import TestClient

    from api.app import create_app
    from market.settings import get_settings
    from store.engine import build_engine
    from store.migrations import upgrade

    settings = get_settings()
    upgrade(build_engine(settings.database_url))
    client = TestClient(create_app(settings))  # not entered: the lifespan's freeze is done below, timed
    for path in ("/healthz", "/openapi.json", "/docs", "/graphql?query=%7B__typename%7D"):
        client.get(path, headers={"X-API-Key": ADMIN_KEY})
    tracked = len(gc.get_objects())
    before = [_full_ms() for _ in range(COLLECTIONS)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    after = [_full_ms() for _ in range(COLLECTIONS)]
    print(
        f"full collection: {statistics.median(before):.1f} ms over {tracked:,} tracked objects; "
        f"{statistics.median(after):.2f} ms with {frozen:,} frozen",
        flush=True,
    )
    print(
        json.dumps(
            {
                "benchmark": "gc_pause",
                "tracked_objects": tracked,
                "frozen_objects": frozen,
                "before_freeze": _figures(before),
                "after_freeze": _figures(after),
                "load_average": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
