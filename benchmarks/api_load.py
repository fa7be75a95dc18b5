"""Requests/s and p50/p99 latency of every REST read endpoint and the GraphQL 60-instrument
screen, each next to its own ceiling: a bare endpoint in the same server returning the
endpoint's own body (captured first) as the bytes it is, from a sync FastAPI route (what
serving a body already rendered costs: the route, a worker thread, the bytes written).
Targets (issue 65): every REST read and the GraphQL screen from one key over 16
connections at >= 0.8x its ceiling with no errors, on an idle machine and with the machine
busy (`--busy N`: N processes spinning on the CPU through the measurement); the screen's
p50 on one connection < 50 ms; `marketintel serve --workers 2` at >= 1.6x the requests/s
of one worker on /api/market/latest (issue 23). On the embedded SQLite store and on
Postgres.

The server runs in its own process (uvicorn, one worker) over a store of 260 simulated
days of 60 instruments with the stages' read models built (backfill), a prediction for
the last day, one executed AI day, the week's macro indicators (T3 against the simulated
institutions), a client with cash, ten positions and pending suggestions. The driver is a
raw keep-alive HTTP/1.1 client on asyncio (uvloop when installed) with a fixed number of
connections, in this process, so driver and server do not share a GIL (they do share the
machine's cores: say how many). Beside each pair, the server process's CPU time a
request on each side (`server_cpu_us`, from /proc): what a path costs the server's
interpreter, steadier than requests a second on a machine shared with other work. Every keyed
request carries a client key (authentication and rate limiting are measured), the admin
key for the admin-only AI history. The load average (1 minute) is taken after each pair
and printed beside it. The last line printed is one JSON object with every figure.

    python benchmarks/api_load.py [--seconds 5] [--connections 16] [--database sqlite|postgres|both]
        [--busy N] [--store DIR] [--only NAME ...]
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
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "svc-admin-" + "b" * 32
DAY = date(2026, 11, 20)
PG_ADMIN_URL = os.environ.get("MARKETINTEL_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")

GRAPHQL_SCREEN = (
    "{ instruments(first: 60) { nodes { symbol latestPrediction { score action } "
    "recentBars(first: 20) { nodes { tradingDate close rsi14 } } } } }"
)
ENDPOINTS = [  # (name, path, key): every REST read endpoint of issue 23, then the GraphQL screen
    ("market_latest", "/api/market/latest", "client"),
    ("market_symbol", "/api/market/symbol/{symbol}", "client"),
    ("market_history", "/api/market/history/{symbol}?limit=250", "client"),
    ("market_breadth", "/api/market/breadth", "client"),  # a cached read model since issue 42
    ("portfolio_positions", "/api/portfolio", "client"),
    ("portfolio_summary", "/api/portfolio/summary", "client"),
    ("ai_positions", "/api/ai-portfolio/positions", "client"),
    ("ai_summary", "/api/ai-portfolio/summary", "client"),
    ("ai_history", "/api/ai-portfolio/history", "admin"),
    ("performance", "/api/ai/performance", "client"),
    ("suggestions", "/api/suggestions", "client"),
    ("macro_indicators", "/api/v1/macro/indicators", "client"),
    ("graphql_screen", "/graphql?" + urlencode({"query": GRAPHQL_SCREEN}), "client"),
]
REST_TARGET, GRAPHQL_TARGET, GRAPHQL_P50_MS, SCALING_TARGET = 0.8, 0.8, 50.0, 1.6


def bench_app():
    """The service's app with a bare ceiling route per captured body: a sync route that
    returns the body's bytes as they are. (Until issue 65 the ceiling returned the body
    parsed, a dict FastAPI serialised on every request: for the 78 KB screen that cost
    about five times serving the bytes, so large bodies read as several times their
    ceiling.)"""
    from api.app import create_app
    from market.settings import get_settings

    app = create_app(get_settings())
    folder = Path(os.environ["BENCH_BODIES"])
    for path in sorted(folder.glob("*.json")):
        app.add_api_route(
            f"/bench/constant/{path.stem}", _constant(path.read_bytes()), methods=["GET"], include_in_schema=False
        )
    return app


def _constant(body: bytes):
    """A route that sends `body` and reads nothing of the request. Not `def constant(body:
    bytes = ...)`: FastAPI takes a parameter with a default as a query parameter, and
    resolved (and copied) it on every request, which slowed the ceiling."""
    from fastapi.responses import Response

    def constant() -> Response:
        return Response(body, media_type="application/json")

    return constant


@contextmanager
def busy_machine(processes: int) -> Iterator[None]:
    """`processes` processes spinning on the CPU for as long as the block runs: a machine
    busy with other work, whose cores the server, the driver and they share."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
        for _ in range(processes)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _prepare(work: Path, database_url: str) -> tuple[dict[str, str], str]:
    from desk import keys as keystore
    from ingest.simulator.market import SimulatedMarket
    from ingest.simulator.site import SimulatorSite
    from market.clock import default_calendar
    from market.settings import Settings, work_environment
    from pipeline.backfill import backfill
    from pipeline.runner import run_stage
    from pipeline.serving import serve_in_thread
    from portfolio import ai, suggestions
    from portfolio.trading import ManualTrade, move_cash, place_manual_trade
    from store import tables
    from store.engine import build_engine, dispose_engines
    from store.history import append_history
    from store.migrations import upgrade

    env = {
        **work_environment(work, url=database_url),
        "MARKETINTEL_ADMIN_KEY": ADMIN,
        "MARKETINTEL_NO_DOTENV": "1",
        "MARKETINTEL_LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    settings = Settings(
        _env_file=None,
        database_url=database_url,
        secrets_dir=work / "secrets",
        data_dir=work / "data",
        models_dir=work / "models",
        runs_dir=work / "runs",
        admin_key=ADMIN,
    )
    engine = build_engine(database_url)
    upgrade(engine)
    backfill(engine, settings, 260, DAY, with_text=False)  # delivers prices and builds the stored bars
    rng = random.Random(1)
    with engine.begin() as conn:
        symbols = sorted(
            {r.symbol for r in conn.execute(tables.eod_prices.select().where(tables.eod_prices.c.trading_date == DAY))}
        )
        append_history(
            conn,
            tables.predictions,
            [
                {
                    "symbol": s,
                    "trading_date": DAY,
                    "model_id": "bench",
                    "horizon_days": 1,
                    "predicted_return": rng.gauss(0, 0.01),
                    "p_up": 0.5,
                    "score": rng.uniform(30, 70),
                    "action": rng.choice(["LONG", "HOLD", "AVOID"]),
                    "weight": 0.05,
                    "tercile": "MIDDLE",
                    "layer1_p_up": 0.5,
                    "layer1_backend": "fallback-empirical-v1",
                }
                for s in symbols
            ],
        )
    ai.execute_day(engine, settings, DAY)
    client = keystore.generate(engine, settings, "Load Test", "INSTITUTIONAL")
    keystore.set_option(engine, client["key_id"], "RATE_LIMIT_SET", 10_000_000)
    portfolio = f"client:{client['client_id']}"
    move_cash(engine, portfolio, "10000000")
    with engine.connect() as conn:
        closes = {
            r.symbol: r.close
            for r in conn.execute(tables.eod_prices.select().where(tables.eod_prices.c.trading_date == DAY))
        }
    after_close = datetime(2026, 11, 20, 21, 30, tzinfo=UTC)
    for symbol in symbols[:10]:
        place_manual_trade(
            engine,
            settings,
            default_calendar(),
            portfolio,
            ManualTrade("BUY", symbol, 100, round(closes[symbol], 2)),
            now=after_close,
        )
    suggestions.generate(engine, settings, default_calendar().next_trading_day(DAY), now=after_close)
    site = SimulatorSite(SimulatedMarket(), published_through=DAY)
    with serve_in_thread(site.asgi_app()) as base:
        run_stage("t3_macro", date(2026, 11, 16), settings=settings.model_copy(update={"macro_base_url": base}))
    engine.dispose()
    dispose_engines()
    return env, client["api_key"]


