"""Packages import downward only: the layer contract in pyproject.toml ([tool.importlinter],
run by import-linter, lazy imports inside functions included), and the DAG files, which the
DAG processor parses every 30 s, import only the parse-light parts of pipeline/."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from market.logging import OWN_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
]
PACKAGES = list(OWN_PACKAGES)
PARSE_TIME = {"pipeline.airflow_plugin", "pipeline.stage_lists"}  # imported when the DAG file is parsed
RUN_TIME = {"pipeline.airflow_tasks"}  # imported inside a task, when it runs


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*LINT, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )


def test_the_contract_covers_every_package_in_layer_order() -> None:
    linter = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert linter["root_packages"] == PACKAGES
    layers, transports = linter["contracts"]
    assert layers["layers"] == PACKAGES[::-1]  # import-linter lists the top layer first
    assert transports["type"] == "forbidden" and set(transports["forbidden_modules"]) == {
        "portfolio",
        "models",
        "store",
    }


def test_every_package_imports_only_the_layers_below_it() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_the_contract_catches_an_upward_import(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    decisions = tmp_path / "models" / "decisions.py"
    decisions.write_text(decisions.read_text() + "\n\ndef late():\n    from portfolio.rails import exit_state\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "models.decisions -> portfolio.rails" in result.stdout


def test_a_router_or_resolver_reaching_past_the_desk_is_caught(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    router = tmp_path / "api" / "routers" / "portfolio.py"
    router.write_text(router.read_text() + "\n\ndef late():\n    from portfolio.trading import move_cash\n")
    resolver = tmp_path / "api" / "graphql" / "mutation.py"
    resolver.write_text(resolver.read_text() + "\nfrom store import tables  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "api.routers.portfolio -> portfolio.trading" in result.stdout
    assert "api.graphql.mutation -> store" in result.stdout


def _project_imports(nodes) -> set[str]:
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] in PACKAGES}


def test_dag_files_import_only_the_parse_light_pipeline_modules() -> None:
    for dag in sorted((ROOT / "dags").glob("*.py")):
        tree = ast.parse(dag.read_text())
        top_level = _project_imports(tree.body)
        assert top_level <= PARSE_TIME, (dag.name, top_level - PARSE_TIME)
        assert _project_imports(ast.walk(tree)) - top_level <= RUN_TIME, dag.name
