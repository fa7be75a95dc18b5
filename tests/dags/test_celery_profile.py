"""The production profile for real: `ops/airflow_prod.sh start` on private ports and
databases (Postgres metadata database, CeleryExecutor with Redis as broker and Postgres as
result backend, scheduler, dag-processor, api-server, triggerer, two Celery workers w1 and
w2), T0 then T1 triggered for one exchange day through Airflow's REST API (JWT from
/auth/token), and then:

- every task instance succeeded on the profile's Celery queue, and Celery's own record
  (`celery_taskmeta`, kept with `result_extended`) names the worker that ran it: w1 or w2
  of this profile, both of them over the day's ten tasks;
- each stage's executed notebook is under runs/<date>/;
- the project store (Postgres) holds, table for table and row for row, what
  `marketintel run-day` writes for the same day on a fresh store (which prints its table of
  stages, and writes nothing when run again) (ids, recorded_at, run ids
  and artifact paths aside, as in tests/pipeline/test_fault_recovery.py, and each store's
  own data folder in snapshot and PDF paths), and the same stage events per stage;
- T1's close updated the `marketintel_t1_close` asset for that day and T2, unpaused, has it
  queued (the T1 -> T2 link as the scheduler sees it).

The scheduler runs with `[scheduler] use_job_schedule = False` here: unpausing a DAG
otherwise starts a run for its latest missed clock time, a day that depends on when the
test runs (and one the session's simulator may not have published); manual REST runs and
asset queues are unaffected. Every process the profile started is stopped and its
databases dropped at the end, pass or fail. Needs the Postgres and Redis servers: skipped
with the reason without them, required under CI=true (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest

from market.settings import PROJECT_ROOT, WORK_FOLDERS, work_environment
from pipeline.stage_lists import T0_STAGES, T1_STAGES

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.postgres]

DAY = date(2026, 11, 20)  # the session simulator publishes through this day (conftest.py)
SCRIPT = str(PROJECT_ROOT / "ops" / "airflow_prod.sh")
MARKETINTEL = str(Path(sys.executable).parent / "marketintel")
# The DAGs' tasks (tests/dags/test_dag_integrity.py pins the names and the order).
T0_TASKS = ["trading_day", *T0_STAGES]
T1_TASKS = ["trading_day", *T1_STAGES]


def _free_ports(count: int) -> int:
    """The first of `count` consecutive free loopback ports."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            first = probe.getsockname()[1]
        if first + count > 65534:
            continue
        sockets = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no run of free ports")


def _store_url(server: str, name: str) -> str:
    return "postgresql+psycopg://" + server.split("://", 1)[1].rsplit("/", 1)[0] + f"/{name}"


def _prepared_store(url: str, work: Path) -> None:
    """Migrations and 30 simulated days before DAY, as the DAG tests' store has."""
    from market.clock import default_calendar
    from market.settings import Settings
    from pipeline.backfill import backfill
    from store.engine import build_engine
    from store.migrations import upgrade

    settings = Settings(_env_file=None, database_url=url, **_store_folders(work))
    engine = build_engine(url)
    upgrade(engine)
    backfill(engine, settings, 40, default_calendar().previous_trading_day(DAY), with_text=False)
    engine.dispose()


def _store_folders(work: Path) -> dict[str, Path]:
    """A store's folders under `work`, as Settings fields (`runs_dir`: work/runs, ...)."""
    return {f"{name}_dir": work / name for name in WORK_FOLDERS}


def _store_env(url: str, work: Path) -> dict[str, str]:
    """The same store as a process's environment (MARKETINTEL_DATABASE_URL, MARKETINTEL_RUNS_DIR, ...)."""
    return work_environment(work, url=url)