class _Connection:
    """One keep-alive HTTP/1.1 connection that sends a prepared GET and reads the answer:
    the status line, the headers and a Content-Length or chunked body.
    On a machine whose cores it shares with the server, the driver's own cost is taken
    from the server: measured on one ceiling endpoint (382 B), this driver used 55-62 us
    of CPU a request and saw 1,780-1,844 req/s; the httpx client used before, 1.4-1.6 ms
    and 600-713 req/s."""

    def __init__(self, host: str, port: int, request: bytes) -> None:
        self.host, self.port, self.request = host, port, request
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(self.request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        lower = head.lower()
        at = lower.find(b"content-length:")
        if at >= 0:
            await self.reader.readexactly(int(lower[at + 15 : lower.index(b"\r\n", at)]))
        elif b"transfer-encoding: chunked" in lower:
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        if b"connection: close" in lower:
            self.close()
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def _request(base: str, path: str, key: str | None) -> tuple[str, int, bytes]:
    host, port = base.removeprefix("http://").split(":")
    headers = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n"
    if key:
        headers += f"X-API-Key: {key}\r\n"
    return host, int(port), (headers + "\r\n").encode()


async def _drive(base: str, path: str, key: str | None, seconds: float, connections: int, keep: bool = False) -> dict:
    latencies: list[float] = []
    errors = 0
    host, port, request = _request(base, path, key)
    pool = [_Connection(host, port, request) for _ in range(connections)]
    for conn in pool:  # warm the server's caches and the connections
        await conn.get()
    deadline = time.perf_counter() + seconds

    async def worker(conn: _Connection) -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                errors += await conn.get() != 200
            except (OSError, asyncio.IncompleteReadError, ValueError):
                errors += 1
                conn.close()
            latencies.append(time.perf_counter() - started)

    began = time.perf_counter()
    await asyncio.gather(*(worker(conn) for conn in pool))
    elapsed = time.perf_counter() - began
    for conn in pool:
        conn.close()
    if keep:
        return {"latencies": latencies, "elapsed_s": elapsed, "errors": errors}
    latencies.sort()
    return {
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000, 2),
        "requests": len(latencies),
        "errors": errors,
    }


