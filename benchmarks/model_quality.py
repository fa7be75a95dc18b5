"""Model quality on the product's label, beside a plain reference on the same label, the
baselines and the old next-day model, on the same test days, overall and per calendar
year: real NSE files (default), any OHLCV file or folder (`--ohlcv`), or a simulated
market regime it was never tuned on (`--regime bear|liquid|limit|nse`).

The label (`--label`, models/dataset.py): `excess` (default), the product's: the return
from the close of t+1 to the close of t+1+H (H = `--horizon`, default
models.decisions.HORIZON), minus the equal-weighted liquid universe's over the same span,
known on day t+1+H; or `next_day`, the old reference label close[t+1]/close[t] - 1
(`--horizon` default 1). The panel is `build_panel(prices, horizon=H, label=...)`, and
nothing dated after the last scored day's label end is read (prices are cut H+1 trading
days after --to for the excess label, H for next_day).

In one run, on the same scored rows (every instrument-day from --from to --to whose
label is known):
- the project's model: the walk-forward (models/walkforward.py: 5-day blocks, a full refit
  every 120 trading days, rolling out-of-sample calibration, models/calibration.py; its
  `horizon` is the label's span in trading days, H+1 for the excess label, so the purge
  and the calibration window cover t+1+H), layer 1 = the empirical fallback (its
  model_id is in the JSON);
- the plain reference: one LightGBM classifier per calendar year (300 trees, learning rate
  0.03, 31 leaves, min_child_samples 200, subsample 0.8 every iteration, colsample 0.8) of
  P(label > 0), on the SAME label (the panel's forward_return and label_end), trained on
  every row with a non-zero label known before that year less an embargo of
  max(10, the label's span) trading days, on the issue's list of inputs
  (REFERENCE_FEATURES: returns over 1/2/3/5/10/20/60 days, RSI14, Bollinger %b and width,
  20-day volatility, volume/ADV20, log ADV20, 20-day zero-volume share, close location,
  range/close);
- baselines: the majority class of the scored rows themselves (which flatters it) and the
  sign of the last move;
- the next-day reference (excess label only; `--no-next-day` skips it): the same
  walk-forward on label="next_day", horizon 1 (the old product model), with its binary
  accuracy on its own label beside that label's base rates, and its rank IC against the
  product's label on the same rows.

Figures, each beside its base rate: binary accuracy (P(up) > 0.5 vs label > 0, rows with
a non-zero label), 3-class (flat band models.metrics.FLAT_BAND) beside the majority class,
movers (|label| > models.metrics.MOVER) beside their majority, MAE beside predicting zero;
rank IC (mean over days with at least 5 rows of the Spearman correlation with the label;
base rate 0) of the expected return (the model's ranking), of P(up), of the raw score, of
the reference's P(up), of the next-day reference's expected return and of the last move,
on all rows and on the liquid ones (market.liquidity.passes_entry_gates and `ordinary`
where the data has it); the top-minus-bottom tercile spread (per day, the mean label of
the top third of the rows by expected return, ties by P(up) then the raw score as the
product's Terciles, minus the bottom third's; averaged over days; also x 250/H,
annualised for reading). Overall and per year.

    python benchmarks/model_quality.py                         # NSE, scored 2012-2021
    python benchmarks/model_quality.py --from 2008-01-01 --to 2011-12-31   # the early span
    python benchmarks/model_quality.py --label next_day        # the old label, H = 1
    python benchmarks/model_quality.py --regime bear           # simulated, scored 2026-2028
    python benchmarks/model_quality.py --ohlcv prices.csv      # symbol,date,close,volume[,high,low]

The signal's persistence (excess label; `--no-persistence` skips it): the rank IC of a
day's expected excess against the excess over later windows after the fill, sessions 1-5,
6-10, 11-20, 21-40 and 41-60 (models.metrics.PERSISTENCE_WINDOWS: the close of t+a to the
close of t+1+b, minus the equal-weighted liquid universe's, so 1-5 is the label at H = 5),
on the liquid names, overall and per year: how long a ranking keeps paying. Its windows
read closes up to 61 sessions after --to (the model never reads them).

--from and --to are dates (YYYY-MM-DD) in order; a span without a day of the files, files
too short for the default --from, or a span the walk-forward scores nothing of is one line
naming the files' first and last dates (`priced_in`, `default_start`, `scored_rows`).

The first line of the table says the span actually scored: the first and last dates of
the scored rows, with the span asked for (--from/--to or their defaults) beside it when
they differ (the walk-forward scores nothing before its training history, and rows the
reference did not predict are left out). The last line is one JSON object with every figure
(`from`/`to`: asked; `scored_from`/`scored_to`: scored; `label`, `horizon_days`), the
product's walk-forward seconds alone (`walk_forward_seconds`), the reference's and the
next-day reference's apart, the wall and CPU time and the peak RSS.
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
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from market.liquidity import GATE_INPUTS

# The ranking figures are the product's own (models/metrics.py: the API's and the
# briefing's rank IC and tercile spread); feature_screen and the tests read them here too.
from models.metrics import MIN_DAY_ROWS, MODEL_ORDER, daily_ic, daily_rank_ic, daily_tercile_spread  # noqa: F401

if TYPE_CHECKING:
    from ingest.importers.actions import CapitalChanges

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
def load_nse(folder: Path, names: bool = False) -> pd.DataFrame:
    from ingest.importers.formats import nse_daily_frame

    # the equities (the market indices left out), with a boolean `ordinary` per row (and
    # each row's `name` with `names`: load_market reads reused tickers from them)
    frame = nse_daily_frame(folder, ordinary=True, names=names)
    for line in frame.attrs["second_rows"]:  # a name's second rows for a day (the NSE files hold none)
        print(line, flush=True)
    return frame


def load_ohlcv(path: Path, names: bool = False) -> pd.DataFrame:
    """Any file or folder the generic OHLCV reader reads (bad rows, copied days and market
    indices left out, as the importer leaves them out), with a boolean `ordinary` per row
    (its type column, else the inference: market/instruments.py) and, with `names`, each
    row's `name` (None where the file gives none: load_market reads reused tickers from them)."""
    from ingest.importers.actions import price_files
    from ingest.importers.files import read_known
    from ingest.importers.formats import (
        Bad,
        readable,
        repeated_days,
        row_instrument_type,
        second_rows,
        securities,
    )
    from market.clock import exchange_date, utc_now
    from market.instruments import is_ordinary

    files = price_files(path)  # a corporate-actions file beside the prices is not prices
    today = exchange_date(utc_now())  # a row dated after it is a bad row, as the importer and the replay read it
    read = [r for f in files for r in read_known("ohlcv", f, today)]
    bad = [str(r) for r in read if isinstance(r, Bad)]
    rows = securities(path, readable(path, read))
    copies = repeated_days(rows)
    rows, seconds = second_rows(r for r in rows if r["trading_date"] not in copies)
    print(_left_out(len(files), len(read), bad, copies), flush=True)
    for line in seconds.lines():  # the importer's report of them, word for word
        print(line, flush=True)
    frame = pd.DataFrame(rows).rename(columns={"trading_date": "date"})
    frame["ordinary"] = [is_ordinary(row_instrument_type(r)) for r in rows]
    for column in ("high", "low", "bid", "ask"):
        if column not in frame:
            frame[column] = np.nan
    columns = ["symbol", "date", "close", "volume", "high", "low", "bid", "ask", "ordinary"]
    if names:
        frame["name"] = [r.get("name") for r in rows]
        columns.append("name")
    frame = frame[columns]
    frame.attrs["bad_rows"] = [r for r in read if isinstance(r, Bad)]  # `untraded.unread_rows`
    frame.attrs["currencies"] = sorted({r["currency"] for r in rows if r.get("currency")})  # as the rows state
    return frame


