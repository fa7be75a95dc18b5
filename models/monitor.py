"""The model monitor: drift of the 14 inputs and of the Score against the validation record,
and the live record's accuracy and calibration against the validation record's band
(docs/monitoring.md). Pure figures and states here; T1's `t1_monitor` stage
(pipeline/monitor_stage.py) stores them and alerts.

Every check gets the day's own level (OK / WATCH / ALERT against its two thresholds) and a
state after persistence: ALERT only when the level has been ALERT on each of the last
`persistence` trading days (this one included), WATCH while any breach lasts, else OK.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from models.decisions import HORIZON
from models.features import FEATURE_NAMES

log = logging.getLogger(__name__)

OK, WATCH, ALERT = "OK", "WATCH", "ALERT"
SEVERITY = {OK: 0, WATCH: 1, ALERT: 2}
PSI_BINS = 10  # quantile bins of the reference (deciles); tied edges merge
PSI_FLOOR = 1e-4  # the share an empty bin counts as, so the logarithm stays finite
ECE_BINS = 10  # equal-width bins of P(up) for the expected calibration error
NOT_ENOUGH = "not enough live outcomes"


class PsiReference:
    """A reference sample binned once (PSI_BINS quantile bins, open at both ends, tied edges
    merged): the PSI of any current sample against it is one `bincount`, and, where the
    reference rows carry their dates, the PSI of each of its own windows of consecutive
    dates comes from running sums of per-date bin counts (`window_band`)."""

    def __init__(self, values: Iterable[float], dates: Iterable[Any] | None = None, bins: int = PSI_BINS) -> None:
        ref = np.asarray(list(values), dtype=float)
        keep = np.isfinite(ref)
        ref = ref[keep]
        self.size = len(ref)
        self.inner = np.unique(np.quantile(ref, np.linspace(0, 1, bins + 1)[1:-1])) if self.size else np.array([])
        index = np.searchsorted(self.inner, ref, side="right")
        self.shares = np.bincount(index, minlength=len(self.inner) + 1) / max(self.size, 1)
        self.day_counts = None
        if dates is not None:
            by_date = np.asarray(list(dates))[keep]
            days, day_index = np.unique(by_date, return_inverse=True)
            counts = np.zeros((len(days), len(self.inner) + 1))
            np.add.at(counts, (day_index, index), 1)
            self.day_counts = counts

    def psi_of_shares(self, shares: np.ndarray) -> np.ndarray:
        r, c = np.maximum(self.shares, PSI_FLOOR), np.maximum(shares, PSI_FLOOR)
        return np.sum((c - r) * np.log(c / r), axis=-1)

    def psi(self, current: Iterable[float]) -> float:
        cur = np.asarray(list(current), dtype=float)
        cur = cur[np.isfinite(cur)]
        if not self.size or not len(cur):
            return 0.0
        counts = np.bincount(np.searchsorted(self.inner, cur, side="right"), minlength=len(self.inner) + 1)
        return float(self.psi_of_shares(counts / len(cur)))

    def noise(self, rows: int | np.ndarray) -> float | np.ndarray:
        """The PSI a sample of `rows` values drawn from the reference itself shows on
        average, (bins - 1) / rows (the chi-square approximation of the PSI): what the
        sample's size alone adds, so a thin day's few rows are not read as drift."""
        return (len(self.shares) - 1) / np.maximum(rows, 1)

    def excess(self, current: Iterable[float]) -> tuple[float, int]:
        """The PSI of `current` less its noise for that many rows (floored at 0), and the rows."""
        cur = np.asarray(list(current), dtype=float)
        cur = cur[np.isfinite(cur)]
        return max(0.0, self.psi(cur) - float(self.noise(len(cur)))) if len(cur) else 0.0, len(cur)

    def window_band(self, window_days: int) -> np.ndarray:
        """The PSI less its noise (`excess`) of every window of `window_days` consecutive
        reference dates (step one day) against the whole reference: how far the input
        drifts on its own."""
        if self.day_counts is None or len(self.day_counts) < window_days or not self.size:
            return np.array([])
        running = np.vstack([np.zeros(self.day_counts.shape[1]), np.cumsum(self.day_counts, axis=0)])
        windows = running[window_days:] - running[:-window_days]
        totals = windows.sum(axis=1, keepdims=True)
        windows, totals = windows[totals[:, 0] > 0], totals[totals[:, 0] > 0]
        return np.maximum(0.0, self.psi_of_shares(windows / totals) - self.noise(totals[:, 0]))


def psi(reference: Iterable[float], current: Iterable[float], bins: int = PSI_BINS) -> float:
    """Population stability index of `current` against `reference`: bins at the reference's
    quantiles (open at both ends), sum over bins of (c - r) * ln(c / r) of the two shares,
    an empty bin counted as PSI_FLOOR."""
    return PsiReference(reference, bins=bins).psi(current)


def tail_share(reference: Iterable[float], value: float) -> float:
    """Two-sided empirical tail share of `value` among `reference` (1: at the median, near 0:
    beyond anything the reference saw)."""
    ref = np.asarray(list(reference), dtype=float)
    ref = ref[np.isfinite(ref)]
    if not len(ref) or not np.isfinite(value):
        return 1.0
    below, above = np.mean(ref <= value), np.mean(ref >= value)
    return float(min(1.0, 2 * min(below, above)))


def brier(p_up: np.ndarray, up: np.ndarray) -> float:
    return float(np.mean((p_up - up) ** 2))


def ece(p_up: np.ndarray, up: np.ndarray, bins: int = ECE_BINS) -> float:
    """Expected calibration error: over equal-width bins of P(up), the row-weighted mean of
    |mean P(up) - up rate|."""
    index = np.minimum((p_up * bins).astype(int), bins - 1)
    total = 0.0
    for b in np.unique(index):
        mask = index == b
        total += mask.sum() * abs(p_up[mask].mean() - up[mask].mean())
    return float(total / len(p_up))


def accuracy(p_up: np.ndarray, up: np.ndarray) -> float:
    return float(np.mean((p_up >= 0.5) == (up == 1)))


@dataclass(frozen=True)
class Thresholds:
    psi_watch: float = 0.1
    psi_alert: float = 0.25
    tail_watch: float = 0.05
    tail_alert: float = 0.01
    window_days: int = 20
    short_window_days: int = 5
    alert_margin: float = 1.75
    live_outcomes: int = 300
    persistence: int = 3

    @property
    def windows(self) -> tuple[int, ...]:
        """The PSI windows of a per-name input, shortest first: the short one sees a sudden
        change within days, the long one a slow drift the short one's noise hides."""
        return tuple(sorted({self.short_window_days, self.window_days}))

    @classmethod
    def of(cls, settings: Any) -> Thresholds:
        return cls(
            settings.monitor_psi_watch,
            settings.monitor_psi_alert,
            settings.monitor_tail_watch,
            settings.monitor_tail_alert,
            settings.monitor_window_days,
            settings.monitor_short_window_days,
            settings.monitor_alert_margin,
            settings.monitor_live_outcomes,
            settings.monitor_persistence_days,
        )


