"""The computations behind notebooks/research/: model diagnostics, the rails backtest and
data quality, on the configured store's history and on real end-of-day files (NSE daily).
The notebooks call these and draw with reports/figures.py; nothing here writes.

Sources
- `store_prices()`: every stored end-of-day row (symbol, date, close, volume, bid, ask,
  high, low) of the configured store, `store_predictions()`: its validation record
  (models/validation.py: walk-forward, out-of-sample, one row per instrument and day).
- `nse_prices(path, days)`: the NSE daily files under `path`, the last `days` trading days.

Returns are fractions (0.012 is 1.2%); the notebooks format them as percentages.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from market.costs import FeeSchedule

HORIZONS = (1, 2, 5, 10)
FLAT = 0.0  # a close that did not move is neither up nor down (models/metrics.py)


# --- sources ------------------------------------------------------------------------------


def default_nse_path() -> str:
    """Where the shared NSE daily files are: MARKETINTEL_SHARED_DATA/nse-kenya/daily, else
    the `shared/data` folder beside the checkout."""
    root = os.environ.get("MARKETINTEL_SHARED_DATA") or str(Path(__file__).resolve().parents[2] / "shared" / "data")
    return str(Path(root) / "nse-kenya" / "daily")


def nse_available(path: str) -> bool:
    return bool(path) and Path(path).is_dir() and any(Path(path).rglob("*.csv"))


def nse_prices(path: str, days: int | None = None) -> pd.DataFrame:
    """The NSE daily files as a price frame (bid/ask unknown), the last `days` trading days;
    `attrs["repeated_days"]`: the days in that window left out as copies of the one before."""
    from ingest.importers.formats import nse_daily_frame

    prices = nse_daily_frame(Path(path))
    copies = prices.attrs.get("repeated_days", [])
    prices["date"] = pd.to_datetime(prices["date"]).dt.date
    prices = _last_days(prices, days)
    first = str(prices["date"].min()) if not prices.empty else ""
    prices.attrs["repeated_days"] = [line for line in copies if line[:10] >= first]  # those inside the window
    return prices


def store_prices(days: int | None = None) -> pd.DataFrame:
    """The configured store's end-of-day history (all of it, or the last `days` days)."""
    from market.settings import get_settings
    from store.engine import service_engine
    from store.panels import price_panel

    with service_engine(get_settings()).connect() as conn:
        prices = price_panel(conn, date.max)
    return _last_days(prices, days)


def store_predictions() -> pd.DataFrame:
    """The stored validation record: symbol, date, predicted_return, expected_return,
    raw_score, p_up, score, action, tercile, model_id (empty when bootstrapping has not
    built one)."""
    from market.settings import get_settings
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    with service_engine(get_settings()).connect() as conn:
        rows = current_rows(conn, tables.validation_predictions)
    columns = [
        "symbol",
        "date",
        "predicted_return",
        "expected_return",
        "raw_score",
        "p_up",
        "score",
        "action",
        "tercile",
        "model_id",
    ]
    frame = pd.DataFrame(rows).rename(columns={"trading_date": "date"})
    return frame[columns] if not frame.empty else pd.DataFrame(columns=columns)


def store_name() -> str:
    """The configured store in a few words (no credentials): 'SQLite store (store.db)'."""
    from sqlalchemy.engine import make_url

    from market.settings import get_settings

    url = make_url(get_settings().database_url)
    backend = "SQLite" if url.get_backend_name() == "sqlite" else url.get_backend_name().capitalize()
    return f"{backend} store ({Path(url.database or '').name or 'in memory'})"


def _last_days(prices: pd.DataFrame, days: int | None) -> pd.DataFrame:
    if days is None or prices.empty:
        return prices.reset_index(drop=True)
    keep = set(sorted(prices["date"].unique())[-days:])
    return prices[prices["date"].isin(keep)].reset_index(drop=True)


# --- outcomes and model diagnostics -----------------------------------------------------------


def forward_returns(prices: pd.DataFrame, horizons: tuple[int, ...] = HORIZONS) -> pd.DataFrame:
    """symbol, date and `fwd_<h>`: the close-to-close return over the next h rows of each
    instrument (its next h trading days with a price)."""
    frame = prices[["symbol", "date", "close"]].sort_values(["symbol", "date"]).copy()
    grouped = frame.groupby("symbol")["close"]
    for h in horizons:
        frame[f"fwd_{h}"] = grouped.shift(-h) / frame["close"] - 1
    return frame.drop(columns="close")


