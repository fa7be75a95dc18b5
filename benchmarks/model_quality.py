"""Model quality beside a plain reference and two baselines, on the same test days, overall
and per calendar year: real NSE files (default), any OHLCV file or folder (`--ohlcv`), or a
simulated market regime it was never tuned on (`--regime bear|liquid|limit|nse`).

In one run, on the same scored rows (every instrument-day from --from to --to whose
next-day close is known):
- the project's model: the walk-forward (models/walkforward.py: 5-day blocks, a full refit
  every 120 trading days, rolling out-of-sample calibration, models/calibration.py), 1-day
  horizon, layer 1 = the empirical fallback (its model_id is in the JSON);
- the plain reference: one LightGBM classifier per calendar year (300 trees, learning rate
  0.03, 31 leaves, min_child_samples 200, subsample 0.8 every iteration, colsample 0.8),
  trained on every moved day before that year less a 10-trading-day embargo, on the
  issue's list of inputs (REFERENCE_FEATURES: returns over 1/2/3/5/10/20/60 days, RSI14,
  Bollinger %b and width, 20-day volatility, volume/ADV20, log ADV20, 20-day zero-volume
  share, close location, range/close; the issue calls them 15, the list has 16), P(up) > 0.5;
- baselines: the majority class of the scored rows themselves (which flatters it) and the
  sign of the last move.
Binary accuracy is on moved rows, 3-class on all rows (flat band +-0.5%), movers on rows
that moved more than 2%, MAE beside predicting zero, IC = mean daily Spearman correlation.

    python benchmarks/model_quality.py                         # NSE, scored 2012-2021
    python benchmarks/model_quality.py --from 2008-01-01 --to 2011-12-31   # the early span
    python benchmarks/model_quality.py --regime bear           # simulated, scored 2026-2028
    python benchmarks/model_quality.py --ohlcv prices.csv      # symbol,date,close,volume[,high,low]

The first line of the table says the span actually scored: the first and last dates of
the scored rows, with the span asked for (--from/--to or their defaults) beside it when
they differ (the walk-forward scores nothing before its training history, and rows the
reference did not predict are left out). The last line is one JSON object with every figure
(`from`/`to`: asked; `scored_from`/`scored_to`: scored), the wall time and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

SHARED_DATA = Path(
    os.environ.get("MARKETINTEL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
REFERENCE_PARAMS = {
    "objective": "binary",
    "learning_rate": 0.03,
    "num_leaves": 31,
    "min_child_samples": 200,
    "subsample": 0.8,
    "bagging_freq": 1,
    "colsample_bytree": 0.8,
    "verbose": -1,
    "seed": 7,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
}
REFERENCE_TREES = 300
REFERENCE_EMBARGO_DAYS = 10
REFERENCE_FEATURES = [
    "r1",
    "r2",
    "r3",
    "r5",
    "r10",
    "r20",
    "r60",
    "rsi14",
    "bb_pct_b",
    "bb_width",
    "vol20",
    "volume_adv20",
    "log_adv20",
    "zero_volume_20",
    "close_location",
    "range_close",
]


def cpu_seconds() -> float:
    """CPU time of this process (user + system): what the run costs whatever else the
    machine is doing (the wall time depends on the load)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return round(usage.ru_utime + usage.ru_stime, 1)


def rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# ---- data -------------------------------------------------------------------------------
def load_nse(folder: Path) -> pd.DataFrame:
    from ingest.importers.formats import nse_daily_frame

    # the equities (the market indices left out), with a boolean `ordinary` per row
    return nse_daily_frame(folder, ordinary=True)


