"""`runs/index.md`: every executed stage notebook by trading date, newest first (within a
date in the order they ran), with its status and duration from papermill's own metadata,
so an operator or reviewer finds any day's run in one place (it renders as a table on the
repository page and in JupyterLab).
Rewritten whole after every notebook run (a temporary file, then a rename)."""

from __future__ import annotations

import json
import os
from pathlib import Path

HEADER = ["| trading date | stage | status | duration | finished (UTC) | notebook |", "|---|---|---|---|---|---|"]


def write_index(runs_dir: Path) -> Path:
    rows = []
    executed = [(notebook, _papermill(notebook)) for notebook in runs_dir.glob("*/*.ipynb")]
    executed.sort(key=lambda item: (item[0].parent.name, item[1].get("start_time") or "", item[0].stem))
    # stable: run order kept
    by_date_newest_first = sorted(executed, key=lambda item: item[0].parent.name, reverse=True)
    for notebook, meta in by_date_newest_first:
        status = "FAILED" if meta.get("exception") else "SUCCEEDED" if meta.get("end_time") else "RUNNING"
        duration = f"{meta['duration']:.1f} s" if isinstance(meta.get("duration"), (int, float)) else "-"
        finished = (meta.get("end_time") or "-")[:19].replace("T", " ")
        rows.append(
            f"| {notebook.parent.name} | {notebook.stem} | {status} | {duration} | {finished} | "
            f"[{notebook.parent.name}/{notebook.name}]({notebook.parent.name}/{notebook.name}) |"
        )
    text = (
        "# Stage runs\n\nExecuted stage notebooks by trading date (newest first), in the order they ran.\n\n"
        + "\n".join(HEADER + rows)
        + "\n"
    )
    index = runs_dir / "index.md"
    runs_dir.mkdir(parents=True, exist_ok=True)
    partial = runs_dir / f".index.md.{os.getpid()}"
    partial.write_text(text)
    os.replace(partial, index)
    return index


def _papermill(notebook: Path) -> dict:
    try:
        return json.loads(notebook.read_text()).get("metadata", {}).get("papermill", {})
    except (OSError, ValueError):
        return {}
