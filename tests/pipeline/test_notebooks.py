"""Stages run through papermill: parameters injected, output where reviewers look."""

import json
import re
from datetime import date
from pathlib import Path

import nbformat
import pytest
from sqlalchemy import func, select

from market.errors import StageFailedError
from market.settings import PROJECT_ROOT, Settings
from pipeline import registry
from pipeline.notebooks import run_stage_notebook
from pipeline.registry import STAGES
from store import tables
from store.engine import service_engine


def test_health_notebook_runs_and_lands_in_runs_date_stage(settings: Settings) -> None:
    output = run_stage_notebook("health", "2026-11-20", settings=settings)
    assert output == settings.runs_dir / "2026-11-20" / "health.ipynb"
    notebook = nbformat.read(output, as_version=4)
    injected = [c for c in notebook.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert 'run_date = "2026-11-20"' in injected[0].source
    outputs = json.dumps([c.get("outputs", []) for c in notebook.cells])
    assert "'healthy': True" in outputs and "eod_prices" in outputs
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.health_checks)).scalar_one() == 6
        triggers = {r for (r,) in conn.execute(select(tables.stage_runs.c.trigger))}
    assert triggers == {"notebook"}


def test_a_failing_notebook_names_the_error_and_keeps_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from market.settings import get_settings

    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{tmp_path / 'never-upgraded.db'}")
    monkeypatch.setenv("MARKETINTEL_RUNS_DIR", str(tmp_path / "runs"))
    get_settings.cache_clear()
    try:
        with pytest.raises(StageFailedError, match="SchemaNotReadyError") as caught:
            run_stage_notebook("health", "2026-11-20")
    finally:
        get_settings.cache_clear()
    output = tmp_path / "runs" / "2026-11-20" / "health.ipynb"
    assert str(output) in str(caught.value)
    assert output.is_file()


@pytest.mark.parametrize("name", sorted(STAGES))
def test_every_stage_notebook_has_exactly_one_typed_parameters_cell(name: str) -> None:
    notebook = nbformat.read(PROJECT_ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for line in tagged[0].source.splitlines():
        assert re.fullmatch(r"\w+: [\w|\[\], ]+ = .+  # .+", line), f"untyped or undocumented parameter: {line}"
    assert "write: bool = False  # preview" in tagged[0].source  # opened by hand: a preview
    assert f'run_stage("{name}", run_date, trigger=trigger, write=write, run_id=run_id)' in notebook.cells[2].source
    assert not any("def " in c.source for c in notebook.cells if c.cell_type == "code")
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code"), (
        "commit notebooks without outputs"
    )


def _rows_in_every_table(settings: Settings) -> dict[str, int]:
    from store.history import row_counts

    with service_engine(settings).connect() as conn:
        return row_counts(conn, tables.metadata.tables.values())