@dataclass
class Check:
    check_name: str
    kind: str  # input_drift, score_drift, live_accuracy, live_brier, live_calibration
    level: str
    figure: float | None
    watch_threshold: float | None
    alert_threshold: float | None
    figures: dict[str, Any] = field(default_factory=dict)
    state: str = OK
    since: date | None = None

    @property
    def drift(self) -> bool:
        return self.kind in ("input_drift", "score_drift")


def level_above(figure: float, watch: float, alert: float) -> str:
    """Higher is worse."""
    return ALERT if figure > alert else WATCH if figure > watch else OK


def level_below(figure: float, watch: float, alert: float) -> str:
    """Lower is worse."""
    return ALERT if figure < alert else WATCH if figure < watch else OK


def market_wide(reference: pd.DataFrame, names: list[str]) -> list[str]:
    """The inputs with one distinct value per day (the same for every name), in the reference."""
    wide = []
    for name in names:
        per_day = reference.dropna(subset=[name]).groupby("date")[name].nunique()
        if len(per_day) and (per_day <= 1).all():
            wide.append(name)
    return wide


def own_band(reference: pd.DataFrame, column: str, window_days: int) -> np.ndarray:
    """The PSI of each of the reference's own windows of `window_days` consecutive trading
    days (every day) against the whole reference: how far the input drifts on its own while
    the model was validated."""
    return PsiReference(reference[column], reference["date"]).window_band(window_days)