def _left_out(files: int, read: int, bad: list[str], copies: dict) -> str:
    """What the OHLCV loader left out, said once (the importer lists the same rows): a
    benchmark over files with bad or repeated rows says so instead of dropping them unsaid."""
    said = f"ohlcv: {read:,} rows read from {files} files; left out: {len(bad):,} bad rows"
    said += f" (first: {bad[0]})" if bad else ""
    return said + f", {len(copies)} days that copy the one before"


def load_market(
    source: Path,
    nse: bool,
    actions: Path | None = None,
    price_limit: float | None = None,
    adjust_implied: bool = False,
    delist_after: int | None = None,
    accepted: frozenset[tuple[str, date]] = frozenset(),
) -> tuple[pd.DataFrame, CapitalChanges]:
    """The prices of `source` (`load_nse` or `load_ohlcv`) adjusted for its capital changes
    (ingest/importers/actions.py): the corporate-actions file `actions` (default: the one
    beside the prices, if any) and, with `adjust_implied`, the moves beyond `price_limit`
    no action explains; a ticker whose name changes across `delist_after` sessions without
    a row (default: the delisting rule's, MARKETINTEL_DELIST_AFTER_SESSIONS) split at the
    gap, the earlier company's rows under its own symbol (ingest/importers/renames.py
    `Reuse`); then a no-trade row for each session a name's shorter gaps left out, as the
    importer stores them (ingest/importers/untraded.py; none on a bad row's day); with the report.
    A split, bonus or consolidation the closes do not show is refused as the import refuses
    it (`actions.refuse_adjusted`) unless `accepted` names it (`--accept-action`)."""
    from ingest.importers.actions import LIMIT_SETTING, Given, actions_beside, capital_changes
    from ingest.importers.untraded import unread_rows, with_untraded_rows
    from market.errors import MarketIntelError
    from market.settings import get_settings

    sessions = delist_after if delist_after is not None else get_settings().delist_after_sessions
    try:
        prices = load_nse(source, names=True) if nse else load_ohlcv(source, names=True)
        beside = actions or actions_beside(source)
        adjusted, changes = capital_changes(
            prices,
            beside,
            price_limit,
            adjust_implied,
            sessions,
            f"{LIMIT_SETTING}, --price-limit",
            Given(None, accepted),
        )
    except MarketIntelError as exc:  # a script's one line, as the options' errors are
        raise SystemExit(f"error: {exc.detail}") from None
    filled = with_untraded_rows(adjusted, sessions, unread_rows(prices.attrs.get("bad_rows", []), changes.symbol_on))
    print(
        f"untraded: {filled.attrs['untraded_rows']:,} no-trade rows added for names a day's file left out "
        f"(gaps under {sessions} sessions; ingest/importers/untraded.py)",
        flush=True,
    )
    for thin in filled.attrs["thin_days"]:
        print(f"untraded: thin day {thin}", flush=True)
    filled.attrs["currencies"] = prices.attrs.get("currencies", [])  # the files' stated currencies, if any
    return filled, changes