def _run_all_with_defaults(name: str, tmp_path: Path) -> str:
    """The stage notebook executed as "Run All" in JupyterLab would: no parameter given."""
    import papermill

    output = tmp_path / f"{name}-by-hand.ipynb"
    papermill.execute_notebook(
        str(PROJECT_ROOT / "notebooks" / f"{name}.ipynb"),
        str(output),
        kernel_name="python3",
        progress_bar=False,
        cwd=str(PROJECT_ROOT / "notebooks"),
    )
    return json.dumps([c.get("outputs", []) for c in nbformat.read(output, as_version=4).cells])


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_stage_notebook_run_by_hand_previews_and_writes_no_row(settings: Settings, tmp_path: Path) -> None:
    """Opened by hand, t1_predict and t1_trade (the stages that train a model and trade
    the AI portfolio) show what they would do and leave every table as it was; the same
    stage run through papermill (write=True) then stores it."""
    from pipeline.backfill import backfill
    from pipeline.runner import run_stage

    day = "2026-11-20"
    backfill(service_engine(settings), settings, 45, date.fromisoformat(day), with_text=False)
    run_stage("t1_features", day, settings=settings)

    before = _rows_in_every_table(settings)
    outputs = _run_all_with_defaults("t1_predict", tmp_path)
    assert _rows_in_every_table(settings) == before
    assert "'retrained': True" in outputs and "predicted_return" in outputs  # trained, ranked and shown
    assert "reason_1" in outputs  # the top names' reasons

    run_stage_notebook("t1_predict", day, settings=settings)  # the papermill run writes
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.predictions)).scalar_one() == 59

    before = _rows_in_every_table(settings)
    outputs = _run_all_with_defaults("t1_trade", tmp_path)
    assert _rows_in_every_table(settings) == before
    assert "as a preview: nothing was stored" in outputs
    assert "No AI position is TRAPPED or HIGH_SPREAD" in outputs  # an empty table is a sentence


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_stage_previewed_in_the_days_order_stores_nothing(settings: Settings) -> None:
    """Each stage of a day previewed (as its notebook does by default) on the store the
    stages before it left, then run for real so the next one has its inputs."""
    from pipeline.backfill import backfill
    from pipeline.runner import run_stage
    from pipeline.stage_lists import T0_STAGES, T1_STAGES

    backfill(service_engine(settings), settings, 45, date(2026, 11, 19), with_text=False)
    day = [(stage, "2026-11-20") for stage in ["health", *T0_STAGES, *T1_STAGES]]
    # T2 runs the next morning on the day before's predictions; T3 on a Monday
    for stage, when in [*day, ("t2_suggestions", "2026-11-23"), ("t3_macro", "2026-11-16")]:
        before = _rows_in_every_table(settings)
        preview = run_stage(stage, when, settings=settings, write=False)
        assert preview.status == "SUCCEEDED" and not preview.written
        assert _rows_in_every_table(settings) == before, stage
        run_stage(stage, when, settings=settings)
        assert _rows_in_every_table(settings) != before, f"{stage} wrote nothing, so its preview proved nothing"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_t3_notebook_of_an_old_monday_shows_nothing_from_after_it(settings: Settings) -> None:
    """A backfill or re-run of an old week's T3 notebook, on a store that already knows later
    weeks: its revisions table and its parameters week by week end at its run date, as the
    week's parameters do, rather than showing what was released or computed after it."""
    from pipeline.runner import run_stage

    run_stage("t3_macro", "2026-11-16", settings=settings)
    output = run_stage_notebook("t3_macro", "2026-06-01", settings=settings)
    shown = {
        cell.source: json.dumps(cell.get("outputs", []))
        for cell in nbformat.read(output, as_version=4).cells
        if cell.cell_type == "code"
    }
    revisions = next(text for source, text in shown.items() if "revisions_table" in source)
    months = re.findall(r"20[0-9]{2}-(?:0[1-9]|1[0-2])(?![0-9-])", revisions)
    quarters = re.findall(r"20[0-9]{2}-Q[1-4]", revisions)
    assert months and quarters
    assert max(months) <= "2026-05" and max(quarters) <= "2026-Q1"  # nothing of a period not out by June 1
    weekly = next(text for source, text in shown.items() if "parameter_weeks" in source)
    assert "26 weeks, 2025-12-08 to 2026-06-01" in weekly


