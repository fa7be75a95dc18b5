"""Why the AI book trades as little as it does: what the ranking offers it each day against
what a trade must pay, and what it did, on a demo store and on the NSE files (issue 63,
item 7: "the book exits and swaps during the replay when the ranking moves").

    python benchmarks/book_activity.py                     # the store of the settings (after `make demo`)
    python benchmarks/book_activity.py --nse 2008-01-02 2011-12-31 --cache DIR   # Mandate() on the NSE files
    python benchmarks/book_activity.py --files 2010-01-04 2011-06-30 --ohlcv prices.csv --fees gse.toml  # a market

The store: the AI portfolio's executed days (the validation record's replay and the live
days); per day the names that pass the entry gates (a tercile), LONG and AVOID, the best and
worst expected excess among them, their gap, the median and the cheapest round trip
(`round_trip_cost`: the spread and two fees); the Outlook the orders were weighed with (hold
and multiplier); the fills by the kind of reason (portfolio/book.py) and every sell with its
reason. The NSE: `Mandate()` replayed by portfolio/backtest.py over benchmarks/backtest.py's
walk-forward (the same loader and `--cache`): the same daily figures, the fills by kind per
year, and how many 61-session spans (the demo's record) hold a sell; then how much the
market's volatility clusters on the NSE files and on the simulator (the day's median |return|
over names with ADV_20 >= 5,000: its autocorrelation and the spread of its 60-day mean).
The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

KINDS = (  # what a rationale's reason starts with (portfolio/book.py), in the order they are tested
    ("replaces", "swap: buy"),
    ("turned AVOID", "exit: AVOID"),
    ("expected to lose", "exit: loses over the hold"),
    ("trimmed to its slot", "trim"),
    ("fills an empty slot", "fills a slot"),
    ("reserve", "reserve"),
    ("tops up to its slot", "top-up"),
)
SPAN = 61  # the demo record's executed days


def kind(side: str, reason: str) -> str:
    """A fill's kind from its side and its rationale's reason ("SELL replaced" is a swap's sell)."""
    if side == "SELL" and reason.startswith("replaced"):
        return "swap: sell"
    return next((name for start, name in KINDS if reason.startswith(start)), f"other {side.lower()}")


def spread_of(values: list[float]) -> dict[str, float | None]:
    ordered = sorted(values)
    if not ordered:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1]}


def day_figures(rows: list[tuple[str, str, float | None, float | None]]) -> dict[str, float]:
    """One day's names through the gates: (action, tercile, held_edge, round_trip_cost) rows."""
    liquid = [r for r in rows if r[1] not in (None, "ILLIQUID") and r[2] is not None]
    edges = sorted(r[2] for r in liquid)
    trips = [r[3] for r in liquid if r[3] is not None]
    return {
        "eligible": len(liquid),
        "long": sum(r[0] == "LONG" for r in rows),
        "avoid": sum(r[0] == "AVOID" for r in rows),
        "best": edges[-1] if edges else None,
        "worst": edges[0] if edges else None,
        "gap": edges[-1] - edges[0] if edges else None,
        "round_trip": statistics.median(trips) if trips else None,
        "cheapest_round_trip": min(trips) if trips else None,
    }


def summary(days: list[dict]) -> dict[str, dict]:
    return {k: spread_of([d[k] for d in days if d[k] is not None]) for k in (days[0] if days else {})}


def store_activity() -> dict:
    """The AI portfolio's record in the settings' store."""
    from sqlalchemy import text

    from market.settings import get_settings
    from store.engine import service_engine

    with service_engine(get_settings()).connect() as conn:
        executed = [
            r[0]
            for r in conn.execute(
                text("SELECT DISTINCT trading_date FROM portfolio_days WHERE portfolio_id = 'AI' ORDER BY 1")
            )
        ]
        trades = conn.execute(
            text("SELECT trading_date, symbol, side, rationale FROM trades WHERE portfolio_id = 'AI' ORDER BY id")
        ).all()
        days = []
        for day in executed:  # what each executed day decided on: its record's predictions
            rows = []
            for table in ("validation_predictions", "predictions"):
                rows = conn.execute(
                    text(f"SELECT action, tercile, held_edge, round_trip_cost FROM {table} WHERE trading_date = :day"),
                    {"day": day},
                ).all()
                if rows:
                    break
            if rows:
                days.append(day_figures([tuple(r) for r in rows]))
    fills = [(str(t[0]), t[1], t[2], json.loads(t[3] or "{}")) for t in trades]
    outlooks = Counter(json.dumps(r.get("outlook"), sort_keys=True) for *_, r in fills if r.get("outlook"))
    return {
        "executed_days": len(executed),
        "span": [str(executed[0]), str(executed[-1])] if executed else None,
        "daily": summary(days),
        "fills": dict(Counter(kind(side, r.get("reason", "")) for _, _, side, r in fills)),
        "sells": [
            {"date": d, "symbol": s, "reason": r.get("replaces") or r.get("reason", "")}
            for d, s, side, r in fills
            if side == "SELL"
        ],
        "outlooks": dict(outlooks),
    }


