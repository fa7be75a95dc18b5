"""The PDF reports over real HTTP, read back with pdfplumber and compared with the API's
own answers for the same store."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date
from typing import Any

import httpx
import pytest
from sqlalchemy import Connection

from api.app import create_app
from market.clock import default_calendar
from models.decisions import BOOK_NAMES
from pipeline.serving import serve_in_thread
from reports.format import metric_value, money, number, price, signed_pct
from reports.inputs import compliance_inputs, snapshot_sha256
from reports.layout import HEADER_FILL, MARGIN, PAGE_SIZES
from reports.quant_briefing import edge_against_cost, entered_as
from store import tables
from store.history import append_history
from tests.api.conftest import Api, assert_problem
from tests.api.world import DAY, MONDAY
from tests.conftest import ON_SQLITE_ONLY
from tests.portfolio.clients import announce_action
from tests.reports.pdf import read

BRIEFING_SECTIONS = [
    "System performance",
    "Market sentiment",
    "Top AI signals",
    "AI portfolio",
    "Track record",
    "Against the benchmarks",
    "Monthly returns of the AI portfolio",
    "Equity curve",
    "Score distribution",
    "Powered by",
]
COMPLIANCE_SECTIONS = [
    "Risk disclosures",
    "Model risk",
    "Out-of-sample accuracy",
    "Regime change",
    "Backtesting limits",
    "Illiquidity",
    "No investment advice",
    "Speculative nature",
    "Model metrics",
    "Recent trade audit trail",
    "Regulatory notices",
    "Corporate structure",
    "Nature of output",
    "User responsibility",
    "Data provenance",
    "Forward-looking statements",
    "Document certification",
    "Generation method",
    "Rights",
    "Data snapshot SHA-256",
    "Powered by",
]


def assert_exchange_time_only(text: str) -> None:
    """The output contract in a PDF: every time is exchange time, without an offset or
    fractions of a second (market/contract.py)."""
    assert not re.search(r"\d\d:\d\d(:\d\d)?(\.\d+)?([+-]\d\d:\d\d|Z)", text), "a time with an offset"
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", text), "a time with fractions of a second"


def seed_model_record(api: Api) -> None:
    """A trained model and its live out-of-sample record, as t1_predict writes them."""
    scope = f"live:{DAY.isoformat()}"
    with api.world.engine.begin() as conn:
        append_history(
            conn,
            tables.model_runs,
            [
                {
                    "model_id": "risk-test-h1",
                    "kind": "risk",
                    "train_start": date(2026, 8, 1),
                    "train_end": DAY,
                    "horizon_days": 1,
                    "layer1_backend": "fallback-empirical-v1",
                    "training_rows": 4321,
                }
            ],
        )
        append_metrics(
            conn,
            "live",
            scope,
            [
                ("binary_accuracy", 0.5625, 0.512, 640),
                ("movers_accuracy", 0.6031, 0.53, 126),
                ("three_class_accuracy", 0.41, 0.38, 700),
                ("hit_rate_top", 0.58, 0.51, 210),
                ("hit_rate_bottom", 0.46, 0.51, 205),
                ("rank_ic", 0.0873, 0.0, 60),
                ("tercile_spread", 0.0042, 0.0, 60),
            ],
        )


def append_metrics(
    conn: Connection,
    model_id: str,
    scope: str,
    metrics: list[tuple[str, float, float, int]],
    detail: dict[str, Any] | None = None,
) -> None:
    """`metrics` (name, value, base rate, sample size) appended to model_metrics under
    `model_id` and `scope`; with `detail`, each row's detail is it plus the metric's base
    rate as the majority baseline, as bootstrapping stores it."""
    append_history(
        conn,
        tables.model_metrics,
        [
            {"model_id": model_id, "scope": scope, "metric": name, "value": value, "base_rate": base, "sample_size": n}
            | ({} if detail is None else {"detail": {**detail, "baselines": {"majority": base}}})
            for name, value, base, n in metrics
        ],
    )


def pdf_of(response: httpx.Response) -> bytes:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/pdf"
    assert re.fullmatch(r'inline; filename="[a-z-]+-\d{4}-\d{2}-\d{2}\.pdf"', response.headers["content-disposition"])
    return response.content


def assert_page_furniture(pages: list[str], title: str, company: str = "Market Intelligence Service") -> None:
    for number_, page in enumerate(pages, start=1):
        assert page.splitlines()[0] == f"{company} | {title} | Engine v3", page[:200]
        assert f"Page {number_} of {len(pages)}" in page


def test_quant_briefing_has_every_section_and_the_apis_figures(api: Api) -> None:
    seed_model_record(api)
    pdf = read(pdf_of(api.acme("GET", "/api/quant-briefing.pdf")))
    assert_page_furniture(pdf.pages, "Quant Briefing")
    for heading in BRIEFING_SECTIONS:
        assert heading in pdf.text, heading
    assert_exchange_time_only(pdf.text)

    perf = api.acme("GET", "/api/ai/performance").json()
    for name in ("binary_accuracy", "movers_accuracy", "rank_ic", "tercile_spread"):
        metric = perf["live"]["metrics"][name]
        assert (
            f"{metric_value(name, metric['value'])} {metric_value(name, metric['base_rate'])} "
            f"{number(metric['sample_size'])}" in pdf.text
        ), name
    assert "Rank IC (expected excess vs label) 0.0873 0.0000 60" in pdf.text
    assert "Tercile spread (TOP minus BOTTOM mean excess) +0.42% +0.00% 60" in pdf.text
    words = " ".join(pdf.text.split())
    assert "over 1 session, minus the equal-weighted liquid universe" in words  # the label, from horizon_days
    assert f"Training rows {number(perf['training_rows'])}" in pdf.text and "4,321" in pdf.text
    assert "fallback-empirical-v1 (FALLBACK" in pdf.text

    breadth = api.acme("GET", "/api/market/breadth").json()
    assert f"Index change {signed_pct(breadth['index_change_pct'])}" in pdf.text
    for label, key in [
        ("Advancers", "advancers"),
        ("Decliners", "decliners"),
        ("Unchanged (traded firm)", "unchanged"),
        ("Did not trade", "not_traded"),
    ]:
        assert f"{label} {breadth[key]}" in pdf.text

    latest = api.acme("GET", "/api/market/latest").json()
    ranked = sorted((s for s, q in latest.items() if q["score"] is not None), key=lambda s: -latest[s]["score"])
    for rank, symbol in enumerate(ranked, start=1):
        q = latest[symbol]
        row = (
            f"{rank} {symbol} {money(q['close'])} {signed_pct(q['change_pct'])} {number(q['rsi_14'], 1)} "
            f"{number(q['score'], 1)} {q['action']} {q['tercile']} {edge_against_cost(q)}"
        )
        assert row in pdf.text, row

    summary = api.acme("GET", "/api/ai-portfolio/summary").json()
    assert f"Open positions {summary['positions_count']}" in pdf.text
    positions = api.acme("GET", "/api/ai-portfolio/positions").json()
    assert f"Entered as {entered_as(positions)}" in pdf.text and entered_as(positions) == "1 slot"
    assert f"Portfolio value (JMD) {money(summary['equity'])}" in pdf.text
    for position in api.acme("GET", "/api/ai-portfolio/positions").json():
        assert f"{position['symbol']} {number(position['quantity'])} {money(position['average_cost'])}" in pdf.text
    assert "Starting cash" in pdf.text and "Score (0-100)" in pdf.text, "the charts' legend and axis titles are text"
    record = api.acme("GET", "/api/ai-portfolio/track-record").json()
    bench = record["benchmarks"]["equal_weight_liquid"]
    index = record["benchmarks"]["index"]
    assert (
        f"Total return to {record['last']} {signed_pct(record['total_return'] * 100, 2)} "
        f"{signed_pct(bench['total_return'] * 100, 2)} "
        f"{signed_pct(index['total_return'] * 100, 2)}" in pdf.text
    )
    assert (
        f"Costs paid (JMD): fees / spread / impact {money(record['costs']['fees'])} / "
        f"{money(record['costs']['spread'])}" in pdf.text
    )
    assert f"LONG: one of the {BOOK_NAMES} liquid ordinary shares with the largest expected excess" in pdf.text.replace(
        "\n", " "
    )
    assert "+0.20% / 1.40%" in pdf.text  # MID: HOLD, with its edge against its cost
    assert bench["beta"] is None and "Beta - -" in pdf.text, "two days: no beta to print, a dash, not a fit's noise"
    assert "Cumulative return, %" in pdf.text and "Equal-weighted liquid" in pdf.text  # the chart's axis and legend
    month = f"{DAY.year} {signed_pct(record['total_return'] * 100, 2)}"  # the world's two days fall in one month
    assert month in pdf.text, month


def test_compliance_report_sections_trail_and_certified_digest(api: Api) -> None:
    seed_model_record(api)
    response = api.acme("GET", "/api/compliance-report.pdf")
    pdf = read(pdf_of(response))
    assert_page_furniture(pdf.pages, "Compliance Report")
    for heading in COMPLIANCE_SECTIONS:
        assert heading in pdf.text, heading
    assert_exchange_time_only(pdf.text)
    assert "Generated 2026-11-23 07:30:00 exchange time (UTC-5)" in pdf.text
    assert "Feature count 14" in pdf.text and "Training rows 4,321" in pdf.text
    assert "Binary accuracy (up vs down) 56.2% 51.2% 640" in pdf.text

    trades = [t for day in api.admin("GET", "/api/ai-portfolio/history").json()["items"] for t in day["trades"]]
    assert trades, "the world's executed AI day traded"
    for trade in trades:
        costs = trade["rationale"]["fill"]["costs"]["total"]
        row = (
            f"{trade['trading_date']} {trade['symbol']} {trade['side']} {number(trade['quantity'])} "
            f"{money(trade['price'])} {money(trade['value'])} {money(trade['fees'])} {money(costs)}"
        )
        assert row in pdf.text, row

    digest = response.headers["X-Data-SHA256"]
    assert re.fullmatch(r"[0-9a-f]{64}", digest) and digest in pdf.text.replace("\n", "")
    again = api.acme("GET", "/api/compliance-report.pdf")
    assert again.headers["X-Data-SHA256"] == digest, "the same store state is the same snapshot"
    bought = api.acme(
        "POST",
        "/api/portfolio/trade",
        json={"side": "buy", "symbol": "LIQ", "quantity": 10, "price": "52.00"},
        headers={"Idempotency-Key": "report-1"},
    )
    assert bought.status_code == 201, bought.text
    assert api.acme("GET", "/api/compliance-report.pdf").headers["X-Data-SHA256"] == digest, (
        "a client's own trade is not in the compliance snapshot"
    )
    seed_model_record_later(api)
    assert api.acme("GET", "/api/compliance-report.pdf").headers["X-Data-SHA256"] != digest


def seed_validation_record(api: Api) -> None:
    """A validation record as bootstrapping stores it (models/validation.py), no live metrics."""
    detail = {
        "period_start": "2026-05-05",
        "period_end": "2026-11-19",
        "models": 28,
        "layer1_backend": "fallback-empirical-v1",
        "horizon_days": 1,
    }
    with api.world.engine.begin() as conn:
        append_metrics(
            conn,
            "validation",
            "validation:2026-05-05:2026-11-19",
            [
                ("binary_accuracy", 0.6034, 0.511, 3923),
                ("movers_accuracy", 0.6512, 0.52, 1200),
                ("three_class_accuracy", 0.47, 0.45, 8260),
                ("hit_rate_top", 0.61, 0.51, 900),
                ("hit_rate_bottom", 0.41, 0.51, 880),
                ("tercile_spread", 0.0061, 0.0, 120),
            ],
            detail,
        )


@pytest.mark.parametrize("path", ["/api/quant-briefing.pdf", "/api/compliance-report.pdf"])
@ON_SQLITE_ONLY
def test_reports_show_the_validation_record_while_the_live_one_is_empty_and_say_so(api: Api, path: str) -> None:
    seed_validation_record(api)
    pdf = read(pdf_of(api.acme("GET", path)))
    text = " ".join(pdf.text.split())
    perf = api.acme("GET", "/api/ai/performance").json()
    assert perf["live"]["reason"] and perf["validation"]["reason"] is None
    through = perf["validation"]["evaluated_through"]
    made = f" (those made through {through})" if through and through != "2026-11-19" else ""
    assert (
        "Validation record (walk-forward, out of sample, before the first live day): 2026-05-05 to 2026-11-19, "
        f"8,260 predictions with a realised outcome{made} by 28 models."
    ) in text
    assert f"Live record (predictions made each trading day, from the first live day): {perf['live']['reason']}" in text
    assert "60.3% 51.1% 3,923" in text and "+0.61% +0.00% 120" in text
    assert (
        "Not available yet"
        not in text.split("Model metrics" if "compliance" in path else "System performance")[1][:400]
    )


def seed_model_record_later(api: Api) -> None:
    with api.world.engine.begin() as conn:
        append_metrics(conn, "live", "live:2026-11-23", [("binary_accuracy", 0.57, 0.51, 700)])


@pytest.mark.parametrize("path", ["/api/quant-briefing.pdf", "/api/compliance-report.pdf"])
@ON_SQLITE_ONLY
def test_final_page_shows_three_self_drawn_logos(api: Api, path: str) -> None:
    pdf = read(pdf_of(api.acme("GET", path)))
    assert "Powered by" in pdf.pages[-1]
    assert pdf.logo_forms == ["FormXob.Logo-Engine", "FormXob.Logo-Forecaster", "FormXob.Logo-Ledger"]
    assert pdf.logo_clusters == 3
    assert len(pdf.image_pages) == 0 or pdf.image_pages[-1] != len(pdf.pages), "the logos are vector drawings"


@ON_SQLITE_ONLY
def test_reports_need_a_key_unless_public(api: Api) -> None:
    assert_problem(api.call("GET", "/api/quant-briefing.pdf"), 401, "X-API-Key")
    assert_problem(api.call("GET", "/api/compliance-report.pdf", "svc-sk-" + "0" * 32), 401)
    public = api.world.settings.model_copy(
        update={"public_reports": True, "company_name": "Blue Mountain Analytics", "report_page_size": "Letter"}
    )
    with serve_in_thread(create_app(public, now=api.clock)) as base, httpx.Client(base_url=base, timeout=30) as http:
        pdf = read(pdf_of(http.get("/api/quant-briefing.pdf")))
        assert_page_furniture(pdf.pages, "Quant Briefing", company="Blue Mountain Analytics")
        assert all(size == (612.0, 792.0) for size in pdf.sizes), "Letter paper"
        assert_problem(http.get("/api/quant-briefing.pdf", headers={"X-API-Key": "svc-sk-nothex"}), 401, "malformed")


def test_breadth_counts_and_capitalisation_index(api: Api) -> None:
    latest = api.acme("GET", "/api/market/latest").json()
    breadth = api.acme("GET", "/api/market/breadth").json()
    traded = {s: q for s, q in latest.items() if q["volume"] > 0}
    assert breadth["advancers"] == sum(q["change_pct"] > 0 for q in traded.values())
    assert breadth["decliners"] == sum(q["change_pct"] < 0 for q in traded.values())
    assert breadth["not_traded"] == len(latest) - len(traded) == 1  # DRY never trades
    # only LIQ reports shares outstanding: the index is LIQ's own change
    assert breadth["index_constituents"] == 1 and breadth["index_excluded"] == ["DRY", "MID", "SLOW"]
    assert breadth["index_change_pct"] == pytest.approx(latest["LIQ"]["change_pct"], abs=1e-4)
    assert breadth["index_market_cap"] == pytest.approx(latest["LIQ"]["close"] * 2_000_000)
    assert_problem(api.acme("GET", "/api/market/breadth", params={"date": "2026-11-21"}), 422, "not a trading day")


def test_snapshot_digest_is_the_sha256_of_canonical_inputs(api: Api) -> None:
    response = api.acme("GET", "/api/compliance-report.pdf")
    with api.world.engine.connect() as conn:
        inputs = compliance_inputs(conn, default_calendar(), api.clock(), api.world.settings)
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode()
    assert response.headers["X-Data-SHA256"] == snapshot_sha256(inputs) == hashlib.sha256(canonical).hexdigest()


REPORTS = [
    ("/api/quant-briefing.pdf", "quant-briefing", BRIEFING_SECTIONS),
    ("/api/compliance-report.pdf", "compliance-report", COMPLIANCE_SECTIONS),
]


@pytest.mark.parametrize("path", [path for path, _, _ in REPORTS])
@ON_SQLITE_ONLY
def test_reports_embed_every_font_draw_charts_as_vectors_and_set_tables_at_text_width(api: Api, path: str) -> None:
    seed_model_record(api)
    pdf = read(pdf_of(api.acme("GET", path)))
    assert pdf.fonts and all(pdf.fonts.values()), f"fonts not embedded: {[f for f, e in pdf.fonts.items() if not e]}"
    assert {font.split("-")[0] for font in pdf.fonts} == {"DejaVuSans"}, "one family for text and charts"
    assert pdf.image_xobjects == 0 and pdf.image_pages == [], "charts and logos are vector drawings, no bitmap"
    # every data table's header band (HEADER_FILL) runs from the text's left edge to its right
    left = MARGIN + 6  # the frame's padding
    right = PAGE_SIZES["A4"][0] - MARGIN - 6
    fill = tuple(round(c, 3) for c in HEADER_FILL.rgb())
    bands = [(x0, x1) for page in pdf.filled for x0, x1, colour in page if tuple(round(c, 3) for c in colour) == fill]
    assert bands, "the report has data tables"
    assert all(abs(x0 - left) < 0.5 and abs(x1 - right) < 0.5 for x0, x1 in bands), bands


@pytest.mark.parametrize(("path", "name", "sections"), REPORTS)
@ON_SQLITE_ONLY
def test_no_page_ends_on_a_heading_and_the_logos_share_their_page(
    api: Api, path: str, name: str, sections: list[str]
) -> None:
    seed_model_record(api)
    pdf = read(pdf_of(api.acme("GET", path)))
    for number_, page in enumerate(pdf.pages, start=1):
        body = page.splitlines()[1:-1]  # less the header line and the footer
        assert body and body[-1] not in sections, f"page {number_} ends on the heading '{body[-1]}'"
        assert len(body) > 1, f"page {number_} holds nothing but '{body}'"
    last = pdf.pages[-1]
    assert "Powered by" in last
    body = last.splitlines()[1:-1]
    # a section's heading or its closing text (the Briefing's Score rule moves with the logos)
    assert body.index("Powered by") > 0, "the logos stand alone on the last page"
    if name == "compliance-report":
        assert "Document certification" in last


@pytest.mark.parametrize(("path", "name", "sections"), REPORTS)
@ON_SQLITE_ONLY
def test_report_files_are_named_by_their_market_day_not_the_day_they_were_made(
    api: Api, path: str, name: str, sections: list[str]
) -> None:
    made_on = api.clock().date()
    assert made_on != DAY, "the clock is the Monday after the market day"
    response = api.acme("GET", path)
    assert response.headers["content-disposition"] == f'inline; filename="{name}-{DAY.isoformat()}.pdf"'


def test_the_briefing_counts_the_ai_positions_as_the_api_does_on_a_split_ex_date(api: Api) -> None:
    """A reviewer's run: LIQ splits 3-for-2 with ex-date Monday, read Monday 07:30 (the
    latest priced day Friday's). REST, GraphQL and the CLI showed the AI book's 1,812 shares
    at 34.673333 (the current session's count), the Briefing 1,208 at 52.01 (Friday's): it
    valued the book without the current session. It lists them as REST does, and its price
    times the quantity is the value shown beside it."""
    announce_action(api.world.engine, "LIQ", "SPLIT", 1.5, MONDAY, "3-for-2 split, ex-date Monday")
    (position,) = api.acme("GET", "/api/ai-portfolio/positions").json()
    assert (position["quantity"], position["price"]) == (1812, "34.673333")
    summary = api.acme("GET", "/api/ai-portfolio/summary").json()
    pdf = read(pdf_of(api.acme("GET", "/api/quant-briefing.pdf")))
    row = (
        f"LIQ {number(position['quantity'])} {money(position['average_cost'])} {price(position['price'])} "
        f"{money(position['market_value'])}"
    )
    assert row in pdf.text, [line for line in pdf.text.splitlines() if line.startswith("LIQ")]
    assert f"Portfolio value (JMD) {money(summary['equity'])}" in pdf.text


@ON_SQLITE_ONLY
def test_the_ai_return_is_measured_from_the_deposit_the_book_opened_with(api: Api) -> None:
    """A reviewer's run: the AI book opened with 1,000,000 (its opening deposit, in the
    ledger); read with MARKETINTEL_AI_STARTING_CASH since set to 10,000,000, REST and the
    Briefing said total return -90.01%, volatility 1005%, drawdown 90.01%: measured from the
    setting. The setting only opens the book; once open, its return is from its deposit."""
    reads = ("/api/ai-portfolio/summary", "/api/ai-portfolio/track-record")
    summary, record = (api.acme("GET", path).json() for path in reads)
    assert summary["starting_cash"] == "1000000.00" and abs(summary["total_return_pct"]) < 1
    changed = api.world.settings.model_copy(update={"ai_starting_cash": 10_000_000})
    key = {"X-API-Key": api.world.acme_key}
    with (
        serve_in_thread(create_app(changed, now=api.clock)) as base,
        httpx.Client(base_url=base, timeout=30, headers=key) as http,
    ):
        assert [http.get(path).json() for path in reads] == [summary, record]
        pdf = read(pdf_of(http.get("/api/quant-briefing.pdf")))
    assert f"Total return since opening on {signed_pct(summary['total_return_pct'])}" in pdf.text  # date wraps
    assert f"Total return to {record['last']} {signed_pct(record['total_return'] * 100, 2)}" in pdf.text


def test_every_money_figure_names_the_currency_the_market_trades_in(api: Api) -> None:
    """A reviewer's run on a store whose instruments trade in KES (a replayed NSE): both
    PDFs printed "Portfolio value 10,000,000.00", "Price", "Value", "Fees" with no currency,
    so a reader could not tell shillings from dollars. Every money column and figure names
    the market's currency (portfolio/market.py `trading_currency`)."""
    from store.history import current_rows

    with api.world.engine.begin() as conn:
        kept = ("symbol", "name", "board", "sector", "listed_on", "delisted_on", "source", "instrument_type")
        rows = [{k: r[k] for k in kept} | {"currency": "KES"} for r in current_rows(conn, tables.instruments)]
        append_history(conn, tables.instruments, rows)
    briefing = read(pdf_of(api.acme("GET", "/api/quant-briefing.pdf"))).text
    compliance = read(pdf_of(api.acme("GET", "/api/compliance-report.pdf"))).text
    for label in ("Portfolio value (KES)", "Cash (KES)", "Liquid equity (KES)", "Costs paid (KES): fees"):
        assert label in briefing, label
    assert "Symbol Price (KES) Return" in briefing.replace("# ", "")
    # and the money columns of the AI positions (avg cost, price, value, PnL) and of the audit trail
    # (price, value, fees, all costs), their currency on a line under the name where the table is short of room
    assert briefing.count("(KES)") == 1 + 3 + 4 + 1, briefing
    assert compliance.count("(KES)") == 4 and "Price Value Fees All costs" in compliance, compliance
    assert "JMD" not in briefing + compliance, "no figure in another currency than the market's"