def _shown_text(output: Path) -> str:
    """What an executed notebook shows a reader: its outputs' text, an error's included."""
    return json.dumps([c.get("outputs", []) for c in nbformat.read(output, as_version=4).cells])


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_t3_notebook_of_the_sources_first_weeks_says_what_it_cannot_draw(
    settings: Settings, tmp_path: Path
) -> None:
    """2015-04-20, the first week all three sources publish: most indicators of the weekly
    panel are not out yet, no GDP quarter is, no week has a parameter. The stage stores the
    releases; its notebook, previewed and then run, must end too, saying in words what is
    not there (its panel plot raised on the indicators not out yet after the stage had
    stored the week, so the task failed and alerted on every retry; the revisions chart and
    the weeks' parameters raised on the missing GDP and the empty weeks, the preview as well)."""
    import papermill

    day = "2015-04-20"
    preview = tmp_path / "t3-preview.ipynb"
    papermill.execute_notebook(
        str(PROJECT_ROOT / "notebooks" / "t3_macro.ipynb"),
        str(preview),
        parameters={"run_date": day},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(PROJECT_ROOT / "notebooks"),
    )
    output = run_stage_notebook("t3_macro", day, settings=settings)
    for shown in (_shown_text(preview), _shown_text(output)):
        assert "Traceback" not in shown and '"output_type": "error"' not in shown
        assert "not known before any of the last 13 Mondays: " in shown  # the panel names what it leaves out
        assert "No GDP release was known by 2015-04-20." in shown
        assert "No week up to 2015-04-20 has a macro parameter yet." in shown


def _printed_by_a_fresh_process(probe: str) -> str:
    """The last line `probe` prints, run in a new Python process of the project."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    return loaded.stdout.strip().splitlines()[-1]


def test_a_stage_kernel_starts_without_the_model_libraries_and_the_pdf_reports() -> None:
    """Every Airflow task starts a stage notebook's kernel (and `run-day` or the demo one
    for their stages): what a notebook's first cell imports (the runner, every stage, the
    figures) must not load LightGBM, scikit-learn or SciPy, nor the two PDF reports and
    their page layout (fonts registered on import); a stage that trains or loads a model,
    or writes a report, imports them where it does so. Loading them doubled every kernel's
    start-up time and memory."""
    heavy = "{'lightgbm', 'sklearn', 'scipy', 'reports.layout', 'reports.compliance', 'reports.quant_briefing'}"
    probe = (
        "import sys; from pipeline import run_stage; from reports import stage_figures; run_stage.__name__; "
        f"print(sorted(({{m.split('.')[0] for m in sys.modules}} | set(sys.modules)) & {heavy}))"
    )
    assert _printed_by_a_fresh_process(probe) == "[]"


def test_run_days_own_process_names_the_stages_without_loading_their_code() -> None:
    """`marketintel run-day` (and the demo) hand each stage to a notebook kernel: their own
    process checks the stage names and reads the runner's record, and loads neither a
    stage's module nor pandas or the application layer, which only the kernel needs
    (about 1 s of a run-day's start on 2 cores). The registry's names stay complete."""
    stage_modules = {v.split(":")[0] for v in registry._DEFINED_IN.values()}
    probe = (
        "import sys; from pipeline.day import run_day; from pipeline.notebooks import notebook_paths; "
        "from pipeline.registry import STAGES, known_stage; from market.settings import get_settings; "
        "import datetime; [notebook_paths(s, datetime.date(2026, 11, 20), get_settings()) for s in STAGES]; "
        f"print(sorted(set(sys.modules) & set({sorted(stage_modules | {'pandas', 'desk', 'matplotlib'})!r})))"
    )
    assert _printed_by_a_fresh_process(probe) == "[]"
    assert {name: registry.STAGES[name].name for name in registry.STAGES} == {name: name for name in registry.STAGES}
    assert [n for n in registry.STAGES if not (PROJECT_ROOT / "notebooks" / f"{n}.ipynb").is_file()] == []


def _probe_notebook(folder: Path, body: str) -> None:
    """A stand-in for the health stage's notebook: the parameters cell, then `body`."""
    notebook = nbformat.read(PROJECT_ROOT / "notebooks" / "health.ipynb", as_version=4)  # its kernel and language
    parameters = nbformat.v4.new_code_cell(
        'run_date: str = "2026-11-20"\ntrigger: str = "notebook"\nwrite: bool = False'
    )
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell(body)]
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / "health.ipynb")


