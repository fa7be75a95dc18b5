"""What one version read costs on Postgres, the client's CPU and the database backend's,
one read at a time: the statement a kept answer makes on every request (store/history.py
`newest_ids`, here over ten tables and over two) through the path an API request takes
(store/engine.py `ServerReader.lent` and SQLAlchemy's `AsyncConnection.run_sync`), beside
`SELECT 1` through the same path and the same ten-table statement on a bare psycopg
`AsyncConnection`, prepared and not. What it is for: docs/performance.md, "Against the
targets": the part of a kept Postgres answer that a bare endpoint never pays, split into
what the asyncio adaptation costs, what the driver costs and what the database costs.

A fresh database (migrated, empty tables: each newest id is an index's first entry) on
127.0.0.1:5432 (`MARKETINTEL_BENCH_POSTGRES`), dropped afterwards. CPU from /proc: the
client is this process (`time.process_time`), the backend the server process of the
reader's connection (`pg_backend_pid()`), so run it on the database's machine.

    python benchmarks/version_read.py [--reads 3000]

The last line printed is one JSON object with every figure (microseconds a read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from sqlalchemy import Engine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_load import _postgres_database  # noqa: E402

WARMUP = 50  # reads before each measurement: psycopg prepares a statement from its fifth execution


def backend_cpu_s(pid: int) -> float:
    """The user and system CPU seconds of process `pid` (the database backend)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measured(reads: int, backend: int, once: Callable[[], Awaitable[object]]) -> dict[str, float]:
    for _ in range(WARMUP):
        await once()
    backend0, client0, wall0 = backend_cpu_s(backend), time.process_time(), time.perf_counter()
    for _ in range(reads):
        await once()
    backend1, client1, wall1 = backend_cpu_s(backend), time.process_time(), time.perf_counter()
    return {
        "client_cpu_us": round(1e6 * (client1 - client0) / reads, 1),
        "backend_cpu_us": round(1e6 * (backend1 - backend0) / reads, 1),
        "wall_us": round(1e6 * (wall1 - wall0) / reads, 1),
    }


async def through_reader(engine: Engine, reads: int) -> tuple[dict[str, dict[str, float]], str]:
    """The request's path: a connection lent by the process's server reader, the read run
    on it in a greenlet (`run_sync`), each statement awaited on the loop; with the SQL of
    the ten-table statement, for the bare driver. `select_1` goes through SQLAlchemy's own
    execute (`exec_driver_sql`); `newest_ids` takes the driver's cursor (`_on_driver`)."""
    from store import engine as engines
    from store import tables
    from store.history import newest_ids

    ten = (tables.eod_prices, tables.predictions, tables.instruments, tables.fundamentals, tables.index_levels)
    ten += (tables.corporate_actions, tables.daily_bars, tables.validation_predictions, tables.model_runs)
    ten += (tables.api_keys,)
    reader = engines.server_reader(engine)
    async with reader.lent() as conn:
        backend = (await conn.exec_driver_sql("SELECT pg_backend_pid()")).scalar()
    reads_of = {
        "select_1": lambda sync: sync.exec_driver_sql("SELECT 1").scalar(),
        "newest_ids_10_tables": lambda sync: newest_ids(sync, *ten),
        "newest_ids_2_tables": lambda sync: newest_ids(sync, tables.eod_prices, tables.fundamentals),
    }
    figures = {}
    for name, read in reads_of.items():

        async def once(read=read) -> object:
            async with reader.lent() as conn:
                return await conn.run_sync(read)

        figures[name] = await measured(reads, backend, once)
    reader.close()
    sql = "SELECT " + ", ".join(f"(SELECT max(id) FROM {table.name})" for table in ten)
    return figures, sql


async def on_bare_driver(url: str, sql: str, reads: int) -> dict[str, dict[str, float]]:
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    try:
        backend = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0]
        figures = {}
        for prepare in (False, True):

            async def once(prepare=prepare) -> object:
                return await (await conn.execute(sql, prepare=prepare)).fetchone()

            name = "bare_driver_10_tables_" + ("prepared" if prepare else "unprepared")
            figures[name] = await measured(reads, backend, once)
        return figures
    finally:
        await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=3000)
    args = parser.parse_args()
    from store import engine as engines
    from store.migrations import upgrade

    url, drop = _postgres_database()
    try:
        engine = engines.build_engine(url)
        upgrade(engine)
        figures, sql = asyncio.run(through_reader(engine, args.reads))
        driver_url = url.replace("postgresql+psycopg://", "postgresql://")
        figures.update(asyncio.run(on_bare_driver(driver_url, sql, args.reads)))
        engines.dispose_engines()
        engine.dispose()
    finally:
        drop()
    for name, row in figures.items():
        client, backend, wall = row["client_cpu_us"], row["backend_cpu_us"], row["wall_us"]
        print(f"{name:34s} client {client:7.1f} us  backend {backend:7.1f} us  wall {wall:7.1f} us")
    summary = {"benchmark": "version_read", "reads": args.reads, "cpu_count": os.cpu_count(), "figures": figures}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
