"""Issue 42: one contract for every response (docs/api.md, "One contract for every
response"): timestamps in exchange time without offset, money as decimal text to the
cent, `_pct` always percent, numbers at a stated precision. The checkers
(tests/api/contract.py) walk every field of every answer: each GET operation of the
app's own OpenAPI schema, the answers of the writes (a trade, a cash movement, a
statement and its preview, a research note, a suggestion confirmed, a key issued and
rotated), and one GraphQL query per root field selecting every field to depth 4, with a
client key and the admin key. The demo test runs the same walk on the demo store
(tests/pipeline/test_demo.py).

Issue 67: money, prices and fractions are checked by the type each answer declares for
them (market/money.py): REST's by the route's response model, GraphQL's by the schema's
scalars and fields, the CLI's JSON by the dataclass or TypedDict it prints (a placed
trade, a statement sync, the t1_trade stage's summary), and the two PDF reports' money
and price columns and figures by the type of the field each prints."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from api.graphql.schema import build_schema
from market.settings import Settings
from pipeline.runner import run_stage
from tests.api import world
from tests.api.conftest import Api
from tests.api.contract import TypedWalk, graphql_documents, violations
from tests.conftest import ADMIN_KEY

PATH_VALUES = {"symbol": "LIQ"}
QUERY_VALUES = {"side": "buy", "symbol": "LIQ", "quantity": "10"}


def rest_answers(api: Api, key: str, symbol: str = "LIQ") -> Iterator[tuple[str, Any]]:
    """(where, decoded JSON) of every GET operation that answers JSON with 200 (`api`: any
    object with `http`, an httpx.Client on the service, and `call(method, url, key, **kw)`)."""
    for where, _, body in _rest_answers(api, key, symbol):
        yield where, body


def _rest_answers(api: Api, key: str, symbol: str) -> Iterator[tuple[str, str, Any]]:
    """`rest_answers` with each operation's path as the OpenAPI document names it."""
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
            yield f"GET {url}", path, response.json()


def graphql_answers(api: Api, key: str, symbol: str = "LIQ") -> Iterator[tuple[str, Any]]:
    schema = build_schema(Settings())._schema
    for document in graphql_documents(schema, {"symbol": f'"{symbol}"'}):
        body = api.call("POST", "/graphql", key, json={"query": document}).json()
        unexpected = [e for e in body.get("errors") or [] if e.get("extensions", {}).get("code") != "FORBIDDEN"]
        assert not unexpected, (document, unexpected)  # a client key is refused the admin's fields, nothing else
        yield document[:40], body["data"]


def write_answers(api: Api) -> Iterator[tuple[str, str, Any]]:
    """(where, the operation's path as the OpenAPI document names it, decoded JSON) of every write."""
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement

    key = api.world.acme_key
    cash = api.acme("POST", "/api/portfolio/cash", json={"amount": "2500.5", "note": "top-up"})
    yield "POST cash", "/api/portfolio/cash", cash.json()
    order = {"side": "buy", "symbol": "LIQ", "quantity": 10, "price": "52.00"}
    yield "POST trade", "/api/portfolio/trade", api.acme("POST", "/api/portfolio/trade", json=order).json()
    confirmed = api.acme("POST", f"/api/suggestions/{api.world.pending_suggestion}/confirm")
    yield "POST confirm", "/api/suggestions/{suggestion_id}/confirm", confirmed.json()
    with api.world.engine.connect() as conn:
        pdf = sample_holdings_statement(market_days(conn, world.DAY), world.DAY)
    files = {"file": ("statement.pdf", pdf, "application/pdf")}
    upload = "/api/portfolio/upload-pdf"
    preview = api.call("POST", upload, key, files=files, params={"preview": "true"})
    yield "POST upload-pdf?preview", upload, preview.json()
    yield "POST upload-pdf", upload, api.call("POST", upload, key, files=files).json()
    note = {"file": ("note.txt", b"LIQ Holdings reported record profit and strong growth.", "text/plain")}
    research = api.call("POST", "/api/portfolio/upload-research", key, files=note)
    yield "POST upload-research", "/api/portfolio/upload-research", research.json()
    issued = api.admin("POST", "/api/keys/generate", json={"client_name": "Contract Fund", "tier": "PRO"}).json()
    yield "POST keys/generate", "/api/keys/generate", issued
    rotated = api.admin("POST", f"/api/keys/{issued['key_id']}/rotate", json={})
    yield "POST keys/rotate", "/api/keys/{key_id}/rotate", rotated.json()


def response_models() -> dict[tuple[str, str], Any]:
    """Each REST operation's response model, by method and path as the OpenAPI document names it."""
    from api.routers import ai, analysis, keys, macro, market, portfolio, reports, suggestions

    routers = (ai, analysis, keys, macro, market, portfolio, reports, suggestions)
    return {
        (method, route.path): route.response_model
        for module in routers
        for route in module.router.routes
        for method in getattr(route, "methods", ())
    }


