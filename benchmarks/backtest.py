"""The autonomous executor replayed over a market's daily files: decisions after each
close, fills in the next session through the one cost model, and the track record beside
two benchmarks, overall and per calendar year; the same run with same-close, cost-free
fills beside it, so what realism takes is one subtraction; and the Score alone deciding
(LONG at 55, AVOID at 45, costs ignored) under both fill modes, what the signal earns
before the rule that weighs it against its costs.

Predictions are the walk-forward's out-of-sample output (1-day horizon, layer 1 = the
empirical fallback, the protocol of model_quality.py) from --from on; the decisions
(models/decisions.py: held edge against round-trip cost, the hysteresis of the exit) and
the fills (market/costs.py) are the product's. The NSE files carry no bid/ask, so the
spread is the day's range over the close. Benchmarks: the equal-weighted liquid universe
(portfolio/track_record.py) and the market's index where the files carry one (the NSE's
^NASI; --index names another). --to ends the run (nothing dated after the last day's next
close is read).

    python benchmarks/backtest.py                                   # NSE, 2012-01-02 .. 2021-12-31
    python benchmarks/backtest.py --from 2008-01-02 --to 2011-12-31 # the early span the rule was fixed on
    python benchmarks/backtest.py --ohlcv prices.csv  # any market: symbol,date,close,volume[,high,low,bid,ask]

The last line is one JSON object: every statistic for both fill modes, overall and per
year, the wall time and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import time
from datetime import date
from pathlib import Path

import pandas as pd
from model_quality import SHARED_DATA, load_nse, load_ohlcv

HEADLINE = (
    "total_return",
    "annual_return",
    "annual_volatility",
    "sharpe",
    "sortino",
    "max_drawdown",
    "calmar",
    "annual_turnover",
    "orders",
    "lapsed_orders",
)


def index_levels(path: Path, name: str | None, nse: bool) -> tuple[str | None, pd.Series | None]:
    """The named index (default ^NASI for the NSE files) as a level series by date."""
    from ingest.importers.formats import Bad, is_index, nse_daily_frame, read_ohlcv

    if nse:
        frame = nse_daily_frame(path, indices=True)
        rows = frame[frame["symbol"].map(is_index)]
    else:
        files = [path] if path.is_file() else sorted(path.rglob("*.csv"))
        rows = pd.DataFrame(
            [r for f in files for r in read_ohlcv(f) if not isinstance(r, Bad) and is_index(r["symbol"])]
        )
        rows = rows.rename(columns={"trading_date": "date"}) if not rows.empty else rows
    if rows.empty:
        return None, None
    name = name or ("^NASI" if "^NASI" in set(rows["symbol"]) else sorted(set(rows["symbol"]))[0])
    chosen = rows[rows["symbol"] == name]
    return (
        (name, chosen.drop_duplicates("date").set_index("date")["close"].astype(float))
        if not chosen.empty
        else (None, None)
    )


def score_alone():
    """A held-edge table that makes the Score alone decide: every band from the LONG line
    up clears any cost, every band at or below the AVOID line loses, the rest is flat."""
    from models.decisions import AVOID_SCORE, EDGE_BANDS, HORIZON, LONG_SCORE, EdgeTable

    bands = EDGE_BANDS[:-1]
    means = tuple(
        1.0 if lo >= LONG_SCORE else (-1.0 if EDGE_BANDS[i + 1] <= AVOID_SCORE else 0.0) for i, lo in enumerate(bands)
    )
    return EdgeTable(HORIZON, means, tuple([0] * len(bands)))


def main() -> None:
    from portfolio.backtest import out_of_sample_predictions, run_backtest, summarise
    from portfolio.track_record import equal_weight_liquid, index_returns

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    parser.add_argument("--ohlcv", default=None, help="any OHLCV file or folder instead of the NSE files")
    parser.add_argument("--index", default=None, help="the index symbol to compare with (default ^NASI where present)")
    parser.add_argument("--from", dest="start", default="2012-01-02")
    parser.add_argument("--to", dest="end", default="2021-12-31", help="last day (default 2021-12-31)")
    parser.add_argument("--cash", type=float, default=10_000_000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    source = Path(args.ohlcv or args.nse)
    if not source.exists():
        raise SystemExit(f"error: no market files at {source} (set --nse, --ohlcv or MARKETINTEL_SHARED_DATA)")
    started = time.perf_counter()
    prices = load_ohlcv(source) if args.ohlcv else load_nse(source)
    end = date.fromisoformat(args.end) if args.end else max(prices["date"])
    label_cut = min((d for d in prices["date"].unique() if d > end), default=end)
    prices = prices[prices["date"] <= label_cut]  # nothing after the last day's next close is read
    predictions = out_of_sample_predictions(prices, first_test_date=date.fromisoformat(args.start))
    predictions = predictions[predictions["date"] <= end]
    predicted = time.perf_counter() - started
    benchmarks = {"equal_weight_liquid": equal_weight_liquid(predictions)}
    index_name, levels = index_levels(source, args.index, nse=not args.ohlcv)
    if levels is not None:
        benchmarks["index"] = index_returns(levels).reindex(sorted(predictions["date"].unique())).fillna(0.0)
    results = {}
    for realistic in (True, False):
        run = run_backtest(predictions, rails=True, starting_cash=args.cash, realistic=realistic)
        results["next_session_costed" if realistic else "same_close_cost_free"] = summarise(
            run, args.cash, benchmarks, by_year=True
        )
    # The Score alone (LONG at 55, AVOID at 45, costs ignored by the decision): what the
    # signal earns before the cost rule, under both fill modes.
    alone = {d: score_alone() for d in predictions["date"].unique()}
    for realistic in (True, False):
        run = run_backtest(predictions, rails=True, starting_cash=args.cash, realistic=realistic, edges=alone)
        results["score_alone_next_session_costed" if realistic else "score_alone_same_close_cost_free"] = summarise(
            run, args.cash, benchmarks, by_year=True
        )
    wall = time.perf_counter() - started
    real, free = results["next_session_costed"], results["same_close_cost_free"]
    print(f"{'':<20}{'next session, costs':>22}{'same close, free':>20}")
    for name in HEADLINE:
        print(f"{name:<20}{real.get(name)!s:>22}{free.get(name)!s:>20}")
    for bench in benchmarks:
        for key in ("total_return", "excess_annual_return", "tracking_error", "information_ratio", "beta"):
            label = f"{bench[:10]} {key[:14]}"
            print(f"{label:<26}{real['benchmarks'][bench].get(key)!s:>16}{free['benchmarks'][bench].get(key)!s:>20}")
    print(f"costs paid (next session): {real.get('costs')}")
    for label in ("score_alone_next_session_costed", "score_alone_same_close_cost_free"):
        alone_run = results[label]
        print(
            f"{label}: total {alone_run['total_return']}, Sharpe {alone_run['sharpe']}, turnover "
            f"{alone_run.get('annual_turnover')}x, orders {alone_run['orders']}, costs {alone_run['costs']['total']}, "
            f"IR vs EW-liquid {alone_run['benchmarks']['equal_weight_liquid']['information_ratio']}"
        )
    print("year   return  sharpe  turnover  IR vs EW-liquid  EW-liquid  " + ("index" if levels is not None else ""))
    for year, y in real.get("years", {}).items():
        ew = y["benchmarks"].get("equal_weight_liquid", {})
        ix = y["benchmarks"].get("index", {})
        print(
            f"{year}  {y.get('total_return')!s:>7} {y.get('sharpe')!s:>7} {y.get('annual_turnover')!s:>9} "
            f"{ew.get('information_ratio')!s:>16} {ew.get('total_return')!s:>10} {ix.get('total_return', '')!s:>8}"
        )
    print(f"predictions {len(predictions)} rows in {predicted:.1f}s; total {time.perf_counter() - started:.1f}s")
    print(
        json.dumps(
            {
                "benchmark": "backtest",
                "data": str(source),
                "from": args.start,
                "to": args.end,
                "index": index_name,
                "starting_cash": args.cash,
                **results,
                "wall_seconds": round(wall, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
