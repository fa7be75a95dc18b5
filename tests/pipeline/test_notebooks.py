"""Stages run through papermill: parameters injected, output where reviewers look."""
import json
import re
from pathlib import Path

import nbformat
import pytest
from sqlalchemy import func, select

from market.errors import StageFailedError
from market.settings import PROJECT_ROOT, Settings
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
        assert conn.execute(select(func.count()).select_from(tables.health_checks)).scalar_one() == 5
        triggers = {r for (r,) in conn.execute(select(tables.stage_runs.c.trigger))}
    assert triggers == {"notebook"}


def test_a_failing_notebook_names_the_error_and_keeps_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    assert not any("def " in c.source for c in notebook.cells if c.cell_type == "code")
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code"), "commit notebooks without outputs"
