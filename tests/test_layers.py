"""Packages import downward only, and the transports reach the project through the desk:
the contracts in pyproject.toml ([tool.importlinter], run by import-linter, lazy imports
inside functions included) — the layers; the API importing only desk/ and market/; a
client's CLI commands doing the same; the operator's CLI commands adding pipeline/, store/
and ingest/ — each shown to bite on a copy of the packages with a planted breach. And the
DAG files, which the DAG processor parses every 30 s, import only the parse-light parts of
pipeline/."""

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
TRANSPORT_MAY_IMPORT = {"desk", "market"}  # besides its own package: the API and a client's commands
OPERATOR_MAY_ALSO_IMPORT = {"pipeline", "store", "ingest", "api"}  # the operator's commands, besides those
CONTRACTS = ["layers", "api", "cli-client", "cli-operator"]


def lint(root: Path, *contracts: str) -> subprocess.CompletedProcess:
    """import-linter over the packages under `root`, every contract or the `contracts` named."""
    chosen = [option for contract in contracts for option in ("--contract", contract)]
    return subprocess.run(
        [*LINT, str(ROOT / "pyproject.toml"), "--no-cache", *chosen],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )


def _contracts() -> dict[str, dict]:
    linter = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert linter["root_packages"] == PACKAGES
    return {contract["id"]: contract for contract in linter["contracts"]}


def _planted(tmp_path: Path, breaches: dict[str, str]) -> Path:
    """A copy of the packages under `tmp_path` with each `breaches` line (an import, or a
    function importing inside) appended to the module at its path."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    for path, line in breaches.items():
        module = tmp_path / path
        module.write_text(module.read_text() + line)
    return tmp_path


def _late(statement: str) -> str:
    """An import inside a function: import-linter sees it as any other."""
    return f"\n\ndef late():\n    {statement}\n"


def test_the_contracts_cover_every_package_in_layer_order() -> None:
    contracts = _contracts()
    assert list(contracts) == CONTRACTS
    assert contracts["layers"]["layers"] == PACKAGES[::-1]  # import-linter lists the top layer first
    api, client, operator = contracts["api"], contracts["cli-client"], contracts["cli-operator"]
    assert all(c["type"] == "forbidden" and c["allow_indirect_imports"] for c in (api, client, operator))
    assert api["source_modules"] == ["api"]
    assert set(api["forbidden_modules"]) == set(PACKAGES) - TRANSPORT_MAY_IMPORT - {"api"}
    # a client's commands do as the API does: every package but the desk, market/ and their own
    assert set(client["forbidden_modules"]) == set(PACKAGES) - TRANSPORT_MAY_IMPORT - {"cli"}
    assert operator["source_modules"] == ["cli"]
    allowed = TRANSPORT_MAY_IMPORT | OPERATOR_MAY_ALSO_IMPORT | {"cli"}
    assert set(operator["forbidden_modules"]) == set(PACKAGES) - allowed


def test_every_client_command_module_is_under_the_client_contract() -> None:
    """cli/main.py holds the operator's commands itself (the demo's module it imports inside
    the command) and takes the client's command groups from the modules it imports at its
    top: each of those is listed in the client contract, so a new client command cannot slip
    under the operator's looser rule by being left out."""
    tree = ast.parse((ROOT / "cli" / "main.py").read_text())
    registered = {
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cli.")
    }
    assert {"cli.portfolio", "cli.keys", "cli.report"} <= registered
    assert registered <= set(_contracts()["cli-client"]["source_modules"]), registered


def test_every_package_imports_only_what_its_contracts_allow() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(CONTRACTS)} kept, 0 broken" in result.stdout


def test_the_layers_catch_an_upward_import(tmp_path: Path) -> None:
    root = _planted(tmp_path, {"models/decisions.py": _late("from portfolio.rails import exit_state")})
    result = lint(root, "layers")
    assert result.returncode == 1, result.stdout
    assert "models.decisions -> portfolio.rails" in result.stdout


def test_the_api_reaching_past_the_desk_is_caught(tmp_path: Path) -> None:
    """Anywhere in api/, a router, a resolver, the services, the app: an import of the
    domain, the store or the pipeline below the API (which the layers allow) breaks it."""
    root = _planted(
        tmp_path,
        {
            "api/routers/portfolio.py": _late("from portfolio.trading import move_cash"),
            "api/graphql/mutation.py": "\nfrom store import tables  # noqa\n",
            "api/services.py": "\nfrom views.valuation import portfolio_view  # noqa\n",
            "api/app.py": _late("from pipeline.stage_lists import T1_STAGES"),
        },
    )
    assert lint(root, "layers").returncode == 0  # the pipeline is below the API: only the desk's contract forbids it
    result = lint(root, "api")
    assert result.returncode == 1, result.stdout
    for breach in (
        "api.routers.portfolio -> portfolio.trading",
        "api.graphql.mutation -> store",
        "api.services -> views.valuation",
        "api.app -> pipeline.stage_lists",
    ):
        assert breach in result.stdout, breach


def test_a_client_command_reaching_past_the_desk_is_caught(tmp_path: Path) -> None:
    """A client's command importing the domain, or the pipeline an operator's command may
    run, breaks the client contract; the operator's looser one still holds for the pipeline."""
    root = _planted(
        tmp_path,
        {
            "cli/portfolio.py": _late("from portfolio.market import market_days"),
            "cli/report.py": "\nfrom pipeline.runner import run_stage  # noqa\n",
            "cli/keys.py": _late("from store.engine import service_engine"),
        },
    )
    result = lint(root, "cli-client")
    assert result.returncode == 1, result.stdout
    for breach in ("cli.portfolio -> portfolio.market", "cli.report -> pipeline.runner", "cli.keys -> store.engine"):
        assert breach in result.stdout, breach
    operator = lint(root, "cli-operator")
    assert "cli.portfolio -> portfolio.market" in operator.stdout
    assert "cli.report -> pipeline.runner" not in operator.stdout and "store.engine" not in operator.stdout


def test_an_operator_command_reaching_into_the_domain_is_caught(tmp_path: Path) -> None:
    root = _planted(
        tmp_path,
        {
            "cli/main.py": _late("from views.bars import refresh_bars"),
            "cli/demo.py": "\nfrom models.decisions import HORIZON as _HORIZON  # noqa\n",
        },
    )
    result = lint(root, "cli-operator")
    assert result.returncode == 1, result.stdout
    assert "cli.main -> views.bars" in result.stdout and "cli.demo -> models.decisions" in result.stdout
    assert lint(root, "cli-client").returncode == 0  # neither is a client's command


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