def files_activity(start: str, end: str, cache: str | None, options: list[str]) -> dict:
    """`Mandate()` on a market's files over the span, as benchmarks/backtest.py replays them:
    the NSE files, or `options`' (backtest.py's own: `--ohlcv FILES` and its market options,
    `--fees`, `--actions`, `--price-limit`, `--delist-after`, ...), read, checked and
    reported by backtest.py's loader (`market_through`: the capital changes, a span the
    files do not price), its fee schedule named (`market_said`)."""
    sys.argv = [sys.argv[0], "--from", start, "--to", end, "--no-nulls", *(["--cache", cache] if cache else [])]
    sys.argv += options
    import backtest as bench

    from models.decisions import HORIZON
    from portfolio.backtest import persistence_by_day, prepare_days, run_backtest
    from portfolio.book import Mandate

    args = bench.parse_args()
    fees, _ = bench.fee_schedules(args)
    first, last = args.start, args.end
    prices, capital = bench.market_through(Path(args.ohlcv or args.nse), first, last, args)
    print(bench.market_said(args, fees, prices.attrs.get("currencies", []))[0], flush=True)
    state = {"dir": args.cache, "hits": 0, "misses": 0, "seconds": 0.0}
    predictions = bench.predictions_for(prices, first, last, HORIZON, args, state)
    mandate = Mandate()
    days = prepare_days(predictions, float(fees.rate), HORIZON, mandate.names, persistence_by_day(predictions, prices))
    daily = [
        day_figures([(s.action, s.tercile, s.held_edge, s.round_trip_cost) for s in d.signals.values()]) for d in days
    ]
    result = run_backtest(days, args.cash, fees, "costed", mandate, HORIZON, bench.delisting_rule(args, capital))
    trades = result.trades
    kinds = [kind(side, reason) for side, reason in zip(trades["side"], trades["reason"], strict=True)]
    years = Counter(
        (d.year, k) for d, k, side in zip(trades["date"], kinds, trades["side"], strict=True) if side == "SELL"
    )
    sessions = [d.day for d in days]
    sold = sorted(d for d, side in zip(trades["date"], trades["side"], strict=True) if side == "SELL")
    spans = [(sessions[i], sessions[min(i + SPAN - 1, len(sessions) - 1)]) for i in range(0, len(sessions), SPAN)]
    return {
        "days": len(days),
        "daily": summary(daily),
        "fills": dict(Counter(kinds)),
        "sells_by_year": {f"{y} {k}": n for (y, k), n in sorted(years.items())},
        "spans_with_a_sell": [sum(any(a <= d <= b for d in sold) for a, b in spans), len(spans)],
        "clustering": {
            "files" if args.ohlcv else "nse": clustering(prices),
            "simulator": clustering(simulated_prices()),
        },
    }


def clustering(prices) -> dict[str, float]:
    """How the market's volatility clusters: the day's median |return| over the names with
    ADV_20 >= 5,000 shares (ten or more), its autocorrelation at 1, 5 and 20 sessions and the
    5th, 50th and 95th percentiles of its 60-session mean."""
    frame = prices[~prices["symbol"].str.startswith("^")].sort_values(["symbol", "date"])
    frame = frame.assign(
        r=frame.groupby("symbol")["close"].pct_change(),
        adv=frame.groupby("symbol")["volume"].transform(lambda v: v.rolling(20).mean()),
    )
    frame = frame[(frame["adv"] >= 5000) & (frame["r"].abs() < 0.5)]
    moves = frame.groupby("date")["r"].agg(lambda r: r.abs().median() if len(r) >= 10 else float("nan")).dropna()
    level = moves.rolling(60).mean().dropna()
    return {
        **{f"autocorr_{k}": round(float(moves.autocorr(k)), 3) for k in (1, 5, 20)},
        **{f"level_p{int(q * 100)}": round(float(level.quantile(q)), 5) for q in (0.05, 0.5, 0.95)},
    }


def simulated_prices():
    from ingest.simulator.market import SIM_END, SimulatedMarket, price_history

    return price_history(SimulatedMarket(), SIM_END, 1250)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", nargs=2, metavar=("FROM", "TO"), help="replay Mandate() on the NSE files instead")
    parser.add_argument(
        "--files",
        nargs=2,
        metavar=("FROM", "TO"),
        help="replay Mandate() on the files backtest.py's options name (--ohlcv FILES, --fees, --actions, ...)",
    )
    parser.add_argument("--cache", default=None, help="benchmarks/backtest.py's prediction cache folder")
    args, options = parser.parse_known_args()
    if options and not args.files:
        parser.error(f"unrecognized arguments: {' '.join(options)} (backtest.py's options go with --files FROM TO)")
    span = args.files or args.nse
    out = files_activity(*span, args.cache, options) if span else store_activity()
    for name, figures in out["daily"].items():
        show = "{:.0f}" if name in ("eligible", "long", "avoid") else "{:+.2%}"
        shown = ", ".join(f"{k} " + ("n/a" if v is None else show.format(v)) for k, v in figures.items())
        print(f"{name:>20}: {shown}")
    print("fills by kind:", out["fills"])
    for key in ("sells", "sells_by_year", "spans_with_a_sell", "outlooks", "clustering"):
        if key in out:
            print(f"{key}: {out[key]}")
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
