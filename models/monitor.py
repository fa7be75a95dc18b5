"""The model monitor: drift of the 14 inputs and of the Score against the validation record,
and the live record's accuracy and calibration against the validation record's band
(docs/monitoring.md). Pure figures and states here; T1's `t1_monitor` stage
(pipeline/monitor_stage.py) stores them and alerts.

Every check gets the day's own level (OK / WATCH / ALERT against its two thresholds) and a
state after persistence: ALERT only when the level has been ALERT on each of the last
`persistence` trading days (this one included), WATCH while any breach lasts, else OK.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Iterable

import numpy as np
import pandas as pd

from models.features import FEATURE_NAMES

OK, WATCH, ALERT = "OK", "WATCH", "ALERT"
PSI_BINS = 10  # quantile bins of the reference (deciles); tied edges merge
PSI_FLOOR = 1e-4  # the share an empty bin counts as, so the logarithm stays finite
ECE_BINS = 10  # equal-width bins of P(up) for the expected calibration error
NOT_ENOUGH = "not enough live outcomes"


def psi(reference: Iterable[float], current: Iterable[float], bins: int = PSI_BINS) -> float:
    """Population stability index of `current` against `reference`: bins at the reference's
    quantiles (open at both ends), sum over bins of (c - r) * ln(c / r) of the two shares,
    an empty bin counted as PSI_FLOOR."""
    ref = np.asarray(list(reference), dtype=float)
    cur = np.asarray(list(current), dtype=float)
    ref, cur = ref[np.isfinite(ref)], cur[np.isfinite(cur)]
    if not len(ref) or not len(cur):
        return 0.0
    inner = np.unique(np.quantile(ref, np.linspace(0, 1, bins + 1)[1:-1]))
    r = np.bincount(np.searchsorted(inner, ref, side="right"), minlength=len(inner) + 1) / len(ref)
    c = np.bincount(np.searchsorted(inner, cur, side="right"), minlength=len(inner) + 1) / len(cur)
    r, c = np.maximum(r, PSI_FLOOR), np.maximum(c, PSI_FLOOR)
    return float(np.sum((c - r) * np.log(c / r)))


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
    live_outcomes: int = 300
    persistence: int = 3

    @classmethod
    def of(cls, settings: Any) -> "Thresholds":
        return cls(settings.monitor_psi_watch, settings.monitor_psi_alert, settings.monitor_tail_watch,
                   settings.monitor_tail_alert, settings.monitor_window_days, settings.monitor_live_outcomes,
                   settings.monitor_persistence_days)


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


WINDOW_STEP = 5  # trading days between the validation record's own windows


def own_band(reference: pd.DataFrame, column: str, window_days: int) -> list[float]:
    """The PSI of each of the reference's own windows of `window_days` days (every
    WINDOW_STEP days) against the whole reference: how far the input drifts on its own
    while the model was validated."""
    dates = sorted(reference["date"].unique())
    values = reference[column].to_numpy(float)
    by_date = reference["date"].to_numpy()
    out = []
    for end in range(window_days, len(dates) + 1, WINDOW_STEP):
        inside = np.isin(by_date, dates[end - window_days:end])
        out.append(psi(values, values[inside]))
    return out


def psi_thresholds(band: list[float], t: Thresholds) -> tuple[float, float]:
    """WATCH and ALERT at the usual PSI thresholds, raised to the 90th percentile and the
    largest of the validation record's own windows where the input moves that much alone."""
    if not band:
        return t.psi_watch, t.psi_alert
    return max(t.psi_watch, float(np.quantile(band, 0.9))), max(t.psi_alert, float(max(band)))


STUCK_SHARE = 0.5  # a feed is stuck when one value covers more than this share of the day's traded names


def top_share(values: np.ndarray) -> float:
    """The share of the most common value (rounded to 8 decimals) among `values`."""
    if not len(values):
        return 0.0
    _, counts = np.unique(np.round(values, 8), return_counts=True)
    return float(counts.max() / len(values))


def reference_top_share(reference: pd.DataFrame, name: str) -> float:
    """The largest share one value covered on any day of the reference."""
    daily = reference.groupby("date")[name].apply(lambda v: top_share(v.dropna().to_numpy(float)))
    return float(daily.max()) if len(daily) else 1.0


def stuck_level(most: float, current: pd.DataFrame, name: str, day: date) -> tuple[str, float]:
    """A broken feed that gives one value for every name: ALERT when the day's most common
    value covers more than STUCK_SHARE of the traded names and more than on any day of the
    reference (`most`). Returns the level and the day's share."""
    share = top_share(current[current["date"] == day][name].dropna().to_numpy(float))
    return (ALERT if share > STUCK_SHARE and share > most else OK), share


