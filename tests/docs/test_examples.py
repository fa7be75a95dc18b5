"""The documentation's examples are the demo's truth: every curl, GraphQL and CLI example
shown in README.md and docs/api.md is rendered from docs/examples/api.toml (checked here),
and `run_example` runs each one, in the file's order, against the demo that
tests/pipeline/test_demo.py starts once with `marketintel demo` (the simulator's symbols,
the demo client and its suggestions, the AI portfolio, T3's macro week), served over real
HTTP on loopback."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import httpx
import pytest

from api import doc_examples
from api.doc_examples import Example
from tests.pipeline.test_cli import MARKETINTEL

EXAMPLES = doc_examples.load()


class DemoServer:
    def __init__(self, base: str, env: dict[str, str], keys: dict[str, str], folder: Path) -> None:
        self.base, self.env, self.keys, self.folder = base, env, keys, folder
        self.http = httpx.Client(base_url=base, timeout=60)


def _headers(demo: DemoServer, example: Example) -> dict[str, str]:
    return {} if example.key == "none" else {"X-API-Key": demo.keys[example.key]}


def _check_json(example: Example, body: object) -> None:
    missing = [m for path in example.expect.get("fields", []) if (m := doc_examples.field_missing(body, path))]
    assert not missing, f"{example.id}: {missing}"
    for path, typename in example.expect.get("typename", {}).items():
        node = body
        for step in path.split("/"):
            node = node[int(step)] if isinstance(node, list) else node[step]
        assert node["__typename"] == typename, f"{example.id}: {node}"


def run_example(demo: DemoServer, example: Example) -> None:
    expect = example.expect
    if example.kind == "cli":
        done = subprocess.run(
            [MARKETINTEL, *shlex.split(example.command)[1:]],
            env=demo.env,
            cwd=demo.folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == expect.get("exit", 0), f"{example.id}: {done.stderr[-2000:]}"
        for text in expect.get("stdout", []):
            assert text in done.stdout, f"{example.id}: {text!r} not in {done.stdout[-2000:]}"
        if example.output:
            assert (demo.folder / example.output).read_bytes().startswith(b"%PDF-"), example.id
        return
    if example.kind == "graphql":
        response = demo.http.post("/graphql", json={"query": example.query}, headers=_headers(demo, example))
    else:
        headers = _headers(demo, example)
        if example.body is not None:
            headers["Content-Type"] = "application/json"
        response = demo.http.request(example.method, example.path, content=example.body, headers=headers)
    assert response.status_code == expect["status"], f"{example.id}: {response.status_code} {response.text[:2000]}"
    content_type = expect.get("content_type", "application/json")
    assert response.headers["content-type"].split(";")[0] == content_type, f"{example.id}: {response.headers}"
    for header in expect.get("headers", []):
        assert response.headers.get(header), f"{example.id}: no {header} header"
    if content_type == "application/json":
        body = response.json()
        if example.kind == "graphql":
            assert not body.get("errors"), f"{example.id}: {body['errors']}"
        _check_json(example, body)


@pytest.mark.parametrize("page", doc_examples.PAGES)
def test_the_pages_show_exactly_the_rendered_examples(page: str) -> None:
    """Every curl, GraphQL or marketintel example in the page lies in a rendered block, and
    every block is what docs/examples/api.toml renders (`python -m api.doc_examples`)."""
    text = (doc_examples.ROOT / page).read_text()
    outside = [code for _, code, inside in doc_examples.shown_examples(text) if not inside]
    assert not outside, f"{page} shows examples no test runs; put them in docs/examples/api.toml:\n" + "\n".join(
        outside
    )
    assert doc_examples.render_page(text, EXAMPLES) == text, (
        f"{page}: its example blocks differ from docs/examples/api.toml: run `.venv/bin/python -m api.doc_examples`"
    )
    assert doc_examples.BLOCK.search(text), f"{page} has no rendered example block"


def test_every_example_is_shown_somewhere() -> None:
    shown = "".join((doc_examples.ROOT / page).read_text() for page in doc_examples.PAGES)
    groups = set(doc_examples.BLOCK.findall(shown) and [m.group("group") for m in doc_examples.BLOCK.finditer(shown)])
    assert [e.id for e in EXAMPLES if not set(e.groups) & groups] == []


def test_an_example_outside_a_rendered_block_is_found() -> None:
    page = (
        "text\n\n```bash\ncurl -s http://127.0.0.1:8000/api/market/latest\n```\n\n"
        "```graphql\n{ instruments { nodes { symbol } } }\n```\n"
    )
    assert [(lang, inside) for lang, _, inside in doc_examples.shown_examples(page)] == [
        ("bash", False),
        ("graphql", False),
    ]
