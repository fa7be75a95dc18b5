"""models/ computes and never opens a connection (issue 56, "pure cores, thin shells"):
no module under models/ imports sqlalchemy, the store's engine or its history reads, or
takes a connection (a `conn` or `engine` parameter, or one typed `Connection`/`Engine`);
the stages' shells in pipeline/ read and write (pipeline/scoring.py, monitor_reads.py,
validation.py, sentiment.py) over the point-in-time reads of store/panels.py. No module
is exempt. The shells and cores of scoring and the monitor keep their functions short."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_MODULES = ("sqlalchemy", "store.engine", "store.history", "store.transactions")
CONNECTION_NAMES = {"conn", "connection", "engine"}
CONNECTION_TYPES = {"Connection", "Engine"}
SHORT = [
    "models/monitor.py",
    "models/scoring.py",
    "pipeline/monitor_reads.py",
    "pipeline/monitor_stage.py",
    "pipeline/predict_stages.py",
    "pipeline/scoring.py",
]
MAX_LINES = 60


def store_access(path: Path) -> list[str]:
    """What in `path` reaches the store: imports of FORBIDDEN_MODULES (lazy ones
    included) and parameters that take a connection."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            modules = []
        found += [f"imports {m}" for m in modules if m.startswith(FORBIDDEN_MODULES)]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                typed = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                if arg.arg in CONNECTION_NAMES or typed.split(".")[-1] in CONNECTION_TYPES:
                    found.append(f"{node.name}({arg.arg}: {typed})")
    return found


def test_models_never_take_a_connection() -> None:
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "models").rglob("*.py"))
    reaching = {m: store_access(ROOT / m) for m in modules}
    assert {m: found for m, found in reaching.items() if found} == {}


def test_the_rule_catches_a_connection(tmp_path: Path) -> None:
    module = tmp_path / "late.py"
    module.write_text("def read(conn, day):\n    from sqlalchemy import select\n")
    assert store_access(module) == ["read(conn: )", "imports sqlalchemy"]


def test_scoring_and_the_monitor_keep_their_functions_short() -> None:
    long = []
    for name in SHORT:
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{name}:{node.name} {lines}")
    assert long == []