def load_ohlcv(path: Path) -> pd.DataFrame:
    """Any file or folder the generic OHLCV reader reads (bad rows, copied days and market
    indices left out, as the importer leaves them out), with a boolean `ordinary` per row
    (its type column, else the inference: market/instruments.py)."""
    from ingest.importers.formats import Bad, is_index, read_ohlcv, repeated_days, row_instrument_type
    from market.instruments import is_ordinary

    files = [path] if path.is_file() else sorted(path.rglob("*.csv"))
    rows = [r for f in files for r in read_ohlcv(f) if not isinstance(r, Bad) and not is_index(r["symbol"])]
    copies = repeated_days(rows)
    rows = [r for r in rows if r["trading_date"] not in copies]
    frame = pd.DataFrame(rows).rename(columns={"trading_date": "date"})
    frame["ordinary"] = [is_ordinary(row_instrument_type(r)) for r in rows]
    for column in ("high", "low", "bid", "ask"):
        if column not in frame:
            frame[column] = np.nan
    columns = ["symbol", "date", "close", "volume", "high", "low", "bid", "ask", "ordinary"]
    return frame.drop_duplicates(["symbol", "date"])[columns]


def load_regime(regime: str, instruments: int, days: int | None, seed: int) -> pd.DataFrame:
    """The simulated market's first `days` trading days (default: all of the standard
    span, 2024-01-02 to 2028-12-29, 1,255 days); more days than that simulate a longer
    market, to the trading day `days` - 1 after the start."""
    from ingest.simulator.market import SIM_END, SimulatedMarket, price_history
    from ingest.simulator.universe import SIM_START
    from market.clock import default_calendar

    end = SIM_END if days is None else max(SIM_END, default_calendar().add_trading_days(SIM_START, days - 1))
    market = SimulatedMarket(seed=seed, size=instruments, regime=regime, end=end)
    wanted = len(market.days) if days is None else min(days, len(market.days))
    return price_history(market, market.days[wanted - 1], wanted)


# ---- the plain reference ------------------------------------------------------------------
def reference_features(prices: pd.DataFrame) -> pd.DataFrame:
    """The reference's inputs per instrument-day (REFERENCE_FEATURES), its label and label date."""
    from models.features import bollinger_bandwidth, bollinger_pct_b, rsi_14

    parts = []
    for _, p in prices.sort_values(["symbol", "date"]).groupby("symbol", sort=False):
        p = p.reset_index(drop=True)
        close, volume = p["close"].astype(float), p["volume"].astype(float)
        f = pd.DataFrame({"symbol": p["symbol"], "date": p["date"]})
        for k in (1, 2, 3, 5, 10, 20, 60):
            f[f"r{k}"] = close / close.shift(k) - 1
        f["rsi14"] = rsi_14(p)
        f["bb_pct_b"] = bollinger_pct_b(p)
        f["bb_width"] = bollinger_bandwidth(p)
        f["vol20"] = close.pct_change().rolling(20).std()
        adv = volume.rolling(20).mean()
        f["volume_adv20"] = (volume / adv).where(adv > 0, 0.0)
        f["log_adv20"] = np.log1p(adv)
        f["zero_volume_20"] = (volume == 0).astype(float).rolling(20).mean()
        day_range = p["high"].astype(float) - p["low"].astype(float)
        f["close_location"] = ((close - p["low"]) / day_range).where(day_range > 0, 0.5).where(day_range.notna())
        f["range_close"] = day_range / close
        f["forward_return"] = close.shift(-1) / close - 1
        f["label_end"] = p["date"].shift(-1)
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def reference_predictions(features: pd.DataFrame, years: list[int], dates: list, columns: list[str]) -> pd.DataFrame:
    """P(up) of the yearly reference for every row of the scored years."""
    import lightgbm as lgb

    position = {d: i for i, d in enumerate(dates)}
    label_day = features["label_end"].map(position)
    year_of = pd.to_datetime(features["date"]).dt.year.to_numpy()
    out = []
    for year in years:
        first = next((i for i, d in enumerate(dates) if d.year == year), None)
        if first is None:
            continue
        cutoff = first - REFERENCE_EMBARGO_DAYS
        train = features[
            (label_day < cutoff).to_numpy()
            & features["forward_return"].notna().to_numpy()
            & (features["forward_return"] != 0).to_numpy()
        ]
        if len(train) < 1000:
            continue
        booster = lgb.train(
            REFERENCE_PARAMS,
            lgb.Dataset(train[columns].to_numpy(float), (train["forward_return"] > 0).astype(float).to_numpy()),
            REFERENCE_TREES,
        )
        test = features[year_of == year]
        out.append(
            pd.DataFrame(
                {
                    "symbol": test["symbol"].to_numpy(),
                    "date": test["date"].to_numpy(),
                    "reference_p_up": booster.predict(test[columns].to_numpy(float)),
                }
            )
        )
        del booster
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=["symbol", "date", "reference_p_up"])