@pytest.fixture
def profile(postgres_server: str, redis_url: tuple[str, str], tmp_path: Path) -> Iterator[dict]:
    """The profile started on private ports, databases and Celery queue; stopped (every
    process group it started) and its databases dropped afterwards, pass or fail."""
    import psycopg
    import redis

    suffix = uuid.uuid4().hex[:10]
    names = {"airflow": f"mi_airflow_{suffix}", "store": f"mi_store_{suffix}", "reference": f"mi_ref_{suffix}"}
    queue = f"marketintel-test-{suffix}"
    api_port, log_port = _free_ports(1), _free_ports(2)
    work = tmp_path / "profile"
    env = {
        **os.environ,
        **_store_env(_store_url(postgres_server, names["store"]), work),
        "AIRFLOW_PROD_DIR": str(work / "state"),
        "AIRFLOW_PROD_POSTGRES": postgres_server.rsplit("/", 1)[0],
        "AIRFLOW_PROD_AIRFLOW_DB": names["airflow"],
        "AIRFLOW_PROD_STORE_DB": names["store"],
        "AIRFLOW_PROD_REDIS_URL": redis_url[0],
        "AIRFLOW_PROD_QUEUE": queue,
        "AIRFLOW_PROD_API_PORT": str(api_port),
        "AIRFLOW_PROD_LOG_PORT": str(log_port),
        "AIRFLOW_PROD_WORKERS": "2",
        "AIRFLOW_PROD_CONCURRENCY": "2",
        "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
        "MARKETINTEL_LOG_LEVEL": "INFO",
    }
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        for name in (names["store"], names["reference"]):
            conn.execute(f'CREATE DATABASE "{name}"')
    pids = work / "state" / "pids"
    try:
        _prepared_store(_store_url(postgres_server, names["store"]), work)
        started = subprocess.run([SCRIPT, "start"], env=env, capture_output=True, text=True, timeout=400)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        assert "database " + names["store"] + ": exists" in started.stdout  # created above, left as it was
        assert "database " + names["airflow"] + ": created" in started.stdout
        yield {
            "env": env,
            "names": names,
            "queue": queue,
            "work": work,
            "server": postgres_server,
            "base": f"http://127.0.0.1:{api_port}",
            "home": work / "state" / "home",
        }
    finally:
        groups = [int(p.read_text()) for p in pids.glob("*.pid")] if pids.is_dir() else []
        stopped = subprocess.run([SCRIPT, "stop"], env=env, capture_output=True, text=True, timeout=120)
        alive = []
        for group in groups:
            try:
                os.killpg(group, 0)
                alive.append(group)
            except ProcessLookupError:
                pass
        from store.engine import dispose_engines

        dispose_engines()
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            for name in names.values():
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        broker = redis.Redis.from_url(redis_url[0])
        for key in broker.scan_iter(f"*{queue}*"):
            broker.delete(key)
        assert stopped.returncode == 0 and not alive, (stopped.stdout, stopped.stderr, alive)


def _rows(url: str, data_dir: Path) -> dict[str, list[tuple]]:
    """Every history table's rows as tests/pipeline/test_fault_recovery.py compares stores
    (ids, recorded_at, run ids, artifact paths and stage_runs aside), with the store's own
    data folder named `<data_dir>`: raw snapshots and disclosure PDFs live under each
    store's MARKETINTEL_DATA_DIR, so their paths differ by that prefix and by nothing else."""
    from tests.pipeline.test_fault_recovery import content

    prefix = str(data_dir)
    return {
        name: sorted(tuple(value.replace(prefix, "<data_dir>") for value in row) for row in rows)
        for name, rows in content(url).items()
    }