_PROBE = (
    "import os, json\n"
    "from market.settings import get_settings\n"
    "from store import engine\n"
    "pooled = len(engine._ENGINES)\n"
    "engine.service_engine(get_settings()).connect().close()\n"
    "print(json.dumps({'pid': os.getpid(), 'leftover': 'leftover' in dir(), 'pooled': pooled,\n"
    "                  'runs': str(get_settings().runs_dir), 'cwd': os.getcwd(),\n"
    "                  'history': str(get_ipython().history_manager.hist_file)}))\n"
    "leftover = 1"
)


def _probed(output: Path) -> dict:
    notebook = nbformat.read(output, as_version=4)
    counts = [c.execution_count for c in notebook.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), "a stage in a shared kernel counts from 1, as a fresh kernel does"
    return json.loads(notebook.cells[-1].outputs[0]["text"])


def test_stages_in_one_kernel_share_its_process_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pipeline/notebooks.py `one_kernel()`: the stages of one block run in one kernel
    process, each with an empty namespace and the environment of the moment it runs (a
    changed environment gets a new kernel); a failed stage's kernel is not reused; the
    kernel is gone when the block ends."""
    import os

    from jupyter_client.asynchronous import AsyncKernelClient

    from market.settings import get_settings
    from pipeline.notebooks import one_kernel

    asked = []  # each time a client waits for the kernel's kernel_info and IOPub (0.2 s each, jupyter_client 8)
    waits = AsyncKernelClient.wait_for_ready

    async def counted(client: AsyncKernelClient, timeout: float | None = None) -> None:
        asked.append(client)
        await waits(client, timeout=timeout)

    monkeypatch.setattr(AsyncKernelClient, "wait_for_ready", counted)
    monkeypatch.setenv("MARKETINTEL_NOTEBOOKS_DIR", str(tmp_path / "notebooks"))
    monkeypatch.setenv("MARKETINTEL_RUNS_DIR", str(tmp_path / "runs"))
    get_settings.cache_clear()
    _probe_notebook(tmp_path / "notebooks", _PROBE)
    try:
        alone = _probed(run_stage_notebook("health", "2026-11-20"))  # a kernel of its own, started by nbclient
        asked.clear()
        with one_kernel():
            first = _probed(run_stage_notebook("health", "2026-11-20"))
            second = _probed(run_stage_notebook("health", "2026-11-20"))
            monkeypatch.setenv("MARKETINTEL_RUNS_DIR", str(tmp_path / "elsewhere"))
            get_settings.cache_clear()
            moved = _probed(run_stage_notebook("health", "2026-11-20"))
            _probe_notebook(tmp_path / "notebooks", "raise RuntimeError('the stage broke')")
            with pytest.raises(StageFailedError, match="the stage broke"):
                run_stage_notebook("health", "2026-11-20")
            _probe_notebook(tmp_path / "notebooks", _PROBE)
            after_failure = _probed(run_stage_notebook("health", "2026-11-20"))
    finally:
        get_settings.cache_clear()
    assert first["pid"] == second["pid"] and not first["leftover"] and not second["leftover"]
    for probed in (first, moved, after_failure):  # the block's kernels start as nbclient starts one
        assert (
            (probed["cwd"], probed["history"])
            == (alone["cwd"], alone["history"])
            == (
                str(tmp_path / "notebooks"),
                ":memory:",
            )
        )
    assert second["pooled"] == 0, "the first stage's database connections were closed before the second"
    assert moved["runs"] == str(tmp_path / "elsewhere") and moved["pid"] != second["pid"]
    assert after_failure["pid"] != moved["pid"] and not after_failure["leftover"]
    # one client per kernel of the block, asked once whether the kernel is ready (five stages and
    # their forgets, three kernels): a stage does not wait to connect to a kernel it already talks to
    assert len(asked) == len(set(map(id, asked))) == 3
    for pid in {first["pid"], moved["pid"], after_failure["pid"]}:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # every kernel of the block was shut down


_SETTINGS_PROBE = (
    "import json, os\n"
    "from market.settings import get_settings\n"
    "from models.monitor import worse_when\n"  # the project's package, not the caller's models/ folder
    "s = get_settings()\n"
    "print(json.dumps({'reports': str(s.reports_dir), 'models': str(s.models_dir), 'store': s.database_url,\n"
    "                  'cwd': os.getcwd()}))"
)


def test_a_stage_kernel_reads_the_settings_of_the_directory_the_run_was_started_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator's `marketintel run-day` (or `stage run --notebook`), started in a folder
    whose `.env` names the store and folders (docs/configuration.md: the project folder or
    the working directory), ran every stage in a kernel that read neither that `.env` nor a
    relative path as the command did, and ran the day on the default store. The kernel, its
    own or a block's shared one, is given the command's settings, relative paths made
    absolute; it still starts in the notebooks' folder, so a `models/` folder beside the
    `.env` does not shadow the project's package."""
    from market.settings import get_settings
    from pipeline.notebooks import one_kernel

    ops = tmp_path / "ops"
    (ops / "models").mkdir(parents=True)
    (ops / ".env").write_text(
        f"MARKETINTEL_REPORTS_DIR={tmp_path / 'ops-reports'}\nMARKETINTEL_MODELS_DIR=models\n"
        "MARKETINTEL_DATABASE_URL=sqlite:///ops.db\n"
    )
    for name in ("REPORTS_DIR", "MODELS_DIR", "DATABASE_URL", "NO_DOTENV"):
        monkeypatch.delenv(f"MARKETINTEL_{name}", raising=False)  # the suite's own rule: no .env (market/settings.py)
    monkeypatch.setenv("MARKETINTEL_NOTEBOOKS_DIR", str(tmp_path / "notebooks"))
    monkeypatch.setenv("MARKETINTEL_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(ops)
    get_settings.cache_clear()
    _probe_notebook(tmp_path / "notebooks", _SETTINGS_PROBE)
    expected = {
        "reports": str(tmp_path / "ops-reports"),
        "models": str(ops / "models"),
        "store": f"sqlite:///{ops / 'ops.db'}",
        "cwd": str(tmp_path / "notebooks"),
    }
    try:
        alone = run_stage_notebook("health", "2026-11-20")
        with one_kernel():
            shared = run_stage_notebook("health", "2026-11-20")
    finally:
        get_settings.cache_clear()
    for output in (alone, shared):
        notebook = nbformat.read(output, as_version=4)
        assert json.loads(notebook.cells[-1].outputs[0]["text"]) == expected


def test_a_failed_rerun_leaves_the_days_succeeded_notebook(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed re-run overwrote the day's succeeded notebook, and runs/index.md said FAILED
    while the store and health said the day was done. The re-run now runs beside it, named
    with its run id; the index shows the succeeded run and notes the failed re-run; a re-run
    that succeeds is the day's notebook again."""
    from market.settings import get_settings

    output = run_stage_notebook("health", "2026-11-20", settings=settings)
    kept = output.read_text()
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{settings.runs_dir.parent / 'never-upgraded.db'}")
    get_settings.cache_clear()
    try:
        with pytest.raises(StageFailedError, match="SchemaNotReadyError") as caught:
            run_stage_notebook("health", "2026-11-20", settings=settings, run_id="rerun1")
    finally:
        get_settings.cache_clear()
    rerun = output.with_name("health.rerun1.ipynb")
    assert f"see {rerun}" in str(caught.value) and rerun.is_file()
    assert output.read_text() == kept
    index = (settings.runs_dir / "index.md").read_text()
    assert "| 2026-11-20 | health | SUCCEEDED |" in index
    assert "| 2026-11-20 | health | FAILED (re-run; the day's SUCCEEDED run stands) |" in index
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    assert run_stage_notebook("health", "2026-11-20", settings=settings, run_id="rerun2") == output
    assert output.read_text() != kept and not output.with_name("health.rerun2.ipynb").exists()