def psi_thresholds(band: np.ndarray, t: Thresholds) -> tuple[float, float]:
    """WATCH and ALERT at the usual PSI thresholds, raised where the input moves that much
    alone in the validation record's own windows: WATCH to their 90th percentile, ALERT to
    `t.alert_margin` times their largest. The margin because the record's largest window
    is one draw of a year's extreme: a new year of the same market passes it about half
    the time (docs/monitoring.md)."""
    if not len(band):
        return t.psi_watch, t.psi_alert
    return (max(t.psi_watch, float(np.quantile(band, 0.9))), max(t.psi_alert, t.alert_margin * float(np.max(band))))


# The share of the day's priced names that traded, against the reference's daily shares:
# the thin-trading rule reads only traded rows, so a change of the market's activity (or
# a volume feed that breaks) is a check of its own rather than a shift hidden in the others.
ACTIVITY = "activity:traded_share"
# ... and only a move of at least this much from the reference's median share counts, so a
# market where every name always traded is not ALERT because one name was suspended.
ACTIVITY_MIN_MOVE = 0.1
STUCK_SHARE = 0.5  # a feed is stuck when one value covers more than this share of the day's traded names


def top_share(values: np.ndarray) -> float:
    """The share of the most common value (rounded to 8 decimals) among `values`."""
    if not len(values):
        return 0.0
    _, counts = np.unique(np.round(values, 8), return_counts=True)
    return float(counts.max() / len(values))


def reference_top_share(reference: pd.DataFrame, name: str) -> float:
    """The largest share one value (rounded to 8 decimals) covered on any day of the reference."""
    known = reference[["date", name]].dropna()
    if not len(known):
        return 1.0
    known = known.assign(value=known[name].round(8))
    most = known.groupby(["date", "value"]).size().groupby(level="date").max()
    return float((most / known.groupby("date").size()).max())


def stuck_level(most: float, today: np.ndarray) -> tuple[str, float]:
    """A broken feed that gives one value for every name: ALERT when the day's most common
    value covers more than STUCK_SHARE of the traded names (`today`: their values) and more
    than on any day of the reference (`most`). Returns the level and the day's share."""
    share = top_share(today)
    return (ALERT if share > STUCK_SHARE and share > most else OK), share


def _reference_summary(reference: pd.DataFrame, t: Thresholds) -> dict[str, Any]:
    """What the checks need of the reference (the same for every monitored day): per
    market-wide input its daily values, per other input its binned values over the traded
    names, each window's thresholds and the largest one-value share of a day."""
    wide = set(market_wide(reference, FEATURE_NAMES))
    ref = reference[reference["traded"]]
    out: dict[str, Any] = {ACTIVITY: reference.groupby("date")["traded"].mean().to_numpy(float)}
    for name in FEATURE_NAMES:
        if name in wide:
            out[name] = ("wide", reference.dropna(subset=[name]).groupby("date")[name].first().to_numpy(float))
        else:
            known = ref.dropna(subset=[name])
            binned = PsiReference(known[name], known["date"])
            out[name] = (
                "psi",
                binned,
                {w: psi_thresholds(binned.window_band(w), t) for w in t.windows},
                reference_top_share(known, name),
                float(known[name].mean()) if len(known) else None,
            )
    return out