def capital_figures(changes: CapitalChanges) -> dict:
    """The capital-change report's figures for a benchmark's JSON line."""
    return {
        "actions_file": changes.actions_file,
        "actions": len(changes.actions),
        "splits_applied": [(s.symbol, s.ex_date.isoformat(), round(s.factor, 6)) for s in changes.applied],
        "renames_applied": [(r.old, r.new, r.ex_date.isoformat()) for r in changes.renames.applied],
        "probable_renames": [(h.old, h.new, h.first_day.isoformat()) for h in changes.handovers],
        "reused_tickers": [(r.symbol, r.retired, r.first_day.isoformat()) for r in changes.renames.reused],
        "price_limit": changes.limit,
        "beyond_limit_explained": changes.explained,
        "beyond_limit": [m.line() for m in changes.beyond],
        "adjusted_implied": len(changes.implied),
        "warnings": list(changes.warnings),
    }


def capital_options(parser: argparse.ArgumentParser) -> None:
    """The options of `load_market`, for model_quality.py and backtest.py alike."""
    parser.add_argument("--actions", default=None, help="a corporate-actions file (default: the one beside the prices)")
    parser.add_argument(
        "--price-limit",
        type=float,
        default=None,
        help="the market's daily price limit, a fraction (default: MARKETINTEL_DAILY_PRICE_LIMIT; none)",
    )
    parser.add_argument(
        "--adjust-implied",
        action="store_true",
        help="adjust each move beyond the limit no corporate action explains as a split with its implied ratio",
    )
    parser.add_argument(
        "--accept-action",
        action="append",
        default=[],
        metavar="SYMBOL:EX_DATE",
        help="a split, bonus or consolidation to apply as stated though the closes do not show its ratio "
        "(refused otherwise, as `marketintel import` refuses it: the prices look already adjusted); repeatable",
    )


def price_limit(args: argparse.Namespace) -> float | None:
    """--price-limit, else the setting; a limit outside (0, 1) is a one-line error."""
    from market.settings import get_settings

    limit = args.price_limit if args.price_limit is not None else get_settings().daily_price_limit
    if limit is not None and not 0 < limit < 1:
        raise SystemExit(f"error: --price-limit {limit} is not a fraction between 0 and 1 (10% is 0.1)")
    return limit


def a_day(text: str) -> date:
    """--from's and --to's date (YYYY-MM-DD); else the parser's one-line error."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def priced_in(prices: pd.DataFrame, start: date, end: date) -> None:
    """Stop with one line, before the walk-forward, where no day of the files falls in the span."""
    dates = prices["date"]
    if prices.empty or not ((dates >= start) & (dates <= end)).any():
        known = f"the files run from {min(dates)} to {max(dates)}" if len(dates) else "the files have no prices"
        raise SystemExit(f"error: no day of the files from {start} to {end}: {known} (set --from and --to)")


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


def capital_arguments(args: argparse.Namespace) -> tuple[Path | None, float | None, bool, int | None, frozenset]:
    """`load_market`'s actions, price limit, adjust_implied, delisting sessions (the
    backtest's --delist-after; elsewhere the setting's) and the capital changes accepted as
    stated (--accept-action, read as `marketintel import` reads it) from the parsed options."""
    from ingest.importers.actions import accepted_actions
    from market.errors import MarketIntelError

    actions = Path(args.actions) if args.actions else None
    if actions is not None and not actions.is_file():
        raise SystemExit(f"error: no corporate-actions file at {actions}")
    try:
        accepted = accepted_actions(args.accept_action)
    except MarketIntelError as exc:
        raise SystemExit(f"error: {exc.detail}") from None
    return actions, price_limit(args), args.adjust_implied, getattr(args, "delist_after", None), accepted


# ---- the plain reference ------------------------------------------------------------------
def reference_features(prices: pd.DataFrame) -> pd.DataFrame:
    """The reference's inputs per instrument-day (REFERENCE_FEATURES). Its label is the
    panel's (`reference_predictions` merges forward_return and label_end on)."""
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
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def reference_embargo(label_days: int) -> int:
    """The reference's embargo in trading days: REFERENCE_EMBARGO_DAYS, and never less than
    the label's span (`label_days`: H+1 for the excess label, H for next_day)."""
    return max(REFERENCE_EMBARGO_DAYS, label_days)


