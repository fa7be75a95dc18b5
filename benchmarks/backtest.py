"""The AI book replayed over a market's daily files: the model of what a position can earn
(walk-forward, out of sample), the book that trades on it (portfolio/book.py), fills in the
next session through the one cost model, and the track record beside the equal-weighted
liquid universe and the market's index, overall and per calendar year. The index is
compared over the days its levels cover (after its first level, to its last; a day between
two without one is no change, but a run of more than LONGEST_HOLE sessions without one is a
hole, left out with the session that closes it): the span's other days are left out of its
comparison, a line names them and the JSON's `index_coverage` says which it covered. `--index` naming an
index the files lack is one line naming theirs, before the walk-forward.

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
  chosen on): the selection table, every book of GRID (the hold a trade is weighed over,
  replacements per rebalance, the trim, the names) at the default brokerage beside its
  own `--fixed-seeds` random books fixed for the span, under the run's delisting rule,
  and the rule it picks: the highest information ratio against the mean of those books
  among the books invested MIN_EXPOSURE of the time or more with turnover at most
  MAX_TURNOVER a year (an all-cash book beating a falling benchmark is not skill, and the
  mandate's own luck is what the random books share). `--workers` processes replay the grid.

    python benchmarks/backtest.py                                   # NSE, 2012-01-02 .. 2021-12-31
    python benchmarks/backtest.py --from 2008-01-02 --to 2011-12-31 # the early span: the selection table
    python benchmarks/backtest.py --ohlcv prices.csv --fees jse  # any market: symbol,date,close,volume,...
    python benchmarks/backtest.py --ohlcv prices.csv --fees gse.toml --price-limit 0.1   # its fees, its limit

The span (--from, --to: dates, in order) must hold a day of the files: the default span
ends 2021-12-31, so files that start later need --from and --to. A span the files do not
price, or one the walk-forward cannot predict (its training sessions), is one line naming
the files' dates, before the walk-forward. The days replayed are printed (`replayed A to B (asked C to D)`)
and kept in the JSON (`replayed_from`, `replayed_to`).

Real market files as they come (issue 66): a held name without a row for `--delist-after`
sessions (default MARKETINTEL_DELIST_AFTER_SESSIONS, 60) is delisted (portfolio/delisting.py)
and valued by `--delisted-value` (nothing, the default, or last_close), the other reading
printed beside it (a `delisting` row of the corporate-actions file delists the name from its
date, as the exchange's notice does in the store, and its price is the value it gives):
the delisted positions, their position-days and their value, the final equity and the total
return under each reading, and each delisting with its dates. The
prices are adjusted for the corporate-actions file beside them (or `--actions`), and the
closes beyond the market's daily price limit (`--price-limit`, default
MARKETINTEL_DAILY_PRICE_LIMIT) that no action explains are reported, and adjusted with
`--adjust-implied` (ingest/importers/actions.py); the report is printed first. `--fees`
takes a built-in schedule or a .toml/.json fee file (market/fees.py FEE_FILE_FORMAT).

Null books (portfolio/nulls.py; `--no-nulls` skips them): beside the model's book at the
default brokerage, the same book with the model's expected-excess values re-assigned each
day by a null's order: random rankings drawn daily (`--daily-seeds`, 10), random rankings
fixed for the span (`--fixed-seeds`, 20; 1 or more with the nulls or the selection, which
measure the book against their mean: fewer is a one-line error), ranked by traded value, the first month's book
bought and held, and the model's ranking inverted. Printed: each family's mean and range
of the information ratio and the excess a year against the equal-weighted liquid universe
and of the turnover, the model's percentile among its books; and the model's book against
the mean of the fixed random books' daily returns (active return, tracking error,
information ratio) beside the equal-weighted liquid universe and the index, overall and
per year, with the time a name is held (sessions, from the fills). A null book that earned
the model book's return every day is a tie (portfolio/nulls.py `same_returns`): a family
whose books all tied says so in its `note`, and where every null book tied the run prints
SAME_BOOKS (`nulls_note`, `retail_nulls_note` in the JSON); over fewer than 250 days it
prints that a short span says little about skill (`nulls.short_span`, `nulls_span_note`).

`--smooth K` (default 1): the book, its null books and the persistence its Outlook weighs
with read the expected excess averaged over each name's last K sessions (point in time,
portfolio/backtest.py `smoothed`). `--grid` replaces dimensions of the selection's grid
and can add K as one ('hold=5,20,60 swaps=1,2 names=15 smooth=1,10,40'), and the sessions
between rebalances (`rebalance=1,5`; `--rebalance` for one book); `--horizon H` trains the
walk-forward on the H-session label and decides every book of the run on it; `--first-seed`
starts the random books' seeds elsewhere (a second set, to see the seeds' own noise).
Each selection row counts the model book's sells by reason (`sells_*`).

    python benchmarks/backtest.py --from 2008-01-02 --to 2011-12-31 --grid "names=15 smooth=1,10" --no-nulls

`--cache DIR` keeps the walk-forward's out-of-sample predictions on disk (one pickle per
key: the data files' digest, the span, the horizon, the last price date read and the code
that makes them: PREDICTION_CODE, models/ and the market/ and ingest/ modules it and the
loader read, and `out_of_sample_predictions`' source), so later runs over the same
predictions skip the walk-forward; a change to any of them is a new key. A file is
written whole (market/files.py: two runs at once leave one whole file), and one that cannot
be read back is a miss, computed and written again. Nothing is removed: clear the folder by
hand.

    python benchmarks/backtest.py --cache /tmp/oos   # the second run reads the predictions back

The last line is one JSON object: every figure, the null families and the model's
percentile in each, the cache's hits and misses, the wall time and the peak RSS.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import itertools
import json
import logging
import math
import pickle
import resource
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import date
from pathlib import Path

import pandas as pd
from model_quality import (
    SHARED_DATA,
    a_day,
    capital_arguments,
    capital_figures,
    capital_options,
    load_market,
    priced_in,
)

from market.files import write_whole
from models.decisions import HORIZON as HORIZON_OF_MODEL

ROOT = Path(__file__).resolve().parents[1]
# The code the out-of-sample predictions depend on (the cache's key), beside the data.
PREDICTION_CODE = (
    "models",
    "market/labels.py",
    "market/liquidity.py",
    "market/instruments.py",
    "market/budget.py",
    "ingest/importers/formats.py",
    "ingest/importers/untraded.py",
)
# The book's rule, chosen on the early span (SELECTION_END) against its own null books:
# the hold a trade is weighed over, replacements per rebalance, the trim (the largest
# position, in slots) and the number of names (portfolio/book.py Mandate).
GRID = {"hold": (5, 10, 20, 30, 40, 60), "swaps": (1, 2, 3), "trim": (None, 2.0), "names": (10, 15)}
# A further dimension `--grid` can add: the sessions the expected excess is averaged over
# (portfolio/backtest.py `smoothed`; 1: each day's own, the default).
SMOOTH = (1,)
# And the sessions between rebalances (Mandate.rebalance_every; 5, the retrain cadence, the
# default): a short-lived signal's large gaps appear and fade between two rebalance days.
REBALANCE = (5,)
MIN_EXPOSURE = 0.8
MAX_TURNOVER = 1.5
LABEL_CUT = 62  # sessions of closes kept past the span: the labels' and the persistence windows' ends
SELECTION_END = date(2011, 12, 31)
# A run of more than this many sessions without an index level (between its first and its
# last) is a hole, uncovered like the days before its first level: a trading month, the span
# of the record's other windows (portfolio/track_record.py MIN_BETA_DAYS). Shorter runs are no
# change (the last level stands).
LONGEST_HOLE = 20

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
    """The named index (default ^NASI for the NSE files, else the files' first) as a level
    series by date; (None, None) where the files hold none and none is named. An index
    `name`d that the files lack stops the run with one line naming theirs (and how to mark
    it, where the files hold it as a security's rows: an index's code without ^). Of an index's
    rows for a day the first by file and line stands and the others are reported, as a
    name's are (`formats.second_rows`: a second level that disagreed was dropped unsaid)."""
    from ingest.importers.formats import Bad, is_index_row, nse_daily_frame, read_ohlcv, second_rows

    if nse:
        frame = nse_daily_frame(path, indices=True)
        rows, named = frame[frame["symbol"].isin(frame.attrs["indices"])], set(frame["symbol"])
    else:
        from ingest.importers.actions import price_files

        files = price_files(path)
        every = [r for f in files for r in read_ohlcv(f) if not isinstance(r, Bad)]
        kept, seconds = second_rows(r for r in every if is_index_row(r))
        named = {r["symbol"] for r in every}
        for line in seconds.lines():
            print(f"index levels: {line}", flush=True)
        rows = pd.DataFrame(kept)
        rows = rows.rename(columns={"trading_date": "date"}) if not rows.empty else rows
    held = sorted(set(rows["symbol"])) if not rows.empty else []
    if name is not None and name not in held:
        theirs = f"theirs: {', '.join(held) or 'none'}"
        if name in named:  # an index written as a security's row: its code without ^, no name or type saying so
            raise SystemExit(
                f"error: --index {name}: the files' {name} rows are read as a security's, not an index's: mark "
                f"them (a ^ before the code, a name saying Index, or a type column saying index); {theirs}"
            )
        raise SystemExit(f"error: --index {name}: no such index in the files; {theirs}")
    if not held:
        return None, None
    name = name or ("^NASI" if "^NASI" in held else held[0])
    chosen = rows[rows["symbol"] == name]
    return name, chosen.drop_duplicates("date").set_index("date")["close"].astype(float)


def _digest(paths: list[Path], root: Path, into: hashlib._Hash) -> None:
    for path in paths:
        into.update(str(path.relative_to(root)).encode())
        into.update(path.read_bytes())


def cache_key(source: Path, prices: pd.DataFrame, start: date, end: date, horizon: int, adjustments: tuple = ()) -> str:
    """The out-of-sample predictions' key: the data files' digest, the span, the horizon,
    the last price date read, and the code that makes them (PREDICTION_CODE and
    `out_of_sample_predictions`' source); `adjustments`: the capital changes the prices were
    adjusted for (symbol, ex-date, factor; a rename: old, ex-date, new), where any were (a
    run without keeps its key)."""
    from portfolio.backtest import out_of_sample_predictions

    digest = hashlib.sha256()
    files = [source] if source.is_file() else sorted(f for f in source.rglob("*") if f.is_file())
    _digest(files, source if source.is_dir() else source.parent, digest)
    code = [ROOT / c for c in PREDICTION_CODE]
    _digest(sorted(f for c in code for f in ([c] if c.is_file() else c.rglob("*.py"))), ROOT, digest)
    digest.update(inspect.getsource(out_of_sample_predictions).encode())
    digest.update(f"{start}|{end}|{horizon}|{max(prices['date'])}|{len(prices)}".encode())
    if adjustments:
        digest.update(repr(adjustments).encode())
    return digest.hexdigest()[:24]


def predictions_for(prices: pd.DataFrame, start: date, end: date, horizon: int, args, cache: dict) -> pd.DataFrame:
    """The walk-forward's out-of-sample predictions from `start` to `end` on the H-session
    label, read from `args.cache` where a run with the same key wrote them (`cache`
    counts hits and misses and the seconds spent)."""
    from portfolio.backtest import out_of_sample_predictions

    started = time.perf_counter()
    path = None
    if args.cache:
        source = Path(args.ohlcv or args.nse)
        adjustments = getattr(args, "adjustments", ())
        path = Path(args.cache) / f"oos-{cache_key(source, prices, start, end, horizon, adjustments)}.pkl"
        if (kept := _read_kept(path)) is not None:
            cache["hits"] += 1
            cache["seconds"] += time.perf_counter() - started
            return kept
    predictions = out_of_sample_predictions(prices, first_test_date=start, horizon=horizon)
    if predictions.empty:
        raise SystemExit(
            f"error: no out-of-sample prediction from {start} to {end}: the walk-forward trains on the sessions before "
            f"its first prediction, and the prices start on {min(prices['date'])} (a later --from)"
        )
    predictions = predictions[predictions["date"] <= end]
    if path is not None:
        cache["misses"] += 1
        write_whole(
            path, pickle.dumps(predictions, protocol=pickle.HIGHEST_PROTOCOL)
        )  # two runs at once: one whole file
    cache["seconds"] += time.perf_counter() - started
    return predictions


def _read_kept(path: Path) -> pd.DataFrame | None:
    """The predictions kept at `path`; None when there are none or the file cannot be read
    back (cut short by a run stopped while it wrote one in place): a miss, written again."""
    try:
        return pd.read_pickle(path)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - whatever a torn pickle raises, it is no cache
        print(f"note: the kept predictions {path.name} could not be read back; computing them again", file=sys.stderr)
        return None


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


@dataclass(frozen=True)
class IndexCoverage:
    """The span's days the index's levels cover (after its first level, to its last: a day
    between two levels without one counts as no change, unless it is one of a hole's), how
    many of how many, the runs of the span's days they do not cover ([first, last] each)
    and the holes among them (`index_holes`: [first session without a level, the session
    that closes the hole])."""

    first: date | None
    last: date | None
    days: int
    of: int
    uncovered: list[list[date]]
    holes: list[list[date]]

    @classmethod
    def of_span(cls, span: list[date], covered: pd.Series, holes: list[list[date]]) -> IndexCoverage:
        runs: list[list[date]] = []
        for day, known in zip(span, covered, strict=True):
            if known:
                continue
            if runs and runs[-1][1] == span[span.index(day) - 1]:
                runs[-1][1] = day
            else:
                runs.append([day, day])
        inside = [d for d, known in zip(span, covered, strict=True) if known]
        first, last = (inside[0], inside[-1]) if inside else (None, None)
        return cls(first, last, len(inside), len(span), runs, holes)

    def line(self, name: str) -> str:
        """What the run prints where the levels leave days of the span uncovered."""
        gaps = ", ".join(f"from {a} to {b}" for a, b in self.uncovered)
        over = f"compared over the {self.days} it covers" if self.days >= 2 else "not compared"
        holes = "".join(
            f"; a hole of more than {LONGEST_HOLE} sessions from {a}, closed on {b}, is left out with its closing day"
            for a, b in self.holes
        )
        return f"index {name}: no levels {gaps} ({self.of - self.days} of {self.of} days){holes}; {over}"


def index_holes(sessions: list[date], levels: pd.Index) -> list[list[date]]:
    """The runs of more than LONGEST_HOLE `sessions` without a level between two of `levels`'
    dates, each as [its first session, the session with the level that closes it]: a move
    over months would land on that one day as if the sessions before it were flat."""
    known, holes, run = set(levels), [], []
    for day in (d for d in sessions if min(levels) < d <= max(levels)):
        if day not in known:
            run.append(day)
            continue
        if len(run) > LONGEST_HOLE:
            holes.append([run[0], day])
        run = []
    return holes


def _in_holes(days: pd.Series, holes: list[list[date]]) -> pd.Series:
    """Which of `days` fall in one of `holes` (its closing session included)."""
    hit = pd.Series(False, index=days.index)
    for first, closed in holes:
        hit |= (days >= first) & (days <= closed)
    return hit


def benchmarks_for(
    predictions: pd.DataFrame, prices: pd.DataFrame, name: str | None, levels: pd.Series | None
) -> tuple[dict, IndexCoverage | None]:
    """The benchmarks over the predictions' days: the equal-weighted liquid universe by the
    live record's monthly rule (`span_benchmark`: the span's first month from the members
    of the session before it, read from `prices`) and the index `name` where the files have
    one (its `levels`, `index_levels`), over the days its levels cover (IndexCoverage; NaN
    on the others, which the comparison leaves out: portfolio/backtest.py `summarise`), with
    that coverage."""
    from portfolio.backtest import span_benchmark
    from portfolio.track_record import index_returns

    found = {"equal_weight_liquid": span_benchmark(predictions, prices)}
    if levels is None:
        return found, None
    span = sorted(predictions["date"].unique())
    days = pd.Series(span, index=span)
    holes = index_holes(sorted(prices["date"].unique()), levels.index)
    covered = (days > min(levels.index)) & (days <= max(levels.index)) & ~_in_holes(days, holes)
    held = [[a, b] for a, b in holes if b >= span[0] and a <= span[-1]]
    coverage = IndexCoverage.of_span(span, covered, held)
    if coverage.uncovered:
        print(coverage.line(name), flush=True)
    if coverage.days >= 2:
        found["index"] = index_returns(levels, span).where(covered)
    return found, coverage


def book_figures(days, fees, fills: str, mandate, horizon: int, cash: float, benchmarks: dict, delisting=None) -> dict:
    from portfolio.backtest import run_backtest, summarise

    run = run_backtest(days, cash, fees, fills, mandate, horizon, delisting)
    return summarise(run, cash, benchmarks, by_year=True)


_SELECTING: dict = {}  # what the selection's worker processes read (forked: shared, not pickled)


def selection(
    signals: dict[int, tuple[pd.DataFrame, dict]], fees, benchmarks: dict, args, grid: dict, delisting
) -> dict:
    """Every book of `grid` (GRID, or `--grid`'s) at the default brokerage beside its own
    fixed random books, under the run's `delisting` rule (`delisting_rule`: --delist-after,
    --delisted-value and the actions file's delisting notices and values, as the chosen book's), and the
    rule it picks: the highest information ratio against the
    mean of those books among the books invested MIN_EXPOSURE of the time or more with
    turnover at most MAX_TURNOVER a year (an all-cash book beating a falling benchmark is
    not skill; a rule that churns is not one this market pays for). `signals`: per
    smoothing (grid's `smooth`, sessions), the predictions the book reads and their
    persistence by day."""
    import multiprocessing

    from portfolio.backtest import decided_frame, prepare_days

    rate = float(fees.rate)
    pairs = list(itertools.product(grid["smooth"], grid["names"]))
    _SELECTING.update(
        fees=fees,
        benchmarks=benchmarks,
        args=args,
        delisting=delisting,
        days={(k, n): prepare_days(signals[k][0], rate, args.horizon, n, signals[k][1]) for k, n in pairs},
        decided={(k, n): decided_frame(signals[k][0], rate, args.horizon, n) for k, n in pairs},
    )
    combos = grid_combos(grid)
    with multiprocessing.get_context("fork").Pool(max(1, min(args.workers, len(combos)))) as pool:
        rows = []
        for row in pool.imap(_selected_row, combos):
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    eligible = [
        r
        for r in rows
        if (r["average_exposure"] or 0) >= MIN_EXPOSURE
        and (r["annual_turnover"] or 0) <= MAX_TURNOVER
        and r["ir_vs_fixed_random"] is not None
    ]
    chosen = max(eligible, key=lambda r: r["ir_vs_fixed_random"]) if eligible else None
    limits = {"min_exposure": MIN_EXPOSURE, "max_turnover": MAX_TURNOVER}
    seeds = {"fixed_seeds": args.fixed_seeds, "first_seed": args.first_seed}
    return {"grid": grid, **limits, **seeds, "table": rows, "chosen": chosen}


def grid_combos(grid: dict) -> list[tuple]:
    """The selection's books, one (smooth, rebalance, hold, swaps, trim, names) each."""
    return list(itertools.product(grid["smooth"], grid["rebalance"], *(grid[k] for k in GRID)))


def combo_mandate(combo: tuple):
    """A grid book's `Mandate` (ValueError where the mandate refuses its options)."""
    from portfolio.book import Mandate

    _, rebalance, hold, swaps, trim, names = combo
    return Mandate(names=names, swaps=swaps, hold=hold, trim=trim, rebalance_every=rebalance)


def _selected_row(combo: tuple) -> dict:
    """One book of the grid beside its fixed random books (in a worker process)."""
    from portfolio.backtest import summarise
    from portfolio.nulls import NullPlan, Replay, mean_returns, null_books, percentile, replay_book

    smooth, rebalance, hold, swaps, trim, names = combo
    s, cash = _SELECTING, _SELECTING["args"].cash
    mandate = combo_mandate(combo)
    days, decided = s["days"][smooth, names], s["decided"][smooth, names]
    replay = Replay(days, decided, s["fees"], mandate, "costed", cash, s["args"].horizon, s["delisting"])
    model, _ = replay_book(replay)
    seeds = s["args"].fixed_seeds
    plan = NullPlan(daily_seeds=0, fixed_seeds=seeds, families=("fixed_random",), first_seed=s["args"].first_seed)
    books = null_books(replay, plan, model)
    compared = {**s["benchmarks"], "fixed_random_mean": mean_returns(books)}
    mine = summarise(model, cash, compared)
    ew, fixed = mine["benchmarks"]["equal_weight_liquid"], mine["benchmarks"]["fixed_random_mean"]
    theirs = [summarise(b.result, cash, s["benchmarks"])["benchmarks"]["equal_weight_liquid"] for b in books]
    ratios = [t.get("information_ratio") for t in theirs]
    return {
        "smooth": smooth,
        "rebalance": rebalance,
        "hold": hold,
        "swaps": swaps,
        "trim": trim,
        "names": names,
        "total_return": mine["total_return"],
        "average_exposure": mine.get("average_exposure"),
        "annual_turnover": mine.get("annual_turnover"),
        "active_vs_fixed_random": fixed.get("excess_annual_return"),
        "ir_vs_fixed_random": fixed.get("information_ratio"),
        "ir_vs_equal_weight": ew.get("information_ratio"),
        "fixed_random_percentile": percentile(ew.get("information_ratio"), ratios),
        "largest_weight_max": mine["concentration"]["largest_weight_max"],
        **{f"sells_{why}": n for why, n in sell_reasons(model.trades).items()},
    }


SELL_REASONS = (("avoid", "turned AVOID"), ("lose", "expected to lose"), ("replaced", "replaced"), ("trim", "trimmed"))


def sell_reasons(trades: pd.DataFrame) -> dict[str, int]:
    """The book's sells (fills) counted by why it sold (portfolio/book.py's reasons)."""
    sells = trades[trades["side"] == "SELL"]["reason"] if not trades.empty else pd.Series(dtype=str)
    counts = {name: int(sells.str.startswith(start).sum()) for name, start in SELL_REASONS}
    return {**counts, "other": len(sells) - sum(counts.values())}


def parse_args() -> argparse.Namespace:
    from market.fees import SCHEDULES
    from market.settings import get_settings
    from portfolio.delisting import READINGS
    from portfolio.nulls import DAILY_RANDOM_SEEDS, FIXED_RANDOM_SEEDS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    parser.add_argument("--ohlcv", default=None, help="any OHLCV file or folder instead of the NSE files")
    parser.add_argument(
        "--index", default=None, help="the index symbol to compare with (default ^NASI, else the files' first)"
    )
    parser.add_argument(
        "--fees",
        default=None,
        help=f"fee schedule: {', '.join(sorted(SCHEDULES))} or a .toml/.json fee file (default: nse on NSE, else jse)",
    )
    parser.add_argument("--from", dest="start", type=a_day, default="2012-01-02", help="first day (default 2012-01-02)")
    parser.add_argument("--to", dest="end", type=a_day, default="2021-12-31", help="last day (default 2021-12-31)")
    parser.add_argument("--select", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--cash", type=float, default=10_000_000)
    parser.add_argument("--nulls", action=argparse.BooleanOptionalAction, default=True, help="the null books")
    parser.add_argument("--daily-seeds", type=int, default=DAILY_RANDOM_SEEDS, help="random rankings drawn daily")
    parser.add_argument(
        "--fixed-seeds",
        type=int,
        default=FIXED_RANDOM_SEEDS,
        help="random rankings fixed for the span (1 or more, unless --no-nulls --no-select)",
    )
    parser.add_argument("--cache", default=None, help="a folder for the out-of-sample predictions (opt-in)")
    parser.add_argument("--first-seed", type=int, default=0, help="the random books' first seed (a second set)")
    parser.add_argument("--workers", type=int, default=2, help="processes for the selection's books")
    parser.add_argument(
        "--smooth", type=int, default=1, help="sessions the expected excess is averaged over (trailing, per name)"
    )
    parser.add_argument(
        "--grid", default=None, help="the selection's grid in part: 'hold=5,20 trim=2,none names=15 smooth=1,10'"
    )
    parser.add_argument(
        "--horizon",
        type=int,
        default=HORIZON_OF_MODEL,
        help="the label's horizon in sessions, the model's and every book's (default: the product's, "
        "models/decisions.HORIZON)",
    )
    parser.add_argument("--select-at", choices=("default", "retail"), default="default", help="selection's brokerage")
    parser.add_argument("--hold", type=int, default=None, help="another book than the chosen one: its hold")
    parser.add_argument("--swaps", type=int, default=None, help="... its replacements per rebalance")
    parser.add_argument("--trim", default=None, help="... its trim in slots, or none")
    parser.add_argument("--names", type=int, default=None, help="... its names")
    parser.add_argument("--rebalance", type=int, default=None, help="... its sessions between rebalances")
    settings = get_settings()
    parser.add_argument(
        "--delist-after",
        type=int,
        default=settings.delist_after_sessions,
        help="sessions without a row after which a held name is delisted (default: MARKETINTEL_DELIST_AFTER_SESSIONS)",
    )
    parser.add_argument(
        "--delisted-value",
        choices=READINGS,
        default=settings.delisted_value,
        help="what a delisted position is worth; the other reading is printed beside it",
    )
    capital_options(parser)
    return checked(parser, parser.parse_args())


def checked(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """`args` once each bound is checked (a one-line error naming the option otherwise),
    with `--grid` read into the selection's grid."""
    if args.start > args.end:
        parser.error(f"--from {args.start} is after --to {args.end}")
    if args.delist_after < 1:
        parser.error(f"--delist-after {args.delist_after}: a name is delisted after 1 session without a row or more")
    if not 1 <= args.horizon <= LABEL_CUT - 2:
        parser.error(
            f"--horizon {args.horizon}: a label of 1 to {LABEL_CUT - 2} sessions (the closes kept past the span)"
        )
    if args.smooth < 1:
        parser.error(f"--smooth {args.smooth}: the expected excess is averaged over 1 session or more")
    if args.fixed_seeds < 1 and (args.nulls or selects(args)):
        parser.error(
            f"--fixed-seeds {args.fixed_seeds}: the null books and the selection measure the model's book against "
            "the fixed random books' mean; 1 book or more (or --no-nulls --no-select)"
        )
    try:
        args.grid = grid_of(args.grid, args.smooth)
    except ValueError as exc:
        parser.error(f"--grid: {exc}")
    return books_checked(parser, args)


def books_checked(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """`args` once every book the run replays can run: the chosen book's options and, with
    the selection, each of the grid's books make a `Mandate` (its own rule), the starting
    cash is an amount of money above 0 (market.money MAX_AMOUNT) and the random books'
    seeds are not negative; else a one-line error naming the option. Caught where the
    books are built, after the walk-forward, each was a traceback minutes into a run (or,
    for a negative cash or seed count, a run of zeros or without its daily random books)."""
    from market.money import MAX_AMOUNT

    if args.trim is not None and args.trim.lower() != "none" and not _is_number(args.trim):
        parser.error(f"--trim {args.trim!r}: a number of slots above 1, or none")
    try:
        mandate_of(args)
    except ValueError as exc:
        parser.error(f"--hold, --swaps, --trim, --names, --rebalance: {exc}")
    try:
        for combo in grid_combos(args.grid) if selects(args) else ():
            combo_mandate(combo)
    except ValueError as exc:
        parser.error(f"--grid: {exc}")
    if not math.isfinite(args.cash) or not 0 < args.cash <= MAX_AMOUNT:
        parser.error(f"--cash {args.cash}: the book's starting cash, an amount of money above 0 up to {MAX_AMOUNT:,}")
    if args.first_seed < 0:
        parser.error(f"--first-seed {args.first_seed}: the random books' seeds are 0 or more")
    if args.daily_seeds < 0:
        parser.error(f"--daily-seeds {args.daily_seeds}: 0 random rankings drawn daily or more")
    return args


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def selects(args: argparse.Namespace) -> bool:
    """Whether the run has the selection table: `--select`, else a span ending by SELECTION_END."""
    return args.select if args.select is not None else args.end <= SELECTION_END


def grid_of(text: str | None, smooth: int = 1) -> dict:
    """GRID with the dimensions `text` names replaced ('hold=5,20 trim=2,none smooth=1,10';
    `smooth` defaults to `--smooth`)."""
    grid = {**GRID, "smooth": (smooth,), "rebalance": REBALANCE}
    for part in (text or "").split():
        key, _, values = part.partition("=")
        if key not in grid or not values:
            raise ValueError(f"{part!r}: one of {', '.join(grid)}, as key=v1,v2")
        read = float if key == "trim" else int
        grid[key] = tuple(None if v.lower() == "none" else read(v) for v in values.split(","))
    return grid


def fee_schedules(args: argparse.Namespace):
    """The default and retail schedules of --fees (a built-in key or a fee file); a bad
    name or file is a one-line error."""
    from market.errors import MarketIntelError
    from market.fees import market_fees

    try:
        schedule = market_fees(args.fees or ("jse" if args.ohlcv else "nse"))
    except KeyError as exc:
        raise SystemExit(f"error: --fees: {exc.args[0]}") from None
    except MarketIntelError as exc:
        raise SystemExit(f"error: --fees: {exc.detail}") from None
    return schedule.schedule(), schedule.schedule(retail=True)


def market_said(args: argparse.Namespace, fees, currencies: list[str]) -> tuple[str, str | None]:
    """The line the run prints once the files are read: the fee schedule every run charges
    (`fees`, the default's) and whether it was assumed (`--ohlcv` files without --fees are
    charged the jse schedule: nothing in them says whose market they are), and the
    currency the files state (their rows' `currency`; None where they state none)."""
    assumed = ", assumed: --fees names the market's" if args.ohlcv and not args.fees else ""
    currency = ", ".join(currencies) or None
    stated = f"; the files' currency: {currency}" if currency else "; the files state no currency"
    return f"fees: the {fees.name} schedule{assumed}{stated}", currency


def delisting_rule(args: argparse.Namespace, capital):
    """--delist-after and --delisted-value, with the corporate-actions file's delistings read
    as the store's DELISTING notices are (portfolio/delisting.py `stored_rule`): each row a
    notice that delists the name from its date (one dated after its last row), and a row
    with a positive price the value per share it gives (a `Settlement`; blank or 0, nothing),
    so a backtest writes a name off on the day the live book and the null books do."""
    from portfolio.delisting import DelistingRule, Notice, Settlement

    rows = capital.settlements
    settled = [
        Settlement(a.symbol, a.ex_date, a.price) for a in rows if a.price and math.isfinite(a.price) and a.price > 0
    ]
    notices = [Notice(a.symbol, a.ex_date) for a in rows]
    return DelistingRule(args.delist_after, args.delisted_value, tuple(settled), tuple(notices))


def main() -> None:
    from portfolio.backtest import decided_frame, prepare_days
    from portfolio.nulls import Replay, replay_book, short_span

    args = parse_args()
    horizon = args.horizon
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    source = Path(args.ohlcv or args.nse)
    if not source.exists():
        raise SystemExit(f"error: no market files at {source} (set --nse, --ohlcv or MARKETINTEL_SHARED_DATA)")
    started = time.perf_counter()
    start, end = args.start, args.end
    default_fees, retail_fees = fee_schedules(args)
    prices, capital = market_through(source, start, end, args)
    said, currency = market_said(args, default_fees, prices.attrs.get("currencies", []))
    print(said, flush=True)
    index_name, levels = index_levels(source, args.index, not args.ohlcv)
    rule = delisting_rule(args, capital)
    out: dict = {"benchmark": "backtest", "data": str(source), "from": str(start), "to": str(end)}
    out["currency"] = currency
    out["capital_changes"] = capital_figures(capital)
    cache = {"dir": args.cache, "hits": 0, "misses": 0, "seconds": 0.0}
    predictions = predictions_for(prices, start, end, horizon, args, cache)
    out["replayed_from"], out["replayed_to"] = replayed(predictions, start, end)
    benchmarks, coverage = benchmarks_for(predictions, prices, index_name, levels)
    out["index_coverage"] = asdict(coverage) if coverage is not None else None
    signals: dict[int, tuple[pd.DataFrame, dict]] = {}
    if selects(args):
        chosen_at = retail_fees if args.select_at == "retail" else default_fees
        signals = {k: smoothed_signal(predictions, prices, k) for k in args.grid["smooth"]}
        out["selection"] = selection(signals, chosen_at, benchmarks, args, args.grid, rule)
        print_selection(out["selection"])
    predictions, persistence = signals.get(args.smooth) or smoothed_signal(predictions, prices, args.smooth)
    mandate = mandate_of(args)
    out.update({"index": index_name, "horizon": horizon, "mandate": mandate.__dict__, "smooth": args.smooth})
    out["rank_ic"] = rank_ic(predictions)
    rate = float(default_fees.rate)
    days = prepare_days(predictions, rate, horizon, mandate.names, persistence)
    decided = decided_frame(predictions, rate, horizon, mandate.names)
    replay = Replay(days, decided, default_fees, mandate, "costed", args.cash, horizon, rule)
    model, _ = replay_book(replay)
    compared = dict(benchmarks)
    if args.nulls:
        out["nulls"], compared["fixed_random_mean"], out["nulls_note"] = nulls(replay, model, benchmarks, args)
        out["nulls_span_note"] = short_span(len(replay.days))
    runs = {"default_brokerage": summarise_book(model, args.cash, compared)}
    runs["gross_of_costs"] = book_figures(
        replay.days, default_fees, "gross", mandate, horizon, args.cash, benchmarks, rule
    )
    runs["retail_brokerage"], retail_compared = retail_run(
        replay, retail_fees, (predictions, persistence), benchmarks, args, out
    )
    out["fees"] = {"default": default_fees.describe(), "retail": retail_fees.describe()}
    out["runs"] = runs
    print_runs(out, benchmarks, (compared, retail_compared) if args.nulls else None)
    out["cache"] = {**cache, "seconds": round(cache["seconds"], 1)}
    out["wall_seconds"] = round(time.perf_counter() - started, 1)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(
        f"rank IC (liquid, all): {out['rank_ic']['liquid']}, {out['rank_ic']['all']}; predictions "
        f"{out['cache']['seconds']} s (cache {cache['hits']} hits, {cache['misses']} misses); {out['wall_seconds']} s, "
        f"peak RSS {out['peak_rss_mb']} MB"
    )
    print(json.dumps(out, default=str))


def market_through(source: Path, start: date, end: date, args: argparse.Namespace) -> tuple[pd.DataFrame, object]:
    """The market's prices, adjusted for its capital changes (whose report is printed and
    whose applied changes join `args.adjustments`, the predictions' cache key), cut
    LABEL_CUT sessions after `end`: the last labels' and persistence windows' closes, no more.
    A span without a priced day stops here (`priced_in`), before the walk-forward."""
    prices, capital = load_market(source, not args.ohlcv, *capital_arguments(args))
    priced_in(prices, start, end)
    for line in capital.lines():
        print(line, flush=True)
    args.adjustments = tuple((s.symbol, s.ex_date.isoformat(), s.factor) for s in capital.applied)
    args.adjustments += tuple((r.old, r.ex_date.isoformat(), r.new) for r in capital.renames.applied)
    args.adjustments += tuple((r.symbol, r.last_day.isoformat(), r.retired) for r in capital.renames.reused)
    label_cut = sorted(d for d in prices["date"].unique() if d > end)[:LABEL_CUT]
    return prices[prices["date"] <= (label_cut[-1] if label_cut else end)], capital


def replayed(predictions: pd.DataFrame, start: date, end: date) -> tuple[date, date]:
    """The first and last day the books replay (the predictions'), printed with the span asked
    for beside them where they differ: the walk-forward predicts nothing in its training
    sessions and the files may end before --to, and every figure is over these days."""
    first, last = min(predictions["date"]), max(predictions["date"])
    asked = "" if (first, last) == (start, end) else f" (asked {start} to {end})"
    print(f"replayed {first} to {last}{asked}, {predictions['date'].nunique()} sessions", flush=True)
    return first, last


def retail_run(
    default, fees, signal: tuple[pd.DataFrame, dict], benchmarks: dict, args, out: dict
) -> tuple[dict, dict]:
    """The same book at the retail brokerage (`default`'s Replay with the retail schedule
    `fees`; the decisions made again at its rate: a round trip is part of every threshold), its
    figures and what it was compared with; with the nulls, beside its own fixed random
    books (`out["retail_nulls"]`): the floor holds at both brokerage rates."""
    from portfolio.backtest import decided_frame, prepare_days
    from portfolio.nulls import replay_book

    predictions, persistence = signal
    rate, names = float(fees.rate), default.mandate.names
    days = prepare_days(predictions, rate, default.horizon, names, persistence)
    retail = replace(default, fees=fees, days=days, decided=decided_frame(predictions, rate, default.horizon, names))
    model, _ = replay_book(retail)
    compared = dict(benchmarks)
    if args.nulls:
        out["retail_nulls"], compared["fixed_random_mean"], out["retail_nulls_note"] = nulls(
            retail, model, benchmarks, args, ("fixed_random",)
        )
    return summarise_book(model, args.cash, compared), compared


def print_runs(out: dict, benchmarks: dict, compared: tuple[dict, dict] | None) -> None:
    """The runs' table and delisting readings; with the nulls (`compared`: what the default
    and the retail book were compared with), each brokerage's null families and its book
    against the fixed-random mean."""
    runs = out["runs"]
    print_table(runs, benchmarks)
    print_delisting(runs)
    if compared is not None:
        print_nulls(out["nulls"], runs["default_brokerage"], out["nulls_note"])
        if out["nulls_span_note"]:
            print(f"note: {out['nulls_span_note']}")
        print_against(runs["default_brokerage"], compared[0])
        print_nulls(out["retail_nulls"], runs["retail_brokerage"], out["retail_nulls_note"], "retail")
        print_against(runs["retail_brokerage"], compared[1])


def print_delisting(runs: dict) -> None:
    """The delisting rule's figures for each run (portfolio/backtest.py delisting_figures):
    the delisted positions, their position-days and, at the end, their value, the final
    equity and the total return under each reading, the rule's first; then each delisting
    of the default-brokerage book with its dates."""
    first = next(iter(runs.values()))["delisting"]
    print(f"delisting: {first['rule']}")
    for name, figures in runs.items():
        d = figures["delisting"]
        own, other = d["reading"], next(r for r in d["value_at_end"] if r != d["reading"])
        print(
            f"  {name}: {d['positions']} delisted positions ({d['names']} names), {d['position_days']} position-days, "
            f"{d['held_at_end']} held at the end worth {d['value_at_end'][own]:,.2f} ({own}) / "
            f"{d['value_at_end'][other]:,.2f} ({other}); final equity {d['final_equity'][own]:,.2f} / "
            f"{d['final_equity'][other]:,.2f}; total return {_percent(d['total_return'][own])} / "
            f"{_percent(d['total_return'][other])}"
        )
    for e in runs["default_brokerage"]["delisting"]["episodes"]:
        back = f"rows again from {e['returned_on']}" if e["returned_on"] else "to the end"
        print(
            f"    {e['symbol']}: {e['quantity']:,} shares, last row {e['last_row']}, delisted {e['delisted_on']}, "
            f"{back} ({e['days']} days); last close {e['last_close']:g}, worth {e['value_last_close']:,.2f} at it"
        )


def smoothed_signal(predictions: pd.DataFrame, prices: pd.DataFrame, sessions: int) -> tuple[pd.DataFrame, dict]:
    """The predictions with the expected excess averaged over `sessions` (portfolio/backtest.py
    `smoothed`) and that signal's persistence known on each day (`persistence_by_day`:
    point in time, each day reads what it knew), which the book's Outlook weighs with."""
    from portfolio.backtest import persistence_by_day, smoothed

    signal = smoothed(predictions, sessions)
    return signal, persistence_by_day(signal, prices)


def mandate_of(args: argparse.Namespace):
    """The chosen book (the default Mandate), or another one the options name."""
    from portfolio.book import Mandate

    changes = {k: getattr(args, k) for k in ("hold", "swaps", "names") if getattr(args, k) is not None}
    if args.rebalance is not None:
        changes["rebalance_every"] = args.rebalance
    if args.trim is not None:
        changes["trim"] = None if args.trim.lower() == "none" else float(args.trim)
    return replace(Mandate(), **changes)


def print_selection(chosen: dict) -> None:
    """The selection table's eligible rows, best first, and the rule it picks."""
    eligible = [
        r
        for r in chosen["table"]
        if (r["average_exposure"] or 0) >= MIN_EXPOSURE and (r["annual_turnover"] or 0) <= MAX_TURNOVER
    ]
    print(f"selection: {len(chosen['table'])} books, {len(eligible)} eligible; the best ten by IR vs fixed random:")
    for row in sorted(eligible, key=lambda r: -(r["ir_vs_fixed_random"] or -9))[:10]:
        print("  " + " ".join(f"{k}={v}" for k, v in row.items()))
    print(f"chosen: {chosen['chosen']}")


def summarise_book(result, cash: float, benchmarks: dict) -> dict:
    from portfolio.backtest import summarise

    return summarise(result, cash, benchmarks, by_year=True)


def nulls(
    replay, model, benchmarks: dict, args, families: tuple[str, ...] | None = None
) -> tuple[dict, pd.Series, str | None]:
    """Every null book over the model's replay (`families`: only those): per family its
    FamilyFigures (against the equal-weighted liquid universe; a book that earned the model
    book's return every day is a tie, `nulls.same_returns`), each book's own figures and
    its `note` (`family_ties` where every book tied); the mean of the fixed random books'
    daily returns; and the note where every null book tied (SAME_BOOKS), as the track
    record's nulls say it (portfolio/nulls.py `against_nulls`)."""
    from portfolio.backtest import book_returns, summarise
    from portfolio.nulls import (
        NULL_FAMILIES,
        SAME_BOOKS,
        NullPlan,
        all_the_same,
        family_figures,
        family_ties,
        mean_returns,
        null_books,
        same_returns,
        why_no_books,
    )

    started = time.perf_counter()
    plan = NullPlan(args.daily_seeds, args.fixed_seeds, families=families or NULL_FAMILIES, first_seed=args.first_seed)
    books = null_books(replay, plan, model)
    mine, returns = summarise(model, args.cash, benchmarks), book_returns(model.curve, args.cash)
    families: dict = {}
    for book in books:
        families.setdefault(book.family, []).append((book, summarise(book.result, args.cash, benchmarks)))
    out = {}
    for family, members in families.items():
        tied = [same_returns(returns, book) for book, _ in members]
        figures = family_figures(family, mine, [f for _, f in members], "equal_weight_liquid", tied)
        out[family] = {
            **asdict(figures),
            "holding_sessions": [f["holding"]["mean_sessions"] for _, f in members],
            "each_book": [book_row(book.seed, f) for book, f in members],
            "note": family_ties(len(members)) if all(tied) else None,
        }
    for family in (f for f in plan.families if f not in out):  # too few days for it: said, not left out
        none = family_figures(family, mine, [], "equal_weight_liquid")
        why = why_no_books(family, len(replay.days), plan)
        out[family] = {**asdict(none), "holding_sessions": [], "each_book": [], "note": why}
    print(f"{len(books)} null books in {time.perf_counter() - started:.0f} s", flush=True)
    fixed = [b for b in books if b.family == "fixed_random"]
    note = SAME_BOOKS.format(days=len(returns)) if all_the_same(returns, books) else None
    return out, mean_returns(fixed) if fixed else pd.Series(dtype=float), note


def book_row(seed: int | None, figures: dict) -> dict:
    ew = figures["benchmarks"]["equal_weight_liquid"]
    return {
        "seed": seed,
        "information_ratio": ew.get("information_ratio"),
        "excess_annual_return": ew.get("excess_annual_return"),
        "annual_turnover": figures.get("annual_turnover"),
        "total_return": figures.get("total_return"),
        "average_exposure": figures.get("average_exposure"),
        "holding_sessions": figures["holding"]["mean_sessions"],
    }


def _signed(x: float | None, percent: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{100 * x:+.1f}%" if percent else f"{x:+.2f}"


def _plain(x: float | None) -> str:
    """A figure as it is, "n/a" without one (as `_signed` and `_pct`), never Python's None."""
    return "n/a" if x is None else str(x)


def _percent(x: float | None) -> str:
    return _signed(x, True)


def _range(spread: dict, show) -> str:
    return f"{show(spread['mean'])} ({show(spread['low'])}..{show(spread['high'])})"


def print_nulls(families: dict, model: dict, note: str | None, brokerage: str = "default") -> None:
    """Each null family beside the model's book (at `brokerage`): mean (min..max), the model's
    standing among its books (`nulls.percentile_words`: over one book whether it beats it,
    over fewer than FEW_BOOKS the percentile said to be too few to read); then the `note`
    where every null book tied with the model's, else each family's whose books all did,
    and always why a family has no books (too few days for it)."""
    from portfolio.nulls import percentile_words

    ew = model["benchmarks"]["equal_weight_liquid"]
    print(f"null books, {brokerage} brokerage; IR and excess a year vs the equal-weighted liquid universe (range)")
    print(f"{'book':<17}{'books':>6}  {'IR':<22}{'excess a year':<26}{'turnover':<20}{'held':>7}  model pct  beats")
    held = model["holding"]["mean_sessions"]
    print(
        f"{'model':<17}{1:>6}  {_signed(ew['information_ratio']):<22}{_signed(ew['excess_annual_return'], True):<26}"
        f"{_plain(model['annual_turnover']):<20}{_plain(held):>7}"
    )
    for family, f in families.items():
        ir, ex, to = f["information_ratio"], f["excess_annual_return"], f["annual_turnover"]
        known = [h for h in f["holding_sessions"] if h is not None]
        mean_held = round(sum(known) / len(known), 1) if known else None
        print(
            f"{family:<17}{f['books']:>6}  {_range(ir, _signed):<22}{_range(ex, _percent):<26}{_range(to, _plain):<20}"
            f"{_plain(mean_held):>7}  {percentile_words(f['model_percentile'], f['model_beats'], f['books']):>9}  "
            f"{f['model_beats']}/{f['books']}"
        )
    said = [(family, f["note"]) for family, f in families.items() if f["note"] and (not note or not f["books"])]
    notes = ([note] if note else []) + [f"{family}: {why}" for family, why in said]  # a family without books: why
    for line in notes:
        print(f"note: {line}")


def print_against(model: dict, benchmarks: dict) -> None:
    """The model's book against each benchmark (the fixed random books' mean among them):
    active return a year, tracking error, information ratio; overall and per year, with
    the turnover and the mean holding (sessions, holdings ended that year)."""
    names = list(benchmarks)
    print("model's book vs " + ", ".join(names) + ": active return a year / tracking error / IR")
    print(f"{'year':<6}{'return':>9}{'turnover':>9}{'held':>7}  " + "".join(f"{n[:26]:<28}" for n in names))
    years = [*model.get("years", {}).items(), ("all", model)]
    for year, f in years:
        cells = []
        for name in names:
            b = f["benchmarks"].get(name) or {}
            cells.append(
                f"{_signed(b.get('excess_annual_return'), True)} / {_pct(b.get('tracking_error'))} / "
                f"{_signed(b.get('information_ratio'))}"
            )
        held = model["holding"]["by_year"].get(year) if year != "all" else model["holding"]["mean_sessions"]
        print(
            f"{year:<6}{_signed(f.get('total_return'), True):>9}{_plain(f.get('annual_turnover')):>9}"
            f"{_plain(held):>7}  " + "".join(f"{c:<28}" for c in cells)
        )


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


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
