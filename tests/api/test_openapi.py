"""The OpenAPI document: every JSON success response has a model and an example (a PDF
one is a binary string), every error response is problem+json, and every /api/ operation names the X-API-Key scheme."""

from __future__ import annotations

import re

from pydantic import SecretStr

from api.app import create_app
from market.contract import TIMESTAMP_PATTERN, conform, is_timestamp
from market.settings import Settings
from models.features import FEATURE_LABELS
from tests.conftest import ADMIN_KEY


def test_every_response_is_documented_with_a_model_and_an_example(tmp_path) -> None:
    settings = Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 's.db'}", admin_key=SecretStr(ADMIN_KEY))
    schema = create_app(settings).openapi()
    components = schema["components"]["schemas"]

    def has_example(node: dict) -> bool:
        if "example" in node or "examples" in node:
            return True
        if "$ref" in node:
            return has_example(components[node["$ref"].rsplit("/", 1)[1]])
        items = node.get("items") or node.get("additionalProperties")
        return isinstance(items, dict) and has_example(items)

    missing = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                content = response.get("content", {})
                if status.startswith("2") and "application/pdf" in content:
                    assert list(content) == ["application/pdf"], (path, status)
                    assert content["application/pdf"]["schema"]["format"] == "binary", path
                elif status.startswith("2"):
                    body = content["application/json"]
                    if not (has_example(body) or has_example(body["schema"])):
                        missing.append(f"{method.upper()} {path} {status}")
                else:
                    assert list(content) == ["application/problem+json"], (path, status)
            if path.startswith("/api/"):
                assert operation["security"] == [{"APIKeyHeader": []}], path
                assert {"401", "422", "429"} <= set(operation["responses"]), path
    assert missing == []


def test_every_bound_is_written_in_json_schema_words(tmp_path) -> None:
    """A bound a client's generator reads: `minimum`, `maximum`, `exclusiveMinimum`, never
    pydantic's own `ge`/`gt`/`le`/`lt`, which it copies raw where it cannot place them (a
    bound after a validator) and no JSON Schema reader knows."""
    settings = Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 's.db'}", admin_key=SecretStr(ADMIN_KEY))
    stack, raw = [("", create_app(settings).openapi())], []
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") in ("integer", "number"):
                raw += [f"{where}.{key}" for key in ("ge", "gt", "le", "lt") if key in node]
            stack += [(f"{where}.{key}", value) for key, value in node.items()]
        elif isinstance(node, list):
            stack += [(f"{where}[{i}]", value) for i, value in enumerate(node)]
    assert not raw, raw


def test_every_example_shows_what_a_response_serves(tmp_path) -> None:
    """An example is a response as the service renders it: TradeOut's executed_at was
    "2026-11-20T15:31:05Z", a Suggestion's expires_at and a key's created_at too, against
    the pattern their fields declare (exchange time without an offset, which a response
    serves: "2026-11-20T10:31:05"), and a breadth's index change printed with four
    decimals where a response has two."""
    settings = Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 's.db'}", admin_key=SecretStr(ADMIN_KEY))
    components = create_app(settings).openapi()["components"]["schemas"]
    stack = [(name, sample) for name, node in components.items() for sample in node.get("examples", [])]
    assert len(stack) > 20
    unlike = [name for name, sample in stack if conform(sample) != sample]
    off_pattern = []
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            off_pattern += [
                f"{where}.{key}"
                for key, value in node.items()
                if is_timestamp(key) and isinstance(value, str) and not re.match(TIMESTAMP_PATTERN, value)
            ]
            stack += [(f"{where}.{key}", value) for key, value in node.items()]
        elif isinstance(node, list):
            stack += [(where, value) for value in node]
    assert (unlike, off_pattern) == ([], [])


def test_every_example_of_a_predictions_reasons_names_the_14_inputs_and_adds_up(tmp_path) -> None:
    """A client reads the documented reasons to learn which inputs can appear: the example
    named "Close in the day's range", an input the model dropped (core14-v4: volatility_60
    in place of close_location), so the document named an input the model does not have.
    Every reasons example names inputs by the labels of the 14 (models/features.py) and its
    base value + the listed contributions + other inputs is its raw score."""
    settings = Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 's.db'}", admin_key=SecretStr(ADMIN_KEY))
    stack: list = [create_app(settings).openapi()]  # the examples of the responses and of the schemas
    found = []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("reasons"), dict) and "base_value" in node["reasons"]:
                found.append(node["reasons"])
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
    assert found
    for reasons in found:
        assert {i["input"] for i in reasons["inputs"]} <= set(FEATURE_LABELS.values()), reasons["inputs"]
        assert set(reasons["missing_inputs"]) <= set(FEATURE_LABELS.values())
        listed = reasons["base_value"] + sum(i["contribution"] for i in reasons["inputs"])
        assert round(listed + reasons["other_inputs"], 6) == reasons["raw_score"]
