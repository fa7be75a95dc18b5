"""`runs/index.md`: every executed stage notebook by trading date, newest first (within a
date in the order they ran), with its status and duration from papermill's own metadata,
so an operator or reviewer finds any day's run in one place (it renders as a table on the
repository page and in JupyterLab). A re-run executed beside a day's succeeded notebook
(`<stage>.<run id>.ipynb`, pipeline/notebooks.py `rerun_path`), one that failed, is a row
of its own, its status saying that the succeeded run stands.
Rewritten whole after every notebook run (a temporary file, then a rename), by one writer
at a time (`runs/.index.lock`). Each
notebook's metadata is kept in `runs/.index-cache.json` under the notebook's size and
modification time, so a rewrite parses only the notebooks written since the last one: a
year of 2,000-name days is 2 GB of notebooks, which parsing whole after every stage took
4.2 s a stage.

A notebook without papermill's end and without an error reads RUNNING while it can still
be running, and UNFINISHED once it has not been written for longer than `quiet_after`
seconds (the caller's stage time limit and the notebook's save interval): a running stage
writes its notebook at least that often, so its process ended without papermill recording
an end (killed, the machine stopped), and the run neither succeeded nor is running."""

from __future__ import annotations

import json
import time
from pathlib import Path

from market.files import held, write_whole

HEADER = ["| trading date | stage | status | duration | finished (UTC) | notebook |", "|---|---|---|---|---|---|"]


CACHE = ".index-cache.json"
LOCK = ".index.lock"  # held while the index and its cache are rewritten


def write_index(runs_dir: Path, quiet_after: float | None = None) -> Path:
    """Rewrite `runs_dir`/index.md; `quiet_after`: seconds without a write after which an
    unended notebook reads UNFINISHED (None: never). One writer at a time (`LOCK`): two runs
    at once each wrote what they had read, the later one an earlier state of the other's
    notebook (a finished stage left RUNNING)."""
    with held(runs_dir / LOCK):
        return _write_index(runs_dir, quiet_after)


def _write_index(runs_dir: Path, quiet_after: float | None) -> Path:
    rows = []
    cache, kept = _cache(runs_dir), {}
    executed = [(notebook, _papermill(notebook, cache, kept)) for notebook in runs_dir.glob("*/*.ipynb")]
    now = time.time()
    executed.sort(key=lambda item: (item[0].parent.name, item[1].get("start_time") or "", item[0].stem))
    # stable: run order kept
    by_date_newest_first = sorted(executed, key=lambda item: item[0].parent.name, reverse=True)
    for notebook, meta in by_date_newest_first:
        status = _status(meta, notebook, now, quiet_after)
        stage, _, rerun = notebook.stem.partition(".")  # <stage>.<run id>: a re-run beside a succeeded run
        status += " (re-run; the day's SUCCEEDED run stands)" if rerun else ""
        duration = f"{meta['duration']:.1f} s" if isinstance(meta.get("duration"), (int, float)) else "-"
        finished = (meta.get("end_time") or "-")[:19].replace("T", " ")
        rows.append(
            f"| {notebook.parent.name} | {stage} | {status} | {duration} | {finished} | "
            f"[{notebook.parent.name}/{notebook.name}]({notebook.parent.name}/{notebook.name}) |"
        )
    text = (
        "# Stage runs\n\nExecuted stage notebooks by trading date (newest first), in the order they ran.\n\n"
        + "\n".join(HEADER + rows)
        + "\n"
    )
    runs_dir.mkdir(parents=True, exist_ok=True)
    _replace(runs_dir / CACHE, json.dumps(kept))
    return _replace(runs_dir / "index.md", text)


def succeeded(notebook: Path) -> bool:
    """Whether `notebook` is an executed notebook that papermill ended without an error."""
    try:
        meta = json.loads(notebook.read_text()).get("metadata", {}).get("papermill", {})
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and _status(meta, notebook, time.time(), None) == "SUCCEEDED"


def _status(meta: dict, notebook: Path, now: float, quiet_after: float | None) -> str:
    if meta.get("exception"):
        return "FAILED"
    if meta.get("end_time"):
        return "SUCCEEDED"
    try:
        quiet = now - notebook.stat().st_mtime
    except OSError:
        return "RUNNING"
    return "UNFINISHED" if quiet_after is not None and quiet > quiet_after else "RUNNING"


def _replace(path: Path, text: str) -> Path:
    """Write `path` whole (market/files.py: a reader never sees half)."""
    return write_whole(path, text.encode())


def _cache(runs_dir: Path) -> dict:
    try:
        cached = json.loads((runs_dir / CACHE).read_text())
    except (OSError, ValueError):
        return {}
    return cached if isinstance(cached, dict) else {}


def _papermill(notebook: Path, cache: dict, kept: dict) -> dict:
    """The notebook's papermill metadata: from `cache` when it was read at the notebook's
    present size and modification time, else from the notebook; recorded in `kept`."""
    try:
        stat = notebook.stat()
    except OSError:
        return {}
    key, signature = f"{notebook.parent.name}/{notebook.name}", [stat.st_size, stat.st_mtime_ns]
    entry = cache.get(key)
    if isinstance(entry, dict) and entry.get("signature") == signature:
        meta = entry.get("papermill", {})
    else:
        try:
            meta = json.loads(notebook.read_text()).get("metadata", {}).get("papermill", {})
        except (OSError, ValueError):
            return {}
    kept[key] = {"signature": signature, "papermill": meta}
    return meta