# ---- figures ---------------------------------------------------------------------------------
def three_class(returns: pd.Series) -> pd.Series:
    from models.metrics import FLAT_BAND

    return np.sign(returns.where(returns.abs() > FLAT_BAND, 0.0))


def figures(f: pd.DataFrame) -> dict:
    """Model, reference and baselines on one set of rows (`f`: forward_return, p_up,
    reference_p_up, last_return, predicted_class, predicted_return, expected_return)."""
    from models.metrics import MOVER

    moved = f[f["forward_return"] != 0]
    up = moved["forward_return"] > 0
    majority_up = bool(up.mean() >= 0.5)
    last = np.sign(moved["last_return"].fillna(0.0))
    last_pred = np.where(last == 0, majority_up, last > 0)
    movers = moved[moved["forward_return"].abs() > MOVER]
    true3 = three_class(f["forward_return"])
    pred3 = f["predicted_class"].where(f["predicted_class"].notna(), three_class(f["predicted_return"]))
    share3 = true3.value_counts(normalize=True)
    has_reference = bool(f["reference_p_up"].notna().any())  # --no-reference: no figures, not "always down"
    out = {
        "rows": int(len(f)),
        "moved_rows": int(len(moved)),
        "up_share_of_moved": float(up.mean()) if len(moved) else None,
        "binary": {
            "model": _mean((moved["p_up"] > 0.5) == up),
            "reference": _mean((moved["reference_p_up"] > 0.5) == up) if has_reference else None,
            "majority": _mean(up == majority_up),
            "last_move": _mean(pd.Series(last_pred == up.to_numpy())),
        },
        "three_class": {"model": _mean(pred3 == true3), "majority": float(share3.max()) if len(share3) else None},
        "movers": {
            "model": _mean((movers["p_up"] > 0.5) == (movers["forward_return"] > 0)),
            "reference": _mean((movers["reference_p_up"] > 0.5) == (movers["forward_return"] > 0))
            if has_reference
            else None,
            "rows": int(len(movers)),
        },
        "mae": {
            "model": _mean((f["predicted_return"] - f["forward_return"]).abs()),
            "zero": _mean(f["forward_return"].abs()),
        },
        "ic": {
            "predicted_return": daily_ic(f, "predicted_return"),
            "expected_return": daily_ic(f, "expected_return"),
            "p_up": daily_ic(f, "p_up"),
            "reference_p_up": daily_ic(f, "reference_p_up") if has_reference else None,
        },
    }
    return out


def scored_span(rows: pd.DataFrame) -> tuple[date, date] | None:
    """The first and last dates of the rows actually scored (None when there are none).
    Computed from the rows, never from --from/--to: the walk-forward scores nothing before
    it has its training history, and a row the reference did not predict (a year it had too
    few training rows for) is not scored either, so a file asked from 2002 on can score
    from 2009 on."""
    if rows.empty:
        return None
    days = pd.to_datetime(rows["date"])
    return days.min().date(), days.max().date()


def span_text(rows: pd.DataFrame, start: date, end: date) -> str:
    """'scored FIRST to LAST' of the scored rows, with the span asked for beside it when it
    differs (`start`, `end`: --from and --to, or their defaults)."""
    span = scored_span(rows)
    if span is None:
        return f"scored nothing (asked {start} to {end})"
    asked = "" if span == (start, end) else f" (asked {start} to {end})"
    return f"scored {span[0]} to {span[1]}{asked}"


