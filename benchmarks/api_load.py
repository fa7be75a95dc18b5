"""Requests/s and p50/p99 latency of the running API on loopback, next to the framework's
ceiling: a bare endpoint in the same server returning a constant body of the same size
as /api/market/latest. Target: /api/market/latest at no less than half that ceiling.

The server runs in its own process (uvicorn, one worker, the embedded SQLite store with
260 simulated days of 60 instruments and a prediction for the last day); the driver is an
httpx async client with a fixed number of connections, so driver and server do not share
a GIL. Every keyed request carries a client key (authentication and rate limiting are
part of what is measured).

    python benchmarks/api_load.py [--seconds 8] [--connections 16]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "svc-admin-" + "b" * 32
DAY = date(2026, 11, 20)


GRAPHQL_SCREEN = ("{ instruments(first: 60) { nodes { symbol latestPrediction { score action } "
                  "recentBars(first: 20) { nodes { tradingDate close rsi14 } } } } }")


def bench_app():  # noqa: ANN201 - uvicorn factory: the real app plus the constant ceiling endpoint
    from api.app import create_app
    from market.settings import get_settings

    app = create_app(get_settings())
    body = json.loads(Path(os.environ["BENCH_CONSTANT_BODY"]).read_text())

    @app.get("/bench/constant", include_in_schema=False)
    def constant() -> dict:
        return body

    return app


def _prepare(work: Path) -> tuple[dict[str, str], str]:
    from api import keystore
    from pipeline.backfill import backfill
    from market.clock import default_calendar
    from market.settings import Settings
    from portfolio.trading import ManualTrade, move_cash, place_manual_trade
    from store import tables
    from store.engine import build_engine
    from store.history import append_history
    from store.migrations import upgrade

    env = {"MARKETINTEL_DATABASE_URL": f"sqlite:///{work / 'bench.db'}", "MARKETINTEL_ADMIN_KEY": ADMIN,
           "MARKETINTEL_SECRETS_DIR": str(work / "secrets"), "MARKETINTEL_DATA_DIR": str(work / "data"),
           "MARKETINTEL_NO_DOTENV": "1", "MARKETINTEL_LOG_LEVEL": "WARNING"}
    settings = Settings(_env_file=None, database_url=env["MARKETINTEL_DATABASE_URL"], secrets_dir=work / "secrets",
                        data_dir=work / "data")
    engine = build_engine(settings.database_url)
    upgrade(engine)
    backfill(engine, settings, 260, DAY, with_text=False)
    rng = random.Random(1)
    with engine.begin() as conn:
        symbols = sorted({r.symbol for r in conn.execute(tables.eod_prices.select().where(tables.eod_prices.c.trading_date == DAY))})
        append_history(conn, tables.predictions, [
            {"symbol": s, "trading_date": DAY, "model_id": "bench", "horizon_days": 1, "predicted_return": rng.gauss(0, 0.01),
             "p_up": 0.5, "score": rng.uniform(30, 70), "action": "HOLD", "weight": 0.0, "tercile": "MIDDLE",
             "layer1_p_up": 0.5, "layer1_backend": "fallback-empirical-v1"} for s in symbols])
    client = keystore.generate(engine, settings, "Load Test", "INSTITUTIONAL")
    keystore.set_option(engine, client["key_id"], "RATE_LIMIT_SET", 10_000_000)
    portfolio = f"client:{client['client_id']}"
    move_cash(engine, portfolio, "10000000")
    with engine.connect() as conn:
        closes = {r.symbol: r.close for r in conn.execute(tables.eod_prices.select().where(tables.eod_prices.c.trading_date == DAY))}
    for symbol in symbols[:10]:
        place_manual_trade(engine, settings, default_calendar(), portfolio,
                           ManualTrade("BUY", symbol, 100, round(closes[symbol], 2)), now=_after_close())
    return env, client["api_key"]


def _after_close():  # noqa: ANN202
    from datetime import datetime, timezone

    return datetime(2026, 11, 20, 21, 30, tzinfo=timezone.utc)


async def _drive(base: str, path: str, key: str | None, seconds: float, connections: int) -> dict:
    latencies: list[float] = []
    errors = 0
    headers = {"X-API-Key": key} if key else {}
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=30) as client:
        for _ in range(20):  # warm the server's caches and the connections
            await client.get(path)
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                response = await client.get(path)
                latencies.append(time.perf_counter() - started)
                errors += response.status_code != 200

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - began
    latencies.sort()
    return {"requests_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": round(statistics.median(latencies) * 1000, 2),
            "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 2),
            "requests": len(latencies), "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-api-"))
    env, key = _prepare(work)
    base = f"http://127.0.0.1:{args.port}"
    latest_body = work / "latest.json"
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "api_load:bench_app", "--app-dir", str(ROOT / "benchmarks"),
         "--port", str(args.port), "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env={**os.environ, **env, "BENCH_CONSTANT_BODY": str(latest_body), "PYTHONPATH": str(ROOT)})
    try:
        latest_body.write_text("{}")
        _wait(base)
        latest = httpx.get(f"{base}/api/market/latest", headers={"X-API-Key": key}).content
        latest_body.write_bytes(latest)
        server.terminate()
        server.wait(30)
        server = subprocess.Popen(server.args, cwd=ROOT, env={**os.environ, **env, "BENCH_CONSTANT_BODY": str(latest_body),
                                                              "PYTHONPATH": str(ROOT)})
        _wait(base)
        figures = {}
        symbol = next(iter(json.loads(latest)))
        for name, path, with_key in (("ceiling_constant", "/bench/constant", False),
                                     ("market_latest", "/api/market/latest", True),
                                     ("market_history", f"/api/market/history/{symbol}?limit=250", True),
                                     ("portfolio_summary", "/api/portfolio/summary", True),
                                     ("graphql_screen", "/graphql?" + urlencode({"query": GRAPHQL_SCREEN}), True)):
            figures[name] = asyncio.run(_drive(base, path, key if with_key else None, args.seconds, args.connections))
            print(f"{name:<18} {figures[name]}", flush=True)
    finally:
        server.terminate()
        server.wait(30)
    ratio = figures["market_latest"]["requests_per_s"] / figures["ceiling_constant"]["requests_per_s"]
    result = {"benchmark": "api_load", "body_bytes": len(latest), "connections": args.connections,
              "seconds": args.seconds, **{f"{k}_{m}": v[m] for k, v in figures.items() for m in ("requests_per_s", "p50_ms", "p99_ms", "errors")},
              "latest_vs_ceiling": round(ratio, 3), "target_met": ratio >= 0.5}
    print(json.dumps(result))


def _wait(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the API server did not start")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