def reference_predictions(
    features: pd.DataFrame,
    labels: pd.DataFrame,
    years: list[int],
    dates: list,
    columns: list[str],
    embargo: int = REFERENCE_EMBARGO_DAYS,
) -> pd.DataFrame:
    """P(label > 0) of the yearly reference for every row of the scored years. `labels`:
    symbol, date, forward_return, label_end (the panel's, so the reference learns the
    model's label). Trained on the rows with a non-zero label whose label_end is more than
    `embargo` trading days before the year's first day."""
    import lightgbm as lgb

    features = features.merge(
        labels[["symbol", "date", "forward_return", "label_end"]], on=["symbol", "date"], how="left"
    )
    position = {d: i for i, d in enumerate(dates)}
    label_day = features["label_end"].map(position)
    year_of = pd.to_datetime(features["date"]).dt.year.to_numpy()
    out = []
    for year in years:
        first = next((i for i, d in enumerate(dates) if d.year == year), None)
        if first is None:
            continue
        cutoff = first - embargo
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


# ---- the signal's persistence ------------------------------------------------------------------
def persistence_figures(prices: pd.DataFrame, scored: pd.DataFrame, end: date) -> dict:
    """The rank IC of the expected excess on the liquid `scored` rows against the excess
    over each of models.metrics.PERSISTENCE_WINDOWS, overall and per year, from `prices`
    (every instrument, read up to the last window's end after `end`)."""
    from models.metrics import PERSISTENCE_WINDOWS, persistence, window_excess

    started = time.perf_counter()
    last = max(b for _, b in PERSISTENCE_WINDOWS) + 1
    prices = prices[prices["date"] <= label_cut(sorted(prices["date"].unique()), end, last)]
    found = persistence(scored[scored["liquid"]], window_excess(prices))
    return {
        "rows": "liquid",
        "windows": [f"{a}-{b}" for a, b in PERSISTENCE_WINDOWS],
        "overall": found.mean(),
        "days": found.days(),
        "by_year": found.by_year(),
        "seconds": round(time.perf_counter() - started, 1),
    }


def print_persistence(figures: dict) -> None:
    windows = figures["windows"]
    print(
        "persistence: rank IC of the expected excess against the excess over sessions a-b after the fill "
        "(close t+a to t+1+b, over the equal-weighted liquid universe), liquid names"
    )
    print(f"{'year':<6}" + "".join(f"{w:>8}" for w in windows))
    for year, row in [*figures["by_year"].items(), ("all", figures["overall"])]:
        print(f"{year!s:<6}" + "".join(f"{_ic(row[w]):>8}" for w in windows))
    print(f"days per window: {figures['days']}; {figures['seconds']} s")


# ---- figures ---------------------------------------------------------------------------------
# The reference's ranking and the next-day reference's (the model's: MODEL_ORDER).
REFERENCE_ORDER = ["reference_p_up"]
NEXT_DAY_ORDER = ["next_day_expected_return", "next_day_p_up", "next_day_raw_score"]
# The gate inputs (market.liquidity.passes_entry_gates) and the instrument type.
LIQUID_COLUMNS = [*GATE_INPUTS, "ordinary"]


def three_class(returns: pd.Series) -> pd.Series:
    from models.metrics import FLAT_BAND

    return np.sign(returns.where(returns.abs() > FLAT_BAND, 0.0))


def liquid_rows(f: pd.DataFrame) -> pd.Series:
    """The rows that pass the entry gates (market/liquidity.py) and are ordinary shares
    where the frame has an `ordinary` column."""
    from market.liquidity import passes_entry_gates

    liquid = passes_entry_gates(f).fillna(False).astype(bool)
    if "ordinary" in f:
        liquid &= f["ordinary"].fillna(True).astype(bool)
    return liquid


def _spread(f: pd.DataFrame, order: list[str], label: str = "forward_return") -> float | None:
    values = daily_tercile_spread(f, order, label)
    return float(values.mean()) if len(values) else None


def ranking(f: pd.DataFrame, has_reference: bool, has_next_day: bool) -> dict:
    """Rank ICs with the label (base rate 0; a day on which a score is constant counts 0)
    and the top-minus-bottom tercile spreads of one set of rows. `days`: the days with at
    least MIN_DAY_ROWS labelled rows; `model_flat_days`: those on which the expected return
    was the same for every row (the calibration claimed no edge)."""

    def ic(column: str, label: str = "forward_return") -> float | None:
        return daily_ic(f, column, label, constant_as_zero=True)

    model = daily_rank_ic(f, "expected_return", constant_as_zero=True)
    ranked = daily_rank_ic(f, "expected_return")
    return {
        "rows": int(len(f)),
        "days": int(len(model)),
        "model_flat_days": int(len(model) - len(ranked)),
        "rank_ic": {
            "model": float(model.mean()) if len(model) else None,  # the expected return
            "p_up": ic("p_up"),
            "raw_score": ic("raw_score"),
            "predicted_return": ic("predicted_return"),
            "reference": ic("reference_p_up") if has_reference else None,
            "next_day_reference": ic("next_day_expected_return") if has_next_day else None,
            "last_return": ic("last_return"),
            "base_rate": 0.0,
        },
        "tercile_spread": {
            "model": _spread(f, MODEL_ORDER),
            "reference": _spread(f, REFERENCE_ORDER) if has_reference else None,
            "next_day_reference": _spread(f, NEXT_DAY_ORDER) if has_next_day else None,
            "base_rate": 0.0,
        },
    }