def with_outcomes(
    predictions: pd.DataFrame, prices: pd.DataFrame, horizons: tuple[int, ...] = HORIZONS
) -> pd.DataFrame:
    return predictions.merge(forward_returns(prices, horizons), on=["symbol", "date"], how="left")


def _spearman(a: pd.Series, b: pd.Series) -> float:
    if len(a) < 5 or a.nunique() < 2 or b.nunique() < 2:
        return np.nan
    return float(a.rank().corr(b.rank()))


def daily_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Per day: binary accuracy (P(up) > 50% against a rise, on instruments that moved),
    the information coefficient (Spearman of predicted and realised 1-day return, days with
    5 or more instruments) and the number of predictions."""
    rows = []
    for day, part in frame.dropna(subset=["fwd_1"]).groupby("date", sort=True):
        moved = part[part["fwd_1"] != FLAT]
        rows.append(
            {
                "date": day,
                "accuracy": float(((moved["p_up"] > 0.5) == (moved["fwd_1"] > 0)).mean()) if len(moved) else np.nan,
                "up_share": float((moved["fwd_1"] > 0).mean()) if len(moved) else np.nan,
                "ic": _spearman(part["predicted_return"], part["fwd_1"]),
                "predictions": len(part),
            }
        )
    return pd.DataFrame(rows)


def rolling_scores(daily: pd.DataFrame, window: int = 20) -> pd.DataFrame:
    """`daily_scores` averaged over a trailing window of days (at least half of it)."""
    out = daily[["date"]].copy()
    for column in ("accuracy", "up_share", "ic"):
        out[column] = daily[column].rolling(window, min_periods=max(1, window // 2)).mean()
    return out


def ic_by_horizon(frame: pd.DataFrame, horizons: tuple[int, ...] = HORIZONS) -> pd.DataFrame:
    """Mean daily IC of the predicted return against the realised return h days ahead,
    with its standard error and the share of days the IC was positive."""
    rows = []
    for h in horizons:
        ics = [
            _spearman(part["predicted_return"], part[f"fwd_{h}"])
            for _, part in frame.dropna(subset=[f"fwd_{h}"]).groupby("date")
        ]
        ics = pd.Series(ics, dtype=float).dropna()
        rows.append(
            {
                "horizon": h,
                "mean_ic": float(ics.mean()) if len(ics) else np.nan,
                "standard_error": float(ics.std() / np.sqrt(len(ics))) if len(ics) > 1 else np.nan,
                "positive_share": float((ics > 0).mean()) if len(ics) else np.nan,
                "days": len(ics),
            }
        )
    return pd.DataFrame(rows)


def calibration(frame: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Predictions grouped into `bins` equal-count bins of P(up): the mean P(up) against
    the share that actually rose next day (instruments that moved). Equal P(up)s are
    ordered by date, then symbol, so a bin holds the same rows whatever order they came in."""
    moved = frame.dropna(subset=["fwd_1", "p_up"])
    moved = moved[moved["fwd_1"] != FLAT]
    if moved.empty:
        return pd.DataFrame(columns=["mean_p_up", "rose_share", "predictions"])
    moved = moved.sort_values([c for c in ("p_up", "date", "symbol") if c in moved], kind="stable")
    bucket = pd.qcut(np.arange(len(moved)), q=min(bins, len(moved)), labels=False)
    out = moved.groupby(bucket).agg(
        mean_p_up=("p_up", "mean"), rose_share=("fwd_1", lambda r: float((r > 0).mean())), predictions=("p_up", "size")
    )
    return out.reset_index(drop=True)


def tercile_returns(frame: pd.DataFrame, horizons: tuple[int, ...] = HORIZONS) -> pd.DataFrame:
    """Mean forward return per Ranking Tercile and horizon (ILLIQUID included)."""
    order = ["TOP", "MIDDLE", "BOTTOM", "ILLIQUID"]
    table = frame.groupby("tercile")[[f"fwd_{h}" for h in horizons]].mean()
    table = table.reindex([t for t in order if t in table.index])
    table["predictions"] = frame.groupby("tercile").size()
    return table.reset_index()