def input_checks(
    reference: pd.DataFrame, current: pd.DataFrame, day: date, t: Thresholds, cache: dict[str, Any] | None = None
) -> list[Check]:
    """Per-input drift. `reference` and `current`: symbol, date, traded (bool) and the 14
    inputs, `current` covering at least the longest of `t.windows` up to `day`. Names
    without trades on a day are left out of both. A per-name input's PSI is taken over the
    last days of each window (`t.windows`) against thresholds from the reference's own
    windows of that length, and the worse level counts (the figure shown is that window's,
    the one nearer its ALERT threshold between equals). A market-wide input is compared as a daily series: the
    day's value against the reference's daily values, and so is the share of names that
    traded (ACTIVITY). `cache` keeps what depends on the
    reference only (a replay over many days passes one)."""
    cache = {} if cache is None else cache
    if "reference" not in cache:
        cache["reference"] = _reference_summary(reference, t)
    summary = cache["reference"]
    dates = current["date"].to_numpy()
    days = sorted(d for d in set(dates) if d <= day)
    traded = current["traded"].to_numpy(bool)
    on_day = dates == day
    in_window = {w: traded & np.isin(dates, days[-w:]) for w in t.windows}
    daily = summary[ACTIVITY]
    value = float(traded[on_day].mean()) if on_day.any() else float("nan")
    share = tail_share(daily, value)
    moved = len(daily) and np.isfinite(value) and abs(value - float(np.median(daily))) >= ACTIVITY_MIN_MOVE
    checks = [
        Check(
            ACTIVITY,
            "input_drift",
            level_below(share, t.tail_watch, t.tail_alert) if moved else OK,
            round(share, 6),
            t.tail_watch,
            t.tail_alert,
            {
                "market_wide": True,
                "value": None if np.isnan(value) else round(value, 6),
                "reference_days": int(len(daily)),
                "reference_range": [round(float(daily.min()), 6), round(float(daily.max()), 6)] if len(daily) else None,
            },
        )
    ]
    for name in FEATURE_NAMES:
        values = current[name].to_numpy(float)
        finite = np.isfinite(values)
        if summary[name][0] == "wide":
            daily = summary[name][1]
            today = values[on_day & finite]
            value = float(today[0]) if len(today) else float("nan")
            share = tail_share(daily, value)
            checks.append(
                Check(
                    f"input:{name}",
                    "input_drift",
                    level_below(share, t.tail_watch, t.tail_alert),
                    round(share, 6),
                    t.tail_watch,
                    t.tail_alert,
                    {
                        "market_wide": True,
                        "value": None if np.isnan(value) else round(value, 6),
                        "reference_days": int(len(daily)),
                        "reference_range": [round(float(daily.min()), 6), round(float(daily.max()), 6)]
                        if len(daily)
                        else None,
                    },
                )
            )
            continue
        _, reference_psi, bands, most, reference_mean = summary[name]
        windows = {}
        for w in t.windows:
            figure, rows = reference_psi.excess(values[in_window[w] & finite])
            watch, alert = bands[w]
            windows[w] = (figure, watch, alert, level_above(figure, watch, alert), rows)
        deciding = max(windows, key=lambda w: (SEVERITY[windows[w][3]], windows[w][0] / windows[w][2], w))
        figure, watch, alert, _, _ = windows[deciding]
        stuck, share = stuck_level(most, values[on_day & traded & finite])
        level = ALERT if stuck == ALERT else max((w[3] for w in windows.values()), key=SEVERITY.__getitem__)
        c = values[in_window[t.window_days] & finite]
        checks.append(
            Check(
                f"input:{name}",
                "input_drift",
                level,
                round(figure, 6),
                round(watch, 6),
                round(alert, 6),
                {
                    "market_wide": False,
                    "window_days": deciding,
                    "windows": {
                        str(w): {
                            "psi": round(f, 6),
                            "watch": round(wa, 6),
                            "alert": round(al, 6),
                            "level": lv,
                            "rows": n,
                        }
                        for w, (f, wa, al, lv, n) in windows.items()
                    },
                    "top_value_share": round(share, 6),
                    "reference_top_value_share": round(most, 6),
                    "stuck": stuck == ALERT,
                    "reference_rows": int(reference_psi.size),
                    "current_rows": int(len(c)),
                    "current_days": int(len(set(dates[traded]))),
                    "current_mean": round(float(c.mean()), 6) if len(c) else None,
                    "reference_mean": None if reference_mean is None else round(reference_mean, 6),
                },
            )
        )
    return checks


