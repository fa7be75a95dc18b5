"""T1 for one trading day on the Celery production profile against the embedded runner,
on the same store contents: wall time of the day's eight T1 tasks from the REST trigger
to the run's success (`ops/airflow_prod.sh`: scheduler, dag-processor, api-server,
triggerer, two Celery workers; every task a fresh supervised process on a worker, its
stage notebook in its own kernel) against T1's seven stage notebooks run one after the
other in one process without Airflow, each in a kernel of its own as on the workers
(`marketintel run-day` runs them in one kernel: pipeline/notebooks.py `one_kernel`).

Set-up (not timed): a simulated market of `--instruments` instruments, `--history` trading
days backfilled into a Postgres database, then T0 for the measured day over HTTP from the
simulator; that database is copied (CREATE DATABASE ... TEMPLATE) so both runners start
from the same rows on the same kind of store. Neither side has a model yet, so both
measured days include the first model's training in t1_predict. Every database, process
and folder made here is removed at the end.

    python benchmarks/t1_celery.py [--instruments 2000] [--history 60] [--postgres URL] [--redis URL]

The last stdout line is one JSON object: both wall times, the ratio (Celery / embedded)
and the per-stage seconds of each side.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DAY = date(2026, 11, 20)
SCRIPT = str(ROOT / "ops" / "airflow_prod.sh")
EMBEDDED_T1 = """
import json, sys, time
from pipeline.day import T1_STAGES
from pipeline.notebooks import run_stage_notebook
seconds = {}
started = time.perf_counter()
for stage in T1_STAGES:
    t = time.perf_counter()
    run_stage_notebook(stage, sys.argv[1], trigger="cli")
    seconds[stage] = round(time.perf_counter() - t, 1)