def walk_forward_models(prices: pd.DataFrame, test_days: int, min_train_days: int):  # noqa: ANN201
    """The walk-forward (models/walkforward.py, empirical layer 1) on the next-day reference
    label (what this notebook's daily accuracy and 1-day IC read) over the last `test_days`
    of `prices`: its predictions with decisions, outcomes and models."""
    from models.dataset import build_panel
    from models.decisions import decide
    from models.walkforward import WalkForwardConfig, walk_forward

    panel = build_panel(prices, horizon=1, label="next_day")
    dates = sorted(panel["date"].unique())
    first = dates[max(min_train_days, len(dates) - test_days)] if len(dates) > min_train_days else None
    if first is None:
        return None
    result = walk_forward(panel, WalkForwardConfig(min_train_days=min_train_days, first_test_date=first, target="sign"))
    if result.predictions.empty:
        return None
    return result, with_outcomes(decide(result.predictions.reset_index(drop=True), horizon=1), prices)


def importances_over_time(result) -> pd.DataFrame:  # noqa: ANN001
    """Each walk-forward model's share of gain per feature, by the first day it predicted."""
    rows = [{"from": m.block_start, **m.importances} for m in result.models]
    return pd.DataFrame(rows).set_index("from")


# --- data quality ---------------------------------------------------------------------------


def quality_by_day(prices: pd.DataFrame) -> pd.DataFrame:
    """Per trading day: instruments priced, the share with zero volume (no trade), and the
    share whose close equals the previous close (a stale price)."""
    frame = prices.sort_values(["symbol", "date"]).copy()
    frame["stale"] = frame.groupby("symbol")["close"].diff() == 0
    frame["zero_volume"] = frame["volume"].fillna(0) <= 0
    out = frame.groupby("date").agg(
        instruments=("symbol", "nunique"), zero_volume_share=("zero_volume", "mean"), stale_share=("stale", "mean")
    )
    return out.reset_index()


def quality_by_instrument(prices: pd.DataFrame) -> pd.DataFrame:
    """Per instrument: days priced, first and last day, zero-volume and stale-price shares,
    days missing between its first and last day (market days with no row) and its longest
    run of missing days."""
    days = sorted(prices["date"].unique())
    position = {d: i for i, d in enumerate(days)}
    rows = []
    for symbol, part in prices.sort_values("date").groupby("symbol"):
        index = np.array([position[d] for d in part["date"]])
        gaps = np.diff(index) - 1 if len(index) > 1 else np.array([0])
        closes = part["close"].to_numpy(float)
        rows.append(
            {
                "symbol": symbol,
                "first_day": part["date"].iloc[0],
                "last_day": part["date"].iloc[-1],
                "days": len(part),
                "zero_volume_share": float((part["volume"].fillna(0) <= 0).mean()),
                "stale_share": float((np.diff(closes) == 0).mean()) if len(closes) > 1 else 0.0,
                "missing_days": int(gaps.sum()),
                "longest_gap": int(gaps.max()),
            }
        )
    return pd.DataFrame(rows).sort_values(["missing_days", "zero_volume_share"], ascending=False)


def calendar_gaps(prices: pd.DataFrame, min_days: int = 5) -> pd.DataFrame:
    """Breaks of more than `min_days` calendar days between consecutive market days in the
    data (holidays are 1 to 4 days; longer breaks are missing files or a closed market)."""
    days = pd.Series(sorted(pd.to_datetime(pd.Series(prices["date"].unique()))))
    gap = days.diff().dt.days
    out = pd.DataFrame({"after": days.shift(1), "until": days, "calendar_days": gap})
    out = out[out["calendar_days"] > min_days]
    return out.assign(after=out["after"].dt.date, until=out["until"].dt.date).reset_index(drop=True)


# --- charts and tables (reports/figures.py look, formatted numbers) ---------------------------


