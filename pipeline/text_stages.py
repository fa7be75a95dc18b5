"""T1 steps 2 and 3: ingest the day's news and disclosures, then score them and build
the sentiment composite."""

from __future__ import annotations

import httpx

from ingest.exchange.client import ExchangeClient, PageLimits
from ingest.text_sources import ingest_text
from models.sentiment.composite import MARKET
from pipeline.sentiment import build_composite
from pipeline.stage import Stage, StageContext, StageOutcome
from store import tables
from store.history import current_rows


def run_ingest_text(ctx: StageContext) -> StageOutcome:
    settings = ctx.settings
    with (
        ExchangeClient(
            "",
            timeout=settings.exchange_timeout_seconds,
            retries=settings.exchange_retries,
            backoff=settings.exchange_backoff_seconds,
            limits=PageLimits(internal_redirects=settings.allow_private_enclosures),
        ) as client,
        httpx.Client(timeout=settings.pdf_timeout_seconds) as http,  # redirects: `followed`'s one loop
    ):
        report = ingest_text(ctx.engine, settings, ctx.trading_date, client, http)
    return StageOutcome(
        summary={
            "feeds": report.feeds,
            "news_new": report.news_new,
            "news_already_stored": report.news_seen,
            "disclosures_ok": report.disclosures_ok,
            "disclosures_failed": report.disclosures_failed,
            "disclosures_deferred": report.disclosures_deferred,
        },
        tables={"failures": [{"failure": f} for f in report.failures]},
    )


def run_sentiment(ctx: StageContext) -> StageOutcome:
    with ctx.transaction() as conn:
        rows = build_composite(conn, ctx.trading_date)
        titles = _titles(conn)
    market = next(r for r in rows if r["symbol"] == MARKET)
    named = sorted((r for r in rows if r["symbol"] != MARKET and r["item_count"]), key=lambda r: r["score"])
    return StageOutcome(
        summary={
            "instruments": len(rows) - 1,
            "with_news": len(named),
            "market_score": market["score"],
            "texts_in_window": market["item_count"],
        },
        tables={
            "composite": [{"symbol": r["symbol"], "score": r["score"], "items": r["item_count"]} for r in named],
            "texts": [
                {
                    "kind": i["kind"],
                    "id": i["id"],
                    "score": i["score"],
                    "weight": i["weight"],
                    "title": titles.get((i["kind"], i["id"]), ""),
                }
                for i in market["inputs"]
            ],
        },
    )


def _titles(conn) -> dict[tuple[str, int], str]:  # noqa: ANN001
    found = {("NEWS", r["id"]): r["title"] for r in current_rows(conn, tables.news_items)}
    found.update({("DISCLOSURE", r["id"]): r["title"] or "" for r in current_rows(conn, tables.disclosures)})
    found.update(
        {("RESEARCH", r["id"]): r["filename"] or "research note" for r in current_rows(conn, tables.research_notes)}
    )
    return found


INGEST_TEXT = Stage("t1_ingest_text", run_ingest_text, "Ingest the day's news feeds and disclosure PDFs.")
SENTIMENT = Stage("t1_sentiment", run_sentiment, "Score texts and build the per-instrument sentiment composite.")