class Api:
    def __init__(self, base: str, home: Path) -> None:
        password = json.loads((home / "simple_auth_manager_passwords.json.generated").read_text())["admin"]
        token = httpx.post(f"{base}/auth/token", json={"username": "admin", "password": password}, timeout=30)
        assert token.status_code == 201, token.text
        self.client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {token.json()['access_token']}"}, timeout=30
        )

    def ok(self, method: str, path: str, **kwargs) -> dict:
        response = self.client.request(method, path, **kwargs)
        assert response.status_code in (200, 201), f"{method} {path}: {response.status_code} {response.text[:500]}"
        return response.json()

    def run_and_wait(self, dag_id: str, day: date, timeout: float, home: Path) -> tuple[str, dict[str, dict]]:
        run = self.ok(
            "POST", f"/api/v2/dags/{dag_id}/dagRuns", json={"logical_date": None, "conf": {"run_date": day.isoformat()}}
        )["dag_run_id"]
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            state = self.ok("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run}")["state"]
            if state in ("success", "failed"):
                break
            time.sleep(3)
        tis = {
            ti["task_id"]: ti
            for ti in self.ok("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run}/taskInstances")["task_instances"]
        }
        if state != "success":
            logs = "\n".join(
                f"--- {p}\n{p.read_text()[-2500:]}"
                for p in sorted((home / "logs").rglob("*.log"))
                if dag_id in str(p) and any(t in str(p) for t, ti in tis.items() if ti["state"] != "success")
            )
            pytest.fail(
                f"{dag_id} for {day} ended {state}: { ({t: ti['state'] for t, ti in tis.items()}) }\n{logs[-8000:]}"
            )
        return run, tis