def input_checks(reference: pd.DataFrame, current: pd.DataFrame, day: date, t: Thresholds,
                 cache: dict[str, Any] | None = None) -> list[Check]:
    """Per-input drift. `reference` and `current`: symbol, date, traded (bool) and the 14
    inputs. Names without trades on a day are left out of both; a market-wide input is
    compared as a daily series: the day's value against the reference's daily values.
    `cache` keeps what depends on the reference only (a replay over many days passes one)."""
    cache = {} if cache is None else cache
    ref = reference[reference["traded"]]
    cur = current[current["traded"]]
    if "wide" not in cache:
        cache["wide"] = set(market_wide(reference, FEATURE_NAMES))
    wide = cache["wide"]
    checks = []
    for name in FEATURE_NAMES:
        if name in wide:
            daily = reference.dropna(subset=[name]).groupby("date")[name].first()
            today = current[current["date"] == day][name].dropna()
            value = float(today.iloc[0]) if len(today) else float("nan")
            share = tail_share(daily.to_numpy(float), value)
            checks.append(Check(f"input:{name}", "input_drift", level_below(share, t.tail_watch, t.tail_alert),
                                round(share, 6), t.tail_watch, t.tail_alert,
                                {"market_wide": True, "value": None if np.isnan(value) else round(value, 6),
                                 "reference_days": int(len(daily)),
                                 "reference_range": [round(float(daily.min()), 6), round(float(daily.max()), 6)]
                                 if len(daily) else None}))
        else:
            known = ref.dropna(subset=[name])
            r, c = known[name].to_numpy(float), cur[name].dropna().to_numpy(float)
            figure = psi(r, c) if len(r) and len(c) else 0.0
            if name not in cache:
                cache[name] = (*psi_thresholds(own_band(known, name, t.window_days), t), reference_top_share(known, name))
            watch, alert, most = cache[name]
            stuck, share = stuck_level(most, cur, name, day)
            level = ALERT if stuck == ALERT else level_above(figure, watch, alert)
            checks.append(Check(f"input:{name}", "input_drift", level,
                                round(figure, 6), round(watch, 6), round(alert, 6),
                                {"market_wide": False, "top_value_share": round(share, 6),
                                 "reference_top_value_share": round(most, 6), "stuck": stuck == ALERT, "reference_rows": int(len(r)), "current_rows": int(len(c)),
                                 "current_days": int(cur["date"].nunique()),
                                 "current_mean": round(float(c.mean()), 6) if len(c) else None,
                                 "reference_mean": round(float(r.mean()), 6) if len(r) else None}))
    return checks


def score_check(reference: pd.DataFrame, current: np.ndarray, days: int, t: Thresholds) -> Check:
    """`reference`: date, score of the validation record's served predictions."""
    r = reference["score"].to_numpy(float)
    figure = psi(r, current) if len(r) and len(current) else 0.0
    watch, alert = psi_thresholds(own_band(reference, "score", t.window_days), t)
    return Check("score", "score_drift", level_above(figure, watch, alert), round(figure, 6), round(watch, 6),
                 round(alert, 6), {"reference_rows": int(len(r)), "current_rows": int(len(current)),
                                   "current_days": days})


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
    chunks = [reference.iloc[i:i + n] for i in range(0, len(reference) - n + 1, n)]
    checks = []
    for name, (metric, worse_high) in METRICS.items():
        if len(live) < n or not chunks:
            note = NOT_ENOUGH if len(live) < n else "no validation record to compare with"
            checks.append(Check(name, name, OK, None, None, None,
                                {"note": note, "live_outcomes": int(len(live)), "needed": n}))
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
        checks.append(Check(name, name, level, round(figure, 6), round(watch, 6), round(alert, 6),
                            {"live_outcomes": n, "validation_chunks": len(chunks),
                             "validation_band": [round(float(band.min()), 6), round(float(band.max()), 6)],
                             "validation_median": round(float(np.median(band)), 6)}))
    return checks


def persist(checks: list[Check], history: dict[str, list[tuple[date, str, date | None]]], t: Thresholds,
            day: date) -> list[Check]:
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

