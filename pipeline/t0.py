"""T0 (16:00 exchange time): scrape the day's end-of-day data and deliver it to the store,
refused where a SPLIT notice of the day would leave a client's ledger unreplayable (the
desk's `keep_books`)."""

from __future__ import annotations

from desk import keep_books
from ingest.exchange.delivery import client_for, deliver_day
from market.liquidity import spread_fraction
from pipeline.stage import Stage, StageContext, StageOutcome
from portfolio.market import stored_estimates
from store import tables
from store.history import current_rows


def run_t0_scrape(ctx: StageContext) -> StageOutcome:
    with client_for(ctx.settings) as client:
        report = deliver_day(ctx.engine, ctx.settings, ctx.trading_date, client, keep_books=keep_books)
    return StageOutcome(
        summary={
            "status": report.status,
            "checksum": report.checksum[:16],
            "instruments": report.row_counts["MAIN"] + report.row_counts["JUNIOR"],
            "rows_inserted": report.inserted,
            "warning_count": len(report.warnings),
            "http_requests": report.attempts,
            "snapshot": report.snapshot_path,
        },
        tables={
            "prices": day_table(ctx),
            "row_counts": [{"section": k, "rows": v} for k, v in report.row_counts.items()],
            "warnings": [{"warning": w} for w in report.warnings],
        },
    )


def day_table(ctx: StageContext) -> list[dict]:
    """The delivered day as a reviewer reads it: one row per instrument with its spread:
    the closing quotes' where both sides are quoted, else the estimate from the stored
    bars up to the day (views/spreads.py), else the day's range; `spread_source` says which."""
    with ctx.engine.connect() as conn:
        rows = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == ctx.trading_date])
        boards = {r["symbol"]: r["board"] for r in current_rows(conn, tables.instruments)}
        estimates = stored_estimates(conn, ctx.trading_date, [r["symbol"] for r in rows])
    return [
        {
            "symbol": r["symbol"],
            "board": boards.get(r["symbol"]),
            "close": r["close"],
            "change_pct": round((r["close"] / r["prev_close"] - 1) * 100, 2) if r["prev_close"] else None,
            "volume": r["volume"],
            "bid": r["bid"],
            "ask": r["ask"],
            **_spread(r, estimates.get(r["symbol"])),
            "halted": r["halted"],
        }
        for r in sorted(rows, key=lambda r: r["symbol"])
    ]


def _spread(row: dict, estimate: tuple[float, str] | None = None) -> dict:
    """The spread in percent with where it came from (market/liquidity.py's rule)."""
    spread, source = spread_fraction(
        row["bid"], row["ask"], row["high"], row["low"], row["close"], estimate, row["volume"]
    )
    return {"spread_pct": None if spread is None else round(spread * 100, 2), "spread_source": source}


T0_SCRAPE = Stage(
    name="t0_scrape",
    run=run_t0_scrape,
    description="Fetch, validate and store the day's prices, quotes, fundamentals and notices.",
)