def score_check(reference: pd.DataFrame, current: np.ndarray, days: int, t: Thresholds) -> Check:
    """`reference`: date, score of the validation record's served predictions."""
    r = reference["score"].to_numpy(float)
    figure = PsiReference(r).excess(current)[0] if len(r) else 0.0
    watch, alert = psi_thresholds(own_band(reference, "score", t.window_days), t)
    return Check(
        "score",
        "score_drift",
        level_above(figure, watch, alert),
        round(figure, 6),
        round(watch, 6),
        round(alert, 6),
        {"reference_rows": int(len(r)), "current_rows": int(len(current)), "current_days": days},
    )


METRICS = {  # name: (function, higher is worse)
    "live_accuracy": (accuracy, False),
    "live_brier": (brier, True),
    "live_calibration": (ece, True),
}


def live_checks(reference: pd.DataFrame, live: pd.DataFrame, t: Thresholds) -> list[Check]:
    """The live record's latest `t.live_outcomes` outcomes (p_up, up, moved rows in date
    order) against the band of the same metric over the validation record's consecutive
    chunks of as many rows: WATCH beyond the band's 10th/90th percentile on the worse side,
    ALERT beyond its worst chunk."""
    n = t.live_outcomes
    chunks = [reference.iloc[i : i + n] for i in range(0, len(reference) - n + 1, n)]
    checks = []
    for name, (metric, worse_high) in METRICS.items():
        if len(live) < n or not chunks:
            note = NOT_ENOUGH if len(live) < n else "no validation record to compare with"
            checks.append(
                Check(name, name, OK, None, None, None, {"note": note, "live_outcomes": int(len(live)), "needed": n})
            )
            continue
        tail = live.iloc[-n:]
        figure = metric(tail["p_up"].to_numpy(float), tail["up"].to_numpy(float))
        band = np.array([metric(c["p_up"].to_numpy(float), c["up"].to_numpy(float)) for c in chunks])
        if worse_high:
            watch, alert = float(np.quantile(band, 0.9)), float(band.max())
            level = level_above(figure, watch, alert)
        else:
            watch, alert = float(np.quantile(band, 0.1)), float(band.min())
            level = level_below(figure, watch, alert)
        checks.append(
            Check(
                name,
                name,
                level,
                round(figure, 6),
                round(watch, 6),
                round(alert, 6),
                {
                    "live_outcomes": n,
                    "validation_chunks": len(chunks),
                    "validation_band": [round(float(band.min()), 6), round(float(band.max()), 6)],
                    "validation_median": round(float(np.median(band)), 6),
                },
            )
        )
    return checks


def persist(
    checks: list[Check], history: dict[str, list[tuple[date, str, date | None]]], t: Thresholds, day: date
) -> list[Check]:
    """Set each check's state and since from its level today and its stored levels of the
    previous trading days (`history[check]`: (day, level, since), latest first, consecutive
    trading days only)."""
    for check in checks:
        levels = [check.level] + [level for _, level, _ in history.get(check.check_name, [])]
        if check.level == OK:
            check.state, check.since = OK, None
            continue
        breach = 0
        for level in levels:
            if level == OK:
                break
            breach += 1
        prior = history.get(check.check_name, [])
        check.since = prior[breach - 2][0] if breach > 1 else day
        alerts = 0
        for level in levels:
            if level != ALERT:
                break
            alerts += 1
        check.state = ALERT if alerts >= t.persistence else WATCH
    return checks


