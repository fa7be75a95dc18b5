"""One client's track record cannot starve another client (issue 57, item 1): Acme, with a
book of 2,600 trades over a year of market days (the issue's book), deposits 0.01 and
reads its track record in 8 concurrent loops (4 over REST, 4 over GraphQL) while Beta
reads /api/market/latest in a loop. Beta's p95 stays under 100 ms and every answer of
Beta's is 200; Acme gets fresh records (a read after its own write is of a version that
holds that write, so every 200 is a record built since the write) and may be refused
(429, or over GraphQL an error saying why: its one expensive read at a time), never
answered with a 5xx or a masked error.

Before the incremental read model, a rebuild replayed the whole ledger at every market
day: 1.4 s for this book (the issue measured 1.3 s, and Beta's p95 went from 10 ms to
7.2 s). What this test saw (SQLite / Postgres): before the per-client turn (6c5ed2e's
parent) Beta's p95 333 / 443 ms; at d79c49d (the turn, no read model) 49-85 / 95-159 ms,
Acme 1-4 fresh records over REST and 0-1 over GraphQL in 5 s, and GraphQL's refusals
masked as unexpected errors; with the read model (ea58a9f) 12-26 / 53-66 ms, 14-44 fresh
over REST and 8-17 over GraphQL; with one heavy turn per client (d59b980) 31-101 over
REST and 4-20 over GraphQL. The set-up takes under a second, the test about 8 s."""

from __future__ import annotations

import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from datetime import time as clock_time
from decimal import Decimal

import httpx

from desk import keys as keystore
from portfolio import ledger
from store import tables
from store.history import append_history
from tests.api import world
from tests.api.conftest import Api
from tests.portfolio.seed import DAY, days_up_to
from views.bars import refresh_bars

MARKET_DAYS = 250  # a year: the world's 60 days of prices and 190 before them
TRADES = 2_600  # ledger rows in Acme's book, about 10 a market day
LOOPS = 8  # Acme's write-then-read loops: half REST, half GraphQL
SECONDS = 5.0  # how long the loops run
P95_BOUND = 0.100  # Beta's /api/market/latest, seconds
# Fresh records Acme gets in the window, by transport: over REST one a second. Over GraphQL
# one every 2.5 s: a client's GraphQL operations take its one heavy turn one at a time
# (MARKETINTEL_HEAVY_REQUESTS_PER_CLIENT), so its 4 GraphQL loops' 8 operations a round
# queue behind each other while its 4 REST loops hold the interpreter; 4 in a window were
# seen on a loaded runner, at 465f2ea and after alike. Starved, it was 0-1.
MIN_FRESH = {"rest": 5, "graph": 2}
TRACK = "{ portfolio { trackRecord { days totalReturn trades } } }"
DEPOSIT = 'mutation { moveCash(amount: "0.01") { __typename ... on CashMoved { balance } } }'
REFUSED = "still running"  # Services.owned's refusal, over REST (429) and GraphQL (an error)


def extend_prices(api: Api) -> list:
    """The world's symbols priced over the MARKET_DAYS - 60 market days before its own
    history, continuing its closes (world.close_of before day 0) and shapes, then the bars
    brought up to date as the stage runner does; the year's market days."""
    days = days_up_to(DAY, MARKET_DAYS)
    earlier = days[: MARKET_DAYS - world.HISTORY_DAYS]
    rows = world.price_rows(earlier, -len(earlier))
    p = tables.eod_prices.c
    with api.world.engine.begin() as conn:
        append_history(
            conn, tables.eod_prices, rows, scope=[p.trading_date >= earlier[0], p.trading_date <= earlier[-1]]
        )
        refresh_bars(conn)
    return days