print("MEASURED " + json.dumps({"wall_s": time.perf_counter() - started, "stage_s": seconds}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def store_url(server: str, name: str) -> str:
    return f"postgresql+psycopg://{server.split('://', 1)[1]}/{name}"


def store_env(url: str, work: Path, size: int, exchange: str) -> dict[str, str]:
    from market.settings import work_environment

    return {
        "MARKETINTEL_NO_DOTENV": "1",
        "MARKETINTEL_LOG_LEVEL": "WARNING",
        **work_environment(work, url=url),
        "MARKETINTEL_SIMULATOR_INSTRUMENTS": str(size),
        "MARKETINTEL_EXCHANGE_BASE_URL": exchange,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def prepare(url: str, work: Path, size: int, history: int, exchange: str, market) -> float:
    """Backfill `history` days before DAY, then T0 for DAY over HTTP; seconds taken."""
    from market.settings import Settings, get_settings
    from pipeline.backfill import backfill
    from pipeline.runner import run_stage
    from store.engine import build_engine, dispose_engines
    from store.migrations import upgrade

    started = time.perf_counter()
    settings = Settings(_env_file=None, database_url=url, data_dir=work / "data", simulator_instruments=size)
    engine = build_engine(url)
    upgrade(engine)
    backfill(engine, settings, history, market.calendar.previous_trading_day(DAY), market, with_text=False)
    engine.dispose()
    os.environ.update(store_env(url, work, size, exchange))
    get_settings.cache_clear()
    outcome = run_stage("t0_scrape", DAY, trigger="cli")
    if outcome.status != "SUCCEEDED":
        raise SystemExit(f"T0 for {DAY} did not succeed: {outcome}")
    dispose_engines()
    return time.perf_counter() - started


def run_embedded(url: str, work: Path, size: int, exchange: str) -> dict:
    env = {**os.environ, **store_env(url, work, size, exchange)}
    out = subprocess.run([sys.executable, "-c", EMBEDDED_T1, DAY.isoformat()], env=env, capture_output=True, text=True)
    line = [x for x in out.stdout.splitlines() if x.startswith("MEASURED ")]
    if out.returncode != 0 or not line:
        raise SystemExit(f"embedded T1 failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return json.loads(line[-1][9:])


def run_celery(url: str, work: Path, size: int, exchange: str, server: str, redis_url: str, names: dict) -> dict:
    import httpx

    api_port = free_port()
    env = {
        **os.environ,
        **store_env(url, work, size, exchange),
        "MARKETINTEL_LOG_LEVEL": "INFO",
        "AIRFLOW_PROD_DIR": str(work / "state"),
        "AIRFLOW_PROD_POSTGRES": server,
        "AIRFLOW_PROD_AIRFLOW_DB": names["airflow"],
        "AIRFLOW_PROD_STORE_DB": names["celery"],
        "AIRFLOW_PROD_REDIS_URL": redis_url,
        "AIRFLOW_PROD_QUEUE": f"bench-{names['suffix']}",
        "AIRFLOW_PROD_API_PORT": str(api_port),
        "AIRFLOW_PROD_LOG_PORT": str(free_port()),
        # Only the REST-triggered run: no catch-up run for the latest missed clock time.
        "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
    }
    try:
        started = subprocess.run([SCRIPT, "start"], env=env, capture_output=True, text=True, timeout=600)
        if started.returncode != 0:
            raise SystemExit(f"the profile did not start:\n{started.stdout[-3000:]}\n{started.stderr[-3000:]}")
        base = f"http://127.0.0.1:{api_port}"
        home = work / "state" / "home"
        password = json.loads((home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]
        token = httpx.post(f"{base}/auth/token", json={"username": "admin", "password": password}, timeout=30).json()
        api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=30)
        api.patch("/api/v2/dags/marketintel_t1", json={"is_paused": False}).raise_for_status()
        t = time.perf_counter()
        response = api.post(
            "/api/v2/dags/marketintel_t1/dagRuns", json={"logical_date": None, "conf": {"run_date": DAY.isoformat()}}
        )
        response.raise_for_status()
        run = response.json()["dag_run_id"]
        while (state := api.get(f"/api/v2/dags/marketintel_t1/dagRuns/{run}").json()["state"]) not in (
            "success",
            "failed",
        ):
            time.sleep(1)
        wall = time.perf_counter() - t
        tis = api.get(f"/api/v2/dags/marketintel_t1/dagRuns/{run}/taskInstances").json()["task_instances"]
        if state != "success":
            raise SystemExit(f"T1 on Celery ended {state}: {[(ti['task_id'], ti['state']) for ti in tis]}")
        return {
            "wall_s": wall,
            "task_s": {ti["task_id"]: round(ti["duration"] or 0.0, 1) for ti in tis},
            "hostnames": sorted({ti["hostname"] for ti in tis}),
            "queue": tis[0]["queue"],
        }
    finally:
        subprocess.run([SCRIPT, "stop"], env=env, capture_output=True, text=True, timeout=180)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instruments", type=int, default=2000)
    parser.add_argument("--history", type=int, default=60, help="Backfilled trading days before the measured day.")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432", help="Server, no database.")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="Celery broker.")
    args = parser.parse_args()
    if args.instruments < 60:
        parser.error("--instruments must be at least 60 (the simulator's smallest market)")
    if args.history < 30:
        parser.error("--history must be at least 30 trading days (the features' look-back)")

    import psycopg

    from ingest.markets import simulator_for
    from ingest.simulator.site import SimulatorSite
    from market.settings import Settings
    from pipeline.serving import serve_in_thread

    server = args.postgres.rstrip("/")
    suffix = uuid.uuid4().hex[:8]
    names = {
        "suffix": suffix,
        "template": f"bench_t1_src_{suffix}",
        "embedded": f"bench_t1_emb_{suffix}",
        "celery": f"bench_t1_cel_{suffix}",
        "airflow": f"bench_t1_af_{suffix}",
    }
    market = simulator_for(Settings(_env_file=None, simulator_instruments=args.instruments))
    admin = f"{server}/postgres"
    with (
        tempfile.TemporaryDirectory() as tmp,
        serve_in_thread(SimulatorSite(market, published_through=DAY).asgi_app()) as exchange,
    ):
        work = Path(tmp)
        try:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{names["template"]}"')
            setup_s = prepare(
                store_url(server, names["template"]), work / "setup", args.instruments, args.history, exchange, market
            )
            with psycopg.connect(admin, autocommit=True) as conn:
                for side in ("embedded", "celery"):
                    conn.execute(f'CREATE DATABASE "{names[side]}" TEMPLATE "{names["template"]}"')
            print(
                f"set-up: {args.instruments} instruments, {args.history} days backfilled and T0 of {DAY} in "
                f"{setup_s:.1f} s",
                flush=True,
            )
            embedded = run_embedded(store_url(server, names["embedded"]), work / "embedded", args.instruments, exchange)
            print(
                f"embedded (stage notebooks in one process, no Airflow): T1 {embedded['wall_s']:.1f} s; "
                f"{embedded['stage_s']}",
                flush=True,
            )
            celery = run_celery(
                store_url(server, names["celery"]),
                work / "celery",
                args.instruments,
                exchange,
                server,
                args.redis,
                names,
            )
            print(
                f"Celery profile (REST trigger to success, 2 workers): T1 {celery['wall_s']:.1f} s; {celery['task_s']}",
                flush=True,
            )
        finally:
            from store.engine import dispose_engines

            dispose_engines()
            with psycopg.connect(admin, autocommit=True) as conn:
                for key in ("template", "embedded", "celery", "airflow"):
                    conn.execute(f'DROP DATABASE IF EXISTS "{names[key]}" WITH (FORCE)')
    print(
        json.dumps(
            {
                "instruments": args.instruments,
                "history_days": args.history,
                "day": DAY.isoformat(),
                "embedded_t1_s": round(embedded["wall_s"], 1),
                "celery_t1_s": round(celery["wall_s"], 1),
                "ratio_celery_to_embedded": round(celery["wall_s"] / embedded["wall_s"], 2),
                "embedded_stage_s": embedded["stage_s"],
                "celery_task_s": celery["task_s"],
                "setup_s": round(setup_s, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