def overall(states: Iterable[str]) -> str:
    states = list(states)
    return ALERT if ALERT in states else WATCH if WATCH in states else OK


# --- reading the store -------------------------------------------------------------------

LIVE_LOOKBACK_DAYS = 60  # priced days of live predictions the live checks read their latest outcomes from


def day_checks(
    conn: Any, day: date, t: Thresholds, horizon: int = HORIZON, cache_dir: Path | None = None
) -> tuple[list[Check], dict[str, Any]]:
    """Every check of `day` (levels only; `persist` sets the states) and what they read.

    The reference is the validation record: its days' inputs as the record computed them
    (`history_panel`), its served Scores and its outcomes, kept in `cache_dir` under the
    record's version (`reference_version`) so a day reads them without rebuilding the
    history's panel. The current window is the last `max(t.windows)` priced days up to
    `day`: each day's inputs as stored by `t1_features` (what the model got), else, for a
    day T1 did not score (before the first live day), as the validation record computed
    them; each day's Scores as served (the live record's, else the validation record's).
    The live checks read the latest outcomes of the live predictions of the last
    LIVE_LOOKBACK_DAYS priced days, or of the whole live record where those hold fewer
    than `t.live_outcomes`."""
    from sqlalchemy import select

    from models.features import FEATURE_SET
    from models.scoring import price_panel, served_predictions, stored_scores
    from store import tables
    from store.history import current_rows

    e = tables.eod_prices.c
    priced = [
        d
        for (d,) in conn.execute(
            select(e.trading_date)
            .where(e.trading_date <= day)
            .distinct()
            .order_by(e.trading_date.desc())
            .limit(max(max(t.windows), LIVE_LOOKBACK_DAYS))
        )
    ]
    priced.reverse()
    window = priced[-max(t.windows) :]
    context: dict[str, Any] = {
        "window": [window[0].isoformat(), window[-1].isoformat()] if window else None,
        "window_days": len(window),
    }
    reference = reference_data(conn, horizon, cache_dir)
    prices = (
        price_panel(conn, day, since=priced[0])
        if priced
        else pd.DataFrame(columns=["symbol", "date", "close", "volume"])
    )
    prices = prices.assign(traded=prices["volume"].fillna(0) > 0)
    checks: list[Check] = []
    if reference is not None and window:
        context["reference"] = [reference["first"].isoformat(), reference["last"].isoformat()]
        f = tables.features.c
        stored = current_rows(
            conn,
            tables.features,
            where=[f.trading_date >= window[0], f.trading_date <= day, f.feature_set == FEATURE_SET],
        )
        live = pd.DataFrame(
            [
                {
                    "symbol": r["symbol"],
                    "date": r["trading_date"],
                    **{n: r["feature_values"].get(n) for n in FEATURE_NAMES},
                }
                for r in stored
            ],
            columns=["symbol", "date", *FEATURE_NAMES],
        )
        live[FEATURE_NAMES] = live[FEATURE_NAMES].astype(float)
        live = live.merge(prices[["symbol", "date", "traded"]], on=["symbol", "date"], how="left")
        live["traded"] = live["traded"].fillna(False).astype(bool)
        live_days = set(live["date"])
        inputs = reference["inputs"]
        missing = [d for d in window if d not in live_days and not (reference["first"] <= d <= reference["last"])]
        if missing:  # a window day neither scored live nor in the record: its inputs as the record computes them
            from models.validation import history_panel

            panel = history_panel(conn, day, horizon)
            inputs = panel[panel["date"].isin(window)].assign(traded=lambda x: x["volume"].fillna(0) > 0)
        earlier = inputs[inputs["date"].isin([d for d in window if d not in live_days])]
        current = pd.concat([earlier[["symbol", "date", "traded", *FEATURE_NAMES]], live], ignore_index=True)
        context["live_input_days"] = len(live_days)
        known = reference["inputs"][reference["inputs"]["date"] <= day]  # a re-run of a past day reads no later day
        checks += input_checks(known, current, day, t)
        scores = stored_scores(conn, window[0], day + timedelta(days=1), horizon)
        checks.append(
            score_check(
                reference["scores"][reference["scores"]["date"] <= day],
                scores["score"].dropna().to_numpy(float),
                int(scores["date"].nunique()),
                t,
            )
        )
        reference_outcomes = reference["outcomes"][reference["outcomes"]["date"] < day]
    else:
        context["reference"] = None
        for name in [ACTIVITY, *(f"input:{n}" for n in FEATURE_NAMES), "score"]:
            checks.append(
                Check(
                    name,
                    "score_drift" if name == "score" else "input_drift",
                    OK,
                    None,
                    None,
                    None,
                    {"note": "no validation record to compare with"},
                )
            )
        reference_outcomes = _outcomes({}, prices, horizon)

    # the live record's outcomes against the validation record's
    p = tables.predictions.c
    where = [p.trading_date < day, p.horizon_days == horizon]
    live = _outcomes(
        served_predictions(
            current_rows(conn, tables.predictions, where=where + ([p.trading_date >= priced[0]] if priced else []))
        ),
        prices,
        horizon,
    )
    if (
        len(live) < t.live_outcomes
        and priced
        and conn.execute(select(p.id).where(*where, p.trading_date < priced[0]).limit(1)).first()
    ):
        # a thin market: too few outcomes in the lookback, so the whole live record
        live = _outcomes(
            served_predictions(current_rows(conn, tables.predictions, where=where)), price_panel(conn, day), horizon
        )
    checks += live_checks(reference_outcomes, live, t)
    return checks, context


