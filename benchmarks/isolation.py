"""Another client's read beside a heavy neighbour (issue 64, item 9): one client at its
INSTITUTIONAL rate limit on 8 connections doing heavy work (deposits, each followed by its
track record so it is rebuilt, both PDF reports, the GraphQL 60-instrument screen) while
a quiet client reads `GET /api/portfolio/summary` on one connection at a steady pace.
Target: the quiet client's p95 under 100 ms beside the neighbour, on SQLite and Postgres.

The server runs in its own process (uvicorn, one worker, the service's settings) over the
store of api_load.py (260 simulated days of 60 instruments, a prediction per instrument,
an executed AI day, macro indicators, a client with ten positions: the quiet client).
The heavy client is a second INSTITUTIONAL key at its tier's rate limit, with ten
positions of its own; its requests are paced at that limit (`--heavy-rate`, requests a
minute) across its connections, and what the server refuses (429) is counted. The quiet
client is measured alone and beside the neighbour in alternating slices (`--rounds`, each
`--alone` then `--busy` seconds), the neighbour stopped and its requests drained between
slices, so both see the same share of a shared machine. The driver is api_load.py's raw
keep-alive HTTP/1.1 client on asyncio (uvloop), in this process. The last line printed
is one JSON object with every figure.

    python benchmarks/isolation.py [--database sqlite|postgres|both] [--rounds 3] [--alone 5] [--busy 10]
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
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_load import (
    DAY,
    GRAPHQL_SCREEN,
    ROOT,
    Server,
    _Connection,
    _postgres_database,
    _prepare,
    _request,
    _run,
    uvicorn_command,
)

QUIET_PATH = "/api/portfolio/summary"
P95_TARGET_MS = 100.0
# The heavy client's 8 connections, each on one kind of work (issue 64's adversarial mix).
HEAVY_ROLES = ["track", "track", "briefing", "briefing", "compliance", "compliance", "screen", "screen"]


def _add_heavy_client(env: dict[str, str], database_url: str) -> str:
    """A second INSTITUTIONAL client at its tier's rate limit, with cash and ten positions
    bought at the last day's closes; its key."""
    from datetime import UTC, datetime

    from desk import keys as keystore
    from market.clock import default_calendar
    from market.settings import get_settings
    from portfolio.trading import ManualTrade, move_cash, place_manual_trade
    from store import tables
    from store.engine import build_engine, dispose_engines

    get_settings.cache_clear()
    settings = get_settings()
    engine = build_engine(database_url)
    client = keystore.generate(engine, settings, "Heavy Neighbour", "INSTITUTIONAL")
    portfolio = f"client:{client['client_id']}"
    move_cash(engine, portfolio, "10000000")
    with engine.connect() as conn:
        closes = {
            r.symbol: r.close
            for r in conn.execute(tables.eod_prices.select().where(tables.eod_prices.c.trading_date == DAY))
        }
    after_close = datetime(2026, 11, 20, 21, 30, tzinfo=UTC)
    for symbol in sorted(closes)[-10:]:
        trade = ManualTrade("BUY", symbol, 100, round(closes[symbol], 2))
        place_manual_trade(engine, settings, default_calendar(), portfolio, trade, now=after_close)
    engine.dispose()
    dispose_engines()
    return client["api_key"]


def _heavy_requests(base: str, key: str) -> dict[str, bytes]:
    """The raw HTTP/1.1 request of each kind of heavy work."""
    host, port, _ = _request(base, "/", None)
    head = f"Host: {host}:{port}\r\nAccept: */*\r\nX-API-Key: {key}\r\n"
    deposit = b'{"amount": "0.01"}'
    post = (
        f"POST /api/portfolio/cash HTTP/1.1\r\n{head}Content-Type: application/json\r\n"
        f"Content-Length: {len(deposit)}\r\n\r\n"
    ).encode() + deposit
    get = lambda path: f"GET {path} HTTP/1.1\r\n{head}\r\n".encode()  # noqa: E731
    from urllib.parse import urlencode

    return {
        "deposit": post,
        "track": get("/api/portfolio/track-record"),
        "briefing": get("/api/quant-briefing.pdf"),
        "compliance": get("/api/compliance-report.pdf"),
        "screen": get("/graphql?" + urlencode({"query": GRAPHQL_SCREEN})),
    }


