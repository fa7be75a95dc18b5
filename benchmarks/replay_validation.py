"""How many replayed days T0's validation refuses, and why: every day of a replay (default:
the whole NSE daily set) rendered as the exchange pages, parsed and validated the way
`deliver_day` does. Each day is judged on its own: against the store as the day before
would have left it had it been accepted (known instruments, the previous day's closes);
in a real in-order delivery one refused day also leaves the next days compared with an
older close, so refusals cascade.

Two passes: `raw` serves only the files' rows (a listed name absent from a day's file is
simply missing, a jump is not marked), `replay` serves what `ReplayMarket` serves (the
no-trade rows and CONFIRMED MOVE statuses of its documented rules). Last line: one JSON.

    python benchmarks/replay_validation.py [--path ../shared/data/nse-kenya/daily]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("MARKETINTEL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
REASONS = [
    ("active security missing from the quotes page", re.compile(r"active security missing")),
    ("close beyond the price band without a notice", re.compile(r"from the previous close")),
    ("unknown symbol", re.compile(r"unknown symbol")),
]


def validate_all(market, raw: bool) -> dict:
    from ingest.exchange.parsers import parse_securities, parse_trade_quotes
    from ingest.exchange.validation import CONFIRMED_MOVE, Known, Published, validate_day
    from ingest.replay import ABSENT_STATUS
    from ingest.simulator import pages

    failing, reasons, days_by_reason, warnings = [], Counter(), Counter(), Counter()
    known: set[str] = set()
    previous: dict[str, float] = {}
    for day in market.days:
        served = market.day(day)
        if raw:
            served = replace(
                served,
                bars=[
                    {**b, "status": "" if b["status"] == CONFIRMED_MOVE else b["status"]}
                    for b in served.bars
                    if b["status"] != ABSENT_STATUS
                ],
            )
        quotes, notices, _ = parse_trade_quotes(pages.trade_quotes_page(served, currency=market.currency))
        securities = parse_securities(pages.securities_page(served))
        published = Published(quotes.page_date, quotes.rows, notices.rows, securities.rows)
        verdict = validate_day(day, published, Known(known, previous, 0.5))
        errors = quotes.errors + notices.errors + securities.errors + verdict.errors
        named = [next((name for name, pattern in REASONS if pattern.search(error)), error) for error in errors]
        reasons.update(named)
        days_by_reason.update(set(named))
        for warning in verdict.warnings:
            warnings[re.sub(r"^\S+: |[\d.]+", "", warning)] += 1
        if errors:
            failing.append(day.isoformat())
        known |= {r["symbol"] for r in securities.rows}
        previous = {r["symbol"]: r["close"] for r in quotes.rows}
    return {
        "days": len(market.days),
        "failing_days": len(failing),
        "first_failing": failing[:5],
        "failing_days_by_reason": dict(days_by_reason.most_common()),
        "errors_by_reason": dict(reasons.most_common()),
        "warnings_by_kind": dict(warnings.most_common(5)),
    }


def main() -> None:
    from ingest.replay import ReplayMarket

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    args = parser.parse_args()
    if not Path(args.path).exists():
        raise SystemExit(f"error: no replay files at {args.path}")
    started = time.perf_counter()
    market = ReplayMarket(args.path)
    figures = {
        "benchmark": "replay_validation",
        "path": args.path,
        "format": market.source.format,
        "bad_rows": len(market.source.bad_rows),
        "load_seconds": round(time.perf_counter() - started, 2),
    }
    for mode in ("raw", "replay"):
        figures[mode] = validate_all(market, raw=mode == "raw")
        print(
            f"{mode}: {figures[mode]['failing_days']} of {figures[mode]['days']} days refused; "
            f"days by reason: {figures[mode]['failing_days_by_reason']}; errors: {figures[mode]['errors_by_reason']}"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
