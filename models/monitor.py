"""The model monitor: drift of the 14 inputs and of the Score against the validation record,
and the live record's accuracy and calibration against the validation record's band
(docs/monitoring.md). Pure figures and states here, on frames and frozen dataclasses:
T1's `t1_monitor` stage reads what they need from the store (pipeline/monitor_reads.py,
which also keeps the validation record's reference in its file cache), then stores them
and alerts (pipeline/monitor_stage.py).

Every check gets the day's own level (OK / WATCH / ALERT against its two thresholds) and a
state after persistence: ALERT only when the level has been ALERT on each of the last
`persistence` trading days (this one included), WATCH while any breach lasts, else OK.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from market.labels import with_labels
from models.features import FEATURE_NAMES
from models.metrics import binary_accuracy
from models.scoring import ServedDays

OK, WATCH, ALERT = "OK", "WATCH", "ALERT"
SEVERITY = {OK: 0, WATCH: 1, ALERT: 2}
PSI_BINS = 10  # quantile bins of the reference (deciles); tied edges merge
PSI_FLOOR = 1e-4  # the share an empty bin counts as, so the logarithm stays finite
ECE_BINS = 10  # equal-width bins of P(up) for the expected calibration error
NOT_ENOUGH = "not enough live outcomes"
NO_RECORD = "no validation record to compare with"
NO_PRICED_DAYS = "no priced days up to the monitored day: no inputs or Scores to compare"
NO_CALIBRATED_SCORES = "no calibrated Scores in the validation record"
# The live checks' band: the same metric over at least this many of the validation
# record's consecutive chunks. A live record of the same model is beyond all of k chunks
# about 1 / (k + 1) of the time (ALERT on noise: about half with 1 chunk, a third with 2,
# a tenth with 8), and with fewer than 10 chunks the 10th/90th percentile WATCH line is
# the worst chunk's ALERT line or next to it (docs/monitoring.md).
LIVE_MIN_CHUNKS = 10


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


@dataclass(frozen=True)
class Check:
    """One check of one day: its own `level` against its two thresholds, and (set by
    `persist`) its `state` after persistence and the day its breach began (`since`)."""

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
# ... read only on a day when at least this many traded names have a value: one name's
# one value covers 100% of one name, and two names' 50% is no majority either.
STUCK_MIN_NAMES = 3
# A market-wide input repeating one value day after day (a news feed that stopped leaves
# the market sentiment at 0) is read only once the run is at least this many days long.
FROZEN_MIN_DAYS = 3


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


def missing_share(values: np.ndarray) -> float:
    """The share of `values` that are not a number (the input had no value)."""
    return float(np.mean(~np.isfinite(values))) if len(values) else 0.0


def reference_missing_share(reference: pd.DataFrame, name: str) -> float:
    """The largest share of the traded names without a value on any day of the reference
    (a new listing's first weeks lack the windowed inputs); 1.0 without rows."""
    traded = reference[reference["traded"]]
    if not len(traded):
        return 1.0
    return float(traded[name].isna().groupby(traded["date"]).mean().max())


def missing_feed(check: Check, most: float, today: np.ndarray) -> Check:
    """`check` with the missing-feed rule: a feed that stopped (the input has no value, NaN,
    for the day's traded names: `today`, their values) leaves nothing for a PSI or a tail
    share to read, so it is ALERT, with a note saying so, when more than STUCK_SHARE of the
    traded names have no value and a larger share than on any day of the reference (`most`),
    on a day with at least STUCK_MIN_NAMES traded names (a thin day says nothing of a feed).
    The figures keep the day's share either way (`missing_share`)."""
    share = missing_share(today)
    gone = len(today) >= STUCK_MIN_NAMES and share > STUCK_SHARE and share > most
    figures = check.figures | {
        "missing_share": round(share, 6),
        "reference_missing_share": round(most, 6),
        "missing": gone,
    }
    if not gone:
        return replace(check, figures=figures)
    absent = int(round(share * len(today)))
    note = (
        f"missing feed: no value for {absent} of the day's {len(today)} traded names ({share:.0%}; at most "
        f"{most:.0%} on any day of the validation record); the model read them as missing"
    )
    return replace(check, level=ALERT, figures=figures | {"note": note})


def runs_of(values: np.ndarray) -> np.ndarray:
    """The lengths of the runs of consecutive equal values (rounded to 8 decimals) in
    `values`, in order; a value that is not a number ends a run and is one of its own."""
    if not len(values):
        return np.array([], dtype=int)
    rounded = np.round(np.asarray(values, dtype=float), 8)
    breaks = np.flatnonzero(~(rounded[1:] == rounded[:-1]))
    return np.diff(np.concatenate([[-1], breaks, [len(rounded) - 1]]))


def frozen_feed(check: Check, daily: np.ndarray, days: np.ndarray) -> Check:
    """`check` of a market-wide input with the frozen-feed rule: a feed that stops changing
    (the market sentiment held at 0 when the news stop) shows a value the reference knows
    well, so its tail share reads "at the median" day after day. ALERT, with a note, when
    the value of the monitored day (the last of `days`, the window's day values in order)
    has repeated for at least FROZEN_MIN_DAYS days and longer than any run of one value in
    the reference's daily values (`daily`). The figures keep both runs (`run_days`,
    `reference_longest_run`)."""
    run = int(runs_of(days)[-1]) if len(days) and np.isfinite(days[-1]) else 0
    longest = int(runs_of(daily).max()) if len(daily) else 0
    frozen = run >= FROZEN_MIN_DAYS and run > longest
    figures = check.figures | {"run_days": run, "reference_longest_run": longest, "frozen": frozen}
    if not frozen:
        return replace(check, figures=figures)
    note = (
        f"frozen feed: the same value ({days[-1]:.6g}) on each of the last {run} trading days, longer than "
        f"any run of one value in the validation record ({longest} day{'' if longest == 1 else 's'})"
    )
    return replace(check, level=ALERT, figures=figures | {"note": note})


def stuck_level(most: float, today: np.ndarray) -> tuple[str, float]:
    """A broken feed that gives one value for every name: ALERT when the day's most common
    value covers more than STUCK_SHARE of the traded names (`today`: their values) and more
    than on any day of the reference (`most`), on a day with at least STUCK_MIN_NAMES of
    them (else OK: a thin day's one or two names say nothing of a feed). Returns the level
    and the day's share."""
    share = top_share(today)
    stuck = len(today) >= STUCK_MIN_NAMES and share > STUCK_SHARE and share > most
    return (ALERT if stuck else OK), share


@dataclass(frozen=True)
class InputReference:
    """What a per-name input's checks need of the reference: its values over the traded
    names binned once, each window's (watch, alert) thresholds, the largest share one value
    covered on a day of the reference, and its mean (None without values)."""

    binned: PsiReference
    thresholds: dict[int, tuple[float, float]]
    top_share: float
    mean: float | None


@dataclass(frozen=True)
class ReferenceSummary:
    """What the input checks need of the reference, the same for every monitored day: the
    daily share of names that traded, each market-wide input's daily values, each other
    input's `InputReference`, and each input's largest daily share of traded names without
    a value (`reference_missing_share`)."""

    activity: np.ndarray
    wide: dict[str, np.ndarray]
    per_name: dict[str, InputReference]
    missing: dict[str, float]


def reference_summary(reference: pd.DataFrame, t: Thresholds) -> ReferenceSummary:
    """The reference's summary; a per-name input is read over the traded names only."""
    wide = set(market_wide(reference, FEATURE_NAMES))
    traded = reference[reference["traded"]]
    daily: dict[str, np.ndarray] = {}
    per_name: dict[str, InputReference] = {}
    for name in FEATURE_NAMES:
        if name in wide:
            daily[name] = reference.dropna(subset=[name]).groupby("date")[name].first().to_numpy(float)
            continue
        known = traded.dropna(subset=[name])
        binned = PsiReference(known[name], known["date"])
        per_name[name] = InputReference(
            binned,
            {w: psi_thresholds(binned.window_band(w), t) for w in t.windows},
            reference_top_share(known, name),
            float(known[name].mean()) if len(known) else None,
        )
    missing = {name: reference_missing_share(reference, name) for name in FEATURE_NAMES}
    return ReferenceSummary(reference.groupby("date")["traded"].mean().to_numpy(float), daily, per_name, missing)


@dataclass(frozen=True)
class CurrentWindow:
    """The masks of the current sample's rows: its dates, whether the name traded, the
    rows of the monitored day, and per window length the traded rows of its last days."""

    dates: np.ndarray
    traded: np.ndarray
    on_day: np.ndarray
    in_window: dict[int, np.ndarray]
    days: tuple[Any, ...] = ()

    @classmethod
    def of(cls, current: pd.DataFrame, day: date, t: Thresholds) -> CurrentWindow:
        dates = current["date"].to_numpy()
        days = sorted(d for d in set(dates) if d <= day)
        traded = current["traded"].to_numpy(bool)
        in_window = {w: traded & np.isin(dates, days[-w:]) for w in t.windows}
        return cls(dates, traded, dates == day, in_window, tuple(days))

    def day_values(self, values: np.ndarray) -> np.ndarray:
        """A market-wide input's value on each of the window's days up to the monitored
        one, in order: the median of the names' finite values (NaN on a day without any),
        the value `daily_check` reads on the monitored day."""
        finite = np.isfinite(values)
        picked = [values[(self.dates == d) & finite] for d in self.days]
        return np.array([float(np.median(v)) if len(v) else np.nan for v in picked])


def input_checks(
    reference: pd.DataFrame, current: pd.DataFrame, day: date, t: Thresholds, cache: dict[str, Any] | None = None
) -> list[Check]:
    """Per-input drift. `reference` and `current`: symbol, date, traded (bool) and the 14
        inputs, `current` covering at least the longest of `t.windows` up to `day`. Names
        without trades on a day are left out of both. A per-name input is checked by
        `per_name_check`; a market-wide input (`daily_check`) is compared as a daily series,
        the day's value against the reference's daily values, and so is the share of names
        that traded (`activity_check`); an input without a value for most of the day's traded
        names is ALERT whatever those say (`missing_feed`), and so is a market-wide input whose
    value has stopped changing (`frozen_feed`). `cache` keeps what depends on the reference only (a
        replay over many days passes one)."""
    cache = {} if cache is None else cache
    if "reference" not in cache:
        cache["reference"] = reference_summary(reference, t)
    summary: ReferenceSummary = cache["reference"]
    window = CurrentWindow.of(current, day, t)
    checks = [activity_check(summary.activity, window, t)]
    for name in FEATURE_NAMES:
        values = current[name].to_numpy(float)
        if name in summary.wide:
            check = daily_check(f"input:{name}", summary.wide[name], values[window.on_day & np.isfinite(values)], t)
            check = frozen_feed(check, summary.wide[name], window.day_values(values))
        else:
            check = per_name_check(name, summary.per_name[name], values, window, t)
        checks.append(missing_feed(check, summary.missing[name], values[window.on_day & window.traded]))
    return checks


def _daily_figures(daily: np.ndarray, value: float) -> dict[str, Any]:
    return {
        "market_wide": True,
        "value": None if np.isnan(value) else round(value, 6),
        "reference_days": int(len(daily)),
        "reference_range": [round(float(daily.min()), 6), round(float(daily.max()), 6)] if len(daily) else None,
    }


def activity_check(daily: np.ndarray, window: CurrentWindow, t: Thresholds) -> Check:
    """The share of the day's priced names that traded against the reference's daily
    shares (lower tail share is worse); OK unless it moved at least ACTIVITY_MIN_MOVE
    from the reference's median."""
    value = float(window.traded[window.on_day].mean()) if window.on_day.any() else float("nan")
    share = tail_share(daily, value)
    moved = len(daily) and np.isfinite(value) and abs(value - float(np.median(daily))) >= ACTIVITY_MIN_MOVE
    level = level_below(share, t.tail_watch, t.tail_alert) if moved else OK
    return Check(
        ACTIVITY, "input_drift", level, round(share, 6), t.tail_watch, t.tail_alert, _daily_figures(daily, value)
    )


def daily_check(check_name: str, daily: np.ndarray, today: np.ndarray, t: Thresholds) -> Check:
    """A market-wide input: the day's value as a tail share among the reference's daily
    values (lower is worse). The day's value is the median of the names' (`today`: their
    finite values), the value the market shows: an input that was one value per day in the
    reference may differ between names today (zero_volume_share_20 when every name
    traded through the reference, sentiment before any news), and then no one name's value
    decides, neither the first one's nor one outlier's; `names_range` shows the spread."""
    value = float(np.median(today)) if len(today) else float("nan")
    share = tail_share(daily, value)
    level = level_below(share, t.tail_watch, t.tail_alert)
    spread = [round(float(today.min()), 6), round(float(today.max()), 6)] if len(today) else None
    figures = _daily_figures(daily, value) | {"names_range": spread}
    return Check(check_name, "input_drift", level, round(share, 6), t.tail_watch, t.tail_alert, figures)


@dataclass(frozen=True)
class WindowLevel:
    """A per-name input's PSI over one window: the figure (PSI less its noise), the
    thresholds it is read against, its level and the rows it read."""

    figure: float
    watch: float
    alert: float
    level: str
    rows: int


def window_levels(
    ref: InputReference, values: np.ndarray, window: CurrentWindow, t: Thresholds
) -> dict[int, WindowLevel]:
    """The input's level over the last days of each window (`t.windows`), against the
    thresholds from the reference's own windows of that length."""
    finite = np.isfinite(values)
    levels = {}
    for w in t.windows:
        figure, rows = ref.binned.excess(values[window.in_window[w] & finite])
        watch, alert = ref.thresholds[w]
        levels[w] = WindowLevel(figure, watch, alert, level_above(figure, watch, alert), rows)
    return levels


def per_name_check(name: str, ref: InputReference, values: np.ndarray, window: CurrentWindow, t: Thresholds) -> Check:
    """A per-name input: the worse of its windows' levels counts (the figure shown is that
    window's, the one nearer its ALERT threshold between equals), and a stuck feed
    (`stuck_level`) is ALERT whatever the PSI says."""
    levels = window_levels(ref, values, window, t)
    deciding = max(levels, key=lambda w: (SEVERITY[levels[w].level], levels[w].figure / levels[w].alert, w))
    shown = levels[deciding]
    finite = np.isfinite(values)
    today = values[window.on_day & window.traded & finite]
    stuck, share = stuck_level(ref.top_share, today)
    level = ALERT if stuck == ALERT else max((x.level for x in levels.values()), key=SEVERITY.__getitem__)
    current = values[window.in_window[t.window_days] & finite]
    figures = {
        "market_wide": False,
        "window_days": deciding,
        "windows": {
            str(w): {
                "psi": round(x.figure, 6),
                "watch": round(x.watch, 6),
                "alert": round(x.alert, 6),
                "level": x.level,
                "rows": x.rows,
            }
            for w, x in levels.items()
        },
        "top_value_share": round(share, 6),
        "reference_top_value_share": round(ref.top_share, 6),
        "stuck": stuck == ALERT,
        "reference_rows": int(ref.binned.size),
        "current_rows": int(len(current)),
        "current_days": int(len(set(window.dates[window.traded]))),
        "current_mean": round(float(current.mean()), 6) if len(current) else None,
        "reference_mean": None if ref.mean is None else round(ref.mean, 6),
    }
    check = Check(
        f"input:{name}",
        "input_drift",
        level,
        round(shown.figure, 6),
        round(shown.watch, 6),
        round(shown.alert, 6),
        figures,
    )
    return stuck_note(check, today)


def stuck_note(check: Check, today: np.ndarray) -> Check:
    """A check ALERT for a stuck feed (`figures.stuck`) with a note that says so: its figure
    is the PSI, read against thresholds it may well not pass, so its reading alone ("0.01:
    WATCH above 0.1, ALERT above 0.25; level ALERT") would not say why. `today`: the day's
    traded names' values."""
    if not check.figures.get("stuck"):
        return check
    values, counts = np.unique(np.round(today, 8), return_counts=True)
    share, most = check.figures["top_value_share"], check.figures["reference_top_value_share"]
    note = (
        f"stuck feed: one value ({values[counts.argmax()]:.6g}) for {int(counts.max())} of the day's {len(today)} "
        f"traded names ({share:.0%}; at most {most:.0%} on any day of the validation record)"
    )
    return replace(check, figures=check.figures | {"note": note})


def score_check(reference: pd.DataFrame, current: np.ndarray, days: int, t: Thresholds) -> Check:
    """`reference`: date, score of the validation record's served predictions; `current`:
    the Scores served over the window's `days` (live, else the validation record's). The
    figures keep the window's length (`window_days`), which the view's measure names."""
    r = reference["score"].to_numpy(float)
    figures = {"reference_rows": int(len(r)), "current_rows": int(len(current)), "current_days": days}
    figures |= {"window_days": t.window_days}
    if not len(r):  # nothing to compare with: no figure, and the note says why
        return Check("score", "score_drift", OK, None, None, None, figures | {"note": NO_CALIBRATED_SCORES})
    figure = PsiReference(r).excess(current)[0]
    watch, alert = psi_thresholds(own_band(reference, "score", t.window_days), t)
    level = level_above(figure, watch, alert)
    return Check("score", "score_drift", level, round(figure, 6), round(watch, 6), round(alert, 6), figures)


METRICS = {  # name: (function, higher is worse)
    "live_accuracy": (binary_accuracy, False),
    "live_brier": (brier, True),
    "live_calibration": (ece, True),
}


def worse_when(kind: str, tail: bool = False) -> str:
    """Which way a figure of a check of `kind` is worse: `below` for a tail share (`tail`: a
    market-wide input's or the activity's) and the live accuracy, `above` for a PSI, the
    Brier score and the calibration error. Read off the check, never off its thresholds'
    order: a live band whose two worst chunks tie puts WATCH on the ALERT line."""
    lower = tail if kind == "input_drift" else kind in METRICS and not METRICS[kind][1]
    return "below" if lower else "above"


def reading(
    figure: float | None, watch: float | None, alert: float | None, worse: str | None, level: str, state: str
) -> str:
    """A check in words: its figure against its thresholds (`worse`: which way is worse,
    `worse_when`) and the day's level and state, in four figures ("0.4123: WATCH above 0.1,
    ALERT above 0.2512; level ALERT, state ALERT"); its level and state without a figure."""
    if figure is None or watch is None or alert is None or worse is None:
        return f"level {level}, state {state}"
    return f"{figure:.4g}: WATCH {worse} {watch:.4g}, ALERT {worse} {alert:.4g}; level {level}, state {state}"


def value_said(figures: Mapping[str, object]) -> str:
    """What moved, in the input's terms, where a check's figure does not say it: a market-wide
    check's day (its figure a tail share: "the day's value 0.12, the validation record's 250
    days 0.45 to 0.78", `_daily_figures`); a per-name input's window that decided and which
    way its values went (its figure a PSI: "the 5-day window's PSI; the 20 days' mean 62.14,
    the validation record's 50.3", `per_name_check`); "" for another check, or without them."""
    value, span = figures.get("value"), figures.get("reference_range")
    if value is not None and span:
        days = figures.get("reference_days")
        return f"the day's value {value:.4g}, the validation record's {days} days {span[0]:.4g} to {span[1]:.4g}"
    windows, mean, reference = figures.get("windows"), figures.get("current_mean"), figures.get("reference_mean")
    if not windows or mean is None or reference is None:
        return ""
    longest = max(int(w) for w in windows)  # the means are of the longest window's values
    decided = f"the {figures['window_days']}-day window's PSI; " if len(windows) > 1 else ""
    return f"{decided}the {longest} days' mean {mean:.4g}, the validation record's {reference:.4g}"


def noted(figures: Mapping[str, object], read: str) -> str:
    """A check's note: what its `figures` say apart (a stuck, missing or frozen feed, whose
    figure need not pass its lines; or why it has no figure), else its reading `read` in
    words, a market-wide check's with the day's value beside the record's (`value_said`)."""
    return figures.get("note") or "; ".join(part for part in (read, value_said(figures)) if part)


def said(check: Check) -> str:
    """What a check says in words (`noted`), as the served check's note says it."""
    tail = "reference_days" in check.figures
    worse = None if check.watch_threshold is None else worse_when(check.kind, tail=tail)
    shown = (check.figure, check.watch_threshold, check.alert_threshold, worse, check.level, check.state)
    return noted(check.figures, reading(*shown))


def live_checks(reference: pd.DataFrame | None, live: pd.DataFrame, t: Thresholds) -> list[Check]:
    """The live record's latest `t.live_outcomes` outcomes (p_up, up, moved rows in date
    order) against the band of the same metric over the validation record's consecutive
    chunks of as many rows (`reference`: its outcomes; None without a record): WATCH beyond
    the band's 10th/90th percentile on the worse side, ALERT beyond its worst chunk. OK
    with a note (`live_note`) while either side has too few rows."""
    n = t.live_outcomes
    chunks = [] if reference is None else [reference.iloc[i : i + n] for i in range(0, len(reference) - n + 1, n)]
    note = live_note(reference is not None, len(chunks), len(live), n)
    if note is not None:
        figures = {"note": note, "live_outcomes": int(len(live)), "needed": n, "validation_chunks": len(chunks)}
        return [Check(name, name, OK, None, None, None, dict(figures)) for name in METRICS]
    tail = live.iloc[-n:]
    return [live_check(name, tail, chunks) for name in METRICS]


def live_note(recorded: bool, chunks: int, live: int, n: int) -> str | None:
    """Why the live checks compare nothing yet, None when they can: no validation record,
    a record of fewer than LIVE_MIN_CHUNKS chunks of `n` outcomes (its band is noise), or
    fewer than `n` live outcomes."""
    if not recorded:
        return NO_RECORD
    if chunks < LIVE_MIN_CHUNKS:
        return (
            f"validation record too short: {chunks} chunk{'' if chunks == 1 else 's'} of {n} outcomes "
            f"(the live checks need {LIVE_MIN_CHUNKS})"
        )
    return NOT_ENOUGH if live < n else None


def live_check(name: str, tail: pd.DataFrame, chunks: list[pd.DataFrame]) -> Check:
    """One metric (METRICS) of the live record's latest outcomes against its band over the
    validation record's chunks."""
    metric, worse_high = METRICS[name]
    figure = metric(tail["p_up"].to_numpy(float), tail["up"].to_numpy(float))
    band = np.array([metric(c["p_up"].to_numpy(float), c["up"].to_numpy(float)) for c in chunks])
    if worse_high:
        watch, alert = float(np.quantile(band, 0.9)), float(band.max())
        level = level_above(figure, watch, alert)
    else:
        watch, alert = float(np.quantile(band, 0.1)), float(band.min())
        level = level_below(figure, watch, alert)
    figures = {
        "live_outcomes": len(tail),
        "validation_chunks": len(chunks),
        "validation_band": [round(float(band.min()), 6), round(float(band.max()), 6)],
        "validation_median": round(float(np.median(band)), 6),
    }
    return Check(name, name, level, round(figure, 6), round(watch, 6), round(alert, 6), figures)


def persist(
    checks: list[Check], history: dict[str, list[tuple[date, str, date | None]]], t: Thresholds, day: date
) -> list[Check]:
    """Each check with its state and since, from its level today and its stored levels of
    the previous trading days (`history[check]`: (day, level, since), latest first,
    consecutive trading days only): OK without a breach today; else the breach began on
    the first of its consecutive non-OK days, and it is ALERT once the last
    `t.persistence` levels were all ALERT, WATCH before."""
    return [_persisted(check, history.get(check.check_name, []), t, day) for check in checks]


def _leading(levels: list[str], counted: Iterable[str]) -> int:
    """How many of `levels`, from the first, are in `counted`."""
    run = 0
    for level in levels:
        if level not in counted:
            break
        run += 1
    return run


def _persisted(check: Check, prior: list[tuple[date, str, date | None]], t: Thresholds, day: date) -> Check:
    if check.level == OK:
        return replace(check, state=OK, since=None)
    levels = [check.level] + [level for _, level, _ in prior]
    breach = _leading(levels, (WATCH, ALERT))
    since = prior[breach - 2][0] if breach > 1 else day
    state = ALERT if _leading(levels, (ALERT,)) >= t.persistence else WATCH
    return replace(check, state=state, since=since)


def overall(states: Iterable[str]) -> str:
    states = list(states)
    return ALERT if ALERT in states else WATCH if WATCH in states else OK


# --- the day's checks, on what the stage read -------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """The validation record as the checks compare with it: its first and last day, its
    days' inputs as the record computed them (symbol, date, traded, the 14), its served
    Scores (date, score) and its outcomes (`outcomes`)."""

    first: date
    last: date
    inputs: pd.DataFrame
    scores: pd.DataFrame
    outcomes: pd.DataFrame


@dataclass(frozen=True)
class DayContext:
    """What a day's checks read: the current window's first and last day and its length,
    the reference's first and last day (None without a record), and how many of the
    window's days had their inputs stored by T1 (None without a record)."""

    window: tuple[str, str] | None
    window_days: int
    reference: tuple[str, str] | None = None
    live_input_days: int | None = None

    @classmethod
    def of(cls, window: list[date], reference: Reference | None, live_days: int | None) -> DayContext:
        shown = (window[0].isoformat(), window[-1].isoformat()) if window else None
        if reference is None:
            return cls(shown, len(window))
        return cls(shown, len(window), (reference.first.isoformat(), reference.last.isoformat()), live_days)


def live_inputs(rows: Iterable[dict[str, Any]], prices: pd.DataFrame) -> pd.DataFrame:
    """symbol, date, the 14 inputs and traded of the `features` rows T1 stored
    (`prices`: symbol, date, traded; a name without a bar did not trade)."""
    live = pd.DataFrame(
        [
            {"symbol": r["symbol"], "date": r["trading_date"], **{n: r["feature_values"].get(n) for n in FEATURE_NAMES}}
            for r in rows
        ],
        columns=["symbol", "date", *FEATURE_NAMES],
    )
    live[FEATURE_NAMES] = live[FEATURE_NAMES].astype(float)
    live = live.merge(prices[["symbol", "date", "traded"]], on=["symbol", "date"], how="left")
    live["traded"] = live["traded"].fillna(False).astype(bool)
    return live


def unrecorded_days(window: list[date], live: pd.DataFrame, reference: Reference) -> list[date]:
    """The window's days neither scored live nor in the validation record: their inputs
    are the ones the record would compute (the history's panel)."""
    live_days = set(live["date"])
    return [d for d in window if d not in live_days and not (reference.first <= d <= reference.last)]


def current_inputs(inputs: pd.DataFrame, live: pd.DataFrame, window: list[date]) -> pd.DataFrame:
    """The current window's inputs: each day's as stored by T1 (`live`: what the model
    got), else, for a day T1 did not score, as the validation record computed them
    (`inputs`: symbol, date, traded and the 14)."""
    live_days = set(live["date"])
    earlier = inputs[inputs["date"].isin([d for d in window if d not in live_days])]
    return pd.concat([earlier[["symbol", "date", "traded", *FEATURE_NAMES]], live], ignore_index=True)


def drift_checks(
    reference: Reference, current: pd.DataFrame, scores: pd.DataFrame, day: date, t: Thresholds
) -> list[Check]:
    """The input checks and the Score's, against the reference's days up to `day` (a re-run
    of a past day reads no later day). `scores`: date, score of the window's served
    predictions."""
    known = reference.inputs[reference.inputs["date"] <= day]
    checks = input_checks(known, current, day, t)
    reference_scores = reference.scores[reference.scores["date"] <= day]
    served = scores["score"].dropna().to_numpy(float)
    return [*checks, score_check(reference_scores, served, int(scores["date"].nunique()), t)]


def unchecked_drift(note: str) -> list[Check]:
    """The drift checks of a day with nothing to compare: OK without a figure, with the
    `note` that says why (NO_RECORD: the store has no validation record; NO_PRICED_DAYS:
    no day up to the monitored one is priced)."""
    names = [ACTIVITY, *(f"input:{n}" for n in FEATURE_NAMES), "score"]
    return [
        Check(name, "score_drift" if name == "score" else "input_drift", OK, None, None, None, {"note": note})
        for name in names
    ]


def outcomes(served: ServedDays, prices: pd.DataFrame, horizon: int) -> pd.DataFrame:
    """date, symbol, p_up, up and label_end of the served predictions whose label
    (market/labels.with_labels: the held excess over `horizon` sessions from the next
    close) is known and not zero, in date order; `label_end` is the session the label
    closes on, the day the outcome is known (`known_by`). `prices`: every instrument's
    bars from the first stored day (the label's universe is the market's liquid names,
    which read each name's earlier weeks)."""
    columns = ["date", "symbol", "p_up", "up", "label_end"]
    rows = [(d, s, r["p_up"]) for d, by in served.items() for s, r in by.items() if r["p_up"] is not None]
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = with_labels(prices, horizon)[["symbol", "date", "forward_return", "label_end"]]
    joined = pd.DataFrame(rows, columns=["date", "symbol", "p_up"]).merge(frame, on=["symbol", "date"])
    joined = joined[joined["forward_return"].notna() & (joined["forward_return"] != 0)]
    joined["up"] = (joined["forward_return"] > 0).astype(float)
    return joined.sort_values(["date", "symbol"], kind="stable").reset_index(drop=True)[columns]


def known_by(outcomes: pd.DataFrame, day: date) -> pd.DataFrame:
    """The `outcomes` known at `day`'s close: those whose label closed on or before it. A
    prediction of a day before `day` whose label closes after it was not known then, so a
    past day's re-run reads the record as the day itself could."""
    return outcomes[pd.to_datetime(outcomes["label_end"]).dt.date <= day].reset_index(drop=True)
