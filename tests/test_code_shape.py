"""The code's shape, counted (docs/architecture.md, "Counted"): few long functions and few
wide ones (WIDE_PARAMETERS or more parameters: a frozen request or state object carries
them instead) in the product's packages, few `dict[str, Any]` there (a TypedDict or a
frozen dataclass says what a dict holds), and few `Any` in the public signatures of the
domain packages (portfolio/, models/, market/). Each limit is what the code holds today: a
change that adds one past it fails here and names it. `python tests/test_code_shape.py`
prints the counts."""

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
ANY_PUBLIC_MAX = 8  # public functions of DOMAIN with `Any` in a signature: a ratchet (18 before issue 67; goal: 20)
WIDE_PARAMETERS = 8  # a function with this many parameters or more is wide (self and cls aside; *args, **kwargs count)
WIDE_FUNCTIONS_MAX = 4  # wide product functions: a ratchet (20 before issue 67; its bound: 5)
LOOSE_DICT = "dict[str, Any]"
LOOSE_DICTS_MAX = 120  # `dict[str, Any]` in product code: a ratchet (299 before issue 67's typed insides; bound: 150)


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


def wide_functions() -> list[str]:
    """Product functions with WIDE_PARAMETERS or more parameters, widest first."""
    found = []
    for path, node in _functions(PRODUCT):
        arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        named = [a for a in arguments if a.arg not in ("self", "cls")]
        count = len(named) + (node.args.vararg is not None) + (node.args.kwarg is not None)
        if count >= WIDE_PARAMETERS:
            found.append((count, f"{path}:{node.name}"))
    return [f"{where} ({count} parameters)" for count, where in sorted(found, key=lambda f: (-f[0], f[1]))]


def loose_dicts() -> list[str]:
    """Each `dict[str, Any]` in product code (an annotation or an alias, nested ones too),
    by file and line."""
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Subscript) and ast.unparse(node) == LOOSE_DICT:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


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


def test_few_wide_functions_in_the_product() -> None:
    found = wide_functions()
    assert len(found) <= WIDE_FUNCTIONS_MAX, "\n".join(found)


def test_few_loose_dicts_in_the_product() -> None:
    found = loose_dicts()
    assert len(found) <= LOOSE_DICTS_MAX, "\n".join(found)


PLANTED_WIDE = """
class Book:
    def method(self, a, b, c, d, e, f, g) -> None:  # seven besides self: not wide
        pass


def wide(a, b, c, d, e, f, *, g: int = 0, h: int = 1) -> None:
    pass


def spread(a, b, c, d, e, f, *args, **kwargs) -> None:  # **kwargs hides nothing: 8
    rows: list[dict[str, Any]] = []
"""


def test_the_counts_see_what_they_count(tmp_path: Path, monkeypatch) -> None:
    """A planted long function, wide functions (a method's self aside, *args and **kwargs
    counted) and `dict[str, Any]`s (in a signature and nested in a body's annotation) are
    counted."""
    package = tmp_path / "portfolio"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(LONG_LINES + 1))
    loose = "def loose(x: dict[str, Any]) -> None:\n    pass\n"
    text = f"from typing import Any\n\n\ndef long() -> None:\n{body}\n\n\n{loose}\n{PLANTED_WIDE}"
    (package / "planted.py").write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PRODUCT", ["portfolio"])
    monkeypatch.setattr(sys.modules[__name__], "DOMAIN", ["portfolio"])
    assert long_functions() == [f"portfolio/planted.py:long ({LONG_LINES + 2} lines)"]
    assert any_in_public_signatures() == ["portfolio/planted.py:loose"]
    assert wide_functions() == [
        "portfolio/planted.py:spread (8 parameters)",
        "portfolio/planted.py:wide (8 parameters)",
    ]
    at = [n for n, line in enumerate(text.splitlines(), start=1) if LOOSE_DICT in line]  # the signature, the body
    assert len(at) == 2 and loose_dicts() == [f"portfolio/planted.py:{n}" for n in at]


if __name__ == "__main__":
    long, loose = long_functions(), any_in_public_signatures()
    print(f"functions over {LONG_LINES} lines in product code: {len(long)} (limit {LONG_FUNCTIONS_MAX})")
    print("\n".join(f"  {x}" for x in long))
    print(f"public functions of {', '.join(DOMAIN)} with Any in a signature: {len(loose)} (limit {ANY_PUBLIC_MAX})")
    wide = wide_functions()
    print(
        f"functions with {WIDE_PARAMETERS} or more parameters in product code: {len(wide)} (limit {WIDE_FUNCTIONS_MAX})"
    )
    print("\n".join(f"  {x}" for x in wide))
    print(f"{LOOSE_DICT} in product code: {len(loose_dicts())} (limit {LOOSE_DICTS_MAX})")