def reference_version(conn: Any, horizon: int) -> tuple | None:
    """What the validation record's reference is made of: its rows (count, newest id, first
    and last day), the newest stored price up to the day its last outcome closes
    (`outcomes_end`) and the newest split and sentiment row up to its last day (a
    correction there changes the inputs it computed). None without a record."""
    from sqlalchemy import func, select

    from models.features import FEATURE_SET
    from store import tables

    v = tables.validation_predictions.c
    count, newest, first, last = conn.execute(
        select(func.count(), func.max(v.id), func.min(v.trading_date), func.max(v.trading_date)).where(
            v.horizon_days == horizon
        )
    ).one()
    if not count:
        return None
    e, a, m = tables.eod_prices.c, tables.corporate_actions.c, tables.sentiment_composites.c
    prices = conn.execute(select(func.max(e.id)).where(e.trading_date <= outcomes_end(conn, last, horizon))).scalar()
    actions = conn.execute(select(func.max(a.id)).where(a.action_date <= last)).scalar()
    sentiment = conn.execute(select(func.max(m.id)).where(m.trading_date <= last)).scalar()
    return (
        REFERENCE_FORMAT,
        FEATURE_SET,
        horizon,
        count,
        newest,
        first.isoformat(),
        last.isoformat(),
        prices,
        actions,
        sentiment,
    )


REFERENCE_FORMAT = 3  # bumped when what `reference_data` keeps changes


def outcomes_end(conn: Any, last: date, horizon: int) -> date:
    """The priced day `horizon` + 1 days after `last` (what the record's last outcome, the
    held excess from the next close over `horizon` sessions, closes on), else `last` while
    that day is not priced yet."""
    from sqlalchemy import select

    from store import tables

    e = tables.eod_prices.c
    later = [
        d
        for (d,) in conn.execute(
            select(e.trading_date).where(e.trading_date > last).distinct().order_by(e.trading_date).limit(horizon + 1)
        )
    ]
    return later[-1] if len(later) == horizon + 1 else last