def accuracy_ic_chart(rolling: pd.DataFrame, source: str, window: int):  # noqa: ANN201
    from reports.figures import COLOURS, figure, percent_axis, titled

    fig, (top, bottom) = figure(9, 5.4, nrows=2)
    top.plot(rolling["date"], rolling["accuracy"], color=COLOURS[0], label="binary accuracy")
    top.plot(
        rolling["date"],
        rolling["up_share"].where(rolling["up_share"] >= 0.5, 1 - rolling["up_share"]),
        color=COLOURS[3],
        linestyle="--",
        label="base rate (the more common direction)",
    )
    percent_axis(top)
    top.legend(fontsize=8, frameon=False)
    titled(top, f"{source}: accuracy over time ({window}-day trailing mean)", "", "accuracy")
    bottom.plot(rolling["date"], rolling["ic"], color=COLOURS[1])
    bottom.axhline(0, color=COLOURS[3], linewidth=0.8)
    bottom.yaxis.set_major_formatter(_fixed(2))
    titled(bottom, f"Information coefficient over time ({window}-day trailing mean)", "", "IC (Spearman)")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def calibration_chart(table: pd.DataFrame, source: str):  # noqa: ANN201
    from reports.figures import COLOURS, figure, percent_axis, titled

    fig, ax = figure(4.8, 4.4)
    ax.plot([0, 1], [0, 1], linestyle="--", color=COLOURS[3], linewidth=0.8, label="perfectly calibrated")
    ax.plot(table["mean_p_up"], table["rose_share"], marker="o", color=COLOURS[0], label="P(up) decile")
    lo = float(min(table["mean_p_up"].min(), table["rose_share"].min())) - 0.05
    hi = float(max(table["mean_p_up"].max(), table["rose_share"].max())) + 0.05
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    percent_axis(ax, "x")
    percent_axis(ax)
    ax.legend(fontsize=8, frameon=False)
    titled(ax, f"{source}: calibration", "mean predicted P(up)", "share that rose next day")
    fig.tight_layout()
    return fig


def ic_horizon_chart(table: pd.DataFrame, source: str):  # noqa: ANN201
    from reports.figures import COLOURS, figure, titled

    fig, ax = figure(6, 3.2)
    labels = [f"{h} day{'s' if h > 1 else ''}" for h in table["horizon"]]
    bars = ax.bar(labels, table["mean_ic"], yerr=table["standard_error"], color=COLOURS[0], capsize=3)
    ax.bar_label(bars, labels=[f"{v:+.3f}" for v in table["mean_ic"]], fontsize=8, padding=3)
    ax.axhline(0, color=COLOURS[3], linewidth=0.8)
    ax.yaxis.set_major_formatter(_fixed(3))
    titled(ax, f"{source}: mean daily IC by horizon (bars: one standard error)", "forward horizon", "IC (Spearman)")
    fig.tight_layout()
    return fig


def tercile_chart(table: pd.DataFrame, source: str, horizons: tuple[int, ...] = HORIZONS):  # noqa: ANN201
    from reports.figures import COLOURS, figure, percent_axis, titled

    fig, ax = figure(7.5, 3.4)
    width = 0.8 / max(1, len(table))
    x = np.arange(len(horizons))
    for i, row in enumerate(table.itertuples(index=False)):
        values = [getattr(row, f"fwd_{h}") for h in horizons]
        ax.bar(x + i * width, values, width, label=row.tercile, color=COLOURS[i % len(COLOURS)])
    ax.set_xticks(x + width * (len(table) - 1) / 2, [f"{h} day{'s' if h > 1 else ''}" for h in horizons])
    ax.axhline(0, color=COLOURS[3], linewidth=0.8)
    percent_axis(ax, digits=2)
    ax.legend(fontsize=8, frameon=False, ncols=4)
    titled(ax, f"{source}: mean forward return by Ranking Tercile", "forward horizon", "mean return")
    fig.tight_layout()
    return fig