def _mean(values: pd.Series) -> float | None:
    return float(np.mean(values)) if len(values) else None


def daily_ic(f: pd.DataFrame, column: str) -> float | None:
    if column not in f:
        return None
    values = []
    for _, day in f.groupby("date"):
        if len(day) >= 5 and day[column].nunique() > 1 and day["forward_return"].nunique() > 1:
            values.append(day[column].rank().corr(day["forward_return"].rank()))
    return float(np.nanmean(values)) if values else None


def _value(text: str):
    try:
        return json.loads(text.lower() if text in ("True", "False") else text)
    except ValueError:
        return text


def _pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def main() -> None:
    from models.dataset import build_panel
    from models.layer1 import EmpiricalFallback
    from models.walkforward import WalkForwardConfig, walk_forward

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--nse", default=None, help="folder of NSE daily files (the default source)")
    source.add_argument("--ohlcv", default=None, help="generic OHLCV CSV file or folder")
    source.add_argument("--regime", choices=["nse", "bear", "liquid", "limit"], default=None, help="a simulated market")
    parser.add_argument("--instruments", type=int, default=60, help="simulated instruments (--regime)")
    parser.add_argument(
        "--sim-days",
        type=int,
        default=None,
        help="simulated trading days (default: the standard span's 1,255; more simulate a longer market)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--from",
        dest="start",
        default=None,
        help="first scored day (NSE: 2012-01-01; else the "
        "first 1 January after 250 trading days and a whole calendar year of history)",
    )
    parser.add_argument("--to", dest="end", default=None, help="last scored day (NSE: 2021-12-31; else the last)")
    parser.add_argument("--no-reference", action="store_true", help="skip the plain reference (timing runs)")
    parser.add_argument("--tune-trials", type=int, default=0)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a WalkForwardConfig field for screening variants on the early span",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    started = time.perf_counter()
    if args.regime:
        label = f"simulated regime {args.regime} ({args.instruments} instruments, seed {args.seed})"
        prices = load_regime(args.regime, args.instruments, args.sim_days, args.seed)
    elif args.ohlcv:
        label = f"ohlcv {args.ohlcv}"
        prices = load_ohlcv(Path(args.ohlcv))
    else:
        folder = Path(args.nse or SHARED_DATA / "nse-kenya" / "daily")
        if not folder.is_dir():
            raise SystemExit(f"error: no NSE daily files at {folder} (set --nse or MARKETINTEL_SHARED_DATA)")
        label = "nse-kenya daily"
        prices = load_nse(folder)
        args.start, args.end = args.start or "2012-01-01", args.end or "2021-12-31"
    dates = sorted(prices["date"].unique())
    if args.start is None:
        args.start = next(date(d.year + 1, 1, 1) for d in dates[250:] if d.year > dates[0].year).isoformat()
    start, end = date.fromisoformat(args.start), date.fromisoformat(args.end) if args.end else dates[-1]
    # Nothing dated after the last scored day's label is read: later rows are dropped here.
    label_cut = next((d for d in dates if d > end), end)
    prices = prices[prices["date"] <= label_cut]
    dates = sorted(prices["date"].unique())
    panel = build_panel(prices, horizon=1)
    loaded = time.perf_counter() - started
    logging.info(
        "%s: %d rows, %d instruments, %s to %s, loaded in %.0fs",
        label,
        len(panel),
        prices["symbol"].nunique(),
        dates[0],
        dates[-1],
        loaded,
    )
    overrides = {k: _value(v) for k, v in (item.split("=", 1) for item in args.config)}
    result = walk_forward(panel, WalkForwardConfig(first_test_date=start, tune_trials=args.tune_trials, **overrides))
    model_seconds = result.seconds
    predictions = result.predictions
    predictions = predictions[
        (predictions["date"] >= start) & (predictions["date"] <= end) & predictions["forward_return"].notna()
    ]
    keep = [
        "symbol",
        "date",
        "forward_return",
        "last_return",
        "p_up",
        "predicted_return",
        "expected_return",
        "predicted_class",
    ]
    predictions = predictions.reindex(columns=keep)
    n_models, warmup = len(result.models), result.warmup_models
    del panel, result
    years = sorted({d.year for d in predictions["date"]})
    reference_seconds = 0.0
    if not args.no_reference:
        t = time.perf_counter()
        ref = reference_predictions(reference_features(prices), years, dates, REFERENCE_FEATURES)
        reference_seconds = time.perf_counter() - t
        predictions = predictions.merge(ref, on=["symbol", "date"], how="inner")
    else:
        predictions["reference_p_up"] = np.nan
    overall = figures(predictions)
    by_year = {int(y): figures(part) for y, part in predictions.groupby(pd.to_datetime(predictions["date"]).dt.year)}
    wall = time.perf_counter() - started
    span = scored_span(predictions)
    print(f"{label}: {span_text(predictions, start, end)}, {overall['rows']} rows ({overall['moved_rows']} moved)")
    print(
        f"{'year':<8}{'moved':>8}{'model':>8}{'ref':>8}{'major':>8}{'last':>8} | {'3-cl':>7}{'major':>7} | "
        f"{'movers':>7}{'IC':>7}"
    )
    for name, m in [*by_year.items(), ("all", overall)]:
        b, t3 = m["binary"], m["three_class"]
        ic = m["ic"]["predicted_return"]
        print(
            f"{name!s:<8}{m['moved_rows']:>8}{_pct(b['model']):>8}{_pct(b['reference']):>8}{_pct(b['majority']):>8}"
            f"{_pct(b['last_move']):>8} | {_pct(t3['model']):>7}{_pct(t3['majority']):>7} | "
            f"{_pct(m['movers']['model']):>7}"
            f"{'' if ic is None else f'{ic:7.3f}':>7}"
        )
    beats = sum(
        1 for m in by_year.values() if m["binary"]["model"] > max(m["binary"]["majority"], m["binary"]["last_move"])
    )
    beats3 = sum(1 for m in by_year.values() if m["three_class"]["model"] > m["three_class"]["majority"])
    print(
        f"binary above both baselines in {beats}/{len(by_year)} years; 3-class above majority in "
        f"{beats3}/{len(by_year)}"
    )
    print(
        f"MAE {overall['mae']['model']:.5f} vs zero {overall['mae']['zero']:.5f}; IC predicted "
        f"{overall['ic']['predicted_return']}, expected {overall['ic']['expected_return']}, "
        f"p_up {overall['ic']['p_up']}, reference {overall['ic']['reference_p_up']}"
    )
    print(
        f"models {n_models} (+{warmup} calibration warm-up); load {loaded:.0f}s, walk-forward "
        f"{model_seconds:.0f}s, reference {reference_seconds:.0f}s, total {wall:.0f}s (CPU {cpu_seconds():.0f}s), "
        f"peak RSS {rss_mb():.0f} MB"
    )
    print(
        json.dumps(
            {
                "benchmark": "model_quality",
                "data": label,
                "from": start.isoformat(),
                "to": end.isoformat(),
                "scored_from": span[0].isoformat() if span else None,
                "scored_to": span[1].isoformat() if span else None,
                "horizon_days": 1,
                "config": overrides,
                "layer1_backend": EmpiricalFallback.model_id,
                "overall": overall,
                "by_year": by_year,
                "years_binary_above_both_baselines": beats,
                "years_three_class_above_majority": beats3,
                "walk_forward_seconds": round(model_seconds, 1),
                "reference_seconds": round(reference_seconds, 1),
                "models": n_models,
                "warmup_models": warmup,
                "wall_seconds": round(wall, 1),
                "cpu_seconds": cpu_seconds(),
                "peak_rss_mb": rss_mb(),
            },
            default=str,
        )
    )


if __name__ == "__main__":
    main()
