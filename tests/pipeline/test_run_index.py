"""runs/index.md from papermill's metadata, and run-day's refusals."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from market.settings import Settings
from pipeline.run_index import write_index
from tests.pipeline.test_cli import MARKETINTEL


def executed(path: Path, start: str, end: str | None, duration: float | None, failed: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"start_time": start, "end_time": end, "duration": duration, "exception": failed or None}
    path.write_text(json.dumps({"cells": [], "metadata": {"papermill": meta}, "nbformat": 4, "nbformat_minor": 5}))


def test_index_lists_dates_newest_first_and_stages_in_run_order(tmp_path: Path) -> None:
    executed(tmp_path / "2026-11-19" / "t1_trade.ipynb", "2026-11-19T21:20:00", "2026-11-19T21:20:03", 3.0)
    executed(tmp_path / "2026-11-20" / "t1_preflight.ipynb", "2026-11-20T21:15:00", "2026-11-20T21:15:02", 2.04)
    executed(tmp_path / "2026-11-20" / "t0_scrape.ipynb", "2026-11-20T21:00:00", "2026-11-20T21:00:04", 4.26)
    executed(
        tmp_path / "2026-11-20" / "t1_ingest_text.ipynb", "2026-11-20T21:16:00", "2026-11-20T21:16:09", 9.0, failed=True
    )
    executed(tmp_path / "2026-11-20" / "t1_sentiment.ipynb", "2026-11-20T21:17:00", None, None)
    index = write_index(tmp_path)
    rows = [line for line in index.read_text().splitlines() if line.startswith("| 2026")]
    assert [row.split(" | ")[1] for row in rows] == [
        "t0_scrape",
        "t1_preflight",
        "t1_ingest_text",
        "t1_sentiment",
        "t1_trade",
    ]
    assert rows[0] == (
        "| 2026-11-20 | t0_scrape | SUCCEEDED | 4.3 s | 2026-11-20 21:00:04 | "
        "[2026-11-20/t0_scrape.ipynb](2026-11-20/t0_scrape.ipynb) |"
    )
    assert " | t1_ingest_text | FAILED | 9.0 s |" in rows[2] and " | t1_sentiment | RUNNING | - | - |" in rows[3]
    assert list(tmp_path.glob(".index.md.*")) == []


def test_a_rewrite_reads_only_the_notebooks_written_since(tmp_path: Path) -> None:
    """Each notebook's metadata is kept under its size and modification time: one left as
    it was is not read again (here its bytes are changed behind the index's back, keeping
    both, and the index still shows what it read), one rewritten is."""
    kept, running = tmp_path / "2026-11-19" / "t1_trade.ipynb", tmp_path / "2026-11-20" / "t0_scrape.ipynb"
    executed(kept, "2026-11-19T21:20:00", "2026-11-19T21:20:03", 3.0)
    executed(running, "2026-11-20T21:00:00", None, None)
    write_index(tmp_path)
    stat = kept.stat()
    kept.write_text("x" * stat.st_size)  # not a notebook any more, same size
    os.utime(kept, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    executed(running, "2026-11-20T21:00:00", "2026-11-20T21:00:04", 4.26)  # papermill wrote it again
    text = write_index(tmp_path).read_text()
    assert " | t1_trade | SUCCEEDED | 3.0 s |" in text and " | t0_scrape | SUCCEEDED | 4.3 s |" in text
    os.utime(kept, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # touched: read again, and unreadable now
    assert " | t1_trade | RUNNING | - |" in write_index(tmp_path).read_text()


def test_a_notebook_whose_process_ended_unrecorded_reads_unfinished_not_running(tmp_path: Path) -> None:
    """A stage killed mid-run (SIGKILL, a stopped machine) leaves a notebook without an end:
    while it could still be written it reads RUNNING; once it has been quiet past the stage's
    time limit, UNFINISHED. A finished or failed one is what papermill recorded, however old."""
    killed, live = tmp_path / "2026-11-19" / "t1_trade.ipynb", tmp_path / "2026-11-20" / "t1_trade.ipynb"
    done = tmp_path / "2026-11-18" / "t1_trade.ipynb"
    executed(killed, "2026-11-19T21:20:00", None, None)
    executed(live, "2026-11-20T21:20:00", None, None)
    executed(done, "2026-11-18T21:20:00", "2026-11-18T21:20:03", 3.0)
    hour_ago = os.path.getmtime(live) - 3600
    for old in (killed, done):
        os.utime(old, (hour_ago, hour_ago))
    text = write_index(tmp_path, quiet_after=1800).read_text()
    assert "| 2026-11-19 | t1_trade | UNFINISHED | - | - |" in text
    assert "| 2026-11-20 | t1_trade | RUNNING | - | - |" in text
    assert "| 2026-11-18 | t1_trade | SUCCEEDED | 3.0 s |" in text
    assert "| 2026-11-19 | t1_trade | RUNNING |" in write_index(tmp_path).read_text()  # no limit: never judged


def test_run_day_refuses_a_closed_day_in_one_line(settings: Settings) -> None:
    result = subprocess.run(
        [MARKETINTEL, "run-day", "--date", "2026-12-25"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert result.stderr == "error: nothing to run: 2026-12-25 is a public holiday (Christmas Day)\n"
    bad = subprocess.run([MARKETINTEL, "run-day", "--date", "20-11-2026"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stderr == "error: '20-11-2026' is not a date in YYYY-MM-DD form\n"


def test_the_committed_example_day_has_every_stage_executed_with_outputs() -> None:
    """docs/runs/ (made by `make docs-runs` from a demo run) is in the repository: every
    notebook its index.md links exists, and every stage of a day (T0, T1, health, the next
    morning's T2, the week's T3) ran without an error, with outputs a reviewer can read."""
    import re

    from market.settings import PROJECT_ROOT
    from pipeline.stage_lists import T0_STAGES, T1_STAGES

    docs = PROJECT_ROOT / "docs" / "runs"
    links = re.findall(r"\]\((\d{4}-\d{2}-\d{2}/\w+\.ipynb)\)", (docs / "index.md").read_text())
    assert links and all((docs / link).is_file() for link in links)
    stages = {Path(link).stem for link in links}
    assert set(T0_STAGES + T1_STAGES + ["health", "t2_suggestions", "t3_macro"]) <= stages, stages
    for link in links:
        cells = json.loads((docs / link).read_text())["cells"]
        outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
        assert outputs and not any(o["output_type"] == "error" for o in outputs), link
    ignored = subprocess.run(["git", "check-ignore", "-q", str(docs / links[0])], cwd=PROJECT_ROOT)
    assert ignored.returncode == 1, ".gitignore hides docs/runs/: anchor its runs/ rule to the root (/runs/)"


def test_two_runs_writing_the_index_at_once_leave_each_notebooks_last_state(tmp_path: Path, monkeypatch) -> None:
    """Two DAG runs at once: run A read run B's notebook while it ran, B finished and wrote
    the index, then A wrote what it had read: B's finished stage stayed RUNNING."""
    import threading
    import time

    import pipeline.run_index as run_index

    mine, theirs = tmp_path / "2026-11-19" / "t1_trade.ipynb", tmp_path / "2026-11-20" / "t1_trade.ipynb"
    executed(mine, "2026-11-19T21:20:00", "2026-11-19T21:20:03", 3.0)
    executed(theirs, "2026-11-20T21:20:00", None, None)
    read_theirs = threading.Event()
    papermill = run_index._papermill

    def slow_reader(notebook: Path, cache: dict, kept: dict) -> dict:
        meta = papermill(notebook, cache, kept)
        if threading.current_thread().name == "A" and notebook == theirs:
            read_theirs.set()
            time.sleep(1)  # A holds what it read while B finishes
        return meta

    monkeypatch.setattr(run_index, "_papermill", slow_reader)
    a = threading.Thread(target=write_index, args=(tmp_path,), name="A")
    a.start()
    assert read_theirs.wait(10)
    executed(theirs, "2026-11-20T21:20:00", "2026-11-20T21:20:05", 5.0)  # B's stage ends
    write_index(tmp_path)  # B's index
    a.join(10)
    text = (tmp_path / "index.md").read_text()
    assert "| 2026-11-20 | t1_trade | SUCCEEDED | 5.0 s |" in text, text
    assert sorted(p.name for p in tmp_path.glob(".*")) == [".index-cache.json", ".index.lock"]