def next_day_figures(f: pd.DataFrame) -> dict:
    """The next-day reference on its own label (`next_day_label`, close t to t+1): binary
    accuracy beside the majority and the last move; its rank IC on that label and on the
    product's label (`forward_return`) on the same rows."""
    g = f[f["next_day_label"].notna() & f["next_day_p_up"].notna()]
    moved = g[g["next_day_label"] != 0]
    up = moved["next_day_label"] > 0
    majority_up = bool(up.mean() >= 0.5) if len(moved) else True
    last = np.sign(moved["last_return"].fillna(0.0))
    last_pred = np.where(last == 0, majority_up, last > 0)
    return {
        "rows": int(len(g)),
        "moved_rows": int(len(moved)),
        "up_share_of_moved": float(up.mean()) if len(moved) else None,
        "binary": {
            "model": _mean((moved["next_day_p_up"] > 0.5) == up),
            "majority": _mean(up == majority_up),
            "last_move": _mean(pd.Series(last_pred == up.to_numpy())),
        },
        "rank_ic_own_label": daily_ic(g, "next_day_expected_return", "next_day_label", constant_as_zero=True),
        "rank_ic_on_label": {
            "expected_return": daily_ic(g, "next_day_expected_return", constant_as_zero=True),
            "p_up": daily_ic(g, "next_day_p_up", constant_as_zero=True),
        },
    }


def figures(f: pd.DataFrame, horizon: int = 1) -> dict:
    """Model, reference and baselines on one set of rows (`f`: forward_return, p_up,
    raw_score, reference_p_up, last_return, predicted_class, predicted_return,
    expected_return, `liquid`, and the next-day reference's columns where it ran).
    `horizon`: H, for the annualised spreads (x 250/H)."""
    from models.metrics import MOVER

    moved = f[f["forward_return"] != 0]
    up = moved["forward_return"] > 0
    majority_up = bool(up.mean() >= 0.5)
    last = np.sign(moved["last_return"].fillna(0.0))
    last_pred = np.where(last == 0, majority_up, last > 0)
    movers = moved[moved["forward_return"].abs() > MOVER]
    movers_up = movers["forward_return"] > 0
    true3 = three_class(f["forward_return"])
    pred3 = f["predicted_class"].where(f["predicted_class"].notna(), three_class(f["predicted_return"]))
    share3 = true3.value_counts(normalize=True)
    has_reference = bool(f["reference_p_up"].notna().any())  # --no-reference: no figures, not "always down"
    has_next_day = "next_day_p_up" in f and bool(f["next_day_p_up"].notna().any())
    liquid = f["liquid"].to_numpy(bool) if "liquid" in f else np.zeros(len(f), bool)
    all_rows, liquid_part = ranking(f, has_reference, has_next_day), ranking(f[liquid], has_reference, has_next_day)
    annualise = 250 / horizon
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
            "model": _mean((movers["p_up"] > 0.5) == movers_up),
            "reference": _mean((movers["reference_p_up"] > 0.5) == movers_up) if has_reference else None,
            "majority": float(max(movers_up.mean(), 1 - movers_up.mean())) if len(movers) else None,
            "rows": int(len(movers)),
        },
        "mae": {
            "model": _mean((f["predicted_return"] - f["forward_return"]).abs()),
            "zero": _mean(f["forward_return"].abs()),
        },
        "all": all_rows,
        "liquid": liquid_part,
        "tercile_spread_annualised": {
            part: {k: None if v is None else v * annualise for k, v in figs["tercile_spread"].items()}
            for part, figs in (("all", all_rows), ("liquid", liquid_part))
        },
        "next_day_reference": next_day_figures(f) if has_next_day else None,
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


def scored_rows(predictions: pd.DataFrame, start: date, end: date, files: tuple[date, date]) -> pd.DataFrame:
    """The walk-forward's rows from `start` to `end` whose label is known; none is a one-line
    error naming the files' first and last dates (`files`), not a pandas KeyError."""
    if not predictions.empty:
        predictions = predictions[
            (predictions["date"] >= start) & (predictions["date"] <= end) & predictions["forward_return"].notna()
        ]
    if predictions.empty:
        raise SystemExit(
            f"error: no scored row from {start} to {end}: the walk-forward trains on the sessions before its first "
            f"prediction and a label is known sessions after its day, and the files run from {files[0]} to {files[1]} "
            "(set --from and --to inside them, after a year of sessions)"
        )
    return predictions


def default_start(dates: list[date]) -> date:
    """--from's default off the NSE files: the first 1 January after 250 trading days and a
    whole calendar year of history; files too short for one are a one-line error."""
    found = next((date(d.year + 1, 1, 1) for d in dates[250:] if d.year > dates[0].year), None)
    if found is None or found > dates[-1]:
        raise SystemExit(
            f"error: no --from by default: the files hold {len(dates)} trading days, from {dates[0]} to {dates[-1]}, "
            "and the default is the first 1 January after 250 trading days and a whole calendar year of "
            "history (set --from)"
        )
    return found


