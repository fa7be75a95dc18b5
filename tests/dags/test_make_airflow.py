"""`make airflow` for real, as from a fresh clone in a shell with no virtualenv activated:
PATH holds no `airflow` at all (the virtualenv's bin and any other folder with one are
left off), AIRFLOW_HOME is a tmp dir, the API server and the two log servers are on free
ports (AIRFLOW__API__PORT, AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT and
AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT). The API server's health endpoint answers; then
SIGINT to make's process group, what a terminal's Ctrl-C does, and within a bound make has
returned, interrupted, and not one process of its session is left, a defunct one included.

`airflow standalone` starts its four components by the bare name `airflow`, so with the
old recipe they all died with FileNotFoundError while the parent kept running and the port
never opened: the test says so as soon as the log shows it. The venv is taken as installed
(`make -o .venv/.installed`): a test must not reinstall it.

A stand-in `airflow` (a few lines of bash in a fake virtualenv) checks the script's side
in seconds: the virtualenv's bin comes first on PATH, and a component that ignores SIGINT
and SIGTERM, as a deadlocked dag-processor does, is killed with its group before the
script returns, on Ctrl-C or on a SIGTERM to the script alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from market.settings import PROJECT_ROOT
from tests.conftest import as_a_terminal_starts_it
from tests.dags.test_celery_profile import _free_ports

SCRIPT = str(PROJECT_ROOT / "ops" / "airflow_standalone.sh")

START_BOUND = 180  # s from `make airflow` to the API server answering; about 50 s on a quiet 2-core machine
STOP_BOUND = 90  # s from SIGINT to every process gone; the script escalates to SIGKILL after 2 x 30 s


def _session_members(sid: int) -> list[str]:
    """Every process in session `sid`, zombies included, as 'pid (name) state pgid'."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        name_end = text.rindex(")")
        state, _ppid, pgid, session = text[name_end + 2 :].split()[:4]
        if int(session) == sid:
            members.append(f"{stat.parent.name} {text[text.index('(') : name_end + 1]} {state} pgid={pgid}")
    return members


def _kill_session(sid: int) -> None:
    """SIGKILL every process still in session `sid`: what a failed test leaves behind."""
    for member in _session_members(sid):
        try:
            os.kill(int(member.split()[0]), signal.SIGKILL)
        except ProcessLookupError:
            pass


def _path_without_airflow() -> str:
    venv_bin = Path(sys.executable).parent
    folders = [
        f
        for f in os.environ.get("PATH", "").split(os.pathsep)
        if f and Path(f).resolve() != venv_bin.resolve() and not (Path(f) / "airflow").exists()
    ]
    return os.pathsep.join(folders or ["/usr/bin", "/bin"])


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")


@pytest.mark.airflow
@pytest.mark.slow
@needs_proc
def test_make_airflow_answers_without_the_venv_on_path_and_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    api_port, log_port = _free_ports(1), _free_ports(2)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "AIRFLOW_STANDALONE_VENV")
    }
    env.update(
        {
            "PATH": _path_without_airflow(),
            "AIRFLOW_HOME": str(tmp_path / "airflow"),
            "AIRFLOW__API__PORT": str(api_port),
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(log_port),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(log_port + 1),
        }
    )
    log_file = tmp_path / "make-airflow.log"

    def log_tail() -> str:
        return log_file.read_text(errors="replace")[-4000:]

    with log_file.open("wb") as log:
        # Its own session (sid = pgid = make's pid): the terminal's foreground group, and a
        # way to find every process it leads to, whatever process group each one is in.
        make = subprocess.Popen(
            ["make", "--no-print-directory", "-o", ".venv/.installed", "airflow"],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=as_a_terminal_starts_it,
        )
    try:
        started = time.monotonic()
        health = f"http://127.0.0.1:{api_port}/api/v2/monitor/health"
        while True:
            try:
                if httpx.get(health, timeout=3).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if "No such file or directory: 'airflow'" in log_tail():
                pytest.fail("standalone could not start its components by the bare name `airflow`:\n" + log_tail())
            if make.poll() is not None:
                pytest.fail(f"make airflow ended ({make.returncode}) before the API server answered:\n" + log_tail())
            if time.monotonic() - started > START_BOUND:
                pytest.fail(f"no answer on port {api_port} within {START_BOUND} s:\n" + log_tail())
            time.sleep(1)

        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C
        interrupted = time.monotonic()
        try:
            make.wait(timeout=STOP_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"make still running {STOP_BOUND} s after SIGINT: {_session_members(make.pid)}\n" + log_tail())
        left = _session_members(make.pid)
        assert not left, f"left behind after make returned: {left}\n" + log_tail()
        assert make.returncode == -signal.SIGINT, (make.returncode, log_tail())  # make reports the interrupt
        assert time.monotonic() - interrupted < STOP_BOUND
        with pytest.raises(httpx.HTTPError):
            httpx.get(health, timeout=3)
    finally:
        _kill_session(make.pid)
        if make.poll() is None:
            make.wait(timeout=30)


_FAKE_AIRFLOW = """#!/usr/bin/env bash
case "$1" in
    db|dags) echo "fake airflow $*" ;;
    standalone)
        echo "airflow on PATH: $(command -v airflow)"
        bash -c 'trap "" INT TERM; while :; do sleep 0.1; done' &  # a component deaf to INT and TERM
        trap 'echo "standalone: interrupted"; exit 0' INT
        echo "standalone: ready"
        wait ;;
    *) exit 3 ;;
esac
"""


@needs_proc
@pytest.mark.parametrize(
    "to_group, sig",
    [(True, signal.SIGINT), (False, signal.SIGTERM)],
    ids=["ctrl-c-to-the-group", "sigterm-to-the-script"],
)
def test_the_script_kills_a_component_deaf_to_signals_before_it_returns(
    tmp_path: Path, to_group: bool, sig: signal.Signals
) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "airflow").write_text(_FAKE_AIRFLOW)
    (venv / "bin" / "airflow").chmod(0o755)
    env = {
        **os.environ,
        "PATH": _path_without_airflow(),
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW_STANDALONE_VENV": str(venv),
        "AIRFLOW_STANDALONE_STOP_TIMEOUT": "1",
    }
    script = subprocess.Popen(
        [SCRIPT],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_a_terminal_starts_it,
    )
    try:
        lines = []
        for line in script.stdout:
            lines.append(line)
            if line.startswith("standalone: ready"):
                break
        assert lines[-1:] == ["standalone: ready\n"], lines
        assert f"airflow on PATH: {venv / 'bin' / 'airflow'}\n" in lines
        assert "fake airflow db migrate\n" in lines and "fake airflow dags reserialize\n" in lines
        if to_group:
            os.killpg(script.pid, sig)
        else:
            os.kill(script.pid, sig)
        out, err = script.communicate(timeout=20)
        assert script.returncode == -sig, (script.returncode, out, err)
        assert "standalone: interrupted" in out  # SIGINT to standalone itself first
        assert "still running after 1 s: SIGTERM to process group" in err
        assert "still running after another 1 s: SIGKILL to process group" in err
        assert not _session_members(script.pid)
    finally:
        _kill_session(script.pid)
        if script.poll() is None:
            script.kill()
            script.wait(timeout=10)
