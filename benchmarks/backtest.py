"""The autonomous executor replayed over the NSE daily files, with and without the
liquidity rails: return, drawdown, turnover, days trapped and the share of would-be
orders the rails blocked or cut.

Predictions are the walk-forward's out-of-sample output (1-day horizon, layer 1 = the
empirical fallback, the same protocol as model_quality.py) from --from on; the NSE files
carry no bid/ask, so the spread is the day's range over the close (rails.py). --to ends
the run (nothing dated after the last day's label is read); --gain names the return whose
sign the Actions read (models/decisions.py: the product uses predicted_return, the median).

    python benchmarks/backtest.py [--nse DIR] [--from 2020-01-02] [--to 2021-12-31] [--cash 10000000]
    python benchmarks/backtest.py --from 2008-01-02 --to 2011-12-31 --gain expected_return   # the early span
"""
from __future__ import annotations

import argparse
import json
import logging
import resource
import time
from datetime import date
from pathlib import Path

from model_quality import SHARED_DATA, load_nse


def main() -> None:
    from portfolio.backtest import out_of_sample_predictions, run_backtest

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    parser.add_argument("--from", dest="start", default="2020-01-02")
    parser.add_argument("--to", dest="end", default=None, help="last day (default: the files' last)")
    parser.add_argument("--cash", type=float, default=10_000_000)
    parser.add_argument("--gain", choices=["predicted_return", "expected_return"], default="predicted_return",
                        help="the return whose sign decides LONG and AVOID (models/decisions.py)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if not Path(args.nse).is_dir():
        raise SystemExit(f"error: no NSE daily files at {args.nse} (set --nse or MARKETINTEL_SHARED_DATA)")
    started = time.perf_counter()
    prices = load_nse(Path(args.nse))
    if args.end:
        end = date.fromisoformat(args.end)
        label_cut = min((d for d in prices["date"].unique() if d > end), default=end)
        prices = prices[prices["date"] <= label_cut]  # nothing after the last day's label is read
    predictions = out_of_sample_predictions(prices, first_test_date=date.fromisoformat(args.start))
    if args.end:
        predictions = predictions[predictions["date"] <= end]
    predicted = time.perf_counter() - started
    results = {}
    for rails in (True, False):
        results["with_rails" if rails else "without_rails"] = run_backtest(predictions, rails, args.cash, gain=args.gain).figures
    wall = time.perf_counter() - started
    names = list(results["with_rails"])
    print(f"{'':<22}{'with rails':>16}{'without rails':>16}")
    for name in names:
        print(f"{name:<22}{results['with_rails'][name]!s:>16}{results['without_rails'].get(name)!s:>16}")
    print(f"predictions {len(predictions)} rows in {predicted:.1f}s; total {wall:.1f}s")
    print(json.dumps({"benchmark": "backtest", "data": "nse-kenya daily", "from": args.start, "to": args.end,
                      "gain": args.gain, "starting_cash": args.cash,
                      **results, "wall_seconds": round(wall, 1),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    main()
