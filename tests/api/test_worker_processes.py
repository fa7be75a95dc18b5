"""Heavy work that would hold the server's interpreter runs in worker processes of the
server's own (api/services.py `Services.apart`; the PDF reports): a call there answers
from another process, a worker that dies is replaced and its call is 503 with a
Retry-After, and the workers end with their server, however it ends (issue 64, item 9)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from api.services import build_services
from market.errors import BusyError
from market.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SERVER = """
import os, signal, sys
from pathlib import Path
from api.services import _worker_processes
Path(sys.argv[1]).write_text(str(_worker_processes(1).submit(os.getpid).result()))
os.kill(os.getpid(), signal.SIGKILL)  # no exit handler runs, as when uvicorn ends by its signal
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else ""
    return state != "Z"  # a zombie has ended; its new parent reaps it


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_work_apart_runs_in_another_process_and_a_dead_worker_is_replaced(unmade_settings: Settings) -> None:
    svc = build_services(unmade_settings)
    worker = svc.apart(os.getpid)
    assert worker != os.getpid()
    assert svc.apart(os.getpid) == worker, "the worker is kept"
    with pytest.raises(BusyError, match="stopped before it finished") as refused:
        svc.apart(os._exit, 3)  # the worker dies mid-call
    assert refused.value.context["headers"] == {"Retry-After": "1"}
    replaced = svc.apart(os.getpid)
    assert replaced not in (os.getpid(), worker)


def test_the_workers_end_with_their_server(tmp_path: Path) -> None:
    """A server killed outright (uvicorn ends by its signal, so no exit handler runs)
    leaves no worker behind: each watches its server and ends once it is gone."""
    told = tmp_path / "worker"
    subprocess.run([sys.executable, "-c", SERVER, str(told)], cwd=ROOT, timeout=120, check=False)
    worker = int(told.read_text())
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(worker), f"worker {worker} outlived its server"
