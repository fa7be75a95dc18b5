"""The Compliance Report: risk disclosures, model metrics, the AI portfolio's recent trade
audit trail, regulatory notices and a certification that names the SHA-256 of the data
snapshot the report was built from. Built from `inputs.compliance_inputs`.

The audit trail is the AI portfolio's (the service's own model-driven trades), newest
first, at most `inputs.AUDIT_TRADES`: date, symbol, action, quantity, price and value.
Client portfolios never appear: a report is readable by any key (or by anyone with
`public_reports`), and the full rationale of each trade stays on the admin-only
GET /api/ai-portfolio/history.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from reportlab.platypus import Flowable, Spacer

from reports.format import (
    backend_line,
    by_type,
    counted,
    in_currency,
    market_day_line,
    metric_rows,
    null_books_summary,
    number,
    record_caption,
    stale_warning,
)
from reports.inputs import AuditTrade, ComplianceInputs, Origin, Provenance, Staleness, priced_day
from reports.layout import (
    DIGEST,
    SMALL,
    SUBHEADING,
    SUBTITLE,
    TITLE,
    caution,
    content_width,
    data_table,
    kept,
    key_figures,
    notice,
    section,
    text,
)
from reports.logos import powered_by
from reports.model_health import model_health
from views.performance import shown_record

TITLE_TEXT = "Compliance Report"

RISK_DISCLOSURES = [
    (
        "Model risk",
        "Scores, actions and weights come from statistical models fitted to past prices, volumes and news. "
        "A model can be wrong, mis-specified or fitted to noise; its output is an estimate, not a fact.",
    ),
    (
        "Out-of-sample accuracy",
        "Every accuracy figure in this report is measured out of sample: on predictions made "
        "before their outcome was known. It is stated beside its base rate; a figure near its base rate means "
        "little or no skill.",
    ),
    (
        "Regime change",
        "Relationships seen in the past can break when rates, currency, regulation or market structure "
        "change. Past accuracy does not carry over to a new regime.",
    ),
    (
        "Backtesting limits",
        "Backtests and simulated portfolios fill through the service's cost model (market/costs.py), within the "
        "liquidity rails. {cost_model} Real orders can move the price further, fill partly or not at all; fees "
        "and taxes can differ from those assumed. A return against a benchmark says how a book did, not how much of "
        "it the model did: holding liquid names is itself a bet, so the AI book is also replayed beside books that "
        "obey its mandate by chance (its null books). {null_books}",
    ),
    (
        "Illiquidity",
        "Many listed stocks trade rarely and with wide spreads. A position may not be sellable at the last "
        "close, or at all for days; the service discounts such positions in its liquid equity but cannot remove "
        "the risk.",
    ),
    (
        "No investment advice",
        "Nothing in this report or in the service is investment advice or a recommendation to "
        "buy or sell a security. Decisions and their consequences are the reader's.",
    ),
    ("Speculative nature", "Trading listed equities is speculative: the whole amount invested can be lost."),
]

REGULATORY_NOTICES = [
    (
        "Corporate structure",
        "{company} operates this service. The AI portfolio is a virtual portfolio run by the "
        "service's own rules; it holds no client money and places no orders on the exchange.",
    ),
    (
        "Nature of output",
        "Scores, actions, position weights and terciles are the output of an automated model, "
        "generated without human review of each figure.",
    ),
    (
        "User responsibility",
        "Users decide and are responsible for their own trades, suitability and compliance with "
        "the rules that apply to them; suggestions are executed only when a user confirms them.",
    ),
    ("Data provenance", "{provenance}"),
    (
        "Forward-looking statements",
        "Predicted returns and probabilities are forward-looking estimates. Actual results "
        "can differ materially; no figure is a promise of a future price or return.",
    ),
]


def story(
    inputs: ComplianceInputs, generated: dict[str, str], company: str, page_size: str, stale: Staleness | None = None
) -> list[Flowable]:
    """The Compliance Report; `stale` (reports.inputs.staleness): its prices are old, boxed under its heading."""
    width = content_width(page_size)
    return [
        text(TITLE_TEXT, TITLE),
        text(
            market_day_line(priced_day(inputs), f"{generated['exchange']} exchange time"),
            SUBTITLE,
        ),
        *([caution(stale_warning(stale)), Spacer(0, 6)] if stale else []),
        *section(
            "Risk disclosures",
            *_paragraphs(
                RISK_DISCLOSURES,
                cost_model=inputs["cost_model"],
                null_books=null_books_summary(inputs.get("null_books")),
            ),
        ),
        *_metrics(inputs),
        *_audit_trail(inputs),
        *section(
            "Regulatory notices",
            *_paragraphs(REGULATORY_NOTICES, company=company, provenance=_provenance(inputs["provenance"])),
        ),
        *_certification(generated, powered_by(width, inputs["performance"])),
    ]


def _paragraphs(items: list[tuple[str, str]], **values: str) -> list[Flowable]:
    """Titled paragraphs (a subheading keeps with its paragraph: SUBHEADING.keepWithNext)."""
    blocks: list[Flowable] = []
    for title, body in items:
        blocks += [text(title, SUBHEADING), text(body.format(**values))]
    return blocks


def _metrics(inputs: ComplianceInputs) -> list[Flowable]:
    perf = inputs["performance"]
    record = shown_record(perf)
    rows = metric_rows(record, ("binary_accuracy", "movers_accuracy", "rank_ic", "tercile_spread"))
    table: Flowable = (
        data_table(["Out-of-sample metric", "Value", "Base rate", "Sample"], rows)
        if rows
        else notice(record["reason"] or "no out-of-sample metrics yet")
    )
    figures = key_figures(
        [
            ("Training rows", number(perf["training_rows"])),
            ("Feature count", str(inputs["feature_count"])),
            ("Model", perf["model_id"] or "none yet"),
            ("Horizon", counted(perf["horizon_days"], "trading day") if perf["horizon_days"] else "-"),
            ("Layer 1", backend_line(perf)),
        ]
    )
    features = text("Features: " + ", ".join(inputs["features"]) + ".", SMALL)
    return section(
        "Model metrics",
        text(record_caption(perf, record), SMALL),
        table,
        Spacer(0, 4),
        figures,
        features,
        Spacer(0, 6),
        text("Model health (model risk monitor)", SUBHEADING),
        *model_health(perf),
    )


def _audit_trail(inputs: ComplianceInputs) -> list[Flowable]:
    trades = inputs["audit_trail"]
    if not trades:
        return section("Recent trade audit trail", notice("the AI portfolio has not traded yet"))
    rows = [
        [
            t["trading_date"],
            t["symbol"],
            t["side"],
            number(t["quantity"]),
            *(by_type(t, AuditTrade, name) for name in ("price", "value", "fees", "costs")),
        ]
        for t in trades
    ]
    money = [in_currency(h, inputs["currency"]) for h in ("Price", "Value", "Fees", "All costs")]
    table = data_table(["Date", "Symbol", "Action", "Quantity", *money], rows, numeric_from=3)
    unfilled = sum(t["costs"] is None for t in trades)
    note = text(
        f"{_listed(len(trades), inputs['trades_total'])}, newest first, each "
        "filled through the cost model the risk disclosures describe (Backtesting limits); all costs = spread + "
        "impact + fees; a fee is the schedule's lines, each rounded to the cent (and any minimum), so it can differ "
        f"by a few cents (half a cent a line at most) from the total rate times the value.{_unfilled(unfilled)}",
        SMALL,
    )
    return section("Recent trade audit trail", note, table)


def _unfilled(count: int) -> str:
    """What a dash under All costs means, where a listed trade has one: it was stored
    without its fill, so its spread and impact are not known (its fees are)."""
    if not count:
        return ""
    which = "a trade" if count == 1 else f"{count:,} trades"
    return (
        f' All costs "-": {which} stored without {"its" if count == 1 else "their"} fill, so the spread and impact '
        "paid are not known; the Fees column is what was charged."
    )


def _listed(shown: int, total: int) -> str:
    """ "The AI portfolio's 3 trades", or "The 100 most recent of the AI portfolio's 2,040 trades"."""
    if shown == total:
        return f"The AI portfolio's {counted(total, 'trade')}"
    return f"The {shown} most recent of the AI portfolio's {counted(total, 'trade')}"


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _provenance(provenance: Provenance) -> str:
    """Where the prices came from, as the store records it: the market days from each
    origin (inputs._price_origins), then the latest delivery."""
    origins, latest = provenance.get("origins") or [], provenance["latest"]
    if not origins and latest is None:
        return "No end-of-day delivery has been stored yet."
    total = sum(o["days"] for o in origins)
    lines = [
        f"Prices for {counted(total, 'market day')}: {'; '.join(_origin_text(o) for o in origins)}."
        if origins
        else "Prices: none stored yet."
    ]
    if latest is not None:
        lines.append(
            f"The latest delivery ({latest['trading_date']}) is {latest['status']} with {latest['row_count']} "
            f"rows and checksum {latest['checksum'][:16]}."
        )
    lines.append("Stored history is append-only: corrections are new rows and nothing is overwritten.")
    return " ".join(lines)


def _origin_text(origin: Origin) -> str:
    """ "260 days of simulated backfill, ... (2025-11-13 to 2026-11-19)"."""
    n, detail = origin["days"], origin["detail"]
    if origin["origin"] == "scraped":
        what = f"{counted(n, 'day')} scraped over HTTP from the exchange's pages" + (f" at {detail}" if detail else "")
        if detail and (urlsplit(detail).hostname or "") in LOOPBACK_HOSTS:
            what += ", a site on this machine"
    elif origin["origin"] == "simulated":
        what = (
            f"{counted(n, 'day')} of simulated backfill, made up by the built-in exchange simulator and not market data"
        )
    elif origin["origin"] == "replayed":
        what = f"{counted(n, 'day')} of replayed history from files" + (f" ({detail})" if detail else "")
    elif origin["origin"] == "imported":
        what = f"{counted(n, 'day')} imported from files in the {detail} format by marketintel import"
    else:
        what = f"{counted(n, 'day')} stored with source '{detail}' and no delivery"
    span = (
        origin["first_day"]
        if origin["first_day"] == origin["last_day"]
        else f"{origin['first_day']} to {origin['last_day']}"
    )
    return f"{what} ({span})"


def _certification(generated: dict[str, str], logos: Flowable) -> list[Flowable]:
    """The certification and the logos that close the report, kept on one page."""
    figures = key_figures(
        [
            ("Generated", f"{generated['exchange']} exchange time (UTC-5)"),
            ("Generation method", generated["method"]),
            ("Rights", generated["rights"]),
            ("Data snapshot SHA-256", text(generated["sha256"], DIGEST)),
        ]
    )
    explain = text(
        "The SHA-256 is taken over the canonical JSON (sorted keys, no whitespace) of every figure this "
        "report was built from; the same store state always yields the same digest, returned also in the "
        "X-Data-SHA256 response header.",
        SMALL,
    )
    return kept(*section("Document certification", figures, explain), *section("Powered by", logos))
