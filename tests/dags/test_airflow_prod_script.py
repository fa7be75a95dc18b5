"""ops/airflow_prod.sh without starting anything: a bad setting or verb is refused with one
line naming it (exit 2), `env` prints the settings every component gets, `stop` with nothing
started says so, and `stop` repeats a TERM that a component let pass. The profile itself
runs in test_celery_profile.py."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from market.settings import PROJECT_ROOT

SCRIPT = str(PROJECT_ROOT / "ops" / "airflow_prod.sh")


def _run(args: list[str], tmp_path: Path, **settings: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW_PROD_")}
    env.update({"AIRFLOW_PROD_DIR": str(tmp_path / "state"), **settings})
    return subprocess.run([SCRIPT, *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "args, settings, message",
    [
        (["restart"], {}, "usage: ops/airflow_prod.sh start|stop|status|env (got 'restart')"),
        ([], {}, "usage: ops/airflow_prod.sh start|stop|status|env (got '')"),
        (
            ["start"],
            {"AIRFLOW_PROD_API_PORT": "80"},
            "port '80' must be a number from 1024 to 65534 (AIRFLOW_PROD_API_PORT)",
        ),
        (
            ["start"],
            {"AIRFLOW_PROD_LOG_PORT": "x"},
            "port 'x' must be a number from 1024 to 65534 (AIRFLOW_PROD_LOG_PORT)",
        ),
        (
            ["start"],
            {"AIRFLOW_PROD_STORE_DB": "my-store"},
            "database name 'my-store' must be lower-case letters, digits and _ (AIRFLOW_PROD_STORE_DB)",
        ),
        (
            ["start"],
            {"AIRFLOW_PROD_STORE_DB": "same", "AIRFLOW_PROD_AIRFLOW_DB": "same"},
            "the Airflow metadata database and the project store must differ (both 'same')",
        ),
        (["start"], {"AIRFLOW_PROD_WORKERS": "0"}, "'0' must be a whole number >= 1 (AIRFLOW_PROD_WORKERS)"),
        (
            ["start"],
            {"AIRFLOW_PROD_REDIS_URL": "http://127.0.0.1:6379"},
            "AIRFLOW_PROD_REDIS_URL must be a redis:// URL, not 'http://127.0.0.1:6379'",
        ),
        (
            ["status"],
            {"AIRFLOW_PROD_QUEUE": "a queue"},
            "queue name 'a queue' must be letters, digits, _ . - (AIRFLOW_PROD_QUEUE)",
        ),
    ],
)
def test_a_bad_setting_or_verb_is_one_line_naming_it(
    args: list[str], settings: dict, message: str, tmp_path: Path
) -> None:
    done = _run(args, tmp_path, **settings)
    assert done.returncode == 2
    assert done.stderr == f"airflow_prod: {message}\n"
    assert not (tmp_path / "state").exists(), "nothing is created before the settings are checked"


def test_env_prints_what_every_component_gets(tmp_path: Path) -> None:
    done = _run(
        ["env"],
        tmp_path,
        AIRFLOW_PROD_STORE_DB="store_x",
        AIRFLOW_PROD_AIRFLOW_DB="meta_x",
        AIRFLOW_PROD_API_PORT="18080",
        AIRFLOW_PROD_QUEUE="q1",
        AIRFLOW_PROD_POSTGRES="postgresql://postgres@db.internal:5432",
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    assert lines["AIRFLOW__CORE__EXECUTOR"] == "'CeleryExecutor'"
    assert lines["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == "'postgresql+psycopg://postgres@db.internal:5432/meta_x'"
    assert lines["AIRFLOW__CELERY__RESULT_BACKEND"] == "'db+postgresql+psycopg://postgres@db.internal:5432/meta_x'"
    assert lines["MARKETINTEL_DATABASE_URL"] == "'postgresql+psycopg://postgres@db.internal:5432/store_x'"
    assert lines["AIRFLOW__OPERATORS__DEFAULT_QUEUE"] == "'q1'"
    assert lines["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "'http://127.0.0.1:18080/execution/'"
    assert lines["AIRFLOW_HOME"] == f"'{tmp_path / 'state' / 'home'}'"
    secret = (tmp_path / "state" / "secrets" / "jwt_secret").read_text().strip()
    assert lines["AIRFLOW__API_AUTH__JWT_SECRET"] == f"'{secret}'" and len(secret) >= 32
    assert oct((tmp_path / "state" / "secrets" / "jwt_secret").stat().st_mode & 0o777) == "0o600"
    again = _run(["env"], tmp_path)
    assert f"AIRFLOW__API_AUTH__JWT_SECRET='{secret}'" in again.stdout, "one secret for every component, kept"


def test_stop_with_nothing_started(tmp_path: Path) -> None:
    done = _run(["stop"], tmp_path)
    assert done.returncode == 0 and done.stdout == f"nothing to stop: no {tmp_path / 'state' / 'pids'}\n"


def test_stop_repeats_a_term_the_component_did_not_act_on(tmp_path: Path) -> None:
    """A component that lets the first TERM pass (seen once: the dag processor went on
    parsing for 30 s after it) stops at the repeated TERM, not with a KILL."""
    pids = tmp_path / "state" / "pids"
    pids.mkdir(parents=True)
    ready, exited = tmp_path / "ready", tmp_path / "exited"
    # launched as `start` launches a component: its own session, its parent a shell that has
    # exited (so no zombie of it is left for this test to reap); the first TERM is let pass
    trap = f"trap 'n=$((n+1)); ((n>1)) && touch {exited} && exit 0' TERM"
    body = f"n=0; {trap}; touch {ready}; while :; do sleep 0.1; done"
    launched = subprocess.run(
        ["bash", "-c", 'setsid bash -c "$0" > /dev/null 2>&1 < /dev/null & echo $!', body],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(launched.stdout)
    try:
        for _ in range(100):
            if ready.exists():
                break
            time.sleep(0.05)
        (pids / "dag-processor.pid").write_text(str(pid))
        done = _run(["stop"], tmp_path)
        assert done.returncode == 0 and done.stdout == "dag-processor: stopped\n", done.stdout
        assert exited.exists() and not (pids / "dag-processor.pid").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
