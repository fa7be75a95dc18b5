"""/healthz latency while heavy work runs (issue 18): 16 PDF reports and 16 heavy GraphQL
queries (12 screens of 60 instruments x 20 bars, 4 documents of 400 fields that are slow
to validate) sent at once, while a separate client polls /healthz every 50 ms. Target:
p99 under 200 ms.

The server runs in its own process (uvicorn, one worker, the store of api_load.py: 260
simulated days of 60 instruments); `--heavy N` sets MARKETINTEL_HEAVY_REQUESTS, how many
reports and GraphQL operations run at once (the rest queue).

    python benchmarks/healthz_under_load.py [--heavy 2] [--reports 16] [--queries 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_load import GRAPHQL_SCREEN, Server, _prepare, uvicorn_command

WIDE = "{ portfolio { " + "cash " * 400 + "} }"


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(len(ordered) * share + 0.5) - 1))]


async def _poll(base: str, stop: asyncio.Event) -> list[float]:
    latencies = []
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        while not stop.is_set():
            started = time.perf_counter()
            response = await client.get("/healthz")
            latencies.append(time.perf_counter() - started)
            assert response.status_code == 200, response.text
            await asyncio.sleep(0.05)
    return latencies


async def _load(base: str, key: str, reports: int, queries: int) -> dict:
    limits = httpx.Limits(max_connections=reports + queries, max_keepalive_connections=reports + queries)
    async with httpx.AsyncClient(base_url=base, headers={"X-API-Key": key}, limits=limits, timeout=600) as client:

        async def report(i: int) -> int:
            path = "/api/quant-briefing.pdf" if i % 2 else "/api/compliance-report.pdf"
            return (await client.get(path)).status_code

        async def query(i: int) -> int:
            document = WIDE if i % 4 == 3 else GRAPHQL_SCREEN
            response = await client.post("/graphql", json={"query": document})
            return response.status_code if "errors" not in response.json() else 500

        started = time.perf_counter()
        statuses = await asyncio.gather(*[report(i) for i in range(reports)], *[query(i) for i in range(queries)])
        return {"seconds": round(time.perf_counter() - started, 1), "failed": sum(s != 200 for s in statuses)}


async def _measure(base: str, key: str, reports: int, queries: int) -> dict:
    idle_stop = asyncio.Event()
    idle = asyncio.create_task(_poll(base, idle_stop))
    await asyncio.sleep(6)
    idle_stop.set()
    idle_latencies = await idle
    stop = asyncio.Event()
    poller = asyncio.create_task(_poll(base, stop))
    load = await _load(base, key, reports, queries)
    stop.set()
    busy = await poller
    return {
        "idle_p50_ms": round(statistics.median(idle_latencies) * 1000, 1),
        "idle_p99_ms": round(_percentile(idle_latencies, 0.99) * 1000, 1),
        "busy_samples": len(busy),
        "busy_p50_ms": round(statistics.median(busy) * 1000, 1),
        "busy_p99_ms": round(_percentile(busy, 0.99) * 1000, 1),
        "busy_max_ms": round(max(busy) * 1000, 1),
        "load_seconds": load["seconds"],
        "load_failed": load["failed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy", type=int, default=2)
    parser.add_argument("--reports", type=int, default=16)
    parser.add_argument("--queries", type=int, default=16)
    parser.add_argument("--port", type=int, default=8792)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="bench-healthz-"))
    env, key = _prepare(work, f"sqlite:///{work / 'bench.db'}")
    env = {**env, "MARKETINTEL_HEAVY_REQUESTS": str(args.heavy), "MARKETINTEL_REPORTS_DIR": str(work / "reports")}
    server = Server(uvicorn_command("api.app:create_app", args.port), env, args.port)
    try:
        figures = asyncio.run(_measure(server.base, key, args.reports, args.queries))
    finally:
        server.stop()
    figures["load_average_before"], figures["load_average_after"] = round(load_before, 2), round(os.getloadavg()[0], 2)
    for name, value in figures.items():
        print(f"{name:<16} {value}")
    print(
        json.dumps(
            {
                "benchmark": "healthz_under_load",
                "heavy_requests": args.heavy,
                "reports": args.reports,
                "queries": args.queries,
                **figures,
                "target_met": figures["busy_p99_ms"] < 200,
            }
        )
    )


if __name__ == "__main__":
    main()