def cli_answers(api: Api, walk: TypedWalk) -> list[tuple[str, Any]]:
    """The CLI's JSON, as its commands print it (in this process, on the world's store),
    each checked by the type the command prints: a placed trade (`PlacedTrade`), a statement
    sync's preview (`StatementResult`), the t1_trade stage's summary (`TradeDaySummary`), a
    client's and the AI portfolio's track record (`TrackRecord`: money and fractions)."""
    from typer.testing import CliRunner

    from cli.main import app
    from desk import domain
    from pipeline.portfolio_stages import TradeDaySummary
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement

    pid = api.acme("GET", "/api/portfolio").json()["portfolio_id"]
    statement = api.world.settings.data_dir / "contract-statement.pdf"
    statement.parent.mkdir(parents=True, exist_ok=True)
    with api.world.engine.connect() as conn:
        statement.write_bytes(sample_holdings_statement(market_days(conn, world.DAY), world.DAY))
    commands = [
        (["portfolio", "trade", pid, "buy", "LIQ", "10", "52.00", "--fees", "1.5"], domain.PlacedTrade),
        (["portfolio", "import-statement", pid, str(statement), "--preview"], domain.StatementResult),
        (["stage", "run", "t1_trade", "--date", world.DAY.isoformat()], TradeDaySummary),
        (["portfolio", "record", pid], domain.TrackRecord),
        (["portfolio", "record", domain.AI_PORTFOLIO], domain.TrackRecord),
    ]
    printed = []
    for command, kind in commands:
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
        # stdout alone (`output` mixes stderr in): log lines, which go to stderr, may carry a
        # "{" of their own; `stage run` prints its status line before the JSON
        body = json.loads(result.stdout[result.stdout.index("{") :])
        walk.python(body, kind, f"cli {' '.join(command[:2])}")
        printed.append((f"cli {' '.join(command[:2])}", body))
    return printed


# The two reports' money and price columns and figures, by the type of the field each prints
# (reports/format.py `by_type`): a table's column by its heading, a key figure by its label.
PDF_MONEY = {"Value", "Fees", "All costs", "Avg cost", "Unrealised PnL", "Portfolio value", "Cash", "Liquid equity"}
PDF_PRICE = {"Price"}
CURRENCY_NAMED = re.compile(r" \([A-Z]{3}\)$")  # a money heading names its currency (reports/format.py in_currency)
# The track record table's fractions (portfolio/track_record.py declares each a Fraction):
# the book's and both benchmarks' cells of these rows, the drawdown before its " / Calmar".
PDF_FRACTION_ROWS = {
    "Total return",
    "Annual return",
    "Annual volatility",
    "Maximum drawdown / Calmar",
    "Excess annual return (book - benchmark)",
    "Tracking error",
}


def _fraction_row(label: str) -> str | None:
    """The PDF_FRACTION_ROWS row a track record row's label names ("Total return to
    2026-11-20" is the total return row), else None."""
    return next((row for row in PDF_FRACTION_ROWS if label == row or label.startswith(f"{row} to ")), None)


PDF_MONEY_TEXT = re.compile(r"^-?[\d,]+\.\d\d$")
PDF_PRICE_TEXT = re.compile(r"^-?[\d,]+\.\d{2,6}$")
PDF_FRACTION_TEXT = re.compile(r"^[+-]?\d+\.\d\d%$")
PDF_TEXT = {"Money": PDF_MONEY_TEXT, "Price": PDF_PRICE_TEXT, "Fraction": PDF_FRACTION_TEXT}