def importance_chart(importances: pd.DataFrame, source: str, top: int = 6):  # noqa: ANN201
    from reports.figures import COLOURS, figure, percent_axis, titled

    leading = importances.mean().sort_values(ascending=False).index[:top]
    fig, ax = figure(9, 3.6)
    for i, feature in enumerate(leading):
        ax.plot(importances.index, importances[feature], label=feature, color=COLOURS[i % len(COLOURS)], marker=".")
    percent_axis(ax)
    ax.legend(fontsize=7, frameon=False, ncols=3)
    titled(
        ax,
        f"{source}: share of gain of the {len(leading)} leading features, model by model",
        "first day the model predicted",
        "share of gain",
    )
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def quality_chart(by_day: pd.DataFrame, source: str, window: int = 20):  # noqa: ANN201
    from reports.figures import COLOURS, figure, percent_axis, thousands_axis, titled

    fig, (top, bottom) = figure(9, 5.2, nrows=2)
    days = pd.to_datetime(by_day["date"])
    for i, (column, label) in enumerate(
        [("zero_volume_share", "zero volume (no trade)"), ("stale_share", "close unchanged from the previous day")]
    ):
        top.plot(days, by_day[column].rolling(window, min_periods=1).mean(), label=label, color=COLOURS[i])
    percent_axis(top)
    top.legend(fontsize=8, frameon=False)
    titled(top, f"{source}: share of instruments per day ({window}-day trailing mean)", "", "share of instruments")
    bottom.plot(days, by_day["instruments"], color=COLOURS[2])
    thousands_axis(bottom)
    titled(bottom, "Instruments with a row per day", "", "instruments")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def equity_chart(results: dict, source: str, currency: str):  # noqa: ANN201
    from reports.figures import COLOURS, figure, millions_axis, titled

    fig, ax = figure(9, 3.8)
    for i, (label, result) in enumerate(results.items()):
        curve = result.curve
        if curve.empty:
            continue
        ax.plot(pd.to_datetime(curve["date"]), curve["equity"], label=f"{label}: equity", color=COLOURS[i])
        if result.fills == "costed":
            ax.plot(
                pd.to_datetime(curve["date"]),
                curve["liquid_equity"],
                label=f"{label}: liquid equity",
                color=COLOURS[i],
                linestyle="--",
            )
    millions_axis(ax)
    ax.legend(fontsize=8, frameon=False)
    titled(ax, f"{source}: equity, next-session fills with costs against same-close free fills", "", currency)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def backtest_table(results: dict):  # noqa: ANN201
    """The backtest figures side by side, each formatted as it reads: the book's own, its
    costs, and against the equal-weighted liquid universe."""
    from reports.figures import fmt_count, fmt_money, fmt_number, fmt_pct, styled

    share = lambda v: fmt_pct(v, 2, signed=True)  # noqa: E731
    ratio = lambda v: "-" if v is None else fmt_number(v, 2)  # noqa: E731
    formats = {
        "total_return": share,
        "annual_return": share,
        "annual_volatility": lambda v: fmt_pct(v, 2),
        "sharpe": ratio,
        "sortino": ratio,
        "calmar": ratio,
        "max_drawdown": lambda v: fmt_pct(v, 2),
        "annual_turnover": lambda v: "-" if v is None else f"{fmt_number(v, 1)}x",  # None: under a year
        "average_exposure": lambda v: fmt_pct(v, 1),
        "average_names": lambda v: fmt_number(v, 1),
        "final_equity": fmt_money,
        "final_liquid_equity": fmt_money,
        "costs paid": fmt_money,
        "benchmark return": share,
        "excess annual return": share,
        "tracking error": lambda v: fmt_pct(v, 2),
        "information ratio": ratio,
        "beta": ratio,
    }

    def flat(figures: dict) -> dict:
        bench = figures.get("benchmarks", {}).get("equal_weight_liquid", {})
        # the served track record's own fields (its index, trades, reason, records and null books: none in a
        # backtest) and its fill count, which the orders row says
        served = ("index_source", "trades", "reason", "records", "nulls", "fill_count")
        skip = ("rails", "fills", "fill_mode", "first", "last", "note", "mostly_cash", *served)
        plain = {k: v for k, v in figures.items() if not isinstance(v, dict) and k not in skip}
        return {
            **plain,
            "costs paid": (figures.get("costs") or {}).get("total"),
            "benchmark return": bench.get("total_return"),
            "excess annual return": bench.get("excess_annual_return"),
            "tracking error": bench.get("tracking_error"),
            "information ratio": bench.get("information_ratio"),
            "beta": bench.get("beta"),
        }

    flattened = {label: flat(r.figures) for label, r in results.items()}
    names = list(next(iter(flattened.values())))
    rows = [
        {
            "figure": name.replace("_", " "),
            **{label: formats.get(name, fmt_count)(f.get(name)) for label, f in flattened.items()},
        }
        for name in names
    ]
    return styled(pd.DataFrame(rows))


