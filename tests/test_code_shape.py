"""The code's shape, counted (docs/architecture.md, "Counted"): few long functions in the
product's packages, and few `Any` in the public signatures of the domain packages
(portfolio/, models/, market/), where a frozen dataclass should cross a layer instead of
a `dict[str, Any]`. Each limit is what the code holds today: a change that adds one past it
fails here and names it. `python tests/test_code_shape.py` prints the counts."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from market.logging import OWN_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = list(OWN_PACKAGES)
DOMAIN = ["portfolio", "models", "market"]
LONG_LINES = 60
LONG_FUNCTIONS_MAX = 5  # issue 56's bound on functions over LONG_LINES lines in product code
ANY_PUBLIC_MAX = 18  # public functions of DOMAIN with `Any` in a signature: 18 today, a ratchet (issue 56's goal: 20)


def _functions(packages: list[str]):
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield path.relative_to(ROOT), node


def long_functions() -> list[str]:
    """Product functions longer than LONG_LINES lines, longest first."""
    found = [
        (node.end_lineno - node.lineno + 1, f"{path}:{node.name}")
        for path, node in _functions(PRODUCT)
        if node.end_lineno - node.lineno + 1 > LONG_LINES
    ]
    return [f"{where} ({lines} lines)" for lines, where in sorted(found, reverse=True)]


def any_in_public_signatures() -> list[str]:
    """Public functions of DOMAIN with `Any` in a parameter or return annotation."""
    found = []
    for path, node in _functions(DOMAIN):
        if node.name.startswith("_"):
            continue
        arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        arguments += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
        annotations = [a.annotation for a in arguments if a.annotation is not None]
        annotations += [node.returns] if node.returns is not None else []
        if any("Any" in ast.unparse(a) for a in annotations):
            found.append(f"{path}:{node.name}")
    return found


def test_few_long_functions_in_the_product() -> None:
    found = long_functions()
    assert len(found) <= LONG_FUNCTIONS_MAX, "\n".join(found)


def test_few_any_in_the_domain_packages_public_signatures() -> None:
    found = any_in_public_signatures()
    assert len(found) <= ANY_PUBLIC_MAX, "\n".join(found)


def test_the_counts_see_what_they_count(tmp_path: Path, monkeypatch) -> None:
    """A planted long function and a planted `dict[str, Any]` signature are counted."""
    package = tmp_path / "portfolio"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LONG_LINES + 1))
    loose = "def loose(x: dict[str, Any]) -> None:\n    pass\n"
    (package / "planted.py").write_text(f"from typing import Any\n\n\ndef long() -> None:\n{body}\n\n\n{loose}")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PRODUCT", ["portfolio"])
    monkeypatch.setattr(sys.modules[__name__], "DOMAIN", ["portfolio"])
    assert long_functions() == [f"portfolio/planted.py:long ({LONG_LINES + 2} lines)"]
    assert any_in_public_signatures() == ["portfolio/planted.py:loose"]


if __name__ == "__main__":
    long, loose = long_functions(), any_in_public_signatures()
    print(f"functions over {LONG_LINES} lines in product code: {len(long)} (limit {LONG_FUNCTIONS_MAX})")
    print("\n".join(f"  {x}" for x in long))
    print(f"public functions of {', '.join(DOMAIN)} with Any in a signature: {len(loose)} (limit {ANY_PUBLIC_MAX})")