@dataclass
class Neighbour:
    """The heavy client: its connections' tasks, paced together at `rate` requests a second."""

    base: str
    requests: dict[str, bytes]
    rate: float
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)
    running: bool = False
    seconds: float = 0.0  # how long it has run, its drains included
    _next: float = 0.0
    _tasks: list[asyncio.Task] = field(default_factory=list)

    async def _paced(self) -> None:
        """Wait for this request's place in the client's pace (its rate limit)."""
        now = time.perf_counter()
        self._next = max(self._next + 1 / self.rate, now)
        if self._next > now:
            await asyncio.sleep(self._next - now)

    async def _send(self, conn: _Connection, kind: str) -> None:
        await self._paced()
        conn.request = self.requests[kind]
        try:
            status = await conn.get()
        except (OSError, asyncio.IncompleteReadError, ValueError):
            status = 0
            conn.close()
        counts = self.statuses.setdefault(kind, {})
        counts[status] = counts.get(status, 0) + 1

    async def _loop(self, role: str) -> None:
        host, port, _ = _request(self.base, "/", None)
        conn = _Connection(host, port, b"")
        try:
            while self.running:
                if role == "track":  # a deposit first, so the track record is rebuilt
                    await self._send(conn, "deposit")
                    if not self.running:
                        break
                await self._send(conn, role)
        finally:
            conn.close()

    def start(self) -> None:
        self.running = True
        self._next = time.perf_counter()
        self._tasks = [asyncio.create_task(self._loop(role)) for role in HEAVY_ROLES]

    async def stop(self) -> float:
        """Stop sending; the seconds its requests in flight took to be answered."""
        self.running = False
        began = time.perf_counter()
        await asyncio.gather(*self._tasks)
        return time.perf_counter() - began


async def _quiet(base: str, key: str, seconds: float, interval: float) -> list[float]:
    """The quiet client's reads, one connection, one every `interval` seconds (the next
    starts at once when one took longer): each read's seconds."""
    host, port, request = _request(base, QUIET_PATH, key)
    conn = _Connection(host, port, request)
    latencies = []
    deadline = time.perf_counter() + seconds
    due = time.perf_counter()
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            status = await conn.get()
            latencies.append(time.perf_counter() - started)
            if status != 200:
                raise RuntimeError(f"the quiet client's read answered {status}")
            due = max(due + interval, time.perf_counter())
            await asyncio.sleep(due - time.perf_counter())
    finally:
        conn.close()
    return latencies