def _run(coroutine):
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def _paired(
    base: str,
    first: tuple[str, str | None],
    second: tuple[str, str | None],
    args: argparse.Namespace,
    second_base: str | None = None,
    server_pid: int | None = None,
) -> tuple[dict, dict]:
    """Both paths driven in alternating slices of `--slice` seconds until each had
    `--seconds`, their figures pooled: on a machine shared with other work the load moves
    within seconds, and alternating gives the ceiling and the endpoint the same share of it.
    With `server_pid` (both paths on one server), the server process's CPU time a request
    in each (`server_cpu_us`): what the path costs the server's interpreter, which the
    requests a second of a machine shared with other work do not isolate."""
    runs: tuple[list[dict], list[dict]] = ([], [])
    rounds = max(1, round(args.seconds / args.slice))
    for _ in range(rounds):
        for runs_of, at, (path, key) in zip(runs, (base, second_base or base), (first, second)):
            before = _cpu_seconds(server_pid)
            run = _run(_drive(at, path, key, args.seconds / rounds, args.connections, keep=True))
            run["server_cpu_s"] = _cpu_seconds(server_pid) - before
            runs_of.append(run)
    return _pooled(runs[0]), _pooled(runs[1])


def _cpu_seconds(pid: int | None) -> float:
    """User and system CPU seconds of process `pid` so far (Linux /proc; 0.0 without a pid)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pooled(runs: list[dict]) -> dict:
    latencies = sorted(x for r in runs for x in r.pop("latencies"))
    elapsed = sum(r["elapsed_s"] for r in runs)
    pooled = {
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000, 2),
        "requests": len(latencies),
        "errors": sum(r["errors"] for r in runs),
    }
    cpu = sum(r.get("server_cpu_s", 0.0) for r in runs)
    if cpu:
        pooled["server_cpu_us"] = round(cpu / len(latencies) * 1e6)
    return pooled


class Server:
    def __init__(self, command: list[str], env: dict[str, str], port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **env, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("the API server did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def uvicorn_command(app: str, port: int, *options: str) -> list[str]:
    """The command serving the app factory `app` (module:function) on `port` in its own
    process, logging warnings only and no access log, with any further uvicorn `options`."""
    quiet = ["--log-level", "warning", "--no-access-log"]
    return [sys.executable, "-m", "uvicorn", "--factory", app, "--port", str(port), *options, *quiet]


def _uvicorn(port: int) -> list[str]:
    return uvicorn_command("api_load:bench_app", port, "--app-dir", str(ROOT / "benchmarks"))


def run_database(kind: str, database_url: str, args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"bench-api-{kind}-"))
    env, client_key = _prepare(work, database_url)
    return measure(kind, work, env, client_key, args)


def kept_store(folder: Path, args: argparse.Namespace) -> dict:
    """SQLite on the store prepared in `folder` by an earlier run with the same `--store`
    (prepared there now if none is), so paired runs of two commits read the same store."""
    folder = folder.resolve()
    prepared = folder / "prepared.json"
    if not prepared.exists():
        folder.mkdir(parents=True, exist_ok=True)
        env, client_key = _prepare(folder, f"sqlite:///{folder / 'bench.db'}")
        prepared.write_text(json.dumps({"env": env, "client_key": client_key}))
    kept = json.loads(prepared.read_text())
    os.environ.update(kept["env"])
    return measure("sqlite", Path(tempfile.mkdtemp(prefix="bench-api-sqlite-")), kept["env"], kept["client_key"], args)


def measure(kind: str, work: Path, env: dict[str, str], client_key: str, args: argparse.Namespace) -> dict:
    keys = {"client": client_key, "admin": ADMIN}
    bodies = work / "bodies"
    bodies.mkdir()
    env = {**env, "BENCH_BODIES": str(bodies)}
    server = Server(_uvicorn(args.port), env, args.port)
    try:
        symbol = next(iter(httpx.get(f"{server.base}/api/market/latest", headers={"X-API-Key": client_key}).json()))
        paths = {name: path.format(symbol=symbol) for name, path, _ in ENDPOINTS}
        for name, _, who in ENDPOINTS:
            response = httpx.get(server.base + paths[name], headers={"X-API-Key": keys[who]}, timeout=60)
            if response.status_code != 200 or "errors" in response.text[:20]:
                raise RuntimeError(f"{kind} {paths[name]}: {response.status_code} {response.text[:300]}")
            (bodies / f"{name}.json").write_bytes(response.content)
    finally:
        server.stop()
    with busy_machine(args.busy):
        return _measured(kind, env, keys, paths, args)


def _measured(
    kind: str, env: dict[str, str], keys: dict[str, str], paths: dict[str, str], args: argparse.Namespace
) -> dict:
    bodies = Path(env["BENCH_BODIES"])
    client_key = keys["client"]
    server = Server(_uvicorn(args.port), env, args.port)  # again, with one constant endpoint per body
    figures: dict[str, dict] = {}
    try:
        for name, _, who in ENDPOINTS:
            if args.only and name not in args.only:
                continue
            ceiling, measured = _paired(
                server.base,
                (f"/bench/constant/{name}", None),
                (paths[name], keys[who]),
                args,
                server_pid=server.process.pid,
            )
            ratio = round(measured["requests_per_s"] / ceiling["requests_per_s"], 3)
            figures[name] = {
                **measured,
                "ceiling_requests_per_s": ceiling["requests_per_s"],
                "ceiling_p50_ms": ceiling["p50_ms"],
                "ceiling_server_cpu_us": ceiling.get("server_cpu_us"),
                "vs_ceiling": ratio,
                "body_bytes": (bodies / f"{name}.json").stat().st_size,
                "load_average": round(os.getloadavg()[0], 2),
            }
            print(
                f"{kind:<8} {name:<20} {measured['requests_per_s']:>8.1f} req/s  ceiling "
                f"{ceiling['requests_per_s']:>8.1f}"
                f"  x{ratio:<6} p50 {measured['p50_ms']:>7.2f} ms  p99 {measured['p99_ms']:>7.2f} ms"
                f"  server CPU {measured.get('server_cpu_us')} us/request (ceiling {ceiling.get('server_cpu_us')})"
                f"  errors {measured['errors']}  {figures[name]['body_bytes']} B  load {figures[name]['load_average']}",
                flush=True,
            )
        # The screen's latency unqueued: one connection, one operation at a time.
        alone = _run(_drive(server.base, paths["graphql_screen"], client_key, args.seconds, 1))
        if "graphql_screen" in figures:
            figures["graphql_screen"]["one_connection"] = alone
        print(
            f"{kind:<8} graphql_screen on one connection: p50 {alone['p50_ms']} ms, p99 {alone['p99_ms']} ms, "
            f"{alone['requests_per_s']} req/s",
            flush=True,
        )
    finally:
        server.stop()
    if args.only:
        return {"endpoints": figures}
    # The deployed command, one and two workers side by side on two ports; both count rate
    # limits in the database, as serve does for N > 1 (a write per request).
    serve = str(Path(sys.executable).parent / "marketintel")
    scaling = _scaling(
        lambda workers, port: [serve, "serve", "--port", str(port), "--workers", str(workers)],
        {**env, "MARKETINTEL_RATE_LIMIT_STORE": "database"},
        client_key,
        args,
    )
    scale = round(scaling[2]["requests_per_s"] / scaling[1]["requests_per_s"], 3)
    print(f"{kind:<8} serve --workers 2 vs 1 on /api/market/latest: x{scale}", flush=True)
    # The same without the per-request counter write: uvicorn's workers, each counting in its own memory.
    memory = _scaling(
        lambda workers, port: uvicorn_command("api.app:create_app", port, "--workers", str(workers)),
        {**env, "MARKETINTEL_RATE_LIMIT_STORE": "memory"},
        client_key,
        args,
    )
    memory_scale = round(memory[2]["requests_per_s"] / memory[1]["requests_per_s"], 3)
    print(f"{kind:<8} uvicorn --workers 2 vs 1, rate limits in memory: x{memory_scale}", flush=True)
    rest = [n for n, _, _ in ENDPOINTS if n != "graphql_screen"]
    screen = figures["graphql_screen"]
    return {
        "endpoints": figures,
        "serve_workers_1": scaling[1],
        "serve_workers_2": scaling[2],
        "workers_2_vs_1": scale,
        "memory_limits_workers_1": memory[1],
        "memory_limits_workers_2": memory[2],
        "memory_limits_workers_2_vs_1": memory_scale,
        "rest_min_vs_ceiling": min(figures[n]["vs_ceiling"] for n in rest),
        "targets_met": {
            "rest": all(figures[n]["vs_ceiling"] >= REST_TARGET and figures[n]["errors"] == 0 for n in rest),
            # "p50 alone": the screen's latency on one connection, unqueued (with 16
            # in flight every endpoint's p50 is about 16 / its requests per second)
            "graphql": screen["vs_ceiling"] >= GRAPHQL_TARGET
            and screen["errors"] == 0
            and screen["one_connection"]["p50_ms"] < GRAPHQL_P50_MS,
            "workers": scale >= SCALING_TARGET,
        },
    }


def _scaling(command, env: dict[str, str], key: str, args: argparse.Namespace) -> dict[int, dict]:
    """/api/market/latest on one worker and on two, the two servers up side by side and
    driven in alternating slices (`_paired`)."""
    servers = {}
    try:
        for workers in (1, 2):
            port = args.port + workers
            servers[workers] = Server(command(workers, port), env, port)
        one, two = _paired(
            servers[1].base, ("/api/market/latest", key), ("/api/market/latest", key), args, second_base=servers[2].base
        )
    finally:
        for server in servers.values():
            server.stop()
    for workers, figures in ((1, one), (2, two)):
        print(f"    workers {workers}: /api/market/latest {figures}", flush=True)
    return {1: one, 2: two}


def _postgres_database() -> tuple[str, callable]:
    import psycopg

    name = f"marketintel_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}", drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--slice", type=float, default=1.0, help="Seconds per alternating slice of a paired measurement."
    )
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument(
        "--busy", type=int, default=0, metavar="N", help="N processes spinning on the CPU through the measurement"
    )
    parser.add_argument(
        "--store",
        type=Path,
        metavar="DIR",
        help="SQLite only: the store prepared in DIR by an earlier run (prepared there if none is), for paired runs",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=[],
        metavar="NAME",
        help="measure only these endpoints (names as printed), no workers: while working on one",
    )
    args = parser.parse_args()
    result: dict = {
        "benchmark": "api_load",
        "connections": args.connections,
        "seconds": args.seconds,
        "busy_processes": args.busy,
        "cpu_count": os.cpu_count(),
        "load_average_before": os.getloadavg()[0],
    }
    if args.store is not None:
        result["sqlite"] = kept_store(args.store, args)
    elif args.database in ("sqlite", "both"):
        result["sqlite"] = run_database("sqlite", f"sqlite:///{tempfile.mkdtemp(prefix='bench-db-')}/bench.db", args)
    if args.store is None and args.database in ("postgres", "both"):
        url, drop = _postgres_database()
        try:
            result["postgres"] = run_database("postgres", url, args)
        finally:
            drop()
    result["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