def _fixed(digits: int):  # noqa: ANN202
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: f"{v:.{digits}f}")


# --- what each research notebook shows, one call per cell -------------------------------------


class Diagnostics:
    """Model diagnostics of one source: out-of-sample predictions with outcomes (`frame`,
    from `with_outcomes`) and optionally the walk-forward that made them (for importances).
    Each method returns a chart, a formatted table, or a sentence saying why there is none."""

    def __init__(
        self,
        frame: pd.DataFrame,
        source: str,
        window: int = 20,
        walk=None,  # noqa: ANN001
        missing: str | None = None,
    ) -> None:
        self.frame, self.source, self.window, self.walk = frame, source, window, walk
        self.missing = missing or f"{source} has no out-of-sample prediction with a known outcome"
        self.empty = frame.empty or frame["fwd_1"].notna().sum() == 0

    def _none(self, what: str):  # noqa: ANN202
        from reports.figures import markdown

        return markdown(f"No {what}: {self.missing}.")

    def summary(self):  # noqa: ANN201
        from models.metrics import evaluate
        from reports.figures import fmt_count, fmt_pct, markdown

        if self.empty:
            return self._none("diagnostics")
        f = self.frame.drop(columns=["forward_return"], errors="ignore").rename(columns={"fwd_1": "forward_return"})
        f = f.assign(last_return=np.nan) if "last_return" not in f else f
        metrics = evaluate(f)
        binary, ic = metrics["binary_accuracy"], metrics["rank_ic"]
        days = self.frame["date"].nunique()
        return markdown(
            f"**{self.source}**: {fmt_count(len(self.frame))} out-of-sample predictions over {fmt_count(days)} trading "
            f"days, {self.frame['date'].min()} to {self.frame['date'].max()}. Against the next day's move: binary "
            f"accuracy **{fmt_pct(binary['value'])}** against a base rate of {fmt_pct(binary['base_rate'])} "
            f"({fmt_count(binary['sample_size'])} predictions of instruments that moved); "
            + (
                f"mean daily rank IC of the expected excess **{ic['value']:+.3f}** over {fmt_count(ic['sample_size'])} "
                "days (0 is no skill; the model's own label and its figures: GET /api/ai/performance)."
                if ic["value"] is not None
                else "no rank IC: no window of these days was calibrated (the walk-forward claims no expected "
                "excess until it has enough out-of-sample history to calibrate on)."
            )
        )

    def accuracy_ic(self):  # noqa: ANN201
        if self.empty:
            return self._none("accuracy or IC over time")
        return accuracy_ic_chart(rolling_scores(daily_scores(self.frame), self.window), self.source, self.window)

    def calibration(self):  # noqa: ANN201
        table = calibration(self.frame) if not self.empty else pd.DataFrame()
        if table.empty:
            return self._none("calibration curve")
        return calibration_chart(table, self.source)

    def ic_by_horizon(self):  # noqa: ANN201
        if self.empty:
            return self._none("IC by horizon")
        return ic_horizon_chart(ic_by_horizon(self.frame), self.source)

    def terciles(self):  # noqa: ANN201
        if self.empty or "tercile" not in self.frame:
            return self._none("tercile returns")
        return tercile_chart(tercile_returns(self.frame), self.source)

    def tercile_table(self):  # noqa: ANN201
        from reports.figures import fmt_count, fmt_pct, styled

        if self.empty or "tercile" not in self.frame:
            return self._none("tercile returns")
        names = {f"fwd_{h}": f"{h}-day return" for h in HORIZONS}
        table = tercile_returns(self.frame).rename(columns=names)
        return styled(
            table, {n: (lambda v: fmt_pct(v, 2, signed=True)) for n in names.values()} | {"predictions": fmt_count}
        )

    def importances(self):  # noqa: ANN201
        if self.walk is None:
            return self._none("feature importance over time (no walk-forward was run for it)")
        table = importances_over_time(self.walk)
        if table.empty:
            return self._none("feature importance over time")
        return importance_chart(table, self.source)