def test_a_signal_that_did_not_trade_on_the_day_reads_no_trade_not_a_firm_zero(api: Api) -> None:
    """A reviewer's run on the demo: IBS, scored in the top 15, traded no share on the day,
    yet the Briefing's Return column read "+0.00%", as a name that traded firm reads, while
    Market sentiment counted it as not traded. Its row says "no trade"; a name that traded
    keeps its change."""
    from tests.portfolio.seed import price_row

    latest = api.acme("GET", "/api/market/latest").json()
    scored = sorted((s for s, q in latest.items() if q["score"] is not None), key=lambda s: -latest[s]["score"])
    idle, traded = scored[0], scored[1]
    close = latest[idle]["close"]
    with api.world.engine.begin() as conn:  # a correction of the day's bar: no share traded at the last close
        append_history(conn, tables.eod_prices, [price_row(idle, DAY, close, 0, close - 0.05, close + 0.05)])
    latest = api.acme("GET", "/api/market/latest").json()
    assert latest[idle]["volume"] == 0 and latest[traded]["volume"] > 0
    pdf = read(pdf_of(api.acme("GET", "/api/quant-briefing.pdf"))).text
    assert f"1 {idle} {money(latest[idle]['close'])} no trade " in pdf, pdf
    assert f"2 {traded} {money(latest[traded]['close'])} {signed_pct(latest[traded]['change_pct'])} " in pdf