def _cpu_seconds(pid: int) -> float:
    """The process's user and system CPU seconds so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Phase:
    """What one kind of slice (alone or beside the neighbour) saw, pooled over the rounds."""

    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    server_cpu: float = 0.0
    load: list[float] = field(default_factory=list)

    def figures(self) -> dict:
        ordered = sorted(self.latencies)
        pick = lambda share: round(ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000, 2)  # noqa: E731
        return {
            "reads": len(ordered),
            "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": pick(0.95),
            "p99_ms": pick(0.99),
            "max_ms": round(ordered[-1] * 1000, 2),
            "server_cpu_share": round(self.server_cpu / self.seconds, 2),
            "load_average": round(statistics.mean(self.load), 2),
        }


async def _slice(phase: Phase, server_pid: int, base: str, key: str, seconds: float, interval: float) -> None:
    cpu, began = _cpu_seconds(server_pid), time.perf_counter()
    phase.latencies += await _quiet(base, key, seconds, interval)
    phase.seconds += time.perf_counter() - began
    phase.server_cpu += _cpu_seconds(server_pid) - cpu
    phase.load.append(os.getloadavg()[0])


async def _rounds(server: Server, quiet_key: str, heavy: Neighbour, args: argparse.Namespace) -> dict:
    alone, busy, drains = Phase(), Phase(), []
    pid = server.process.pid
    await _quiet(server.base, quiet_key, 1.0, args.interval)  # warm: the summary's body is kept
    for _ in range(args.rounds):
        await _slice(alone, pid, server.base, quiet_key, args.alone, args.interval)
        heavy.start()
        await asyncio.sleep(args.warmup)  # the neighbour's queues fill
        began = time.perf_counter()
        await _slice(busy, pid, server.base, quiet_key, args.busy, args.interval)
        heavy_seconds = time.perf_counter() - began + args.warmup
        drains.append(round(await heavy.stop(), 2))
        heavy.seconds += heavy_seconds + drains[-1]
    return {"alone": alone.figures(), "beside": busy.figures(), "drain_seconds": drains}


def _neighbour_figures(heavy: Neighbour) -> dict:
    answered = {k: sum(n for s, n in v.items() if s in (200, 201)) for k, v in heavy.statuses.items()}
    refused = {k: v.get(429, 0) for k, v in heavy.statuses.items()}
    other = {k: {s: n for s, n in v.items() if s not in (200, 201, 429)} for k, v in heavy.statuses.items()}
    sent = sum(sum(v.values()) for v in heavy.statuses.values())
    return {
        "requests_per_s": round(sent / heavy.seconds, 1),
        "answered_per_s": round(sum(answered.values()) / heavy.seconds, 1),
        "answered": answered,
        "refused_429": refused,
        "other": {k: v for k, v in other.items() if v},
    }


def run_database(kind: str, database_url: str, args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"bench-isolation-{kind}-"))
    began = time.perf_counter()
    env, quiet_key = _prepare(work, database_url)
    heavy_key = _add_heavy_client(env, database_url)
    seeded = time.perf_counter() - began
    server = Server(uvicorn_command("api.app:create_app", args.port), env, args.port)
    try:
        for key in (quiet_key, heavy_key):  # the PDFs' and the screen's first builds are not measured
            for path in ("/api/quant-briefing.pdf", "/api/compliance-report.pdf", QUIET_PATH):
                assert httpx.get(server.base + path, headers={"X-API-Key": key}, timeout=60).status_code == 200
        limit = args.heavy_rate
        heavy = Neighbour(server.base, _heavy_requests(server.base, heavy_key), limit / 60)
        figures = _run(_rounds(server, quiet_key, heavy, args))
    finally:
        server.stop()
    figures["neighbour"] = {"rate_per_minute": limit, **_neighbour_figures(heavy)}
    figures["seed_seconds"] = round(seeded, 1)
    figures["target_met"] = figures["beside"]["p95_ms"] < P95_TARGET_MS
    _print(kind, figures)
    return figures


def _print(kind: str, figures: dict) -> None:
    for name in ("alone", "beside"):
        f = figures[name]
        print(
            f"{kind:<8} quiet {name:<6} {QUIET_PATH}: p50 {f['p50_ms']:>7.2f} ms  p95 {f['p95_ms']:>7.2f} ms  "
            f"p99 {f['p99_ms']:>7.2f} ms  max {f['max_ms']:>7.2f} ms  ({f['reads']} reads; server CPU "
            f"{f['server_cpu_share']:.2f} of a core; load average {f['load_average']})",
            flush=True,
        )
    n = figures["neighbour"]
    print(
        f"{kind:<8} neighbour: {n['requests_per_s']} req/s sent, {n['answered_per_s']} answered/s; "
        f"answered {n['answered']}; 429 {n['refused_429']}; other {n['other']}; drains {figures['drain_seconds']} s",
        flush=True,
    )


def main() -> None:
    from market.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--alone", type=float, default=5.0, help="Seconds of each slice without the neighbour.")
    parser.add_argument("--busy", type=float, default=10.0, help="Seconds of each slice beside the neighbour.")
    parser.add_argument("--warmup", type=float, default=2.0, help="Seconds the neighbour runs before a busy slice.")
    parser.add_argument("--interval", type=float, default=0.05, help="Seconds between the quiet client's reads.")
    parser.add_argument(
        "--heavy-rate",
        type=int,
        default=Settings(_env_file=None).rate_limit_for("INSTITUTIONAL"),
        help="The neighbour's pace, requests a minute (default: its tier's limit).",
    )
    parser.add_argument("--port", type=int, default=8793)
    args = parser.parse_args()
    result: dict = {
        "benchmark": "isolation",
        "cpu_count": os.cpu_count(),
        "load_average_before": os.getloadavg()[0],
    }
    if args.database in ("sqlite", "both"):
        result["sqlite"] = run_database("sqlite", f"sqlite:///{tempfile.mkdtemp(prefix='bench-db-')}/bench.db", args)
    if args.database in ("postgres", "both"):
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