def store_diagnostics(window: int, importance_days: int, min_train_days: int) -> Diagnostics:
    """The stored validation record with outcomes from the stored prices; importances from
    the same walk-forward rebuilt over the last `importance_days` (0: not rebuilt)."""
    prices = store_prices()
    predictions = store_predictions()
    source = f"Validation record in the {store_name()}"
    frame = with_outcomes(predictions, prices) if not predictions.empty else predictions.assign(fwd_1=[])
    walk = None
    if importance_days and not prices.empty:
        ran = walk_forward_models(prices, importance_days, min_train_days)
        walk = ran[0] if ran else None
    missing = (
        None
        if not predictions.empty
        else (
            f"the {store_name()} holds no validation record yet (bootstrapping builds it from "
            f"{min_train_days}+ trading days of history; this store has "
            f"{prices['date'].nunique() if not prices.empty else 0})"
        )
    )
    return Diagnostics(frame, source, window, walk, missing)


def nse_diagnostics(path: str, history_days: int, test_days: int, min_train_days: int, window: int) -> Diagnostics:
    """The walk-forward over the last `history_days` of the NSE files, its last
    `test_days` out of sample."""
    if not nse_available(path):
        from reports.figures import markdown_text

        return Diagnostics(
            pd.DataFrame(columns=["date", "fwd_1"]),
            "NSE daily files",
            window,
            missing=f"no NSE daily files at '{markdown_text(path or 'none')}'",
        )
    ran = walk_forward_models(nse_prices(path, history_days), test_days, min_train_days)
    if ran is None:
        return Diagnostics(
            pd.DataFrame(columns=["date", "fwd_1"]),
            "NSE daily files",
            window,
            missing=f"fewer than {min_train_days} trading days in the {history_days} read",
        )
    walk, frame = ran
    return Diagnostics(frame, "NSE daily files (walk-forward)", window, walk)


def backtest(prices: pd.DataFrame, test_days: int, min_train_days: int, cash: float) -> dict | None:
    """The AI book's backtest (portfolio/backtest.py) over the last `test_days` of `prices`
    on the product's label: the decisions filled in the next session through the cost
    model, the same decisions filled at the next session's close for free, and at their
    own close for free; each result's figures carry the statistics beside the
    equal-weighted liquid universe (`span_benchmark`: its first month's members chosen
    before the span, as the live record's are). None on too short a history."""
    from portfolio.backtest import out_of_sample_predictions, prepare_days, run_backtest, span_benchmark, summarise

    dates = sorted(prices["date"].unique()) if not prices.empty else []
    if len(dates) <= min_train_days + 5:
        return None
    first = dates[max(min_train_days, len(dates) - test_days)]
    predictions = out_of_sample_predictions(prices, min_train_days=min_train_days, first_test_date=first)
    if predictions.empty:
        return None
    benchmarks = {"equal_weight_liquid": span_benchmark(predictions, prices)}
    days = prepare_days(predictions, float(FeeSchedule().rate))
    results = {
        "next session, cost model": run_backtest(days, cash, fills="costed"),
        "next session's close, cost-free": run_backtest(days, cash, fills="gross"),
        "same close, cost-free": run_backtest(days, cash, fills="same_close"),
    }
    for result in results.values():
        result.figures = summarise(result, cash, benchmarks)
    return results


def rails_table(results: dict):  # noqa: ANN201
    """What the book and the sessions did: fills, lapsed orders, position-days trapped,
    the names held on average and the average exposure."""
    from reports.figures import fmt_count, fmt_number, fmt_pct, styled

    rows = [
        {
            "portfolio": label,
            "orders filled": r.orders,
            "orders lapsed": r.lapsed,
            "position-days trapped": r.days_trapped,
            "names held (mean)": r.figures.get("average_names"),
            "average exposure": r.figures.get("average_exposure"),
        }
        for label, r in results.items()
    ]
    frame = pd.DataFrame(rows)
    formats = {c: fmt_count for c in ("orders filled", "orders lapsed", "position-days trapped")}
    return styled(frame, {**formats, "names held (mean)": fmt_number, "average exposure": fmt_pct})