def pdf_cells(api: Api, walk: TypedWalk, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both PDF reports built from the world's store, every money and price cell of their
    tables and key figures checked (a dash: none), and the track record's costs paid."""
    import reports
    from reports import compliance, quant_briefing
    from tests.portfolio.seed import CALENDAR

    cells: list[tuple[str, str]] = []
    fractions: list[tuple[str, str]] = []

    def table(header: Any, rows: Any, *args: Any, **kwargs: Any) -> Any:
        named = [CURRENCY_NAMED.sub("", h) for h in header]  # "Value (JMD)" is the Value column
        cells.extend((h, str(row[i])) for row in rows for i, h in enumerate(named) if h in PDF_MONEY | PDF_PRICE)
        if header[0] == "Statistic":  # the track record table
            costs = next(row[1] for row in rows if str(row[0]).startswith("Costs paid"))
            cells.extend(("Value", part) for part in costs.split(" / "))
            shown = [(_fraction_row(row[0]), row) for row in rows if _fraction_row(row[0])]
            fractions.extend((label, str(cell).split(" / ")[0]) for label, row in shown for cell in row[1:])
        return real_table(header, rows, *args, **kwargs)

    def figures(pairs: Any) -> Any:
        named = [(CURRENCY_NAMED.sub("", label), value) for label, value in pairs]
        cells.extend((label, value) for label, value in named if label in PDF_MONEY and isinstance(value, str))
        return real_figures(pairs)

    real_table, real_figures = quant_briefing.data_table, quant_briefing.key_figures
    for module in (compliance, quant_briefing):
        monkeypatch.setattr(module, "data_table", table)
        monkeypatch.setattr(module, "key_figures", figures)
    for kind in reports.KINDS:
        reports.generate(kind, api.world.engine, api.world.settings, CALENDAR, world.MORNING)
    typed = [("Price" if label in PDF_PRICE else "Money", label, cell) for label, cell in cells]
    typed += [("Fraction", label, cell) for label, cell in fractions]
    for kind, label, cell in typed:
        if cell in ("", "-"):
            continue
        walk.checked[f"PDF {kind}"] += 1
        if not PDF_TEXT[kind].match(cell):
            walk.found.append(f"PDF {label} = {cell!r}: declared {kind}, printed as one")


def every_violation(api: Api, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], TypedWalk]:
    """The violations by name over every answer, and the walk by declared type over the same
    answers, the CLI's JSON and the PDFs' money columns."""
    from desk import keys as keystore

    keystore.set_option(api.world.engine, api.world.acme_key_id, "RATE_LIMIT_SET", 1_000_000, now=world.MORNING)
    world.run_t3(api.world.settings)
    run_stage("t1_analysis", world.DAY, settings=api.world.settings)  # the day's analysis, with its facts
    models, walk = response_models(), TypedWalk()
    answers = []
    for where, path, body in write_answers(api):
        walk.python(body, models[("POST", path)], where)
        answers.append((where, body))
    schema = build_schema(Settings())._schema
    for key in (api.world.acme_key, ADMIN_KEY):
        for where, path, body in _rest_answers(api, key, "LIQ"):
            walk.python(body, models.get(("GET", path)), where)  # /healthz: the app's own, no money
            answers.append((where, body))
        for where, data in graphql_answers(api, key):
            walk.graphql(data, schema.query_type, where)
            answers.append((where, data))
    answers += cli_answers(api, walk)
    pdf_cells(api, walk, monkeypatch)
    assert len(answers) > 60, len(answers)
    return [found for where, body in answers for found in violations(body, where)], walk


# What the walk by type must reach on the world's store, at least, so that a walk that checked
# nothing cannot pass: money, prices and fractions over REST, GraphQL and the CLI, and the PDFs'
# (the world's AI record is two days, under a year: its figures a year are dashes, not fractions).
# The world's records hold a few days, under MIN_BETA_DAYS: their volatility, Sharpe, Sortino,
# tracking errors and information ratios are null (portfolio/track_record.py `too_few_days`), so
# fewer fractions are served than there are fields of the type.
REACHED = {"Money": 250, "Price": 30, "Fraction": 170, "PDF Money": 10, "PDF Price": 5, "PDF Fraction": 4}
# A spread is money in a fill's costs (REST's trade rationale, GraphQL's AI day record) and a
# fraction of the price in an instrument's liquidity: the walk saw both, by their types.
SPREADS = [("Money", ".costs.spread"), ("Fraction", ".liquidity.spread"), ("Price", ".limit_price")]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_answer_keeps_the_response_contract(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    found, walk = every_violation(api, monkeypatch)
    assert found == [], "\n".join(found[:40])
    assert walk.found == [], "\n".join(walk.found[:40])
    assert all(walk.checked[kind] >= least for kind, least in REACHED.items()), walk.checked
    assert all(walk.saw(kind, suffix) for kind, suffix in SPREADS), sorted(walk.seen)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_contract_check_fails_when_one_field_breaks_it(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walks reach what they claim to: money rendered with six decimals in one place
    (the rule behind every Money field) and a percent left unrounded are both caught, by
    name and by type; a fraction printed by money's rule, a price by the fraction's and the
    PDFs' money as percentages (the mix-ups the types rule out) are caught by type, over
    REST, GraphQL, the CLI and the PDFs."""
    from market import contract, money
    from reports import format as pdf

    monkeypatch.setattr(money, "MONEY_PLACES", 6)
    monkeypatch.setattr(contract, "PERCENT_PLACES", 4)
    money_rule, fraction_rule = contract.SHOWN[money.Money], contract.SHOWN[money.Fraction]
    monkeypatch.setitem(contract.SHOWN, money.Fraction, money_rule)  # a fraction printed as money
    monkeypatch.setitem(contract.SHOWN, money.Price, fraction_rule)  # a price printed as a fraction
    monkeypatch.setitem(pdf.PRINTED, money.Money, pdf.fraction)  # the PDFs' money printed as a fraction
    monkeypatch.setitem(pdf.PRINTED, money.Fraction, lambda value, *_: pdf.money(value))  # and a fraction as money
    found, walk = every_violation(api, monkeypatch)
    broken, typed = "\n".join(found), "\n".join(walk.found)
    assert "money is decimal text with two decimals" in broken and "a percent has at most two decimals" in broken
    for kind in ("Money", "Price", "Fraction"):
        assert f"declared {kind}, so" in typed, kind
    assert "cli portfolio trade" in typed and "PDF Value" in typed
    assert "cli portfolio record" in typed and "PDF Total return" in typed  # a fraction printed as money
