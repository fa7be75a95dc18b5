"""The documentation's API examples: read from docs/examples/api.toml, rendered into the
`<!-- examples: GROUP -->` blocks of README.md and docs/api.md, and run against a live
server by tests/docs/test_examples.py.

`.venv/bin/python -m api.doc_examples` rewrites the blocks after an edit of the TOML file;
`--check` exits 1 naming the pages whose blocks are stale.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES_FILE = ROOT / "docs" / "examples" / "api.toml"
PAGES = ("README.md", "docs/api.md")  # the pages whose examples are rendered and executed
DEMO_BASE = "http://127.0.0.1:8000"  # where `make demo` serves the API
KEY_VARIABLE = {"client": "$KEY", "admin": "$ADMIN_KEY"}
BLOCK = re.compile(r"(<!-- examples: (?P<group>[\w-]+) -->\n)(?P<body>.*?)(<!-- /examples -->)", re.S)
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<code>.*?)^```\n", re.S | re.M)


@dataclass
class Example:
    id: str
    groups: list[str]
    title: str
    kind: str  # rest | graphql | cli
    key: str = "client"
    method: str = "GET"
    path: str = ""
    body: str | None = None
    output: str | None = None
    query: str = ""
    command: str = ""
    expect: dict[str, Any] = field(default_factory=dict)

    def curl(self, base: str = DEMO_BASE) -> str:
        parts = ["curl -s"]
        if self.method != "GET":
            parts.append(f"-X {self.method}")
        if self.key != "none":
            parts.append(f'-H "X-API-Key: {KEY_VARIABLE[self.key]}"')
        if self.body is not None:
            parts.append(f"-H 'Content-Type: application/json' -d '{self.body}'")
        if self.output:
            parts.append(f"-o {self.output}")
        parts.append(f'"{base}{self.path}"')
        return " ".join(parts)


def load(path: Path = EXAMPLES_FILE) -> list[Example]:
    examples = [Example(**entry) for entry in tomllib.loads(path.read_text())["example"]]
    ids = [e.id for e in examples]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: an example id is used twice")
    for e in examples:
        if e.kind not in ("rest", "graphql", "cli") or e.key not in ("client", "admin", "none"):
            raise ValueError(f"{path}: example {e.id!r} has kind {e.kind!r} or key {e.key!r} that is not known")
        e.query = e.query.strip("\n")
    return examples


def render_group(examples: list[Example], group: str) -> str:
    """The markdown of one block: a bash block of curl commands, a graphql block of
    operations, or a bash block of CLI commands (one `# title` line above each)."""
    members = [e for e in examples if group in e.groups]
    if not members:
        raise ValueError(f"no example is in group {group!r}")
    out: list[str] = []
    for kind, lang in (("rest", "bash"), ("graphql", "graphql"), ("cli", "bash")):
        chosen = [e for e in members if e.kind == kind]
        if not chosen:
            continue
        lines = []
        for e in chosen:
            text = {"rest": e.curl, "graphql": lambda e=e: e.query, "cli": lambda e=e: e.command}[kind]()
            lines += [f"# {e.title}", text, ""] if kind == "graphql" else [f"# {e.title}", text]
        out.append(f"```{lang}\n" + "\n".join(lines).rstrip("\n") + "\n```\n")
    return "\n".join(out)


def render_page(text: str, examples: list[Example]) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render_group(examples, m.group("group")) + m.group(4), text)


def shown_examples(text: str) -> list[tuple[str, str, bool]]:
    """Every fenced block of a page that shows an API or CLI example, as (language, code,
    whether it lies inside a rendered block)."""
    inside = [(m.start("body"), m.end("body")) for m in BLOCK.finditer(text)]
    shown = []
    for m in FENCE.finditer(text):
        code = m.group("code")
        is_example = m.group("lang") == "graphql" or re.search(r"^\s*(curl |marketintel )", code, re.M)
        if is_example:
            shown.append((m.group("lang"), code, any(a <= m.start() < b for a, b in inside)))
    return shown


def field_missing(body: Any, path: str) -> str | None:
    """None when the slash-separated path is present in the JSON body, else what is missing."""
    node = body
    for step in path.split("/"):
        if isinstance(node, list) and step.isdigit():
            if int(step) >= len(node):
                return f"{path}: the list has {len(node)} items"
            node = node[int(step)]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            return f"{path}: no {step!r} in {json.dumps(node)[:300]}"
    return None


def main(argv: list[str]) -> int:
    examples = load()
    stale = []
    for page in PAGES:
        path = ROOT / page
        text = path.read_text()
        rendered = render_page(text, examples)
        if rendered != text:
            stale.append(page)
            if "--check" not in argv:
                path.write_text(rendered)
    if stale:
        print(("stale: " if "--check" in argv else "rewrote: ") + ", ".join(stale))
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