def label_cut(dates: list, end: date, label_days: int) -> date:
    """The last day a run scored up to `end` may read: `label_days` trading days after it
    (the label's span: the last scored day's label end), or the last day there is."""
    after = [d for d in dates if d > end]
    if not after:
        return end
    return after[min(label_days, len(after)) - 1]


def label_text(label: str, horizon: int) -> str:
    if label == "excess":
        return (
            f"label: excess return close t+1 to t+1+{horizon} over the equal-weighted liquid universe "
            f"(known on t+{horizon + 1})"
        )
    return f"label: close t to t+{horizon} (the next-day reference label)"


def _mean(values: pd.Series) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _value(text: str):
    try:
        return json.loads(text.lower() if text in ("True", "False") else text)
    except ValueError:
        return text


def _pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def _ic(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _bp(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def print_tables(by_year: dict, overall: dict, horizon: int) -> None:
    print(
        f"{'year':<6}{'moved':>8}{'up%':>7} | {'model':>6}{'ref':>7}{'major':>7}{'last':>7} | "
        f"{'3-cl':>6}{'major':>7} | {'movers':>6}{'ref':>7}{'major':>7} | {'MAE':>8}{'zero':>8}"
    )
    for year, m in [*by_year.items(), ("all", overall)]:
        b, t3, mv = m["binary"], m["three_class"], m["movers"]
        print(
            f"{year!s:<6}{m['moved_rows']:>8}{_pct(m['up_share_of_moved']):>7} | {_pct(b['model']):>6}"
            f"{_pct(b['reference']):>7}{_pct(b['majority']):>7}{_pct(b['last_move']):>7} | "
            f"{_pct(t3['model']):>6}{_pct(t3['majority']):>7} | {_pct(mv['model']):>6}{_pct(mv['reference']):>7}"
            f"{_pct(mv['majority']):>7} | {m['mae']['model'] or 0:>8.5f}{m['mae']['zero'] or 0:>8.5f}"
        )
    print(
        f"rank IC with the label (base rate 0) and top-minus-bottom tercile spread per {horizon} sessions "
        f"(model: expected return; ref: plain reference; nd: next-day reference), all rows | liquid rows"
    )
    print(
        f"{'year':<6}{'days':>5}{'model':>7}{'p_up':>7}{'ref':>7}{'nd':>7}{'last':>7}{'T-B':>7}{'refT-B':>7} | "
        f"{'days':>5}{'model':>7}{'ref':>7}{'nd':>7}{'T-B':>7}{'refT-B':>7}{'ndT-B':>7}"
    )
    for year, m in [*by_year.items(), ("all", overall)]:
        a, q = m["all"], m["liquid"]
        ai, at, qi, qt = a["rank_ic"], a["tercile_spread"], q["rank_ic"], q["tercile_spread"]
        print(
            f"{year!s:<6}{a['days']:>5}{_ic(ai['model']):>7}{_ic(ai['p_up']):>7}{_ic(ai['reference']):>7}"
            f"{_ic(ai['next_day_reference']):>7}{_ic(ai['last_return']):>7}{_bp(at['model']):>7}"
            f"{_bp(at['reference']):>7} | {q['days']:>5}{_ic(qi['model']):>7}{_ic(qi['reference']):>7}"
            f"{_ic(qi['next_day_reference']):>7}{_bp(qt['model']):>7}{_bp(qt['reference']):>7}"
            f"{_bp(qt['next_day_reference']):>7}"
        )
    if overall["next_day_reference"] is not None:
        print(
            "next-day reference (label=next_day, H=1) on its own label | its rank IC on its label and on the "
            "product's label, same rows"
        )
        print(
            f"{'year':<6}{'moved':>8}{'up%':>7} | {'binary':>6}{'major':>7}{'last':>7} | "
            f"{'IC own':>7}{'IC lab':>7}{'p_up':>7}"
        )
        for year, m in [*by_year.items(), ("all", overall)]:
            n = m["next_day_reference"]
            if n is None:
                continue
            b = n["binary"]
            print(
                f"{year!s:<6}{n['moved_rows']:>8}{_pct(n['up_share_of_moved']):>7} | {_pct(b['model']):>6}"
                f"{_pct(b['majority']):>7}{_pct(b['last_move']):>7} | {_ic(n['rank_ic_own_label']):>7}"
                f"{_ic(n['rank_ic_on_label']['expected_return']):>7}{_ic(n['rank_ic_on_label']['p_up']):>7}"
            )


def main() -> None:
    from market.labels import LABELS
    from models.dataset import build_panel
    from models.decisions import HORIZON
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
        type=a_day,
        default=None,
        help="first scored day (NSE: 2012-01-01; else the "
        "first 1 January after 250 trading days and a whole calendar year of history)",
    )
    parser.add_argument(
        "--to", dest="end", type=a_day, default=None, help="last scored day (NSE: 2021-12-31; else the last)"
    )
    parser.add_argument(
        "--label", choices=list(LABELS), default="excess", help="the label (models/dataset.py; default: excess)"
    )
    parser.add_argument(
        "--horizon",
        type=int,
        default=None,
        help=f"H in sessions (default: models.decisions.HORIZON = {HORIZON} for excess, 1 for next_day)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip the plain reference (timing runs)")
    parser.add_argument(
        "--no-next-day", action="store_true", help="skip the next-day reference (the excess label's run)"
    )
    parser.add_argument(
        "--no-persistence", action="store_true", help="skip the signal's persistence (the excess label's run)"
    )
    capital_options(parser)
    parser.add_argument("--tune-trials", type=int, default=0)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a WalkForwardConfig field of the product's walk-forward, for screening variants on the early span",
    )
    args = parser.parse_args()
    if args.start and args.end and args.start > args.end:
        parser.error(f"--from {args.start} is after --to {args.end}")
    horizon = args.horizon or (HORIZON if args.label == "excess" else 1)
    label_days = horizon + 1 if args.label == "excess" else horizon  # t to label_end, in trading days
    next_day = args.label == "excess" and not args.no_next_day
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    started = time.perf_counter()
    capital = None
    if args.regime:
        source_name = f"simulated regime {args.regime} ({args.instruments} instruments, seed {args.seed})"
        prices = load_regime(args.regime, args.instruments, args.sim_days, args.seed)
    elif args.ohlcv:
        source_name = f"ohlcv {args.ohlcv}"
        prices, capital = load_market(Path(args.ohlcv), False, *capital_arguments(args))
    else:
        folder = Path(args.nse or SHARED_DATA / "nse-kenya" / "daily")
        if not folder.is_dir():
            raise SystemExit(f"error: no NSE daily files at {folder} (set --nse or MARKETINTEL_SHARED_DATA)")
        source_name = "nse-kenya daily"
        prices, capital = load_market(folder, True, *capital_arguments(args))
        args.start, args.end = args.start or date(2012, 1, 1), args.end or date(2021, 12, 31)
    for line in capital.lines() if capital is not None else []:
        print(line, flush=True)
    dates = sorted(prices["date"].unique())
    start, end = args.start or default_start(dates), args.end or dates[-1]
    priced_in(prices, start, end)
    files = (dates[0], dates[-1])
    loaded_prices = prices  # the persistence windows read up to 61 sessions past --to
    # Nothing dated after the last scored day's label end is read: later rows are dropped here.
    prices = prices[prices["date"] <= label_cut(dates, end, label_days)]
    dates = sorted(prices["date"].unique())
    panel = build_panel(prices, horizon=horizon, label=args.label)
    loaded = time.perf_counter() - started
    logging.info(
        "%s: %d rows, %d instruments, %s to %s, label %s H=%d, loaded in %.0fs",
        source_name,
        len(panel),
        prices["symbol"].nunique(),
        dates[0],
        dates[-1],
        args.label,
        horizon,
        loaded,
    )
    overrides = {k: _value(v) for k, v in (item.split("=", 1) for item in args.config)}
    config = {"first_test_date": start, "tune_trials": args.tune_trials, "horizon": label_days, **overrides}
    result = walk_forward(panel, WalkForwardConfig(**config))
    model_seconds = result.seconds
    predictions = scored_rows(result.predictions, start, end, files)
    keep = [
        "symbol",
        "date",
        "forward_return",
        "last_return",
        "p_up",
        "raw_score",
        "predicted_return",
        "expected_return",
        "predicted_class",
        *[c for c in LIQUID_COLUMNS if c in predictions],
    ]
    predictions = predictions.reindex(columns=keep)
    predictions["liquid"] = liquid_rows(predictions).to_numpy(bool)
    predictions = predictions.drop(columns=[c for c in LIQUID_COLUMNS if c in predictions])
    labels = panel[["symbol", "date", "forward_return", "label_end"]].copy() if not args.no_reference else None
    n_models, warmup = len(result.models), result.warmup_models
    del panel, result
    years = sorted({d.year for d in predictions["date"]})
    reference_seconds = 0.0
    if not args.no_reference:
        t = time.perf_counter()
        ref = reference_predictions(
            reference_features(prices), labels, years, dates, REFERENCE_FEATURES, reference_embargo(label_days)
        )
        reference_seconds = time.perf_counter() - t
        predictions = predictions.merge(ref, on=["symbol", "date"], how="inner")
        del labels, ref
    else:
        predictions["reference_p_up"] = np.nan
    next_day_seconds = next_day_walk_forward_seconds = 0.0
    if next_day:
        # The old product model: the same walk-forward on the next-day label, H = 1, its recipe
        # (a classifier of the direction, models/risk.py target "sign").
        t = time.perf_counter()
        old = walk_forward(
            build_panel(prices, horizon=1, label="next_day"), WalkForwardConfig(first_test_date=start, target="sign")
        )
        next_day_walk_forward_seconds = old.seconds
        own = old.predictions[["symbol", "date", "forward_return", "p_up", "expected_return", "raw_score"]]
        own = own[(own["date"] >= start) & (own["date"] <= end)]
        own = own.rename(columns={c: f"next_day_{c}" for c in ("p_up", "expected_return", "raw_score")})
        predictions = predictions.merge(
            own.rename(columns={"forward_return": "next_day_label"}), on=["symbol", "date"], how="left"
        )
        del old, own
        next_day_seconds = time.perf_counter() - t
    persisting = None
    if args.label == "excess" and not args.no_persistence:
        persisting = persistence_figures(loaded_prices, predictions, end)
    del loaded_prices
    overall = figures(predictions, horizon)
    by_year = {
        int(y): figures(part, horizon) for y, part in predictions.groupby(pd.to_datetime(predictions["date"]).dt.year)
    }
    wall = time.perf_counter() - started
    span = scored_span(predictions)
    print(
        f"{source_name}: {span_text(predictions, start, end)}, {overall['rows']} rows ({overall['moved_rows']} moved)"
    )
    print(label_text(args.label, horizon))
    print_tables(by_year, overall, horizon)
    beats = sum(
        1 for m in by_year.values() if m["binary"]["model"] > max(m["binary"]["majority"], m["binary"]["last_move"])
    )
    beats3 = sum(1 for m in by_year.values() if m["three_class"]["model"] > m["three_class"]["majority"])
    ic_years = sum(
        1
        for m in by_year.values()
        if m["all"]["rank_ic"]["model"] is not None
        and m["all"]["rank_ic"]["reference"] is not None
        and m["all"]["rank_ic"]["model"] > m["all"]["rank_ic"]["reference"]
    )
    a, q = overall["all"], overall["liquid"]
    print(
        f"binary above both baselines in {beats}/{len(by_year)} years; 3-class above majority in "
        f"{beats3}/{len(by_year)}; rank IC above the reference in {ic_years}/{len(by_year)}"
    )
    print(
        f"rank IC (expected return) {_ic(a['rank_ic']['model'])} vs reference {_ic(a['rank_ic']['reference'])}, "
        f"next-day reference {_ic(a['rank_ic']['next_day_reference'])}; liquid {_ic(q['rank_ic']['model'])} vs "
        f"{_ic(q['rank_ic']['reference'])}, next-day {_ic(q['rank_ic']['next_day_reference'])}; "
        f"P(up) {_ic(a['rank_ic']['p_up'])}, raw score {_ic(a['rank_ic']['raw_score'])}, "
        f"predicted return {_ic(a['rank_ic']['predicted_return'])}; the expected return was flat (counted 0) on "
        f"{a['model_flat_days']} of {a['days']} days"
    )
    annual = overall["tercile_spread_annualised"]
    print(
        f"tercile spread per {horizon} sessions: model {_bp(a['tercile_spread']['model'])} "
        f"({_bp(annual['all']['model'])} a year), reference {_bp(a['tercile_spread']['reference'])}; liquid: model "
        f"{_bp(q['tercile_spread']['model'])} ({_bp(annual['liquid']['model'])} a year), reference "
        f"{_bp(q['tercile_spread']['reference'])} ({_bp(annual['liquid']['reference'])} a year)"
    )
    print(f"MAE {overall['mae']['model']:.5f} vs zero {overall['mae']['zero']:.5f}")
    if persisting is not None:
        print_persistence(persisting)
    nd = overall["next_day_reference"]
    if nd is not None:
        print(
            f"next-day reference: binary {_pct(nd['binary']['model']).strip()}% on its own label (majority "
            f"{_pct(nd['binary']['majority']).strip()}%, last move {_pct(nd['binary']['last_move']).strip()}%), "
            f"rank IC {_ic(nd['rank_ic_own_label'])} on its label, {_ic(nd['rank_ic_on_label']['expected_return'])} "
            f"on the product's label"
        )
    print(
        f"models {n_models} (+{warmup} calibration warm-up); load {loaded:.0f}s, walk-forward "
        f"{model_seconds:.0f}s, reference {reference_seconds:.0f}s, next-day reference {next_day_seconds:.0f}s "
        f"(walk-forward {next_day_walk_forward_seconds:.0f}s), total {wall:.0f}s (CPU {cpu_seconds():.0f}s), "
        f"peak RSS {rss_mb():.0f} MB"
    )
    print(
        json.dumps(
            {
                "benchmark": "model_quality",
                "data": source_name,
                "label": args.label,
                "horizon_days": horizon,
                "label_end_days": label_days,
                "from": start.isoformat(),
                "to": end.isoformat(),
                "scored_from": span[0].isoformat() if span else None,
                "scored_to": span[1].isoformat() if span else None,
                "config": overrides,
                "layer1_backend": EmpiricalFallback.model_id,
                "reference_embargo_days": reference_embargo(label_days),
                "overall": overall,
                "by_year": by_year,
                "years_binary_above_both_baselines": beats,
                "years_three_class_above_majority": beats3,
                "years_rank_ic_above_reference": ic_years,
                "persistence": persisting,
                "capital_changes": capital_figures(capital) if capital is not None else None,
                "walk_forward_seconds": round(model_seconds, 1),
                "reference_seconds": round(reference_seconds, 1),
                "next_day_seconds": round(next_day_seconds, 1),
                "next_day_walk_forward_seconds": round(next_day_walk_forward_seconds, 1),
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
