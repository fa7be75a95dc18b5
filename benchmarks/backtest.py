"""The AI book replayed over a market's daily files: the model of what a position can earn
(walk-forward, out of sample), the book that trades on it (portfolio/book.py), fills in the
next session through the one cost model, and the track record beside the equal-weighted
liquid universe and the market's index, overall and per calendar year.

Predictions are the walk-forward's out-of-sample output on the product's label (the
excess return from the next session's close over H sessions, models/dataset.py; layer 1 =
the empirical fallback over the same H). The decisions (models/decisions.py) and the
fills (market/costs.py: the ask or bid, else half the spread estimate either side,
square-root impact, at most 25% of a session's volume, fees from the exchange's schedule,
market/fees.py) are the product's. The NSE files carry no bid/ask: the spread is the
Abdi-Ranaldo estimate (market/liquidity.py).

Runs, in one call:
- the chosen rule (models/decisions.HORIZON and the default `Mandate`) at the default and
  at the retail brokerage, and the same book gross of costs (filled at the next session's
  close for free), with the model's rank IC on the same span;
- with `--select` (the default when the span ends by 2011-12-31, the span the rule was
  chosen on): the selection table, every H in HORIZONS x every book in the grid, at the
  default brokerage, and the rule it picks: the highest information ratio against the
  equal-weighted liquid universe among books with average exposure >= MIN_EXPOSURE (an
  all-cash book beating a falling benchmark is not skill).

    python benchmarks/backtest.py                                   # NSE, 2012-01-02 .. 2021-12-31
    python benchmarks/backtest.py --from 2008-01-02 --to 2011-12-31 # the early span: the selection table
    python benchmarks/backtest.py --ohlcv prices.csv --fees jse  # any market: symbol,date,close,volume,...

The last line is one JSON object: every figure, the wall time and the peak RSS.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import resource
import time
from datetime import date
from pathlib import Path

import pandas as pd
from model_quality import SHARED_DATA, load_nse, load_ohlcv

HORIZONS = (5, 10, 20)
GRID = {"names": (5, 10, 15), "swaps": (1, 2), "capacity": (0.05, 0.15)}
MIN_EXPOSURE = 0.8
SELECTION_END = date(2011, 12, 31)
HEADLINE = (
    "total_return",
    "annual_return",
    "sharpe",
    "max_drawdown",
    "annual_turnover",
    "average_exposure",
    "fill_count",
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


def rank_ic(predictions: pd.DataFrame) -> dict[str, float | None]:
    """The model's rank IC (models.metrics.daily_ic on the expected excess, as the API's
    `rank_ic`) on every scored row and on the liquid ordinary names (the book's universe)."""
    from market.liquidity import passes_entry_gates
    from models.metrics import daily_ic

    known = predictions[predictions["forward_return"].notna()]
    liquid = passes_entry_gates(known).to_numpy(bool).copy()
    if "ordinary" in known:
        liquid &= known["ordinary"].fillna(True).astype(bool).to_numpy()
    out = {}
    for name, rows in (("all", known), ("liquid", known[liquid])):
        ic = daily_ic(rows, "expected_return", constant_as_zero=True)
        out[name] = None if ic is None else round(ic, 4)
    return out


def benchmarks_for(predictions: pd.DataFrame, source: Path, index: str | None, nse: bool) -> tuple[dict, str | None]:
    from portfolio.track_record import equal_weight_liquid, index_returns

    found = {"equal_weight_liquid": equal_weight_liquid(predictions)}
    name, levels = index_levels(source, index, nse)
    if levels is not None:
        found["index"] = index_returns(levels).reindex(sorted(predictions["date"].unique())).fillna(0.0)
    return found, name


def book_figures(days, fees, fills: str, mandate, horizon: int, cash: float, benchmarks: dict) -> dict:
    from portfolio.backtest import run_backtest, summarise

    run = run_backtest(days, cash, fees, fills, mandate, horizon)
    return summarise(run, cash, benchmarks, by_year=True)


def selection(prices: pd.DataFrame, start: date, end: date, fees, cash: float, source: Path, args) -> dict:
    """Every H x book of the grid at the default brokerage, and the rule it picks."""
    from portfolio.backtest import out_of_sample_predictions, prepare_days
    from portfolio.book import Mandate

    rows = []
    for horizon in HORIZONS:
        predictions = out_of_sample_predictions(prices, first_test_date=start, horizon=horizon)
        predictions = predictions[predictions["date"] <= end]
        benchmarks, _ = benchmarks_for(predictions, source, args.index, not args.ohlcv)
        ic = rank_ic(predictions)
        prepared = {names: prepare_days(predictions, float(fees.rate), horizon, names) for names in GRID["names"]}
        for names, swaps, capacity in itertools.product(*GRID.values()):
            mandate = Mandate(names=names, swaps=swaps, capacity=capacity)
            f = book_figures(prepared[names], fees, "costed", mandate, horizon, cash, benchmarks)
            ew = f["benchmarks"]["equal_weight_liquid"]
            rows.append(
                {
                    "horizon": horizon,
                    "names": names,
                    "swaps": swaps,
                    "capacity": capacity,
                    "rank_ic_liquid": ic["liquid"],
                    "total_return": f["total_return"],
                    "average_exposure": f.get("average_exposure"),
                    "annual_turnover": f.get("annual_turnover"),
                    "excess_annual_return": ew.get("excess_annual_return"),
                    "information_ratio": ew.get("information_ratio"),
                }
            )
            print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    eligible = [r for r in rows if (r["average_exposure"] or 0) >= MIN_EXPOSURE and r["information_ratio"] is not None]
    chosen = max(eligible, key=lambda r: r["information_ratio"]) if eligible else None
    return {"grid": GRID, "horizons": HORIZONS, "min_exposure": MIN_EXPOSURE, "table": rows, "chosen": chosen}


def main() -> None:
    from market.fees import SCHEDULES, market_fees
    from models.decisions import HORIZON
    from portfolio.backtest import out_of_sample_predictions, prepare_days
    from portfolio.book import Mandate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    parser.add_argument("--ohlcv", default=None, help="any OHLCV file or folder instead of the NSE files")
    parser.add_argument("--index", default=None, help="the index symbol to compare with (default ^NASI where present)")
    parser.add_argument("--fees", default=None, choices=sorted(SCHEDULES), help="fee schedule (default: nse on NSE)")
    parser.add_argument("--from", dest="start", default="2012-01-02")
    parser.add_argument("--to", dest="end", default="2021-12-31", help="last day (default 2021-12-31)")
    parser.add_argument("--select", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--cash", type=float, default=10_000_000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    source = Path(args.ohlcv or args.nse)
    if not source.exists():
        raise SystemExit(f"error: no market files at {source} (set --nse, --ohlcv or MARKETINTEL_SHARED_DATA)")
    started = time.perf_counter()
    start, end = date.fromisoformat(args.start), date.fromisoformat(args.end)
    schedule = market_fees(args.fees or ("jse" if args.ohlcv else "nse"))
    default_fees, retail_fees = schedule.schedule(), schedule.schedule(retail=True)
    prices = load_ohlcv(source) if args.ohlcv else load_nse(source)
    label_cut = sorted(d for d in prices["date"].unique() if d > end)[: HORIZONS[-1] + 2]
    prices = prices[prices["date"] <= (label_cut[-1] if label_cut else end)]  # the last labels' closes, no more
    out: dict = {"benchmark": "backtest", "data": str(source), "from": args.start, "to": args.end}
    if args.select if args.select is not None else end <= SELECTION_END:
        out["selection"] = selection(prices, start, end, default_fees, args.cash, source, args)
        print(f"chosen on {args.start}..{args.end}: {out['selection']['chosen']}")
    predictions = out_of_sample_predictions(prices, first_test_date=start, horizon=HORIZON)
    predictions = predictions[predictions["date"] <= end]
    benchmarks, index_name = benchmarks_for(predictions, source, args.index, not args.ohlcv)
    mandate = Mandate()
    out.update({"index": index_name, "horizon": HORIZON, "mandate": mandate.__dict__, "rank_ic": rank_ic(predictions)})
    runs = {}
    for label, fees in (("default", default_fees), ("retail", retail_fees)):
        days = prepare_days(predictions, float(fees.rate), HORIZON, mandate.names)
        runs[f"{label}_brokerage"] = book_figures(days, fees, "costed", mandate, HORIZON, args.cash, benchmarks)
        if label == "default":
            runs["gross_of_costs"] = book_figures(days, fees, "gross", mandate, HORIZON, args.cash, benchmarks)
    out["fees"] = {"default": default_fees.describe(), "retail": retail_fees.describe()}
    out["runs"] = runs
    print_table(runs, benchmarks)
    out["wall_seconds"] = round(time.perf_counter() - started, 1)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(f"rank IC (liquid, all): {out['rank_ic']['liquid']}, {out['rank_ic']['all']}; {out['wall_seconds']} s")
    print(json.dumps(out, default=str))


def print_table(runs: dict, benchmarks: dict) -> None:
    names = list(runs)
    print(f"{'':<26}" + "".join(f"{n:>22}" for n in names))
    for key in HEADLINE:
        print(f"{key:<26}" + "".join(f"{runs[n].get(key)!s:>22}" for n in names))
    for bench in benchmarks:
        for key in ("total_return", "excess_annual_return", "tracking_error", "information_ratio"):
            print(
                f"{bench[:11] + ' ' + key[:14]:<26}"
                + "".join(f"{runs[n]['benchmarks'][bench].get(key)!s:>22}" for n in names)
            )
    print(f"costs paid (default brokerage): {runs['default_brokerage'].get('costs')}")


if __name__ == "__main__":
    main()
