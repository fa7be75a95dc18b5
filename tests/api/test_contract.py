"""Issue 42: one contract for every response (docs/api.md, "One contract for every
response"): timestamps in exchange time without offset, money as decimal text to the
cent, `_pct` always percent, numbers at a stated precision. The checker
(tests/api/contract.py) walks every field of every answer: each GET operation of the
app's own OpenAPI schema, the answers of the writes (a trade, a cash movement, a
statement and its preview, a research note, a suggestion confirmed, a key issued and
rotated), and one GraphQL query per root field selecting every field to depth 4, with a
client key and the admin key. The demo test runs the same walk on the demo store
(tests/pipeline/test_demo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from api.graphql.schema import build_schema
from market.settings import Settings
from pipeline.runner import run_stage
from tests.api import world
from tests.api.conftest import Api
from tests.api.contract import graphql_documents, violations
from tests.conftest import ADMIN_KEY

PATH_VALUES = {"symbol": "LIQ"}
QUERY_VALUES = {"side": "buy", "symbol": "LIQ", "quantity": "10"}


def rest_answers(api: Api, key: str, symbol: str = "LIQ") -> Iterator[tuple[str, Any]]:
    """(where, decoded JSON) of every GET operation that answers JSON with 200 (`api`: any
    object with `http`, an httpx.Client on the service, and `call(method, url, key, **kw)`)."""
    values = {**PATH_VALUES, "symbol": symbol}
    for path, item in api.http.get("/openapi.json").json()["paths"].items():
        operation = item.get("get")
        if operation is None:
            continue
        required = [p for p in operation.get("parameters", []) if p.get("required")]
        if any(p["in"] == "path" and p["name"] not in values for p in required):
            continue
        url = path.format(**values)
        params = {p["name"]: {**QUERY_VALUES, "symbol": symbol}[p["name"]] for p in required if p["in"] == "query"}
        response = api.call("GET", url, key, params=params)
        if response.status_code == 200 and "json" in response.headers.get("content-type", ""):
            yield f"GET {url}", response.json()


def graphql_answers(api: Api, key: str, symbol: str = "LIQ") -> Iterator[tuple[str, Any]]:
    schema = build_schema(Settings())._schema
    for document in graphql_documents(schema, {"symbol": f'"{symbol}"'}):
        body = api.call("POST", "/graphql", key, json={"query": document}).json()
        unexpected = [e for e in body.get("errors") or [] if e.get("extensions", {}).get("code") != "FORBIDDEN"]
        assert not unexpected, (document, unexpected)  # a client key is refused the admin's fields, nothing else
        yield document[:40], body["data"]


def write_answers(api: Api) -> Iterator[tuple[str, Any]]:
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement

    key = api.world.acme_key
    yield "POST cash", api.acme("POST", "/api/portfolio/cash", json={"amount": "2500.5", "note": "top-up"}).json()
    yield (
        "POST trade",
        api.acme(
            "POST", "/api/portfolio/trade", json={"side": "buy", "symbol": "LIQ", "quantity": 10, "price": "52.00"}
        ).json(),
    )
    yield "POST confirm", api.acme("POST", f"/api/suggestions/{api.world.pending_suggestion}/confirm").json()
    with api.world.engine.connect() as conn:
        pdf = sample_holdings_statement(market_days(conn, world.DAY), world.DAY)
    files = {"file": ("statement.pdf", pdf, "application/pdf")}
    yield (
        "POST upload-pdf?preview",
        api.call("POST", "/api/portfolio/upload-pdf", key, files=files, params={"preview": "true"}).json(),
    )
    yield "POST upload-pdf", api.call("POST", "/api/portfolio/upload-pdf", key, files=files).json()
    yield (
        "POST upload-research",
        api.call(
            "POST",
            "/api/portfolio/upload-research",
            key,
            files={"file": ("note.txt", b"LIQ Holdings reported record profit and strong growth.", "text/plain")},
        ).json(),
    )
    issued = api.admin("POST", "/api/keys/generate", json={"client_name": "Contract Fund", "tier": "PRO"}).json()
    yield "POST keys/generate", issued
    yield "POST keys/rotate", api.admin("POST", f"/api/keys/{issued['key_id']}/rotate", json={}).json()


def every_violation(api: Api) -> list[str]:
    from desk import keys as keystore

    keystore.set_option(api.world.engine, api.world.acme_key_id, "RATE_LIMIT_SET", 1_000_000, now=world.MORNING)
    world.run_t3(api.world.settings)
    run_stage("t1_analysis", world.DAY, settings=api.world.settings)  # the day's analysis, with its facts
    found: list[str] = []
    answers = [*write_answers(api)]
    for key in (api.world.acme_key, ADMIN_KEY):
        answers += [*rest_answers(api, key), *graphql_answers(api, key)]
    assert len(answers) > 60, len(answers)
    for where, body in answers:
        found += violations(body, where)
    return found


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_answer_keeps_the_response_contract(api: Api) -> None:
    found = every_violation(api)
    assert found == [], "\n".join(found[:40])


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_contract_check_fails_when_one_field_breaks_it(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk reaches what it claims to: money rendered with six decimals in one place
    (the rule behind every Money field) and a percent left unrounded are both caught."""
    from market import contract, money

    monkeypatch.setattr(money, "MONEY_PLACES", 6)
    monkeypatch.setattr(contract, "PERCENT_PLACES", 4)
    broken = "\n".join(every_violation(api))
    assert "money is decimal text with two decimals" in broken and "a percent has at most two decimals" in broken