def test_t0_and_t1_run_on_the_celery_workers_and_store_what_run_day_stores(profile: dict) -> None:
    import psycopg

    api = Api(profile["base"], profile["home"])
    health = api.ok("GET", "/api/v2/monitor/health")
    assert {
        k: health[k]["status"] for k in ("metadatabase", "scheduler", "triggerer", "dag_processor")
    } == dict.fromkeys(("metadatabase", "scheduler", "triggerer", "dag_processor"), "healthy")
    for dag_id in ("marketintel_t0", "marketintel_t1", "marketintel_t2"):
        assert api.ok("PATCH", f"/api/v2/dags/{dag_id}", json={"is_paused": False})["is_paused"] is False

    # The reference day runs while Airflow's does, and then again: most of Airflow's time
    # is hand-offs. What the first run stored is read before the second starts.
    reference = _store_url(profile["server"], profile["names"]["reference"])
    ref_work = profile["work"].parent / "reference"
    reference_day: dict = {}

    def reference_run_day() -> None:
        def run_day() -> subprocess.CompletedProcess:
            return subprocess.run(
                [MARKETINTEL, "run-day", "--date", DAY.isoformat()],
                env={**os.environ, **_store_env(reference, ref_work)},
                capture_output=True,
                text=True,
                timeout=500,
            )

        try:
            _prepared_store(reference, ref_work)
            reference_day["done"] = run_day()
            if reference_day["done"].returncode == 0:
                reference_day["rows"] = _rows(reference, ref_work / "data")
                reference_day["events"] = _stage_events(reference)
                reference_day["again"] = run_day()
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            reference_day["error"] = repr(exc)

    run_day = threading.Thread(target=reference_run_day, daemon=True)
    run_day.start()

    t0_run, t0 = api.run_and_wait("marketintel_t0", DAY, 240, profile["home"])
    t1_run, t1 = api.run_and_wait("marketintel_t1", DAY, 420, profile["home"])
    assert set(t0) == set(T0_TASKS)
    assert set(t1) == set(T1_TASKS)
    for ti in [*t0.values(), *t1.values()]:
        assert ti["state"] == "success", ti
        assert ti["queue"] == profile["queue"], ti
        assert ti["hostname"], ti

    # Celery's record of who ran each task instance: this profile's workers, both of them.
    host = socket.gethostname()
    airflow_db = profile["server"].rsplit("/", 1)[0] + "/" + profile["names"]["airflow"]
    deadline = time.monotonic() + 60  # a Celery task ends just after its task instance reports success
    while True:
        with psycopg.connect(airflow_db) as conn:
            ran = conn.execute(
                "SELECT ti.dag_id, ti.task_id, m.worker, m.status, m.queue FROM task_instance ti "
                "LEFT JOIN celery_taskmeta m ON m.task_id = ti.external_executor_id "
                "WHERE ti.run_id IN (%s, %s)",
                (t0_run, t1_run),
            ).fetchall()
        if all(row[3] == "SUCCESS" for row in ran) or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert len(ran) == len(T0_TASKS) + len(T1_TASKS), ran
    odd = [row for row in ran if row[3] != "SUCCESS" or row[4] != profile["queue"]]
    assert not odd, odd
    workers = {worker for _, _, worker, _, _ in ran}
    assert workers == {f"w1@{host}", f"w2@{host}"}, ran

    runs = profile["work"] / "runs" / DAY.isoformat()
    for stage in ["t0_scrape", *T1_TASKS[1:]]:
        notebook = runs / f"{stage}.ipynb"
        assert notebook.is_file(), notebook
        assert json.loads(notebook.read_text())["metadata"]["papermill"]["parameters"]["run_date"] == DAY.isoformat()

    # T1's close updated its asset for the day, and T2 (unpaused) has it queued.
    events = api.ok("GET", "/api/v2/assets/events", params={"source_dag_id": "marketintel_t1"})["asset_events"]
    assert [(e["name"], e["extra"]["trading_date"], e["source_task_id"]) for e in events] == [
        ("marketintel_t1_close", DAY.isoformat(), "t1_trade")
    ], events
    queued = api.ok("GET", "/api/v2/dags/marketintel_t2/assets/queuedEvents")["queued_events"]
    assert len(queued) == 1 and queued[0]["dag_id"] == "marketintel_t2", queued

    # The same day through `marketintel run-day` on a fresh store (run beside Airflow's, above): the same rows.
    run_day.join(timeout=900)
    assert "done" in reference_day, reference_day
    day = reference_day["done"]
    assert day.returncode == 0, day.stdout[-3000:] + day.stderr[-3000:]
    _assert_the_run_day_table(day)
    celery_store = _rows(profile["env"]["MARKETINTEL_DATABASE_URL"], profile["work"] / "data")
    run_day_store = reference_day["rows"]
    assert celery_store["eod_prices"] and celery_store["predictions"] and celery_store["analyses"]
    assert celery_store["portfolio_days"] and celery_store["deliveries"]
    differing = {
        name: [(a, b) for a, b in zip(celery_store[name], run_day_store[name]) if a != b][:2]
        or (len(celery_store[name]), len(run_day_store[name]))
        for name in run_day_store
        if celery_store[name] != run_day_store[name]
    }
    assert not differing, differing

    assert _stage_events(profile["env"]["MARKETINTEL_DATABASE_URL"]) == reference_day["events"]

    # `run-day` again on the reference store (after the first, in the same thread): every
    # stage runs, and none writes a row.
    assert "again" in reference_day, reference_day
    again = reference_day["again"]
    assert again.returncode == 0, again.stderr[-3000:]
    assert [line.split()[-1] for line in again.stdout.splitlines()[1:9]] == ["0"] * 8, again.stdout
    assert _rows(reference, ref_work / "data") == run_day_store  # and the store says so too


def _stage_events(url: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        return sorted(conn.execute("SELECT stage, trading_date, event FROM stage_runs").fetchall())


def _assert_the_run_day_table(result: subprocess.CompletedProcess) -> None:
    """What `marketintel run-day` prints on Postgres: a table of its stages, each SUCCEEDED,
    with the rows each wrote, then the total; no papermill chatter, and the kernels'
    channels encrypted. (The same stages through the notebooks on SQLite: the demo's test.)"""
    assert "papermill" not in result.stderr
    assert "without encryption" not in result.stderr  # the kernels' channels are Curve-encrypted
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["stage", "status", "seconds", "rows", "written"]
    stages = ["t0_scrape", *T1_TASKS[1:]]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1 : 1 + len(stages)]}
    assert list(rows) == stages
    assert {values[0] for values in rows.values()} == {"SUCCEEDED"}  # then seconds, rows, and a note where one
    assert int(rows["t0_scrape"][2].replace(",", "")) >= 59  # the day's prices, at least
    assert int(rows["t1_predict"][2].replace(",", "")) >= 59  # a prediction per instrument
    assert lines[1 + len(stages)].startswith("total")