def cache_prefix(conn: Any, horizon: int) -> str:
    """The reference files of one store and horizon share this name prefix (the store's
    URL without its password, hashed), so stores that share a models folder keep theirs."""
    import hashlib

    url = conn.engine.url.render_as_string(hide_password=True)
    return f"monitor-reference-{hashlib.sha256(url.encode()).hexdigest()[:12]}-h{horizon}-"


def reference_data(conn: Any, horizon: int, cache_dir: Path | None) -> dict[str, Any] | None:
    """The validation record's inputs (symbol, date, traded, the 14), served Scores (date,
    score), outcomes (`_outcomes`) and first and last day; read from `cache_dir` when a
    file of the same `reference_version` is there, else computed (the history's panel up
    to the record's last day) and written there, replacing older versions."""
    import hashlib
    import os
    import pickle
    import tempfile

    from models.scoring import price_panel, served_predictions
    from models.validation import history_panel
    from store import tables
    from store.history import current_rows

    version = reference_version(conn, horizon)
    if version is None:
        return None
    prefix = cache_prefix(conn, horizon)
    name = f"{prefix}{hashlib.sha256(repr(version).encode()).hexdigest()[:16]}.pkl"
    if cache_dir is not None and (cache_dir / name).is_file():
        try:
            with open(cache_dir / name, "rb") as handle:
                return pickle.load(handle)
        except Exception:  # noqa: BLE001 - a truncated or outdated file: built again below
            log.warning("model monitor: the cached reference %s could not be read; building it again", name)
    v = tables.validation_predictions.c
    served = served_predictions(current_rows(conn, tables.validation_predictions, where=[v.horizon_days == horizon]))
    first, last = min(served), max(served)
    panel = history_panel(conn, last, horizon)
    panel = panel.assign(traded=panel["volume"].fillna(0) > 0)
    closes = price_panel(conn, outcomes_end(conn, last, horizon), since=first)
    data = {
        "first": first,
        "last": last,
        "inputs": panel[(panel["date"] >= first)][["symbol", "date", "traded", *FEATURE_NAMES]].reset_index(drop=True),
        "scores": pd.DataFrame(
            [(d, r["score"]) for d, by in served.items() for r in by.values() if r["score"] is not None],
            columns=["date", "score"],
        ),
        "outcomes": _outcomes(served, closes, horizon),
    }
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=cache_dir, prefix=f".{name}.")
        with os.fdopen(handle, "wb") as out:
            pickle.dump(data, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, cache_dir / name)
        for old in cache_dir.glob(f"{prefix}*.pkl"):
            if old.name != name:
                old.unlink(missing_ok=True)
    return data


def _outcomes(served: dict[date, dict[str, dict[str, Any]]], prices: pd.DataFrame, horizon: int) -> pd.DataFrame:
    """date, p_up, up of the served predictions whose label (models/dataset.with_labels:
    the held excess over `horizon` sessions from the next close) is known and not zero, in
    date order. `prices`: every instrument's bars (the label's universe is the market's)."""
    from market.labels import with_labels

    rows = [(d, s, r["p_up"]) for d, by in served.items() for s, r in by.items() if r["p_up"] is not None]
    if not rows:
        return pd.DataFrame(columns=["date", "symbol", "p_up", "up"])
    frame = with_labels(prices, horizon)[["symbol", "date", "forward_return"]]
    joined = pd.DataFrame(rows, columns=["date", "symbol", "p_up"]).merge(frame, on=["symbol", "date"])
    joined = joined[joined["forward_return"].notna() & (joined["forward_return"] != 0)]
    joined["up"] = (joined["forward_return"] > 0).astype(float)
    return joined.sort_values(["date", "symbol"], kind="stable").reset_index(drop=True)[
        ["date", "symbol", "p_up", "up"]
    ]