def day_checks(conn: Any, day: date, t: Thresholds, horizon: int = 1) -> tuple[list[Check], dict[str, Any]]:
    """Every check of `day` (levels only; `persist` sets the states) and what they read.

    The current window is the last `t.window_days` priced days up to `day`: each day's
    inputs as stored by `t1_features` (what the model got), else, for a day T1 did not
    score (before the first live day), as the validation record computed them; each day's
    Scores as served (the live record's, else the validation record's)."""
    from store import tables
    from store.history import current_rows
    from models.features import FEATURE_SET
    from models.scoring import served_predictions, stored_scores
    from models.validation import history_panel

    v = tables.validation_predictions.c
    reference_rows = current_rows(conn, tables.validation_predictions, where=[v.horizon_days == horizon])
    panel = history_panel(conn, day, horizon)
    prices = panel[["symbol", "date", "close", "volume"]]
    dates = sorted(d for d in panel["date"].unique() if d <= day)
    window = dates[-t.window_days:]
    context: dict[str, Any] = {"window": [window[0].isoformat(), window[-1].isoformat()] if window else None,
                               "window_days": len(window)}
    checks: list[Check] = []
    panel = panel.assign(traded=panel["volume"].fillna(0) > 0)

    if reference_rows and window:
        first = min(r["trading_date"] for r in reference_rows)
        last = max(r["trading_date"] for r in reference_rows)
        context["reference"] = [first.isoformat(), last.isoformat()]
        reference = panel[(panel["date"] >= first) & (panel["date"] <= last)][["symbol", "date", "traded", *FEATURE_NAMES]]
        current = panel[panel["date"].isin(window)][["symbol", "date", "traded", *FEATURE_NAMES]].copy()
        f = tables.features.c
        stored = current_rows(conn, tables.features, where=[f.trading_date >= window[0], f.trading_date <= day,
                                                            f.feature_set == FEATURE_SET])
        if stored:
            live = pd.DataFrame([{"symbol": r["symbol"], "date": r["trading_date"],
                                  **{n: r["feature_values"].get(n) for n in FEATURE_NAMES}} for r in stored])
            live[FEATURE_NAMES] = live[FEATURE_NAMES].astype(float)
            live = live.merge(panel[["symbol", "date", "traded"]], on=["symbol", "date"], how="left")
            live["traded"] = live["traded"].fillna(False).astype(bool)
            current = pd.concat([current[~current["date"].isin(set(live["date"]))], live], ignore_index=True)
        context["live_input_days"] = int(len({r["trading_date"] for r in stored}))
        checks += input_checks(reference, current, day, t)
        scores = stored_scores(conn, window[0], day + timedelta(days=1), horizon)
        ref_served = served_predictions(reference_rows)
        ref_scores = pd.DataFrame([(d, r["score"]) for d, by in ref_served.items() for r in by.values()
                                   if r["score"] is not None], columns=["date", "score"])
        checks.append(score_check(ref_scores, scores["score"].dropna().to_numpy(float),
                                  int(scores["date"].nunique()), t))
    else:
        context["reference"] = None
        for name in [*(f"input:{n}" for n in FEATURE_NAMES), "score"]:
            checks.append(Check(name, "score_drift" if name == "score" else "input_drift", OK, None, None, None,
                                {"note": "no validation record to compare with"}))
        ref_served = {}

    # the live record's outcomes against the validation record's
    p = tables.predictions.c
    live_served = served_predictions(current_rows(conn, tables.predictions, where=[p.trading_date < day,
                                                                                   p.horizon_days == horizon]))
    checks += live_checks(_outcomes(ref_served, prices, horizon), _outcomes(live_served, prices, horizon), t)
    return checks, context


def _outcomes(served: dict[date, dict[str, dict[str, Any]]], prices: pd.DataFrame, horizon: int) -> pd.DataFrame:
    """date, p_up, up of the served predictions whose next close is known and moved, in date order."""
    rows = [(d, s, r["p_up"]) for d, by in served.items() for s, r in by.items() if r["p_up"] is not None]
    if not rows:
        return pd.DataFrame(columns=["date", "symbol", "p_up", "up"])
    frame = prices.sort_values(["symbol", "date"])[["symbol", "date", "close"]].copy()
    frame["forward_return"] = frame.groupby("symbol")["close"].shift(-horizon) / frame["close"] - 1
    joined = pd.DataFrame(rows, columns=["date", "symbol", "p_up"]).merge(frame, on=["symbol", "date"])
    joined = joined[joined["forward_return"].notna() & (joined["forward_return"] != 0)]
    joined["up"] = (joined["forward_return"] > 0).astype(float)
    return joined.sort_values(["date", "symbol"], kind="stable").reset_index(drop=True)[["date", "symbol", "p_up", "up"]]