def monthly_returns_table(result):  # noqa: ANN001, ANN201 - a BacktestResult
    """The book's return per calendar month (rows: years, columns: months), compounded
    from its daily equity."""
    from reports.figures import fmt_pct, styled

    curve = result.curve
    if curve.empty:
        return styled(pd.DataFrame({"note": ["no day replayed"]}))
    equity = pd.Series(curve["equity"].to_numpy(), index=pd.to_datetime(curve["date"]))
    monthly = equity.resample("ME").last().pct_change()
    monthly.iloc[0] = equity.resample("ME").last().iloc[0] / equity.iloc[0] - 1
    table = pd.DataFrame({"year": monthly.index.year, "month": monthly.index.strftime("%b"), "r": monthly.to_numpy()})
    pivot = table.pivot_table(index="year", columns="month", values="r", aggfunc="sum", sort=False)
    return styled(pivot.reset_index(), {c: (lambda v: fmt_pct(v, 2, signed=True)) for c in pivot.columns})


def quality_instruments_table(prices: pd.DataFrame, top: int = 15):  # noqa: ANN201
    from reports.figures import fmt_count, fmt_pct, styled

    table = quality_by_instrument(prices).head(top)
    return styled(
        table,
        {
            "days": fmt_count,
            "missing_days": fmt_count,
            "longest_gap": fmt_count,
            "zero_volume_share": lambda v: fmt_pct(v, 1),
            "stale_share": lambda v: fmt_pct(v, 1),
        },
    )


def quality_summary(prices: pd.DataFrame, source: str):  # noqa: ANN201
    from reports.figures import fmt_count, fmt_pct, markdown

    if prices.empty:
        return markdown(f"**{source}** holds no end-of-day row yet: nothing to check.")
    by_day = quality_by_day(prices)
    instruments = quality_by_instrument(prices)
    gaps = calendar_gaps(prices)
    return markdown(
        f"**{source}**: {fmt_count(len(prices))} end-of-day rows of {fmt_count(prices['symbol'].nunique())} "
        f"instruments over {fmt_count(len(by_day))} market days, {prices['date'].min()} to {prices['date'].max()}.\n\n"
        f"- zero volume (no trade): **{fmt_pct((prices['volume'].fillna(0) <= 0).mean())}** of rows\n"
        f"- close unchanged from the instrument's previous row (stale): **{fmt_pct(by_day['stale_share'].mean())}** "
        "of rows on an average day\n"
        f"- market days an instrument has no row between its first and last day: "
        f"**{fmt_count(instruments['missing_days'].sum())}** in all, the longest run "
        f"{fmt_count(instruments['longest_gap'].max())} days\n"
        f"- breaks of more than 5 calendar days between market days: **{fmt_count(len(gaps))}**"
        + _copies_line(prices.attrs.get("repeated_days"))
    )


def _copies_line(copies: list[str] | None) -> str:
    """The days the reader left out as copies of the session before (ingest.importers.
    formats.repeated_days), where the source had any: how many, and the first few."""
    from reports.figures import fmt_count

    if not copies:
        return ""
    shown = ", ".join(line[:10] for line in copies[:6]) + (", ..." if len(copies) > 6 else "")
    return (
        f"\n- days left out because every traded row repeats the session before verbatim (a holiday or "
        f"an unpublished day saved as a copy): **{fmt_count(len(copies))}** ({shown})"
    )


def gaps_table(prices: pd.DataFrame):  # noqa: ANN201
    from reports.figures import fmt_count, markdown, styled

    gaps = calendar_gaps(prices) if not prices.empty else pd.DataFrame()
    if gaps.empty:
        return markdown("No break of more than 5 calendar days between consecutive market days.")
    return styled(gaps.sort_values("calendar_days", ascending=False).head(15), {"calendar_days": fmt_count})


def markdown_none(path: str):  # noqa: ANN201
    from reports.figures import markdown, markdown_text

    return markdown(
        f"No NSE daily files at '{markdown_text(path or 'none')}': this section is left out (set `nse_path`, or "
        "MARKETINTEL_SHARED_DATA, to the folder that holds them)."
    )


def too_short(source: str, min_train_days: int):  # noqa: ANN201
    from reports.figures import markdown

    return markdown(
        f"No backtest: {source} has too short a history for {min_train_days} trading days of training "
        "before the first prediction (run `make demo`, or lower `min_train_days`)."
    )


def store_currency() -> str:
    from market.settings import get_settings
    from portfolio.market import trading_currency
    from store.engine import service_engine

    with service_engine(get_settings()).connect() as conn:
        return trading_currency(conn)