def seed_book(api: Api) -> str:
    """Acme's book over the year: a deposit on its first market day, then TRADES trades at
    each day's close, LIQ, MID and SLOW in turn, each name bought 20 and sold 10
    alternately (so every sale is of shares held, and cash never goes below zero), each
    with a fee of 1, stored as the ledger stores them in one batch (ledger.append_book).
    Its portfolio id."""
    w = api.world
    pid = api.acme("GET", "/api/portfolio").json()["portfolio_id"]
    days = extend_prices(api)
    first = datetime.combine(days[0], clock_time(13, 0), UTC)
    deposit = ledger.cash_entry(pid, "SEED-deposit", Decimal("5000000"), "DEPOSIT", first, None, Decimal(0))
    requests = []
    for j in range(TRADES):
        i = j * len(days) // TRADES
        symbol = ("LIQ", "MID", "SLOW")[j % 3]
        side = "SELL" if (j // 3) % 2 else "BUY"
        price = Decimal(str(world.close_of(symbol, i - len(days) + world.HISTORY_DAYS)))
        executed = datetime.combine(days[i], clock_time(15, 0), UTC) + timedelta(seconds=j)
        quantity = 10 if side == "SELL" else 20
        requests.append(
            ledger.TradeRequest(
                pid, days[i], executed, symbol, side, quantity, price, Decimal(1), trade_id=f"SEED-{j:05d}"
            )
        )
    with w.engine.begin() as conn:
        assert ledger.append_book(conn, pid, requests, [deposit]) == TRADES
    for key_id in (w.acme_key_id, w.beta_key_id):  # the loops measure the track record, not the per-key limit
        keystore.set_option(w.engine, key_id, "RATE_LIMIT_SET", 10_000_000, now=world.MORNING)
    return pid


def _rest_loop(http: httpx.Client, key: str) -> list[str]:
    """Deposit 0.01, read the track record: what each read was ("fresh", "refused", or
    what went wrong)."""
    headers = {"X-API-Key": key}
    outcomes = []
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        wrote = http.post("/api/portfolio/cash", json={"amount": "0.01"}, headers=headers)
        if wrote.status_code != 201:
            outcomes.append(f"deposit {wrote.status_code}: {wrote.text[:200]}")
            continue
        read = http.get("/api/portfolio/track-record", headers=headers)
        if read.status_code == 200 and read.json()["trades"] == TRADES:
            outcomes.append("fresh")
        elif read.status_code == 429 and REFUSED in read.text:
            outcomes.append("refused")
        else:
            outcomes.append(f"read {read.status_code}: {read.text[:200]}")
    return outcomes


def _graph_loop(http: httpx.Client, key: str) -> list[str]:
    """The same over GraphQL: the moveCash mutation, then the trackRecord query; a refusal
    is an error that says why (its message, as REST's 429 detail)."""
    headers = {"X-API-Key": key}
    outcomes = []
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        wrote = http.post("/graphql", json={"query": DEPOSIT}, headers=headers)
        if wrote.status_code != 200 or (wrote.json().get("data") or {}).get("moveCash", {}).get("__typename") != (
            "CashMoved"
        ):
            outcomes.append(f"deposit {wrote.status_code}: {wrote.text[:200]}")
            continue
        read = http.post("/graphql", json={"query": TRACK}, headers=headers)
        body = read.json() if read.headers.get("content-type", "").startswith("application/") else {}
        errors = body.get("errors") or []
        if read.status_code == 200 and not errors and body["data"]["portfolio"]["trackRecord"]["trades"] == TRADES:
            outcomes.append("fresh")
        elif read.status_code in (200, 429) and REFUSED in read.text:
            outcomes.append("refused")
        else:
            outcomes.append(f"read {read.status_code}: {read.text[:200]}")
    return outcomes


def _latest_loop(http: httpx.Client, key: str, started: threading.Event) -> list[tuple[int, float]]:
    """Beta's GET /api/market/latest, one after another: (status, seconds) of each."""
    started.wait()
    timings = []
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        t = time.perf_counter()
        status = http.get("/api/market/latest", headers={"X-API-Key": key}).status_code
        timings.append((status, time.perf_counter() - t))
        time.sleep(0.01)  # a client polling, not a flood of its own
    return timings


def test_a_clients_track_record_loops_leave_another_clients_reads_quick(api: Api) -> None:
    seed_book(api)
    w = api.world
    cold = api.acme("GET", "/api/portfolio/track-record")  # the first build is not what is measured
    assert cold.status_code == 200 and cold.json()["trades"] == TRADES and cold.json()["days"] >= MARKET_DAYS - 1, (
        cold.text
    )
    assert api.call("GET", "/api/market/latest", w.beta_key).status_code == 200  # warm
    clients = [httpx.Client(base_url=api.base, timeout=60) for _ in range(LOOPS + 1)]
    started = threading.Event()
    try:
        with ThreadPoolExecutor(LOOPS + 1) as pool:
            beta = pool.submit(_latest_loop, clients[-1], w.beta_key, started)
            loops = [
                pool.submit(_rest_loop if i % 2 == 0 else _graph_loop, clients[i], w.acme_key) for i in range(LOOPS)
            ]
            started.set()
            rest = [o for i, f in enumerate(loops) if i % 2 == 0 for o in f.result()]
            graph = [o for i, f in enumerate(loops) if i % 2 == 1 for o in f.result()]
            timings = beta.result()
    finally:
        for client in clients:
            client.close()
    latencies = sorted(seconds for _, seconds in timings)
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) >= 2 else float("inf")
    counts = {
        "rest_fresh": rest.count("fresh"),
        "rest_refused": rest.count("refused"),
        "graph_fresh": graph.count("fresh"),
        "graph_refused": graph.count("refused"),
        "acme_other": sum(o not in ("fresh", "refused") for o in rest + graph),
        "latest_answers": len(timings),
        "latest_p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "latest_p95_ms": round(p95 * 1000, 1),
        "latest_max_ms": round(latencies[-1] * 1000, 1) if latencies else None,
    }
    print(counts)
    wrong = sorted({o for o in rest + graph if o not in ("fresh", "refused")})  # a 5xx, a masked refusal, ...
    problems = [f"Acme got {o}" for o in wrong[:5]]
    problems += [f"Beta got {s}" for s in sorted({status for status, _ in timings} - {200})]
    for transport, least in MIN_FRESH.items():
        if counts[f"{transport}_fresh"] < least:
            problems.append(f"Acme got fewer than {least} fresh records over {transport} in {SECONDS:.0f} s")
    if len(timings) < 20:
        problems.append("Beta was answered fewer than 20 times in the window")
    if p95 >= P95_BOUND:
        problems.append(f"Beta's p95 {p95 * 1000:.0f} ms is not under {P95_BOUND * 1000:.0f} ms")
    assert not problems, (problems, counts)
