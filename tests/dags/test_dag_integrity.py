"""Every DAG imports cleanly, follows the house rules, and the health DAG runs end to end."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from market.settings import PROJECT_ROOT, Settings

DAGS_FOLDER = PROJECT_ROOT / "dags"
AIRFLOW = str(Path(sys.executable).parent / "airflow")


@pytest.fixture(scope="module")
def dag_bag():  # noqa: ANN201
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS_FOLDER))


def test_every_dag_file_imports_without_errors(dag_bag) -> None:  # noqa: ANN001
    assert dag_bag.import_errors == {}
    dag_files = {p.stem for p in DAGS_FOLDER.glob("*.py")}
    assert {Path(d.fileloc).stem for d in dag_bag.dags.values()} == dag_files


def test_every_dag_has_tags_docs_owner_retries_and_one_active_run(dag_bag) -> None:  # noqa: ANN001
    for dag_id, dag in dag_bag.dags.items():
        assert dag.tags, dag_id
        assert dag.doc_md and len(dag.doc_md.strip()) > 40, dag_id
        assert dag.max_active_runs == 1, dag_id
        assert dag.catchup is False, dag_id
        for task in dag.tasks:
            assert task.retries >= 1, f"{dag_id}.{task.task_id}"
            assert task.execution_timeout is not None, f"{dag_id}.{task.task_id}"
            assert task.owner == "marketintel", f"{dag_id}.{task.task_id}"


def test_health_dag_schedule_is_on_the_exchange_clock(dag_bag) -> None:  # noqa: ANN001
    dag = dag_bag.dags["marketintel_health"]
    assert dag.timetable.expression == "45 15 * * 1-5"
    assert str(dag.timetable.timezone) == "America/Jamaica"


def test_dag_files_read_nothing_at_parse_time() -> None:
    for path in DAGS_FOLDER.glob("*.py"):
        source = path.read_text()
        top_level = [line for line in source.splitlines() if line.startswith(("from ", "import "))]
        assert not [line for line in top_level if "pipeline" in line or "store" in line], path.name


_RUN_DAG = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
run = bag.get_dag(sys.argv[2]).test(run_conf={"run_date": sys.argv[3]})
print("RESULT " + json.dumps({"state": str(run.state)}))
"""


@pytest.mark.airflow
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_health_dag_runs_end_to_end_with_dag_test(settings: Settings, tmp_path: Path) -> None:
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow")}
    migrate = subprocess.run([AIRFLOW, "db", "migrate"], env=env, capture_output=True, text=True, timeout=300)
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    run = subprocess.run(
        [sys.executable, "-c", _RUN_DAG, str(DAGS_FOLDER), "marketintel_health", "2026-11-20"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    result = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert result, run.stdout[-3000:] + run.stderr[-3000:]
    assert json.loads(result[0][7:])["state"].endswith("success")
    output = settings.runs_dir / "2026-11-20" / "health.ipynb"
    assert output.is_file()
    from sqlalchemy import select

    from store import tables
    from store.engine import service_engine

    with service_engine(settings).connect() as conn:
        triggers = {t for (t,) in conn.execute(select(tables.stage_runs.c.trigger))}
    assert triggers == {"airflow"}
